// The configuration table a report opens with (issue 11: "a reader must be able to reproduce
// the plan"): every setting that moves a figure of the chosen sections, with the plan key's
// value as written (preset ids beside their names).
#include <algorithm>

#include <fmt/format.h>

#include "report/detail.h"
#include "serving/serving.h"

namespace envelope::report::detail {

namespace {

// "; one step off-policy", "; staleness 0.5, partial rollouts, 4 updates per sync", or nothing
// when on-policy with one update per sync.
std::string offPolicyText(const RlConfig& r)
{
    const std::string text = rlAsyncText(rlStaleness(r), r.partialRollouts, r.updatesPerSync);
    return text.empty() ? text : "; " + text;
}

std::string epochsText(const RlConfig& r)
{
    return r.updateEpochs > 1 ? fmt::format("; {} update epochs", r.updateEpochs) : std::string();
}

std::string withId(const std::string& name, const std::string& id)
{
    if (name.empty())
        return id.empty() ? std::string("custom") : id;
    return id.empty() || id == name ? name : fmt::format("{} ({})", name, id);
}

std::string modelText(const Plan& plan, const Estimate& e)
{
    const ModelArch& arch = plan.model.arch;
    std::string text = fmt::format("{} — {} parameters ({} active)",
        withId(arch.name, plan.model.presetId), formatCount(e.params), formatCount(e.activeParams));
    if (arch.moe)
        text += fmt::format("; MoE {} experts, top-{}{}", arch.moe->experts, arch.moe->topK,
            arch.moe->sharedExperts > 0 ? fmt::format(" + {} shared", arch.moe->sharedExperts)
                                        : std::string());
    return text;
}

std::string recipeText(const RecipeChoice& choice)
{
    const Recipe& r = choice.recipe;
    if (!choice.presetId.empty())
        return withId(r.name, choice.presetId);
    // A custom recipe: the bytes per parameter the plan gives.
    return fmt::format("custom: weights {} B, gradients {} B, master {} B, moments {} B per param",
        number(r.weightBytes, 0), number(r.gradientBytes, 0), number(r.masterBytes, 0),
        number(r.momentBytes, 0));
}

std::string parallelismText(const TrainingConfig& t, int dataParallel, int layers)
{
    std::string text
        = fmt::format("TP {}, PP {}, CP {}, EP {}, DP {}", t.tp, t.pp, t.cp, t.ep, dataParallel);
    // An uneven split (or the plan's own) names its layers per stage.
    const std::vector<int> stages = pipelineStageLayers(t, layers);
    if (t.pp > 1
        && (!t.stageLayers.empty()
            || std::any_of(stages.begin(), stages.end(), [&](int n) { return n != stages[0]; })))
        text += fmt::format(" (layers per stage {})", stageLayersText(stages));
    if (t.virtualStages > 1)
        text += fmt::format("; {} virtual stages per pipeline rank", t.virtualStages);
    text += t.sequenceParallel ? "; sequence parallel on" : "; sequence parallel off";
    return text;
}

std::string recomputeText(const TrainingConfig& t)
{
    std::string text(recomputeId(t.recompute));
    if (t.recompute == Recompute::EveryK)
        text += fmt::format(" (a checkpoint every {} layers)", t.recomputeEvery);
    text += t.flashAttention ? "; flash attention" : "; no flash attention";
    return text;
}

std::string offloadText(const TrainingConfig& t)
{
    std::string text;
    if (t.offloadOptimizer && t.offloadParams)
        text = "optimizer states and parameters to CPU";
    else if (t.offloadOptimizer)
        text = "optimizer states to CPU";
    else if (t.offloadParams)
        text = "parameters to CPU";
    if (t.activationOffload) {
        const std::string layers = t.activationOffloadLayers > 0
            ? fmt::format("the first {} layers' activations", t.activationOffloadLayers)
            : std::string("activations");
        text += (text.empty() ? "" : "; ") + layers + " to CPU";
    }
    return text.empty() ? "none" : text;
}

void addTrainingRows(Table& t, const Plan& plan, const Estimate& e, ByteUnits units)
{
    const TrainingConfig& tc = plan.training;
    t.add("precision recipe", recipeText(tc.recipe));
    t.add("optimizer",
        std::string(optimizerId(tc.optimizer))
            + (tc.optimizerInBackward ? " (stepped in the backward)" : ""));
    t.add("ZeRO stage", fmt::format("ZeRO-{}", tc.zeroStage));
    t.add("parallelism", parallelismText(tc, e.training.dataParallel, plan.model.arch.layers));
    t.add("sequence length", fmt::format("{} tokens", tc.seqLen));
    const long long sequences
        = static_cast<long long>(tc.microBatch) * tc.gradAccum * e.training.dataParallel;
    t.add("batch",
        fmt::format("micro-batch {} x gradient accumulation {} x DP {} = global batch {} "
                    "sequences ({} tokens)",
            tc.microBatch, tc.gradAccum, e.training.dataParallel, sequences,
            formatCount(e.compute.globalBatchTokens)));
    t.add("recompute", recomputeText(tc));
    t.add("framework",
        fmt::format("{} — {}, loss {}", tc.framework.id, tc.framework.name,
            lossKindId(tc.effectiveLoss())));
    // Issue 22: the step is timed from ops unless the plan overrides it with an MFU.
    if (tc.mfuOverride)
        t.add("kernel efficiency (mfu)", number(100 * tc.mfu) + " % (override of the op timing)");
    else
        t.add("step timing", fmt::format("from ops ({})", e.compute.timingSource));
    t.add("offload", offloadText(tc));
    if (tc.lora.enabled)
        t.add("LoRA",
            fmt::format("rank {}, alpha {}, {}-bit base{}", tc.lora.rank, number(tc.lora.alpha, 0),
                tc.lora.baseBits, tc.lora.doubleQuant ? ", double quantization" : ""));
    t.add("usable fraction",
        fmt::format("{} % of HBM (the fits line)", number(100 * tc.usableFraction)));
    t.add("overhead",
        fmt::format("{} fixed + {} % fragmentation", humanBytes(tc.overhead.fixedBytes, units),
            number(100 * tc.overhead.fragmentation)));
    t.add("training tokens", formatCount(tc.trainTokens));
    if (tc.budgetUsd)
        t.add("budget", usd(*tc.budgetUsd));
    if (tc.deadlineS)
        t.add("deadline", duration(*tc.deadlineS));
}

} // namespace

Table configuration(
    const Plan& plan, const Estimate& e, ByteUnits units, const ReportSections& sections)
{
    Table t { "Configuration", { "Setting", "Value" }, {} };
    t.add("name", plan.name);
    t.add("model", modelText(plan, e));
    t.add("GPUs",
        fmt::format("{} x {}, {} per node, {} each", plan.cluster.gpus,
            withId(plan.gpu.gpu.name, plan.gpu.presetId), plan.cluster.gpusPerNode,
            humanBytes(plan.gpu.gpu.memoryBytes, units)));
    if (sections.training || sections.compute)
        addTrainingRows(t, plan, e, units);
    if (sections.serving) {
        const ServingConfig& s = plan.serving;
        t.add("serving",
            fmt::format("{} engine{}, {}, {}-bit KV, TP {}, context {}, concurrency {}, "
                        "{}",
                servingEngineId(s.engine),
                s.engineProfile.version.empty() ? std::string()
                                                : " " + s.engineProfile.version,
                servingWeightFormatText(s), s.kvBits, s.tp, s.context, s.concurrency,
                s.engine == ServingEngine::Sglang
                    ? (s.memFractionStatic
                              ? "mem_fraction_static " + number(*s.memFractionStatic, 3)
                              : std::string("mem_fraction_static: the engine's default"))
                    : s.engine == ServingEngine::Trtllm
                    ? "free_gpu_memory_fraction "
                        + number(servingMemoryFraction(s, plan.gpu.gpu), 2)
                    : "GPU memory utilization " + number(s.gpuMemoryUtilization, 2)));
        if (s.ep > 1 || s.dpAttention || s.redundantExperts > 0)
            t.add("expert parallel",
                fmt::format("EP {}{}{}", s.ep,
                    s.dpAttention ? fmt::format(", data-parallel attention ({} ranks of TP {})",
                                        servingParallel(s).dp, s.tp)
                                  : std::string(),
                    s.redundantExperts > 0
                        ? fmt::format(", {} redundant experts", s.redundantExperts)
                        : std::string()));
        if (s.speculative)
            t.add("speculative decoding",
                fmt::format("{}{}, {} draft token{} per step, acceptance {}",
                    speculativeKindId(s.speculative->kind),
                    s.speculative->draftModel ? " (" + s.speculative->draftModel->arch.name + ")"
                                              : std::string(),
                    s.speculative->tokens, s.speculative->tokens == 1 ? "" : "s",
                    number(s.speculative->acceptance, 2)));
    }
    if (sections.rl) {
        const RlConfig& r = plan.rl;
        t.add("RL",
            fmt::format("{}, {} placement; {} prompts x {} completions of {} + {} tokens; KL {}{}",
                rlAlgorithmId(r.algorithm), rlPlacementId(r.placement), r.prompts, r.groupSize,
                r.promptLen, r.responseLen, r.kl ? "on" : "off",
                offPolicyText(r) + epochsText(r)));
    }
    t.add("units", units == ByteUnits::GB ? "GB = 10^9 bytes" : "GiB = 2^30 bytes");
    return t;
}

} // namespace envelope::report::detail
