// The planner's loop. For each GPU count and sequence length it walks the parallel layouts
// (tp, cp, pp, ep) and for each the ZeRO stage and offload ("a group"), then recompute,
// sequence parallel, virtual stages and micro-batch. Each layout is evaluated by the core's
// estimateTrainingMemory and, when it fits, estimateCompute: the functions estimate() runs, on
// a working TrainingConfig mutated in place (no plan copy, no allocation per layout).
//
// Pruning, exact (it never drops a layout that would fit; SearchOptions::prune = false checks):
//  - a group whose weights + gradients + optimizer states alone (plus the fixed overhead and
//    fragmentation allowance) exceed the usable memory is rejected whole: activations only add;
//  - along micro-batch (ascending, grad-accum = batch / (dp x micro-batch)) the activations kept
//    never shrink: 1F1B keeps min(p, m) micro-batches of b sequences, b x min(p, B/b) = min(pb, B)
//    rises with b; so the first micro-batch that does not fit ends that row;
//  - min-gpus starts at the smallest GPU count whose fully sharded states could fit at all.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "compute/compute.h"
#include "plan/fields.h"
#include "plan/planio.h"
#include "search/detail.h"
#include "training/memory.h"

namespace envelope {
namespace {

using namespace searchdetail;

// Context parallelism below this many tokens per GPU leaves the GPU idle between ring hops
// (Megatron-Core recommends CP for long sequences, 8k and more): chunks of at least 4k tokens; the
// planner does not propose it.
constexpr int kMinCpChunk = 4096;

struct Counters {
    long long memory = 0, divisibility = 0, hostMemory = 0, deadline = 0, budget = 0;
    long long invalid = 0;
};

// The micro-batches for `n` sequences per data-parallel replica: the divisors d of n whose
// micro-batch d and grad-accum n / d are both within validatePlan's range. Past it a plan could
// not be offered, and a divisor above 2^31 wrapped to 0 when narrowed to int (a division by zero
// fuzz_mutate found: docs/reliability.md). Ascending, into `out` (reused: no allocation once it
// has grown).
void microBatchChoices(long long n, std::vector<int>& out)
{
    out.clear();
    if (n > static_cast<long long>(planfields::kMaxBatch) * planfields::kMaxBatch)
        return; // no micro-batch x grad-accum split within the range
    const auto keep = [&](long long d) {
        if (d <= planfields::kMaxBatch && n / d <= planfields::kMaxBatch)
            out.push_back(static_cast<int>(d));
    };
    for (long long d = 1; d * d <= n && d <= planfields::kMaxBatch; ++d)
        if (n % d == 0) {
            keep(d);
            if (d * d != n)
                keep(n / d);
        }
    std::sort(out.begin(), out.end());
}

// Smallest GPU count at which the fully sharded states (ZeRO-3 over every GPU: no layout holds
// fewer bytes per GPU) fit the usable memory, and the offloaded ones the host: a lower bound
// for min-gpus. Host bytes per node = per-GPU host bytes x min(GPUs per node, GPUs)
// (training/memory.cpp).
double gpuCountBound(const Plan& plan, const SearchOptions& o, const Axes& axes, double usable)
{
    const TrainingConfig& t = plan.training;
    const Recipe& r = t.recipe.recipe;
    const double params = countParameters(plan.model.arch).total;
    const double optimizerBytes = r.masterBytes + optimizerStateBytesPerParam(r, t.optimizer);
    const double room = (usable - t.overhead.fixedBytes) / (1 + t.overhead.fragmentation);
    if (!(room > 0))
        return INFINITY;
    double best = INFINITY;
    for (const OffloadChoice& c : axes.offloads) {
        const double device = (c.params ? 0 : r.weightBytes) + (c.optimizer ? 0 : r.gradientBytes)
            + (c.optimizer ? 0 : optimizerBytes);
        const double host = (c.optimizer ? optimizerBytes + 4 : 0) + (c.params ? r.weightBytes : 0);
        const double deviceGpus = device * params / room;
        // Below one node the host holds every GPU's share: host x params whatever the count.
        const double hostTotal = host * params;
        const double hostGpus = hostTotal <= o.hostBytesPerNode
            ? 0
            : hostTotal * axes.gpusPerNode / o.hostBytesPerNode;
        best = std::min(best, std::max(deviceGpus, hostGpus));
    }
    return best;
}

// One search: the working config the loop mutates and what it has found so far.
class Searcher {
public:
    Searcher(const Plan& plan, const SearchOptions& options);
    SearchResult run();

private:
    void searchCount(int gpus);
    void searchParallel(int gpus, int tp, int cp, int pp);
    void searchGroup(int gpus, int tp, int pp, long long perReplica, long long group);
    void searchRow(int gpus, long long perReplica);
    Candidate evaluate(int gpus) const;
    void considerMiss(const Candidate& c);
    // Recompute x SP x virtual-stage choices valid for this tp and pp (one per micro-batch).
    long long innerChoices(int tp, int pp) const;
    bool recomputeApplies(const RecomputeChoice& r, int layersPerStage) const
    {
        return r.mode != Recompute::EveryK || r.every < layersPerStage
            || m_axes.recomputes.size() == 1;
    }
    bool spApplies(int sp, int tp) const
    {
        return !(sp && tp == 1) || m_axes.sequenceParallel.size() == 1;
    }
    bool interleavingApplies(int v, int pp) const
    {
        return v == 1 || (pp > 1 && m_layers % (pp * v) == 0);
    }

