#include "estimate.h"

#include "compute.h"
#include "rl.h"
#include "serving.h"
#include "training_memory.h"

namespace envelope {

Estimate estimate(const Plan& plan, const EstimateOptions& options)
{
    Explainer explainer;
    Explainer* ex = options.explain ? &explainer : nullptr;

    Estimate result;
    const ModelArch& arch = plan.model.arch;
    const ParamCounts counts = countParameters(arch);
    result.params = counts.total;
    result.activeParams = counts.active;
    if (ex) {
        ex->add("model.params", "sum of every weight matrix, bias, norm and embedding of the architecture",
                counts.total, "params", "architecture; docs/formulas.md#parameters");
        ex->add("model.active_params",
                "total minus the routed experts a token does not visit (top-k of E per MoE layer)",
                counts.active, "params", "architecture; docs/formulas.md#parameters");
    }

    if (options.training)
        result.training = estimateTrainingMemory(arch, counts, plan.training, plan.cluster,
                                                 plan.gpu.gpu, ex);
    if (options.compute)
        result.compute = estimateCompute(arch, counts, plan.training, plan.cluster, plan.gpu.gpu, ex);
    if (options.serving)
        result.serving = estimateServing(arch, counts, plan.serving, plan.gpu.gpu, ex);
    if (options.rl)
        result.rl = estimateRl(plan, counts, ex);

    if (ex)
        result.explain = explainer.take();
    return result;
}

}  // namespace envelope
