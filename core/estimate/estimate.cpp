#include "estimate/estimate.h"

#include <string>

#include <fmt/format.h>

#include "compute/compute.h"
#include "plan/planio.h"
#include "rl/rl.h"
#include "serving/load.h"
#include "serving/serving.h"
#include "training/memory.h"

namespace envelope {
namespace {

constexpr const char* kParamsSource
    = "architecture (docs/formulas.md#parameters); exact counts pinned to published totals";

std::string count(double x)
{
    return fmt::format("{:.4g}", x);
}

// The parameter count as the sum of its parts, each part's value substituted.
void explainParams(const ModelArch& arch, const ParamCounts& c, Explainer& ex)
{
    if (arch.declaredParams) {
        ex.add("model.params",
            fmt::format("declared {{\"params\": {}}} (a standard {}-layer, hidden-{} shape is "
                        "used only for activations and FLOPs)",
                count(c.total), arch.layers, arch.hidden),
            c.total, "params", "the plan's bare parameter count");
        ex.add("model.active_params", fmt::format("= params = {}", count(c.active)), c.active,
            "params", "the plan's bare parameter count");
        return;
    }
    std::string layers
        = fmt::format("{} dense layers x (attention {} + norms {} + FFN {})", c.denseLayers,
            count(c.attentionPerLayer), count(c.normsPerLayer), count(c.denseFfnPerLayer));
    if (c.moeLayers > 0)
        layers += fmt::format(" + {} MoE layers x (attention {} + norms {} + experts, shared "
                              "and router {})",
            c.moeLayers, count(c.attentionPerLayer), count(c.normsPerLayer),
            count(c.moeFfnPerLayer));
    ex.add("model.params",
        fmt::format("embedding {} + positions {} + {} + final norm {} + LM head {}{} = {}",
            count(c.embedding), count(c.positions), layers, count(c.finalNorm), count(c.lmHead),
            arch.tiedEmbeddings ? " (tied: shares the embedding)" : "", count(c.total)),
        c.total, "params", kParamsSource);
    if (c.moeLayers > 0)
        ex.add("model.active_params",
            fmt::format("params - {} MoE layers x (all experts {} - top-{} and shared {}) = {} - "
                        "{} = {}",
                c.moeLayers, count(c.moeFfnPerLayer), arch.moe ? arch.moe->topK : 0,
                count(c.moeActiveFfnPerLayer), count(c.total), count(c.total - c.active),
                count(c.active)),
            c.active, "params", kParamsSource);
    else
        ex.add("model.active_params",
            fmt::format("dense model: every token uses every parameter = {}", count(c.active)),
            c.active, "params", kParamsSource);
}

} // namespace

std::string_view verdictId(Verdict v)
{
    switch (v) {
    case Verdict::Fits:
        return "fits";
    case Verdict::Tight:
        return "tight";
    case Verdict::Over:
        return "over";
    }
    return "over";
}

Verdict memoryVerdict(double totalBytes, double hbmBytes, double usableFraction)
{
    if (!(hbmBytes > 0) || !(totalBytes <= hbmBytes))
        return Verdict::Over;
    return totalBytes <= hbmBytes * usableFraction ? Verdict::Fits : Verdict::Tight;
}

Estimate estimate(const Plan& plan, const EstimateOptions& options)
{
    Explainer explainer;
    Explainer* ex = options.explain ? &explainer : nullptr;

    Estimate result;
    // The plan's warnings travel with its figures, so every output shows them (issue 11: the
    // app drew a 32,768-token context on an 8,192-position model green).
    result.warnings = planWarnings(plan);
    const ModelArch& arch = plan.model.arch;
    const ParamCounts counts = countParameters(arch);
    result.params = counts.total;
    result.activeParams = counts.active;
    if (ex)
        explainParams(arch, counts, *ex);

    if (options.training)
        result.training
            = estimateTrainingMemory(arch, counts, plan.training, plan.cluster, plan.gpu.gpu, ex);
    if (options.compute)
        result.compute
            = estimateCompute(arch, counts, plan.training, plan.cluster, plan.gpu.gpu, ex);
    if (options.serving) {
        result.serving = estimateServing(arch, counts, plan.serving, plan.gpu.gpu, ex);
        // Under a workload (issue 27): the deployment's percentiles, rates and goodput, when its
        // weights leave a KV pool to serve from.
        if (plan.serving.workload && result.serving.fitsWeights)
            result.serving.load = estimateServingLoad(
                arch, plan.serving, plan.gpu.gpu, result.serving, plan.cluster.gpus);
    }
    if (options.rl) {
        result.rl = estimateRl(plan, counts, ex);
        // A pool that cannot hold its role's layout: the RL figures are withheld, and every
        // output that shows the RL section says why and what the pool needs.
        if (!result.rl.problem.empty())
            result.warnings.push_back(result.rl.problem + "; the RL step time and rates are "
                                                          "withheld");
    }

    if (ex)
        result.explain = explainer.take();
    return result;
}

} // namespace envelope
