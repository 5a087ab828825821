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
    // Issue 23: linear-attention layers replace the attention block's params; a multimodal
    // checkpoint adds its vision tower (in the total, never in the active count).
    if (c.linearLayers > 0)
        layers += fmt::format(" - {} linear-attention layers x (attention {} - linear attention {})",
            c.linearLayers, count(c.attentionPerLayer), count(c.linearAttentionPerLayer));
    const std::string vision
        = c.vision > 0 ? fmt::format(" + vision tower {}", count(c.vision)) : std::string();
    ex.add("model.params",
        fmt::format("embedding {} + positions {} + {} + final norm {} + LM head {}{}{} = {}",
            count(c.embedding), count(c.positions), layers, count(c.finalNorm), count(c.lmHead),
            arch.tiedEmbeddings ? " (tied: shares the embedding)" : "", vision, count(c.total)),
        c.total, "params", kParamsSource);
    if (c.moeLayers > 0)
        ex.add("model.active_params",
            fmt::format("params - {} MoE layers x (all experts {} - top-{} and shared {}){} = {} - "
                        "{} = {}",
                c.moeLayers, count(c.moeFfnPerLayer), arch.moe ? arch.moe->topK : 0,
                count(c.moeActiveFfnPerLayer),
                c.vision > 0 ? fmt::format(" - vision tower {}", count(c.vision)) : std::string(),
                count(c.total), count(c.total - c.active), count(c.active)),
            c.active, "params", kParamsSource);
    else if (c.vision > 0)
        ex.add("model.active_params",
            fmt::format("params - vision tower (a text token never runs it) = {} - {} = {}",
                count(c.total), count(c.vision), count(c.active)),
            c.active, "params", kParamsSource);
    else
        ex.add("model.active_params",
            fmt::format("dense model: every token uses every parameter = {}", count(c.active)),
            c.active, "params", kParamsSource);
}

} // namespace

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
        const ServingConfig serving = servingOfPlan(plan);
        result.serving = estimateServing(arch, counts, serving, plan.gpu.gpu, ex);
        // Under a workload (issue 27): the deployment's percentiles, rates and goodput, when its
        // weights leave a KV pool to serve from.
        if (plan.serving.workload && result.serving.fitsWeights) {
            ServingEstimate& s = result.serving;
            s.load = estimateServingLoad(arch, serving, plan.gpu.gpu, s, plan.cluster.gpus);
            // Under a workload the engine holds its whole KV pool (what the RL tab draws for the
            // same engine) and admits requests as it frees: it serves the workload when the
            // longest request fits the pool, and its rates are the workload's, not those of a
            // static batch of `concurrency` x `context`.
            s.fits = s.load->requests > 0;
            s.perGpu.kvCache = s.kvBudgetBytes;
            if (s.fits) {
                s.decodeTokensPerS = s.load->outputTokensPerS / std::max(1, s.load->replicas);
                s.ttftS = s.load->ttftMeanS;
                s.itlS = s.load->itlMeanS;
            }
        }
        if (ex)
            explainServingLoad(plan.serving, result.serving, *ex);
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
