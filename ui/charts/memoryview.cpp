#include "charts/memoryview.h"

#include "estimate/estimate.h"

namespace envelope::ui {

double tenantBytes(const MemoryBreakdown& breakdown, Tenant tenant)
{
    switch (tenant) {
    case Tenant::Weights:
        return breakdown.weights;
    case Tenant::Gradients:
        return breakdown.gradients;
    case Tenant::Optimizer:
        return breakdown.optimizer;
    case Tenant::Activations:
        return breakdown.activations;
    case Tenant::Overhead:
        return breakdown.overhead;
    case Tenant::KvCache:
        return breakdown.kvCache;
    }
    return 0;
}

} // namespace envelope::ui
