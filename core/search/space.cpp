// The values each axis of the search may take. Structural rules that hold for every framework
// (tp divides the heads, pp <= layers, ep divides the experts, cp divides the sequence) are
// applied in the loop; here are the lists, narrowed by --fix. docs/planner.md lists them.
#include <algorithm>

#include "search/detail.h"

namespace envelope::searchdetail {

const FixedField* fixedOf(const SearchOptions& o, std::string_view path)
{
    const FixedField* found = nullptr;
    for (const FixedField& f : o.fixed)
        if (f.path == path)
            found = &f; // the last --fix of a path wins, as repeated flags usually do
    return found;
}

namespace {

std::vector<int> fixedOr(const SearchOptions& o, std::string_view path, std::vector<int> free)
{
    if (const FixedField* f = fixedOf(o, path))
        return { f->number };
    return free;
}

// Node counts for min-cost / min-time: every count up to 8 nodes, then 2^k and 3 x 2^k nodes
// (the sizes clusters are rented and scheduled in), and the largest allowed.
std::vector<int> nodeLadder(int maxNodes)
{
    std::vector<int> nodes;
    for (int n = 1; n <= std::min(8, maxNodes); ++n)
        nodes.push_back(n);
    for (long long p = 8; p <= maxNodes; p *= 2) {
        if (p > 8)
            nodes.push_back(static_cast<int>(p));
        if (p * 3 / 2 <= maxNodes && p * 3 / 2 > 8)
            nodes.push_back(static_cast<int>(p * 3 / 2));
    }
    nodes.push_back(maxNodes);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
}

} // namespace

std::vector<int> tpChoices(int heads, int limit)
{
    std::vector<int> tps;
    for (int tp = 1; tp <= limit; tp *= 2)
        if (heads <= 0 || heads % tp == 0)
            tps.push_back(tp);
    return tps;
}

Axes searchAxes(const Plan& plan, const SearchOptions& o)
{
    Axes a;
    const TrainingConfig& t = plan.training;
    const ModelArch& arch = plan.model.arch;
    a.gpusPerNode = std::max(1, o.gpusPerNode > 0 ? o.gpusPerNode : plan.cluster.gpusPerNode);
    if (const FixedField* f = fixedOf(o, "cluster.gpus_per_node"))
        a.gpusPerNode = f->number;

    const long long modelParallel = static_cast<long long>(t.tp) * t.pp * t.cp;
    const long long dp = std::max(1LL, plan.cluster.gpus / modelParallel);
    a.globalBatchTokens = double(t.microBatch) * t.gradAccum * dp * t.seqLen;

    // GPU counts.
    const bool variesGpus = o.goal == SearchGoal::MinGpus || o.goal == SearchGoal::MinCost
        || o.goal == SearchGoal::MinTime;
    if (const FixedField* f = fixedOf(o, "cluster.gpus")) {
        a.gpuCounts = { f->number };
    } else if (!variesGpus) {
        a.gpuCounts = { o.maxGpus > 0 ? o.maxGpus : plan.cluster.gpus };
    } else {
        const int maxGpus = o.maxGpus > 0   ? o.maxGpus
            : o.goal == SearchGoal::MinGpus ? 65536
                                            : plan.cluster.gpus;
        // Part of one node (1, 2, 4 of 8 GPUs), then whole nodes.
        for (int g = 1; g < a.gpusPerNode && g <= maxGpus; ++g)
            if (a.gpusPerNode % g == 0)
                a.gpuCounts.push_back(g);
        const int maxNodes = maxGpus / a.gpusPerNode;
        if (o.goal == SearchGoal::MinGpus) {
            for (int n = 1; n <= maxNodes; ++n)
                a.gpuCounts.push_back(n * a.gpusPerNode);
        } else if (maxNodes >= 1) {
            for (int n : nodeLadder(maxNodes))
                a.gpuCounts.push_back(n * a.gpusPerNode);
        }
        if (a.gpuCounts.empty())
            a.gpuCounts.push_back(maxGpus);
    }

    // Sequence lengths: max-seq-len doubles the plan's up to 1M tokens (the UI's range) or the
    // global batch, longest first; the batch in tokens stays fixed.
    if (const FixedField* f = fixedOf(o, "training.seq_len")) {
        a.seqLens = { f->number };
    } else if (o.goal == SearchGoal::MaxSeqLen) {
        for (long long s = t.seqLen; s <= (1 << 20) && s <= a.globalBatchTokens; s *= 2)
            a.seqLens.push_back(static_cast<int>(s));
        std::reverse(a.seqLens.begin(), a.seqLens.end());
        if (a.seqLens.empty())
            a.seqLens.push_back(t.seqLen);
    } else {
        a.seqLens = { t.seqLen };
    }

    // Tensor parallel: divides the heads; inside a node it also divides the node, so no group
    // straddles two nodes (Megatron-LM places TP innermost).
    std::vector<int> tps;
    const int tpMax = o.tpAcrossNodes ? std::max(arch.heads, 1) : a.gpusPerNode;
    for (int tp = 1; tp <= tpMax; tp *= 2)
        if ((arch.heads <= 0 || arch.heads % tp == 0)
            && (o.tpAcrossNodes || a.gpusPerNode % tp == 0))
            tps.push_back(tp);
    a.tps = fixedOr(o, "training.tp", tps);
    a.cps = fixedOr(o, "training.cp", { 1, 2, 4, 8, 16, 32, 64 });
    a.zeros = fixedOr(o, "training.zero_stage", { 0, 1, 2, 3 });
    a.virtualStages = fixedOr(o, "training.virtual_stages", { 1, 2, 4 });
    a.sequenceParallel = fixedOr(o, "training.sequence_parallel", { 0, 1 });
    if (const FixedField* f = fixedOf(o, "training.pp"))
        a.fixedPp = f->number;
    if (const FixedField* f = fixedOf(o, "training.ep"))
        a.fixedEp = f->number;
    if (const FixedField* f = fixedOf(o, "training.micro_batch"))
        a.fixedMicroBatch = f->number;

    // Recompute: none, selective, full, and checkpoints every 2 or 4 layers.
    if (const FixedField* f = fixedOf(o, "training.recompute")) {
        const FixedField* every = fixedOf(o, "training.recompute_every");
        a.recomputes = { { f->recompute,
            f->recompute == Recompute::EveryK
                ? (every ? every->number : std::max(2, t.recomputeEvery))
                : t.recomputeEvery } };
    } else {
        a.recomputes = { { Recompute::None, t.recomputeEvery },
            { Recompute::Selective, t.recomputeEvery }, { Recompute::Full, t.recomputeEvery },
            { Recompute::EveryK, 2 }, { Recompute::EveryK, 4 } };
        if (const FixedField* every = fixedOf(o, "training.recompute_every"))
            a.recomputes = { { Recompute::EveryK, every->number } };
    }

    // Offload: none, optimizer states, optimizer states + parameters (ZeRO-Infinity). The step
    // time does not charge offload's PCIe traffic or the CPU optimizer step, so goals ranked by
    // speed or cost would get it for free: they consider it only when --fix asks for it.
    const FixedField* offOpt = fixedOf(o, "training.offload_optimizer");
    const FixedField* offParams = fixedOf(o, "training.offload_params");
    const bool rankedBySpeed = o.goal == SearchGoal::MaxThroughput || o.goal == SearchGoal::MinCost
        || o.goal == SearchGoal::MinTime;
    const bool offloadAllowed = o.allowOffload && !rankedBySpeed;
    const OffloadChoice all[] = { { false, false }, { true, false }, { true, true } };
    for (const OffloadChoice& c : all) {
        if (!offloadAllowed && (c.optimizer || c.params) && !offOpt && !offParams)
            continue;
        if (offOpt && c.optimizer != (offOpt->number != 0))
            continue;
        if (offParams && c.params != (offParams->number != 0))
            continue;
        a.offloads.push_back(c);
    }
    if (a.offloads.empty() && offParams && offParams->number && offOpt && !offOpt->number)
        a.offloads.push_back({ false, true });
    return a;
}

} // namespace envelope::searchdetail