    const Plan& m_plan;
    const SearchOptions& m_options;
    const Axes m_axes;
    const ModelArch& m_arch;
    const ParamCounts m_counts;
    const Gpu& m_gpu;
    const double m_usableFraction; // searchUsableFraction: the option, else the plan's
    const double m_usable;
    const int m_layers;
    const bool m_moe;
    TrainingConfig m_cfg; // mutated in place: the layout being evaluated
    Cluster m_cluster;
    std::vector<int> m_microBatches, m_experts;
    long long m_sequences = 0;
    bool m_probeBase = false;
    int m_fullEvery = 1;
    SearchResult m_result;
    Counters m_rejected;
    TopList m_top;
    ParetoFront m_front;
    double m_nearestOver = INFINITY;
    bool m_topChanged = false;
    // Stops the search: cancelled, or the evaluation cap reached (checked between groups).
    bool stopped()
    {
        if (m_options.cancel && m_options.cancel->load(std::memory_order_relaxed))
            m_result.cancelled = true;
        if (m_options.maxEstimates > 0 && m_result.estimates >= m_options.maxEstimates)
            m_result.capped = true;
        return m_result.cancelled || m_result.capped;
    }
};

Searcher::Searcher(const Plan& plan, const SearchOptions& options)
    : m_plan(plan)
    , m_options(options)
    , m_axes(searchAxes(plan, options))
    , m_arch(plan.model.arch)
    , m_counts(countParameters(plan.model.arch))
    , m_gpu(plan.gpu.gpu)
    , m_usableFraction(searchUsableFraction(plan, options.usableFraction))
    , m_usable(m_usableFraction * plan.gpu.gpu.memoryBytes)
    , m_layers(std::max(plan.model.arch.layers, 1))
    , m_moe(plan.model.arch.moe && plan.model.arch.moe->experts > 0)
    , m_cfg(plan.training)
    , m_cluster(plan.cluster)
    , m_top(options.goal, std::max(options.top, kHeadroomPool))
    , m_front(options.goal)
{
    m_cluster.gpusPerNode = m_axes.gpusPerNode;
    m_microBatches.reserve(256);
    m_experts.reserve(64);
    m_result.goal = options.goal;
    m_result.usableFraction = m_usableFraction;
    m_result.paretoX = paretoAxis(options.goal);
    // The bound's probe (full recompute, SP when tp > 1, no interleaving, the smallest
    // micro-batch) is a layout of the space unless --fix excludes it; then it may name the
    // nearest miss.
    const auto full = std::find_if(m_axes.recomputes.begin(), m_axes.recomputes.end(),
        [](const RecomputeChoice& r) { return r.mode == Recompute::Full; });
    m_probeBase = full != m_axes.recomputes.end()
        && std::find(m_axes.virtualStages.begin(), m_axes.virtualStages.end(), 1)
            != m_axes.virtualStages.end();
    m_fullEvery = full != m_axes.recomputes.end() ? full->every : plan.training.recomputeEvery;
}

Candidate Searcher::evaluate(int gpus) const
{
    const TrainingMemory m = estimateTrainingMemory(m_arch, m_counts, m_cfg, m_cluster, m_gpu);
    Candidate c;
    c.layout = { gpus, m_cluster.gpusPerNode, m_cfg.tp, m_cfg.pp, m_cfg.cp, m_cfg.ep,
        m_cfg.virtualStages, m_cfg.zeroStage, m_cfg.microBatch, m_cfg.gradAccum, m_cfg.seqLen,
        m_cfg.recompute, m_cfg.recomputeEvery, m_cfg.sequenceParallel, m_cfg.offloadOptimizer,
        m_cfg.offloadParams };
    c.perGpuBytes = m.perGpu.total();
    c.gpuMemoryBytes = m.gpuMemoryBytes;
    c.hostBytesPerNode = m.hostBytesPerNode;
    c.verdict = fitVerdict(c.perGpuBytes, m_gpu.memoryBytes, m_usableFraction);
    return c;
}

void Searcher::considerMiss(const Candidate& c)
{
    const double over = c.perGpuBytes - m_usable;
    if (over < m_nearestOver) {
        m_nearestOver = over;
        m_result.nearestMiss = c;
    }
}

long long Searcher::innerChoices(int tp, int pp) const
{
    const int layersPerStage = (m_layers + pp - 1) / pp;
    long long n = 0;
    for (const RecomputeChoice& r : m_axes.recomputes)
        for (int sp : m_axes.sequenceParallel)
            for (int v : m_axes.virtualStages)
                n += recomputeApplies(r, layersPerStage) && spApplies(sp, tp)
                    && interleavingApplies(v, pp);
    return n;
}

SearchResult Searcher::run()
{
    const SearchOptions& o = m_options;
    const bool stopAtFirstCount = o.goal == SearchGoal::MinGpus;
    const double countBound
        = o.prune && stopAtFirstCount ? gpuCountBound(m_plan, o, m_axes, m_usable) : 0;
    const double totalSteps = double(m_axes.seqLens.size()) * m_axes.gpuCounts.size();
    double step = 0;
    for (int seqLen : m_axes.seqLens) {
        m_sequences = std::llround(m_axes.globalBatchTokens / seqLen);
        if (m_sequences < 1 || double(m_sequences) * seqLen != m_axes.globalBatchTokens)
            m_sequences = 0; // the batch is not a whole number of sequences
        m_cfg.seqLen = seqLen;
        for (int gpus : m_axes.gpuCounts) {
            step += 1;
            if (m_result.cancelled || m_result.capped || gpus < countBound)
                continue;
            if (o.progress)
                o.progress(step / totalSteps);
            searchCount(gpus);
            if (stopAtFirstCount && m_result.feasible > 0)
                break;
        }
        if (o.goal == SearchGoal::MaxSeqLen && m_result.feasible > 0)
            break;
    }

    // Offer only what passes the plan validator.
    const auto invalid = [&](const Candidate& c) {
        return validatePlan(applyLayout(m_plan, c.layout)).has_value();
    };
    m_result.candidates = m_top.take();
    m_rejected.invalid += std::erase_if(m_result.candidates, invalid);
    m_result.headroomNote = preferHeadroom(m_result.candidates, o.goal, m_result.usableFraction);
    const auto top = static_cast<std::size_t>(std::max(o.top, 1));
    if (m_result.candidates.size() > top)
        m_result.candidates.resize(top);
    m_result.pareto = m_front.take();
    std::erase_if(m_result.pareto, invalid);
    if (m_result.feasible > 0) {
        m_result.nearestMiss.reset();
        m_result.nearestConstraintMiss.reset();
    }

    long long total = m_result.feasible;
    const std::pair<std::string_view, long long> reasons[] = { { "memory", m_rejected.memory },
        { "divisibility", m_rejected.divisibility }, { "host-memory", m_rejected.hostMemory },
        { "deadline", m_rejected.deadline }, { "budget", m_rejected.budget } };
    for (const auto& [reason, n] : reasons) {
        total += n;
        if (n > 0 || reason == "memory" || reason == "divisibility")
            m_result.rejected.push_back({ std::string(reason), n });
    }
    // Reported candidates failing the validator would be a planner bug; counted, never hidden.
    if (m_rejected.invalid > 0)
        m_result.rejected.push_back({ "invalid", m_rejected.invalid });
    m_result.searched = total;
    return std::move(m_result);
}

void Searcher::searchCount(int gpus)
{
    m_cluster.gpus = gpus;
    for (int tp : m_axes.tps) {
        if (m_topChanged && m_options.partialTraining)
            m_options.partialTraining(m_top.items());
        m_topChanged = false;
        if (stopped())
            return;
        if ((m_arch.heads > 0 && m_arch.heads % tp != 0) || gpus % tp != 0)
            continue;
        for (int cp : m_axes.cps) {
            const int seqLen = m_cfg.seqLen;
            const bool cpFixed = m_axes.cps.size() == 1;
            if (seqLen % cp != 0 || (cp > 1 && seqLen / cp < kMinCpChunk && !cpFixed)
                || gpus % (tp * cp) != 0)
                continue;
            const int perTpCp = gpus / (tp * cp);
            const int ppFirst = m_axes.fixedPp ? m_axes.fixedPp : 1;
            const int ppLast = m_axes.fixedPp ? m_axes.fixedPp : std::min(m_layers, perTpCp);
            for (int pp = ppFirst; pp <= ppLast; ++pp)
                if (perTpCp % pp == 0 && pp <= m_layers)
                    searchParallel(gpus, tp, cp, pp);
        }
    }
}

void Searcher::searchParallel(int gpus, int tp, int cp, int pp)
{
    const int dp = gpus / (tp * cp * pp);
    const long long inner = innerChoices(tp, pp);
    const long long perGroupChoices
        = inner * long(m_axes.zeros.size()) * long(m_axes.offloads.size());
    if (m_sequences == 0 || m_sequences % dp != 0) {
        m_rejected.divisibility += perGroupChoices;
        return;
    }
    const long long perReplica = m_sequences / dp;
    microBatchChoices(perReplica, m_microBatches);
    if (m_axes.fixedMicroBatch) {
        const bool whole = perReplica % m_axes.fixedMicroBatch == 0;
        m_microBatches.assign(whole ? 1 : 0, m_axes.fixedMicroBatch);
    }
    m_experts.clear();
    if (m_axes.fixedEp)
        m_experts.push_back(m_axes.fixedEp);
    else
        for (int ep = 1; ep <= dp && ep <= (m_moe ? m_arch.moe->experts : 1); ep *= 2)
            m_experts.push_back(ep);
    for (int ep : m_experts) {
        if (dp % ep != 0 || (m_moe && m_arch.moe->experts % ep != 0) || m_microBatches.empty()) {
            m_rejected.divisibility += perGroupChoices;
            continue;
        }
        m_cfg.tp = tp;
        m_cfg.cp = cp;
        m_cfg.pp = pp;
        m_cfg.ep = ep;
        for (int zero : m_axes.zeros)
            for (const OffloadChoice& off : m_axes.offloads) {
                if (off.params && zero < 3)
                    continue; // ZeRO-Infinity offloads sharded parameters
                m_cfg.zeroStage = zero;
                m_cfg.offloadOptimizer = off.optimizer;
                m_cfg.offloadParams = off.params;
                searchGroup(gpus, tp, pp, perReplica, inner * long(m_microBatches.size()));
            }
    }
}

void Searcher::searchGroup(int gpus, int tp, int pp, long long perReplica, long long group)
{
    if (m_result.capped || (m_options.maxEstimates > 0 && stopped()))
        return;
    if (m_options.prune) {
        // The group's states bound every member from below: activations only add.
        const bool probeIsMember = m_probeBase
            && std::find(
                   m_axes.sequenceParallel.begin(), m_axes.sequenceParallel.end(), tp > 1 ? 1 : 0)
                != m_axes.sequenceParallel.end();
        m_cfg.recompute = Recompute::Full;
        m_cfg.recomputeEvery = m_fullEvery;
        m_cfg.virtualStages = 1;
        m_cfg.sequenceParallel = tp > 1;
        m_cfg.microBatch = m_microBatches.front();
        m_cfg.gradAccum = static_cast<int>(perReplica / m_cfg.microBatch);
        ++m_result.estimates;
        const TrainingMemory probe
            = estimateTrainingMemory(m_arch, m_counts, m_cfg, m_cluster, m_gpu);
        const MemoryBreakdown& b = probe.perGpu;
        const OverheadConfig& overhead = m_plan.training.overhead;
        const double states = overhead.fixedBytes
            + (1 + overhead.fragmentation) * (b.weights + b.gradients + b.optimizer);
        if (probe.hostBytesPerNode > m_options.hostBytesPerNode) {
            m_rejected.hostMemory += group;
            return;
        }
        if (states > m_usable) {
            if (probeIsMember)
                considerMiss(evaluate(gpus));
            m_rejected.memory += group;
            return;
        }
    }
    const int layersPerStage = (m_layers + pp - 1) / pp;
    for (const RecomputeChoice& r : m_axes.recomputes) {
        if (!recomputeApplies(r, layersPerStage))
            continue; // every-k with k >= the stage's layers is full recompute
        m_cfg.recompute = r.mode;
        m_cfg.recomputeEvery = r.every;
        for (int sp : m_axes.sequenceParallel) {
            if (!spApplies(sp, tp))
                continue;
            m_cfg.sequenceParallel = sp != 0;
            for (int v : m_axes.virtualStages) {
                if (!interleavingApplies(v, pp))
                    continue;
                m_cfg.virtualStages = v;
                if (m_options.maxEstimates > 0 && stopped())
                    return; // the cap is checked between rows: at most one row over it
                searchRow(gpus, perReplica);
            }
        }
    }
}

// Micro-batches ascending, grad-accum = per-replica sequences / micro-batch.
void Searcher::searchRow(int gpus, long long perReplica)
{
    const SearchOptions& o = m_options;
    for (std::size_t i = 0; i < m_microBatches.size(); ++i) {
        m_cfg.microBatch = m_microBatches[i];
        m_cfg.gradAccum = static_cast<int>(perReplica / m_cfg.microBatch);
        ++m_result.evaluated;
        ++m_result.estimates;
        Candidate c = evaluate(gpus);
        if (c.hostBytesPerNode > o.hostBytesPerNode) {
            ++m_rejected.hostMemory;
            continue;
        }
        if (c.verdict != FitVerdict::Fits) {
            considerMiss(c);
            ++m_rejected.memory;
            if (o.prune) { // activations never shrink with a larger micro-batch
                m_rejected.memory += long(m_microBatches.size() - i - 1);
                return;
            }
            continue;
        }
        const TrainingCompute t = estimateCompute(m_arch, m_counts, m_cfg, m_cluster, m_gpu);
        c.stepTimeS = t.stepTimeS;
        c.tokensPerS = t.tokensPerS;
        c.trainTimeS = t.trainTimeS;
        c.cost = t.cost;
        std::optional<Candidate>& missed = m_result.nearestConstraintMiss;
        if (o.goal == SearchGoal::MinCost && m_cfg.deadlineS && c.trainTimeS > *m_cfg.deadlineS) {
            ++m_rejected.deadline;
            if (!missed || c.trainTimeS < missed->trainTimeS
                || (c.trainTimeS == missed->trainTimeS && ranksBefore(o.goal, c, *missed)))
                missed = c;
            continue;
        }
        if (o.goal == SearchGoal::MinTime && m_cfg.budgetUsd && c.cost > *m_cfg.budgetUsd) {
            ++m_rejected.budget;
            if (!missed || c.cost < missed->cost
                || (c.cost == missed->cost && ranksBefore(o.goal, c, *missed)))
                missed = c;
            continue;
        }
        ++m_result.feasible;
        m_topChanged = m_top.offer(c) || m_topChanged;
        m_front.offer(c);
        if (o.keepAllFeasible)
            m_result.feasibleList.push_back(c);
    }
}

} // namespace

SearchResult search(const Plan& plan, const SearchOptions& options)
{
    const auto started = std::chrono::steady_clock::now();
    SearchResult result = Searcher(plan, options).run();
    result.elapsedS
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

} // namespace envelope
