// The serving capacity curve: estimateServing at each power-of-two context. Nothing is
// recomputed here; every figure is the serving estimate's own (docs/formulas-serving.md).
#include "serving/sweep.h"

#include <algorithm>
#include <cmath>

#include "serving/serving.h"

namespace envelope {

std::vector<ServingSweepPoint> servingContextSweep(const Plan& plan)
{
    const ModelArch& arch = plan.model.arch;
    const ParamCounts counts = countParameters(arch);
    std::vector<ServingSweepPoint> points;
    points.reserve(kServingSweepMaxLog2 - kServingSweepMinLog2 + 1);
    for (int log2 = kServingSweepMinLog2; log2 <= kServingSweepMaxLog2; ++log2) {
        ServingConfig config = plan.serving;
        config.context = 1 << log2;
        ServingSweepPoint p;
        p.context = config.context;
        const ServingEstimate e = estimateServing(arch, counts, config, plan.gpu.gpu, nullptr, false);
        p.maxSequences = e.maxSequences;
        p.kvBudgetBytes = e.kvBudgetBytes;
        p.fitsConcurrency = e.fits;
        // Decode speed at what actually runs: the plan's concurrency, or fewer when the
        // budget admits fewer sequences at this context (vLLM preempts the rest).
        const double running
            = std::min<double>(std::max(plan.serving.concurrency, 1), e.maxSequences);
        if (running >= 1) {
            const double step = decodeTokenTime(arch, config, plan.gpu.gpu, running, config.context);
            p.decodeTokensPerS = step > 0 ? running / step : 0.0;
        }
        points.push_back(p);
    }
    return points;
}

} // namespace envelope
