// The serving search: engine layout (TP, or for a MoE model data-parallel attention over EP) x
// replicas x weight bits x KV bits for the plan's serving.concurrency sequences of
// serving.context tokens. Each replica is one engine of tp (or ep) GPUs that
// estimateServing sizes and times (the function estimate() runs); the fleet splits the target
// concurrency over its replicas, ceil(concurrency / replicas) each, as core/rl splits a step's
// completions over rollout engines. docs/planner.md, "Serving".
#include <algorithm>
#include <chrono>
#include <cmath>

#include "plan/planio.h"
#include "search/detail.h"
#include "serving/load.h"
#include "serving/serving.h"

namespace envelope {
namespace {

using namespace searchdetail;

// The quantized precisions the core sizes (serving.weight_bits, serving.kv_bits): weights bf16,
// int8, int4; KV bf16 and int8 (int4 KV is left to --fix: engines ship it rarely).
constexpr int kWeightBits[] = { 16, 8, 4 };
constexpr int kKvBits[] = { 16, 8 };

template <size_t N>
std::vector<int> fixedOr(const SearchOptions& o, const char* path, const int (&all)[N])
{
    if (const FixedField* f = fixedOf(o, path))
        return { f->number };
    return std::vector<int>(std::begin(all), std::end(all));
}

// How far a layout is from feasible: the worst of need / limit over memory (the replica's
// per-GPU total with its share of the sequences against memory x gpu_memory_utilization),
// TTFT and ITL.
double missRatio(const ServingCandidate& c, const ServingSearchResult& r, double utilization)
{
    double worst = c.perGpuBytes / std::max(1.0, c.gpuMemoryBytes * utilization);
    if (r.maxTtftS)
        worst = std::max(worst, c.ttftS / *r.maxTtftS);
    if (r.maxItlS)
        worst = std::max(worst, c.itlS / *r.maxItlS);
    return worst;
}

// serving-max-goodput: how far a layout is from meeting the SLO at any rate, the worst of its
// single-request TTFT and ITL over the tightest TTFT and TPOT objectives (lower bounds of every
// percentile under load).
double sloMissRatio(const ServingCandidate& c, const ServingSlo& slo)
{
    double worst = 0;
    for (const std::optional<double>& limit : { slo.ttftP50S, slo.ttftP90S, slo.ttftP99S })
        if (limit && *limit > 0)
            worst = std::max(worst, c.ttftS / *limit);
    for (const std::optional<double>& limit : { slo.tpotP50S, slo.tpotP90S, slo.tpotP99S })
        if (limit && *limit > 0)
            worst = std::max(worst, c.itlS / *limit);
    return worst;
}

// A layout whose weights fit, waiting for its goodput: the capacity run bounds it from above.
struct GoodputProspect {
    ServingCandidate candidate;
    ServingConfig config;
    ServingEstimate estimate;
};

} // namespace

ServingLayout servingLayoutOf(const Plan& plan)
{
    ServingLayout l;
    l.clusterGpus = plan.cluster.gpus;
    l.tp = plan.serving.tp;
    l.ep = plan.serving.ep;
    l.dpAttention = plan.serving.dpAttention;
    l.replicas = 1;
    l.weightBits = plan.serving.weightBits;
    l.kvBits = plan.serving.kvBits;
    l.concurrency = plan.serving.concurrency;
    return l;
}

Plan applyServingLayout(const Plan& plan, const ServingLayout& l)
{
    Plan p = plan;
    p.cluster.gpus = l.clusterGpus;
    p.serving.tp = l.tp;
    p.serving.ep = l.ep;
    p.serving.dpAttention = l.dpAttention;
    // A candidate is one aggregated engine layout.
    p.serving.disaggregation.reset();
    p.serving.weightBits = l.weightBits;
    p.serving.kvBits = l.kvBits;
    // A format of other bits than the layout's gives way to the engine's own at those bits.
    if (kvCacheFormatBits(p.serving.kvFormat) != 0
        && kvCacheFormatBits(p.serving.kvFormat) != l.kvBits)
        p.serving.kvFormat = KvCacheFormat::Auto;
    if (weightFormatBits(p.serving.weightFormat) != 0
        && weightFormatBits(p.serving.weightFormat) != l.weightBits)
        p.serving.weightFormat = WeightFormat::Auto;
    p.serving.concurrency = l.concurrency;
    return p;
}

ServingSearchResult searchServing(const Plan& plan, const SearchOptions& o)
{
    const auto started = std::chrono::steady_clock::now();
    ServingSearchResult r;
    r.goal = o.goal;
    r.maxTtftS = o.maxTtftS ? o.maxTtftS : plan.serving.maxTtftS;
    r.maxItlS = o.maxItlS ? o.maxItlS : plan.serving.maxItlS;
    Collector<ServingCandidate> collect(o, o.partialServing);

    const ModelArch& arch = plan.model.arch;
    const ParamCounts counts = countParameters(arch);
    const bool minGpus = o.goal == SearchGoal::ServingMinGpus;
    const bool goodputGoal = o.goal == SearchGoal::ServingMaxGoodput;
    if (goodputGoal && !hasGoodputObjective(plan)) {
        // Nothing to rank by: noSolutionMessage says what the plan lacks.
        r.elapsedS
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return r;
    }
    const FixedField* fixedGpus = fixedOf(o, "cluster.gpus");
    const int gpusPerNode
        = std::max(1, o.gpusPerNode > 0 ? o.gpusPerNode : plan.cluster.gpusPerNode);
    const int planGpus = o.maxGpus > 0 ? o.maxGpus : plan.cluster.gpus;
    const int target = plan.serving.concurrency;
    r.targetConcurrency = target;

    // TP: powers of two dividing the attention heads (validatePlan's serving.tp rule) within a
    // node, as vLLM places a tensor-parallel engine.
    const FixedField* fixedTp = fixedOf(o, "serving.tp");
    const std::vector<int> tps
        = fixedTp ? std::vector<int> { fixedTp->number } : tpChoices(arch.heads, gpusPerNode);
    const std::vector<int> weightBits = fixedOr(o, "serving.weight_bits", kWeightBits);
    const std::vector<int> kvBits = fixedOr(o, "serving.kv_bits", kKvBits);

    // GPU counts: max-throughput the plan's (every replica it holds); min-gpus 1, 2, ... up to
    // --max-gpus (default 65,536), stopping at the first that serves the target.
    int firstGpus = planGpus, lastGpus = planGpus;
    if (fixedGpus)
        firstGpus = lastGpus = fixedGpus->number;
    else if (minGpus) {
        firstGpus = 1;
        lastGpus = o.maxGpus > 0 ? o.maxGpus : 65536;
        // Past one sequence per replica for every TP group nothing changes (each replica holds
        // ceil(target / replicas) = 1 sequence): a fleet that large is the last worth trying.
        const int largestTp = tps.empty() ? 1 : *std::max_element(tps.begin(), tps.end());
        lastGpus = static_cast<int>(std::min<long long>(lastGpus, 1LL * target * largestTp));
    }

    // Engine layouts: TP engines, and for a MoE model data-parallel attention over ep GPUs
    // (ep = tp x 2, 4, ... up to the fleet and 1,024), what DeepSeek's and SGLang's large-EP
    // deployments run. A fixed serving.ep keeps only engines of that EP. Each as the plan's
    // servingParallel reads it: tp x dp GPUs, dp > 1 the attention ranks.
    const FixedField* fixedEp = fixedOf(o, "serving.ep");
    const bool moe = arch.moe && arch.moe->experts > 0;
    std::vector<ServingParallel> engines;
    for (int tp : tps) {
        if (!fixedEp || fixedEp->number == 1)
            engines.push_back({ tp, 1, 1 });
        if (!moe)
            continue;
        for (long long ep = 2LL * tp; ep <= std::min(lastGpus, 1024); ep *= 2)
            if (!fixedEp || fixedEp->number == ep)
                engines.push_back({ tp, int(ep), int(ep / tp) });
    }

    // Mutated in place per layout. The search covers aggregated TP engines: a plan's expert
    // parallelism and disaggregated pools are its own layout, not a candidate's.
    ServingConfig cfg = servingOfPlan(plan);
    cfg.disaggregation.reset();
    cfg.ep = 1;
    cfg.dpAttention = false;
    ServingCandidate miss;
    double missWorst = INFINITY;
    // serving-max-goodput: a layout whose weights fit but that misses the SLO is nearer than
    // any whose weights do not fit (their ratios are of different things).
    bool missHoldsWeights = false;
    const auto missed = [&](const ServingCandidate& c, double worst, bool holdsWeights = false) {
        if (missHoldsWeights && !holdsWeights)
            return;
        if (worst < missWorst || (holdsWeights && !missHoldsWeights)) {
            missWorst = worst;
            miss = c;
            missHoldsWeights = holdsWeights;
        }
    };
    std::vector<GoodputProspect> prospects;
    for (int gpus = firstGpus; gpus <= lastGpus; ++gpus) {
        for (const ServingParallel& engine : engines) {
            // min-gpus: the fleet is exactly `gpus`; max-throughput: as many replicas as fit.
            const int tp = engine.tp;
            if (engine.gpus() > gpus || (minGpus && gpus % engine.gpus() != 0)) {
                collect.reject("divisibility", long(weightBits.size() * kvBits.size()));
                continue;
            }
            const int replicas = gpus / engine.gpus();
            cfg.tp = tp;
            cfg.ep = engine.ep;
            cfg.dpAttention = engine.dp > 1;
            cfg.concurrency = static_cast<int>((target + replicas - 1) / replicas);
            for (int wb : weightBits)
                for (int kb : kvBits) {
                    cfg.weightBits = wb;
                    cfg.kvBits = kb;
                    // The plan's formats where they store these bits, else the engine's.
                    cfg.weightFormat = weightFormatBits(plan.serving.weightFormat) == wb
                        ? plan.serving.weightFormat
                        : WeightFormat::Auto;
                    cfg.kvFormat = kvCacheFormatBits(plan.serving.kvFormat) == kb
                        ? plan.serving.kvFormat
                        : KvCacheFormat::Auto;
                    ++r.evaluated;
                    ++r.estimates;
                    const ServingEstimate e = estimateServing(arch, counts, cfg, plan.gpu.gpu);
                    ServingCandidate c;
                    c.layout = { minGpus ? engine.gpus() * replicas : plan.cluster.gpus, tp,
                        replicas, engine.ep, engine.dp > 1, wb, kb, cfg.concurrency };
                    c.gpus = engine.gpus() * replicas;
                    c.perGpuBytes = e.perGpu.total();
                    c.gpuMemoryBytes = plan.gpu.gpu.memoryBytes;
                    c.maxSequences = e.maxSequences;
                    c.ttftS = e.ttftS;
                    c.itlS = e.itlS;
                    c.tokensPerS = e.itlS > 0 ? target / e.itlS : 0;
                    c.fits = e.fits;
                    if (goodputGoal) {
                        // The workload's requests are admitted by the KV pool, whatever
                        // serving.concurrency says: the weights must leave one.
                        if (!e.fitsWeights) {
                            collect.reject("memory");
                            missed(c, missRatio(c, r, cfg.gpuMemoryUtilization));
                            continue;
                        }
                        // One capacity simulation; the bisection below reruns it exactly.
                        c.capacityRps = servingCapacityRps(arch, cfg, plan.gpu.gpu, e, c.gpus);
                        if (!(c.capacityRps > 0)) {
                            // Why (a request longer than the pool): the load's own words.
                            c.sloNote
                                = estimateServingLoad(arch, cfg, plan.gpu.gpu, e, c.gpus).sloNote;
                            if (c.sloNote.empty())
                                c.sloNote = "no request completes in the simulation";
                            collect.reject("slo");
                            missed(c, sloMissRatio(c, *plan.serving.slo), true);
                            continue;
                        }
                        prospects.push_back({ c, cfg, e });
                        continue;
                    }
                    const char* reason = !e.fits              ? "memory"
                        : r.maxTtftS && c.ttftS > *r.maxTtftS ? "ttft"
                        : r.maxItlS && c.itlS > *r.maxItlS    ? "itl"
                                                              : nullptr;
                    if (reason) {
                        collect.reject(reason);
                        missed(c, missRatio(c, r, cfg.gpuMemoryUtilization));
                        continue;
                    }
                    collect.accept(c, r, r.feasibleList);
                }
        }
        const double fraction = lastGpus > firstGpus
            ? double(gpus - firstGpus + 1) / (lastGpus - firstGpus + 1)
            : 1.0;
        if (!collect.between(r, goodputGoal ? fraction / 2 : fraction)
            || (minGpus && r.feasible > 0))
            break;
    }
    // serving-max-goodput: each layout's goodput is a bisection of simulations (a dozen), its
    // capacity one. Goodput never exceeds capacity, so in falling capacity order the bisections
    // stop once a layout's capacity cannot beat the last of the best `top` goodputs.
    std::stable_sort(
        prospects.begin(), prospects.end(), [](const GoodputProspect& a, const GoodputProspect& b) {
            return a.candidate.capacityRps > b.candidate.capacityRps;
        });
    for (size_t i = 0; i < prospects.size() && !r.cancelled && !r.capped; ++i) {
        GoodputProspect& p = prospects[i];
        ServingCandidate& c = p.candidate;
        if (collect.bestIsFull() && c.capacityRps <= collect.best().back().goodputRps.value_or(0)) {
            collect.reject("below-top-goodput", long(prospects.size() - i));
            break;
        }
        ++r.estimates;
        const ServingLoad load = estimateServingLoad(
            arch, p.config, plan.gpu.gpu, p.estimate, c.gpus, /*goodput=*/true);
        c.goodputRps = load.goodputRps.value_or(0);
        c.sloNote = load.sloNote;
        c.tokensPerS = *c.goodputRps * load.meanOutputTokens;
        if (!(*c.goodputRps > 0)) {
            collect.reject("slo");
            missed(c, sloMissRatio(c, *plan.serving.slo), true);
        } else
            collect.accept(c, r, r.feasibleList);
        if (!collect.between(r, 0.5 + 0.5 * double(i + 1) / double(prospects.size())))
            break;
    }
    collect.finish(r, r.candidates, r.pareto);
    // Offer only what passes the plan validator (min-gpus changes cluster.gpus, which the
    // training layout must divide).
    const auto invalid = [&](const ServingCandidate& c) {
        return validatePlan(applyServingLayout(plan, c.layout)).has_value();
    };
    const long long dropped = std::erase_if(r.candidates, invalid);
    std::erase_if(r.pareto, invalid);
    if (dropped > 0)
        r.rejected.push_back({ "invalid", dropped });
    if (r.feasible == 0 && std::isfinite(missWorst))
        r.nearestMiss = miss;
    r.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

} // namespace envelope
