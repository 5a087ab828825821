#include "charts/memoryview.h"

#include "estimate/estimate.h"

namespace envelope::ui {

double tenantBytes(const MemoryBreakdown& breakdown, Tenant tenant)
{
    return breakdown.*tenantInfo(tenant).bytes;
}

} // namespace envelope::ui
