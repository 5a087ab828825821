// A layout as plan fields: reading it from a plan, writing it into one, the changes it makes
// and `--fix PATH=VALUE`.
#include <cmath>
#include <charconv>

#include <fmt/format.h>

#include "plan/fields.h"
#include "search/search.h"

namespace envelope {
namespace {

struct IntField {
    const char* path;
    int Layout::*member;
    int min, max;
};
// The ranges are validatePlan's (plan/fields.h); a fixed value outside them could never pass.
constexpr IntField kIntFields[] = {
    { "cluster.gpus", &Layout::gpus, 1, planfields::kMaxGpus },
    { "cluster.gpus_per_node", &Layout::gpusPerNode, 1, 1024 },
    { "training.tp", &Layout::tp, 1, planfields::kMaxParallel },
    { "training.pp", &Layout::pp, 1, planfields::kMaxParallel },
    { "training.cp", &Layout::cp, 1, planfields::kMaxParallel },
    { "training.ep", &Layout::ep, 1, planfields::kMaxParallel },
    { "training.virtual_stages", &Layout::virtualStages, 1, 1024 },
    { "training.zero_stage", &Layout::zeroStage, 0, 3 },
    { "training.micro_batch", &Layout::microBatch, 1, planfields::kMaxBatch },
    { "training.grad_accum", &Layout::gradAccum, 1, planfields::kMaxBatch },
    { "training.seq_len", &Layout::seqLen, 1, planfields::kMaxTokens },
    { "training.recompute_every", &Layout::recomputeEvery, 1, 100'000 },
};
// Serving and RL fields --fix holds (validatePlan's ranges).
struct FixRange {
    const char* path;
    int min, max;
};
constexpr FixRange kOtherFixes[] = {
    { "serving.tp", 1, planfields::kMaxParallel },
    { "serving.ep", 1, planfields::kMaxParallel },
    { "serving.weight_bits", 4, 16 },
    { "serving.kv_bits", 4, 16 },
    { "rl.trainer_gpus", 1, planfields::kMaxGpus },
    { "rl.reference_gpus", 0, planfields::kMaxGpus },
    { "rl.rollout_gpus", 0, planfields::kMaxGpus },
};
struct BoolField {
    const char* path;
    bool Layout::*member;
};
constexpr BoolField kBoolFields[] = {
    { "training.sequence_parallel", &Layout::sequenceParallel },
    { "training.offload_optimizer", &Layout::offloadOptimizer },
    { "training.offload_params", &Layout::offloadParams },
};

std::string recomputeWords(const Layout& l)
{
    if (l.recompute == Recompute::EveryK)
        return fmt::format("recompute every {} layers", l.recomputeEvery);
    if (l.recompute == Recompute::None)
        return "no recompute";
    return fmt::format("{} recompute", recomputeId(l.recompute));
}

// A disaggregated pool in words: "TP 8", or "EP 32 (TP 1 x 32 data-parallel attention ranks)".
std::string poolWords(const ServingPool& p)
{
    if (p.dp > 1)
        return fmt::format("EP {} (TP {} x {} data-parallel attention ranks)", p.ep, p.tp, p.dp);
    return p.ep > 1 ? fmt::format("TP {} with EP {}", p.tp, p.ep) : fmt::format("TP {}", p.tp);
}

} // namespace

Expected<FixedField> parseFixedField(std::string_view assignment)
{
    const size_t eq = assignment.find('=');
    if (eq == std::string_view::npos)
        return Error { "", fmt::format("--fix: expected PATH=VALUE, got \"{}\"", assignment) };
    FixedField f;
    f.path = std::string(assignment.substr(0, eq));
    const std::string_view value = assignment.substr(eq + 1);
    if (f.path == "training.recompute") {
        if (!parseRecompute(value, f.recompute))
            return Error { f.path,
                fmt::format("must be none, selective, full or every-k, got \"{}\"", value) };
        return f;
    }
    if (f.path == "serving.disaggregation") {
        // serving-max-goodput and serving-min-gpus under an SLO: true searches xPyD layouts
        // only, false aggregated engines only.
        if (value != "true" && value != "false")
            return Error { f.path, fmt::format("must be true or false, got \"{}\"", value) };
        f.number = value == "true" ? 1 : 0;
        return f;
    }
    if (f.path == "rl.placement") {
        RlPlacement placement = RlPlacement::Disjoint;
        if (!parseRlPlacement(value, placement))
            return Error { f.path,
                fmt::format("must be disjoint or colocated, got \"{}\"", value) };
        f.number = placement == RlPlacement::Colocated ? 1 : 0;
        return f;
    }
    for (const BoolField& b : kBoolFields)
        if (f.path == b.path) {
            if (value != "true" && value != "false")
                return Error { f.path, fmt::format("must be true or false, got \"{}\"", value) };
            f.number = value == "true" ? 1 : 0;
            return f;
        }
    const auto integer = [&](int min, int max) -> Expected<FixedField> {
        int number = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (ec != std::errc() || end != value.data() + value.size() || number < min || number > max)
            return Error { f.path,
                fmt::format("must be an integer {}..{}, got \"{}\"", min, max, value) };
        if ((f.path == "serving.weight_bits" || f.path == "serving.kv_bits") && number != 4
            && number != 8 && number != 16)
            return Error { f.path, fmt::format("must be 4, 8 or 16, got {}", number) };
        f.number = number;
        return f;
    };
    for (const IntField& i : kIntFields)
        if (f.path == i.path)
            return integer(i.min, i.max);
    for (const FixRange& i : kOtherFixes)
        if (f.path == i.path)
            return integer(i.min, i.max);
    return Error { f.path,
        "cannot be fixed: the planner searches cluster.gpus, cluster.gpus_per_node, "
        "training.{tp,pp,cp,ep,virtual_stages,zero_stage,micro_batch,grad_accum,seq_len,"
        "recompute,recompute_every,sequence_parallel,offload_optimizer,offload_params}, "
        "serving.{tp,weight_bits,kv_bits} and "
        "rl.{placement,trainer_gpus,reference_gpus,rollout_gpus}" };
}

Layout layoutOf(const Plan& plan)
{
    const TrainingConfig& t = plan.training;
    Layout l;
    l.gpus = plan.cluster.gpus;
    l.gpusPerNode = plan.cluster.gpusPerNode;
    l.tp = t.tp;
    l.pp = t.pp;
    l.cp = t.cp;
    l.ep = t.ep;
    l.virtualStages = t.virtualStages;
    l.zeroStage = t.zeroStage;
    l.microBatch = t.microBatch;
    l.gradAccum = t.gradAccum;
    l.seqLen = t.seqLen;
    l.recompute = t.recompute;
    l.recomputeEvery = t.recomputeEvery;
    l.sequenceParallel = t.sequenceParallel;
    l.offloadOptimizer = t.offloadOptimizer;
    l.offloadParams = t.offloadParams;
    return l;
}

Plan applyLayout(const Plan& plan, const Layout& l)
{
    Plan p = plan;
    p.cluster.gpus = l.gpus;
    p.cluster.gpusPerNode = l.gpusPerNode;
    TrainingConfig& t = p.training;
    t.tp = l.tp;
    // The plan's own stage split holds for its pipeline depth only; another depth takes the
    // default split (pipelineStageLayers).
    if (l.pp != t.pp)
        t.stageLayers.clear();
    t.pp = l.pp;
    t.cp = l.cp;
    t.ep = l.ep;
    t.virtualStages = l.virtualStages;
    t.zeroStage = l.zeroStage;
    t.microBatch = l.microBatch;
    t.gradAccum = l.gradAccum;
    t.seqLen = l.seqLen;
    t.recompute = l.recompute;
    t.recomputeEvery = l.recomputeEvery;
    t.sequenceParallel = l.sequenceParallel;
    t.offloadOptimizer = l.offloadOptimizer;
    t.offloadParams = l.offloadParams;
    return p;
}

std::vector<FieldChange> layoutChanges(const Plan& plan, const Layout& layout)
{
    const Layout from = layoutOf(plan);
    std::vector<FieldChange> out;
    for (const IntField& i : kIntFields)
        if (from.*(i.member) != layout.*(i.member))
            out.push_back({ i.path, std::to_string(layout.*(i.member)) });
    if (from.pp != layout.pp && !plan.training.stageLayers.empty())
        out.push_back({ "training.stage_layers", "null" }); // as applyLayout: the default split
    if (from.recompute != layout.recompute)
        out.push_back(
            { "training.recompute", fmt::format("\"{}\"", recomputeId(layout.recompute)) });
    for (const BoolField& b : kBoolFields)
        if (from.*(b.member) != layout.*(b.member))
            out.push_back({ b.path, layout.*(b.member) ? "true" : "false" });
    return out;
}

std::vector<FieldChange> layoutChanges(const Plan& plan, const ServingLayout& l)
{
    const ServingLayout from = servingLayoutOf(plan);
    std::vector<FieldChange> out;
    const auto number = [&](const char* path, int to, int was) {
        if (to != was)
            out.push_back({ path, std::to_string(to) });
    };
    number("cluster.gpus", l.clusterGpus, from.clusterGpus);
    number("serving.tp", l.tp, from.tp);
    number("serving.ep", l.ep, from.ep);
    if (l.dpAttention != from.dpAttention)
        out.push_back({ "serving.dp_attention", l.dpAttention ? "true" : "false" });
    if (l.disaggregation != from.disaggregation)
        out.push_back({ "serving.disaggregation",
            l.disaggregation ? planfields::disaggregationJson(*l.disaggregation).dump() : "null" });
    number("serving.weight_bits", l.weightBits, from.weightBits);
    number("serving.kv_bits", l.kvBits, from.kvBits);
    // applyServingLayout's formats: one of other bits gives way to the engine's own.
    const int kvFormatBits = kvCacheFormatBits(plan.serving.kvFormat);
    if (kvFormatBits != 0 && kvFormatBits != l.kvBits)
        out.push_back({ "serving.kv_format", "\"auto\"" });
    const int weightBits = weightFormatBits(plan.serving.weightFormat);
    if (weightBits != 0 && weightBits != l.weightBits)
        out.push_back({ "serving.weight_format", "\"auto\"" });
    number("serving.concurrency", l.concurrency, from.concurrency);
    return out;
}

std::vector<FieldChange> layoutChanges(const Plan& plan, const RlLayout& l)
{
    const RlLayout from = rlLayoutOf(plan);
    std::vector<FieldChange> out;
    const auto number = [&](const char* path, int to, int was) {
        if (to != was)
            out.push_back({ path, std::to_string(to) });
    };
    number("cluster.gpus", l.clusterGpus, from.clusterGpus);
    if (l.placement != from.placement)
        out.push_back({ "rl.placement", fmt::format("\"{}\"", rlPlacementId(l.placement)) });
    number("rl.trainer_gpus", l.trainerGpus, from.trainerGpus);
    number("rl.reference_gpus", l.referenceGpus, from.referenceGpus);
    number("rl.rollout_gpus", l.rolloutGpus, from.rolloutGpus);
    number("serving.tp", l.rolloutTp, from.rolloutTp);
    if (std::fabs(l.gpuMemoryUtilization - from.gpuMemoryUtilization) > 1e-9)
        out.push_back(
            { "serving.gpu_memory_utilization", fmt::format("{:g}", l.gpuMemoryUtilization) });
    return out;
}

std::string describeChanges(const Plan& plan, const ServingLayout& l)
{
    if (l.disaggregation) {
        const ServingDisaggregation& d = *l.disaggregation;
        std::string text = fmt::format("{}P{}D: {} prefill worker{} of {} and {} decode worker{} "
                                       "of {}, {}-bit weights, {}-bit KV",
            d.prefill.workers, d.decode.workers, d.prefill.workers,
            d.prefill.workers == 1 ? "" : "s", poolWords(d.prefill), d.decode.workers,
            d.decode.workers == 1 ? "" : "s", poolWords(d.decode), l.weightBits, l.kvBits);
        if (l.clusterGpus != plan.cluster.gpus)
            text += fmt::format(" on {} GPUs", l.clusterGpus);
        return text;
    }
    const std::string engine = l.dpAttention
        ? fmt::format("EP {} (TP {} x {} data-parallel attention ranks)", l.ep, l.tp, l.ep / std::max(l.tp, 1))
        : fmt::format("TP {}", l.tp);
    std::string text
        = fmt::format("{} x {} replica{}, {}-bit weights, {}-bit KV, {} sequence{}{}", engine,
            l.replicas, l.replicas == 1 ? "" : "s", l.weightBits, l.kvBits, l.concurrency,
            l.concurrency == 1 ? "" : "s", l.replicas == 1 ? "" : " each");
    if (l.clusterGpus != plan.cluster.gpus)
        text += fmt::format(" on {} GPU{}", l.clusterGpus, l.clusterGpus == 1 ? "" : "s");
    return text;
}

std::string servingEngineCell(const ServingLayout& l)
{
    const auto engine = [](int tp, int ep, bool dpAttention) {
        return dpAttention ? fmt::format("{} (EP {})", tp, ep) : std::to_string(tp);
    };
    if (!l.disaggregation)
        return engine(l.tp, l.ep, l.dpAttention);
    const ServingPool& p = l.disaggregation->prefill;
    const ServingPool& d = l.disaggregation->decode;
    return fmt::format("P {} / D {}", engine(p.tp, p.ep, p.dp > 1), engine(d.tp, d.ep, d.dp > 1));
}

std::string servingReplicasCell(const ServingLayout& l)
{
    if (!l.disaggregation)
        return std::to_string(l.replicas);
    return fmt::format("{}P + {}D", l.disaggregation->prefill.workers, l.disaggregation->decode.workers);
}

std::string describeChanges(const Plan& plan, const RlLayout& l)
{
    std::string text;
    if (l.placement == RlPlacement::Colocated)
        text = fmt::format("colocated on {} GPUs (rollout engines of TP {} at "
                           "gpu_memory_utilization {:g})",
            l.clusterGpus, l.rolloutTp, l.gpuMemoryUtilization);
    else if (plan.rl.algorithm == RlAlgorithm::Dpo)
        text = fmt::format("disjoint: trainer {}, reference {}", l.trainerGpus, l.referenceGpus);
    else
        text = fmt::format("disjoint: trainer {}, reference {}, rollout {} (engines of TP {})",
            l.trainerGpus, l.referenceGpus, l.rolloutGpus, l.rolloutTp);
    if (l.clusterGpus != plan.cluster.gpus)
        text += fmt::format(" of {} GPUs", l.clusterGpus);
    return text;
}

std::string describeChanges(const Plan& plan, const Layout& l)
{
    const Layout from = layoutOf(plan);
    std::vector<std::string> parts;
    if (l.zeroStage != from.zeroStage)
        parts.push_back(l.zeroStage == 3 ? "ZeRO-3" : fmt::format("ZeRO-{}", l.zeroStage));
    if (l.recompute != from.recompute
        || (l.recompute == Recompute::EveryK && l.recomputeEvery != from.recomputeEvery))
        parts.push_back(recomputeWords(l));
    if (l.offloadOptimizer != from.offloadOptimizer || l.offloadParams != from.offloadParams)
        parts.push_back(l.offloadParams ? "optimizer + parameter offload"
                : l.offloadOptimizer    ? "optimizer offload"
                                        : "no offload");
    const auto axis = [&](const char* name, int to, int was) {
        if (to != was)
            parts.push_back(fmt::format("{} {}", name, to));
    };
    axis("TP", l.tp, from.tp);
    axis("PP", l.pp, from.pp);
    if (l.pp > 1)
        axis("virtual stages", l.virtualStages, from.virtualStages);
    axis("CP", l.cp, from.cp);
    axis("EP", l.ep, from.ep);
    if (l.sequenceParallel != from.sequenceParallel)
        parts.push_back(l.sequenceParallel ? "sequence parallel" : "no sequence parallel");
    if (l.microBatch != from.microBatch || l.gradAccum != from.gradAccum)
        parts.push_back(fmt::format("micro-batch {} x grad-accum {}", l.microBatch, l.gradAccum));
    if (l.seqLen != from.seqLen)
        parts.push_back(fmt::format("seq-len {}", l.seqLen));
    std::string text;
    for (const std::string& part : parts)
        text += (text.empty() ? "" : " + ") + part;
    if (l.gpus != from.gpus || l.gpusPerNode != from.gpusPerNode) {
        const bool wholeNodes
            = l.gpusPerNode > 0 && l.gpus % l.gpusPerNode == 0 && l.gpus >= l.gpusPerNode;
        const std::string where = wholeNodes
            ? fmt::format("{} node{} ({} GPUs)", l.gpus / l.gpusPerNode,
                l.gpus / l.gpusPerNode == 1 ? "" : "s", l.gpus)
            : fmt::format("{} GPU{}", l.gpus, l.gpus == 1 ? "" : "s");
        text += (text.empty() ? "" : " ") + std::string("on ") + where;
    }
    return text.empty() ? "the plan as it is" : text;
}

} // namespace envelope
