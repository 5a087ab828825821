// The serving search: engine layout (TP, or for a MoE model data-parallel attention over EP) x
// replicas x weight bits x KV bits for the plan's serving.concurrency sequences of
// serving.context tokens. Each replica is one engine of tp (or ep) GPUs that
// estimateServing sizes and times (the function estimate() runs); the fleet splits the target
// concurrency over its replicas, ceil(concurrency / replicas) each, as core/rl splits a step's
// completions over rollout engines. docs/planner.md, "Serving".
#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

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

// A layout's weight and KV bits: the plan's formats where they store these bits, else the
// engine's own at those bits.
void setBits(ServingConfig& cfg, const Plan& plan, int weightBits, int kvBits)
{
    cfg.weightBits = weightBits;
    cfg.kvBits = kvBits;
    cfg.weightFormat = weightFormatBits(plan.serving.weightFormat) == weightBits
        ? plan.serving.weightFormat
        : WeightFormat::Auto;
    cfg.kvFormat = kvCacheFormatBits(plan.serving.kvFormat) == kvBits ? plan.serving.kvFormat
                                                                      : KvCacheFormat::Auto;
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
    // An xPyD split: its pools' PoolRole (-1: an aggregated layout). Its capacity is known from
    // its pools' rates; its estimate runs when its bisection comes.
    int prefillRole = -1, decodeRole = -1;
    bool disaggregated() const { return prefillRole >= 0; }
};

// The figures of one replica's estimate a candidate states (estimateServing's, as `estimate`
// of the applied plan reports them).
void takeEstimate(ServingCandidate& c, const ServingEstimate& e, const Gpu& gpu)
{
    c.perGpuBytes = e.perGpu.total();
    c.gpuMemoryBytes = gpu.memoryBytes;
    c.maxSequences = e.maxSequences;
    c.ttftS = e.ttftS;
    c.itlS = e.itlS;
    c.fits = e.fits;
}

// An xPyD prospect's estimate and the candidate figures it gives: the decode pool's ITL
// and sequences, TTFT through the prefill pool and the transfer, the fuller pool's GPU.
void completeProspect(GoodputProspect& p, const ModelArch& arch, const ParamCounts& counts,
    const Gpu& gpu)
{
    p.estimate = estimateServing(arch, counts, p.config, gpu);
    ServingCandidate& c = p.candidate;
    takeEstimate(c, p.estimate, gpu);
    const DisaggregationEstimate& g = *p.estimate.disaggregation;
    c.perGpuBytes = std::max(g.prefill.perGpu.total(), g.decode.perGpu.total());
    c.tokensPerS = 0;
}


// One engine layout in each role of a disaggregated deployment, timed once: whether its weights
// leave a KV pool, and the requests/s one worker sustains as a prefill or a decode worker
// (disaggregatedRankCapacities x the worker's attention ranks).
struct PoolRole {
    ServingParallel engine;
    bool fitsWeights = false;
    double prefillRankRps = 0, decodeRankRps = 0; // disaggregatedRankCapacities
    // Its (engine, engine) deployment, for the goodput bounds computed when first needed.
    ServingConfig config;
    ServingEstimate estimate;
    // Each pool's rank alone (disaggregatedPoolAlone), computed when a split first needs it:
    // unloaded only until the top list is full, then with its bound.
    std::optional<PoolAlone> prefillAlone, decodeAlone;
    bool prefillBounded = false, decodeBounded = false;
    int prefillRanks = 1, decodeRanks = 1;
};

ServingPool poolOf(const ServingParallel& e, int workers)
{
    return { workers, e.tp, e.ep, e.dp };
}

// The prefill worker counts worth a goodput bisection for one prefill and one decode layout on
// `gpus` GPUs: the split whose capacity, min(x x prefill rate, y x decode rate) with y every GPU
// left in decode workers, is highest, and one prefill worker either side of it (a TTFT
// objective wants prefill headroom, a TPOT one smaller decode batches). Capacity is unimodal
// in x: one side rises, the other falls.
// x prefill workers and y decode workers: estimateServingLoad's capacity_rps of the applied plan,
// bit for bit (its bisection starts from it).
double splitCapacity(const PoolRole& p, int x, const PoolRole& d, int y)
{
    return std::min(p.prefillRankRps * std::max(1, x * p.prefillRanks),
        d.decodeRankRps * std::max(1, y * d.decodeRanks));
}

std::vector<int> splitsWorthBisecting(const PoolRole& p, const PoolRole& d, int gpus)
{
    const int pg = p.engine.gpus(), dg = d.engine.gpus();
    int best = 0;
    double bestCapacity = 0;
    for (int x = 1; 1LL * x * pg + dg <= gpus; ++x) {
        const int y = (gpus - x * pg) / dg;
        const double capacity = splitCapacity(p, x, d, y);
        if (capacity > bestCapacity) {
            bestCapacity = capacity;
            best = x;
        }
    }
    std::vector<int> out;
    if (best == 0)
        return out;
    for (int x : { best - 1, best, best + 1 })
        if (x >= 1 && 1LL * x * pg + dg <= gpus)
            out.push_back(x);
    return out;
}

// One engine layout as a pool of a disaggregated deployment, at `dcfg`'s formats: its weights
// check and each role's capacity per attention rank (disaggregatedRankCapacities), timed once
// and combined for every split.
PoolRole timedRole(const Plan& plan, const ParamCounts& counts, ServingConfig dcfg,
    const ServingParallel& engine, int target, ServingSearchResult& r)
{
    PoolRole role;
    role.engine = engine;
    dcfg.tp = engine.tp;
    dcfg.ep = engine.ep;
    dcfg.dpAttention = engine.dp > 1;
    dcfg.concurrency = target;
    dcfg.disaggregation = ServingDisaggregation { poolOf(engine, 1), poolOf(engine, 1) };
    ++r.estimates;
    const ServingEstimate e = estimateServing(plan.model.arch, counts, dcfg, plan.gpu.gpu);
    role.fitsWeights = e.fitsWeights;
    if (role.fitsWeights) {
        const RankCapacities caps = disaggregatedRankCapacities(plan.model.arch, dcfg, plan.gpu.gpu, e);
        role.prefillRankRps = caps.prefillRps;
        role.decodeRankRps = caps.decodeRps;
        role.prefillRanks = caps.prefillRanks;
        role.decodeRanks = caps.decodeRanks;
        role.config = dcfg;
        role.estimate = e;
    }
    return role;
}

// The deployment of x prefill workers of `p`'s layout and y decode workers of `d`'s, the rest of
// the serving section `base`'s: serving.tp, ep and dp_attention are the decode pool's and
// serving.concurrency one decode worker's share of `target`.
ServingConfig splitConfig(ServingConfig base, const PoolRole& p, int x, const PoolRole& d, int y, int target)
{
    base.tp = d.engine.tp;
    base.ep = d.engine.ep;
    base.dpAttention = d.engine.dp > 1;
    base.concurrency = static_cast<int>((target + y - 1) / y);
    base.disaggregation = ServingDisaggregation { poolOf(p.engine, x), poolOf(d.engine, y) };
    return base;
}

// One pool's rank alone (disaggregatedPoolAlone), computed once per layout and role: unloaded
// only, or with `bound` its goodput bound too (computed again when a bound is first asked of an
// unloaded run that met the SLO).
const PoolAlone& poolAloneOf(PoolRole& role, PoolSide side, bool bound, const Plan& plan,
    ServingSearchResult& r)
{
    const bool prefill = side == PoolSide::Prefill;
    std::optional<PoolAlone>& slot = prefill ? role.prefillAlone : role.decodeAlone;
    bool& bounded = prefill ? role.prefillBounded : role.decodeBounded;
    if (!slot || (bound && !bounded && slot->unloadedMiss.empty())) {
        ++r.estimates;
        ++r.poolBounds;
        const double rankCapacity = prefill ? role.prefillRankRps : role.decodeRankRps;
        slot = disaggregatedPoolAlone(
            plan.model.arch, role.config, plan.gpu.gpu, role.estimate, side, rankCapacity, bound);
        bounded = bound;
    }
    return *slot;
}

// One serving-min-gpus probe: the fleet `layout` describes, `config` its applied serving
// section, estimated and loaded as `envelope-cli estimate` does; `c` gets its figures and, when
// it misses, why. A fleet whose queue grows without bound serves no SLO, whatever its
// objectives (a TPOT-only SLO is not missed by the queue itself).
bool fleetMeetsSlo(const Plan& plan, const ParamCounts& counts, const ServingConfig& config,
    const ServingLayout& layout, ServingCandidate& c)
{
    const ServingEstimate e = estimateServing(plan.model.arch, counts, config, plan.gpu.gpu);
    const ServingLoad load
        = estimateServingLoad(plan.model.arch, config, plan.gpu.gpu, e, layout.clusterGpus);
    c = {};
    c.layout = layout;
    c.gpus = layout.clusterGpus;
    takeEstimate(c, e, plan.gpu.gpu);
    c.tokensPerS = load.outputTokensPerS;
    c.capacityRps = load.capacityRps;
    const bool meets = load.meetsSlo.value_or(false) && !load.saturated;
    c.sloNote = meets          ? std::string()
        : !load.sloMiss.empty() ? load.sloMiss
        : load.saturated        ? std::string("the offered rate is above capacity")
                                : load.sloNote;
    return meets;
}

// serving-min-gpus under a workload and an SLO: for every engine layout and format, the fewest
// replicas (up to `maxGpus` GPUs) whose fleet meets the SLO at the workload's load, each probe
// the applied plan's own estimateServingLoad. A request-rate workload starts at the fewest
// replicas whose capacity exceeds the rate (fewer are saturated); a closed loop at one, and
// stops at one user per attention rank. Layouts go in the order of the fewest GPUs they could
// need; once the top list is full, one that could only need more GPUs than its last is skipped.
void minGpusUnderSlo(const Plan& plan, const ParamCounts& counts,
    const std::vector<ServingParallel>& engines, const std::vector<int>& weightBits,
    const std::vector<int>& kvBits, int maxGpus, ServingConfig cfg,
    Collector<ServingCandidate>& collect, ServingSearchResult& r,
    const std::function<void(const ServingCandidate&)>& missed)
{
    const ModelArch& arch = plan.model.arch;
    const ServingWorkload& w = *plan.serving.workload;
    const int target = plan.serving.concurrency;
    const auto setLayout = [&](const ServingParallel& engine, int wb, int kb) {
        cfg.tp = engine.tp;
        cfg.ep = engine.ep;
        cfg.dpAttention = engine.dp > 1;
        setBits(cfg, plan, wb, kb);
    };
    // Each layout whose weights fit, with the replicas it needs at least and may use at most.
    struct Option {
        ServingParallel engine;
        int wb = 16, kb = 16;
        long long fewest = 1, most = 1;
    };
    std::vector<Option> options;
    for (const ServingParallel& engine : engines)
        for (int wb : weightBits)
            for (int kb : kvBits) {
                Option option { engine, wb, kb, 1, maxGpus / engine.gpus() };
                if (w.concurrency)
                    option.most = std::min<long long>(
                        option.most, (*w.concurrency + engine.dp - 1) / engine.dp);
                if (option.most < 1) {
                    collect.reject("divisibility");
                    continue;
                }
                setLayout(engine, wb, kb);
                cfg.concurrency = target;
                ++r.estimates;
                const ServingEstimate e = estimateServing(arch, counts, cfg, plan.gpu.gpu);
                if (!e.fitsWeights) {
                    collect.reject("memory");
                    continue;
                }
                if (w.requestRate) {
                    // One replica's capacity: fewer replicas than rate / capacity saturate.
                    ++r.estimates;
                    const double one
                        = servingCapacityRps(arch, cfg, plan.gpu.gpu, e, engine.gpus());
                    if (!(one > 0)) {
                        collect.reject("slo");
                        continue;
                    }
                    option.fewest = std::min<long long>(option.most,
                        static_cast<long long>(std::floor(*w.requestRate / one)) + 1);
                }
                options.push_back(option);
            }
    std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
        return a.fewest * a.engine.gpus() < b.fewest * b.engine.gpus();
    });
    // More GPUs than the last of a full top list cannot enter it.
    const auto beyondTop = [&](long long gpus) {
        return collect.bestIsFull() && gpus > collect.best().back().gpus;
    };

    for (size_t i = 0; i < options.size(); ++i) {
        const Option& option = options[i];
        const ServingParallel& engine = option.engine;
        if (beyondTop(option.fewest * engine.gpus())) {
            collect.reject("above-top-gpus", static_cast<long>(options.size() - i));
            break;
        }
        setLayout(engine, option.wb, option.kb);
        ServingCandidate c;
        // The applied plan of `replicas` engines: its estimate and its load.
        const auto probe = [&](long long replicas) {
            cfg.concurrency = static_cast<int>((target + replicas - 1) / replicas);
            const int gpus = static_cast<int>(replicas * engine.gpus());
            r.estimates += 2;
            return fleetMeetsSlo(plan, counts, cfg,
                { gpus, engine.tp, static_cast<int>(replicas), engine.ep, engine.dp > 1,
                    option.wb, option.kb, cfg.concurrency, std::nullopt },
                c);
        };
        ++r.evaluated;
        // `low` replicas miss (or saturate), `high` are tried: doubling, then a bisection.
        long long low = option.fewest - 1, high = option.fewest;
        bool met = false;
        while (!(met = probe(high)) && high < option.most && !beyondTop(high * engine.gpus())) {
            low = high;
            high = std::min(option.most, high * 2);
        }
        if (!met) {
            collect.reject(beyondTop(high * engine.gpus()) ? "above-top-gpus" : "slo");
            missed(c);
            continue;
        }
        // The candidate is the fewest replicas that met: its probe's figures.
        ServingCandidate fewest = c;
        while (high - low > 1) {
            const long long mid = low + (high - low) / 2;
            if (probe(mid)) {
                high = mid;
                fewest = c;
            } else {
                low = mid;
            }
        }
        collect.accept(fewest, r, r.feasibleList);
        if (!collect.between(r, double(i + 1) / double(options.size())))
            break;
    }
}

// serving-min-gpus under a workload and an SLO, disaggregated (docs/planner.md, "The fewest
// GPUs under an SLO"): for every (prefill layout, decode layout) pair of one format, the fewest
// GPUs x prefill workers and y decode workers need to meet the SLO at the workload's load, each
// probe the applied plan's own estimateServingLoad. A request rate R starts each pool at the
// fewest workers whose capacity exceeds R (x0 = floor(R / a prefill worker's rate) + 1, y0
// likewise; fewer saturate); a closed loop at one each. Both pools double together until the
// deployment meets the SLO, then each shrinks in turn by bisection (y, then x, then y again),
// more workers of either pool never serving worse: the answer is one neither pool can lose a
// worker from. Pairs go in the order of the fewest GPUs they could need (x0 and y0); once the
// top list is full, a pair that could only need more than its last is skipped, and a pool whose
// rank misses the SLO even unloaded rules out every pair using it.
void minGpusDisaggregated(const Plan& plan, const ParamCounts& counts,
    const std::vector<ServingParallel>& engines, const std::vector<int>& weightBits,
    const std::vector<int>& kvBits, int maxGpus, ServingConfig cfg,
    Collector<ServingCandidate>& collect, ServingSearchResult& r,
    const std::function<void(const ServingCandidate&)>& missed)
{
    const ServingWorkload& w = *plan.serving.workload;
    const int target = plan.serving.concurrency;
    struct Pair {
        size_t p = 0, d = 0;
        int wb = 16, kb = 16;
        long long x0 = 1, y0 = 1;
    };
    std::vector<PoolRole> roles;
    std::vector<Pair> pairs;
    for (int wb : weightBits)
        for (int kb : kvBits) {
            setBits(cfg, plan, wb, kb);
            const size_t first = roles.size();
            for (const ServingParallel& engine : engines) {
                if (engine.gpus() >= maxGpus)
                    continue;
                if (!collect.between(r, 0.0))
                    return;
                roles.push_back(timedRole(plan, counts, cfg, engine, target, r));
            }
            for (size_t pi = first; pi < roles.size(); ++pi)
                for (size_t di = first; di < roles.size(); ++di) {
                    const PoolRole& p = roles[pi];
                    const PoolRole& d = roles[di];
                    if (!p.fitsWeights || !d.fitsWeights) {
                        collect.reject("memory");
                        continue;
                    }
                    const double prefillWorker = p.prefillRankRps * p.prefillRanks;
                    const double decodeWorker = d.decodeRankRps * d.decodeRanks;
                    if (!(prefillWorker > 0) || !(decodeWorker > 0)) {
                        collect.reject("slo");
                        continue;
                    }
                    Pair pair { pi, di, wb, kb, 1, 1 };
                    if (w.requestRate) {
                        pair.x0 = static_cast<long long>(std::floor(*w.requestRate / prefillWorker)) + 1;
                        pair.y0 = static_cast<long long>(std::floor(*w.requestRate / decodeWorker)) + 1;
                    }
                    pairs.push_back(pair);
                }
        }
    const auto gpusOf = [&](const Pair& pair, long long x, long long y) {
        return x * roles[pair.p].engine.gpus() + y * roles[pair.d].engine.gpus();
    };
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Pair& a, const Pair& b) {
        return gpusOf(a, a.x0, a.y0) < gpusOf(b, b.x0, b.y0);
    });
    const auto beyondTop = [&](long long gpus) {
        return collect.bestIsFull() && gpus > collect.best().back().gpus;
    };
    for (size_t i = 0; i < pairs.size() && !r.cancelled && !r.capped; ++i) {
        const Pair& pair = pairs[i];
        PoolRole& p = roles[pair.p];
        PoolRole& d = roles[pair.d];
        const long long bound = gpusOf(pair, pair.x0, pair.y0);
        if (bound > maxGpus) {
            collect.reject("above-max-gpus");
            continue;
        }
        if (beyondTop(bound)) {
            collect.reject("above-top-gpus", static_cast<long>(pairs.size() - i));
            break;
        }
        ServingCandidate c;
        const auto probe = [&](long long x, long long y) {
            // The decode role's config holds the pair's formats.
            const ServingConfig pc = splitConfig(d.config, p, int(x), d, int(y), target);
            const int gpus = static_cast<int>(gpusOf(pair, x, y));
            r.estimates += 2;
            return fleetMeetsSlo(plan, counts, pc,
                { gpus, d.engine.tp, int(y), d.engine.ep, d.engine.dp > 1, pair.wb, pair.kb,
                    pc.concurrency, pc.disaggregation },
                c);
        };
        // Each pool's rank alone and unloaded, once per layout and role.
        const std::string& prefillMiss = poolAloneOf(p, PoolSide::Prefill, false, plan, r).unloadedMiss;
        const std::string& decodeMiss = poolAloneOf(d, PoolSide::Decode, false, plan, r).unloadedMiss;
        if (!prefillMiss.empty() || !decodeMiss.empty()) {
            probe(pair.x0, pair.y0);
            c.sloNote = fmt::format("even unloaded, the {} pool alone has {}",
                prefillMiss.empty() ? "decode" : "prefill",
                prefillMiss.empty() ? decodeMiss : prefillMiss);
            collect.reject("slo");
            missed(c);
            continue;
        }
        ++r.evaluated;
        // Both pools double until the deployment meets the SLO.
        long long x = pair.x0, y = pair.y0;
        bool met = false;
        while (!(met = probe(x, y))) {
            if (gpusOf(pair, 2 * x, 2 * y) > maxGpus || beyondTop(gpusOf(pair, 2 * x, 2 * y)))
                break;
            x *= 2;
            y *= 2;
        }
        if (!met) {
            collect.reject(beyondTop(gpusOf(pair, 2 * x, 2 * y)) ? "above-top-gpus" : "slo");
            missed(c);
            continue;
        }
        ServingCandidate best = c;
        // The fewest of one pool's workers with the other's fixed: a bisection over (lo, hi],
        // lo known to miss (below the pool's first count: saturated), hi to meet.
        const auto fewest = [&](long long lo, long long hi, bool prefillSide) {
            while (hi - lo > 1) {
                const long long mid = lo + (hi - lo) / 2;
                if (prefillSide ? probe(mid, y) : probe(x, mid)) {
                    hi = mid;
                    best = c;
                } else {
                    lo = mid;
                }
            }
            return hi;
        };
        y = fewest(pair.y0 - 1, y, false);
        x = fewest(pair.x0 - 1, x, true);
        y = fewest(pair.y0 - 1, y, false);
        collect.accept(best, r, r.feasibleList);
        if (!collect.between(r, double(i + 1) / double(pairs.size())))
            break;
    }
}

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
    l.disaggregation = plan.serving.disaggregation;
    return l;
}

Plan applyServingLayout(const Plan& plan, const ServingLayout& l)
{
    Plan p = plan;
    p.cluster.gpus = l.clusterGpus;
    p.serving.tp = l.tp;
    p.serving.ep = l.ep;
    p.serving.dpAttention = l.dpAttention;
    // An aggregated candidate drops the plan's pools; an xPyD one brings its own.
    p.serving.disaggregation = l.disaggregation;
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
    // --fix serving.disaggregation=false: aggregated engines only; =true: xPyD only.
    const FixedField* fixedDisaggregation = fixedOf(o, "serving.disaggregation");
    const bool searchAggregated = !fixedDisaggregation || fixedDisaggregation->number == 0;
    const bool searchDisaggregated = (goodputGoal || (minGpus && hasGoodputObjective(plan)))
        && (!fixedDisaggregation || fixedDisaggregation->number == 1);
    // serving-min-gpus under serving.workload and serving.slo (issue 27): the fewest GPUs whose
    // fleet meets the SLO at the workload's own load (its request rate or users), prompts and
    // decodes both; each layout's fewest replicas by a doubling then a bisection over its
    // replica count (more replicas, each with a smaller share, never serve worse: the
    // assumption the goodput bisection makes of a lower rate).
    const bool sloMinGpus = minGpus && hasGoodputObjective(plan);
    if (sloMinGpus && searchAggregated)
        minGpusUnderSlo(plan, counts, engines, weightBits, kvBits, lastGpus, cfg, collect, r,
            [&](const ServingCandidate& c) {
                missed(c, sloMissRatio(c, *plan.serving.slo), true);
            });
    if (sloMinGpus && searchDisaggregated && !r.cancelled && !r.capped)
        minGpusDisaggregated(plan, counts, engines, weightBits, kvBits, lastGpus, cfg, collect, r,
            [&](const ServingCandidate& c) {
                missed(c, sloMissRatio(c, *plan.serving.slo), true);
            });
    for (int gpus = firstGpus; searchAggregated && !sloMinGpus && gpus <= lastGpus; ++gpus) {
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
                    setBits(cfg, plan, wb, kb);
                    ++r.evaluated;
                    ++r.estimates;
                    const ServingEstimate e = estimateServing(arch, counts, cfg, plan.gpu.gpu);
                    ServingCandidate c;
                    c.layout = { minGpus ? engine.gpus() * replicas : plan.cluster.gpus, tp,
                        replicas, engine.ep, engine.dp > 1, wb, kb, cfg.concurrency, std::nullopt };
                    c.gpus = engine.gpus() * replicas;
                    takeEstimate(c, e, plan.gpu.gpu);
                    c.tokensPerS = e.itlS > 0 ? target / e.itlS : 0;
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
                        prospects.push_back({ c, cfg, e, -1, -1 });
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
    // serving-max-goodput's xPyD layouts (docs/planner.md, "Disaggregated prefill and decode"):
    // on the plan's GPUs, x prefill workers of one engine layout and y decode workers of
    // another, at every weight and KV format (both pools load one checkpoint and move one KV
    // format). Each layout is timed once per role; each (prefill, decode) pair then offers the
    // splits worth a bisection, estimated exactly as the applied plan is.
    std::vector<PoolRole> roles;
    if (goodputGoal && searchDisaggregated && !r.cancelled && !r.capped) {
        const int gpus = lastGpus;
        ServingConfig dcfg = cfg;
        for (int wb : weightBits)
            for (int kb : kvBits) {
                if (r.cancelled || r.capped)
                    break;
                setBits(dcfg, plan, wb, kb);
                const size_t firstRole = roles.size();
                for (const ServingParallel& engine : engines) {
                    if (engine.gpus() >= gpus)
                        continue;
                    // Two capacity runs a layout: a cancel is seen between them.
                    if (!collect.between(r, 0.5))
                        break;
                    roles.push_back(timedRole(plan, counts, dcfg, engine, target, r));
                }
                if (r.cancelled || r.capped)
                    break;
                for (size_t pi = firstRole; pi < roles.size(); ++pi)
                    for (size_t di = firstRole; di < roles.size(); ++di) {
                        const PoolRole& p = roles[pi];
                        const PoolRole& d = roles[di];
                        if (!p.fitsWeights || !d.fitsWeights) {
                            collect.reject("memory");
                            continue;
                        }
                        const std::vector<int> splits = splitsWorthBisecting(p, d, gpus);
                        if (splits.empty()) {
                            collect.reject(p.engine.gpus() + d.engine.gpus() > gpus
                                    ? "divisibility"
                                    : "slo");
                            continue;
                        }
                        for (int x : splits) {
                            // Estimated when its bisection comes (most never do: the bound
                            // stops them first).
                            const int y = (gpus - x * p.engine.gpus()) / d.engine.gpus();
                            GoodputProspect prospect {
                                {}, splitConfig(dcfg, p, x, d, y, target), {}, int(pi), int(di)
                            };
                            const ServingConfig& pc = prospect.config;
                            ServingCandidate& c = prospect.candidate;
                            c.layout = { std::max(plan.cluster.gpus, gpus), d.engine.tp, y,
                                d.engine.ep, d.engine.dp > 1, wb, kb, pc.concurrency,
                                pc.disaggregation };
                            c.gpus = x * p.engine.gpus() + y * d.engine.gpus();
                            c.gpuMemoryBytes = plan.gpu.gpu.memoryBytes;
                            c.capacityRps = splitCapacity(p, x, d, y);
                            ++r.evaluated;
                            prospects.push_back(std::move(prospect));
                        }
                    }
            }
    }
    // serving-max-goodput: each layout's goodput is a bisection of simulations (a dozen), its
    // capacity one. Goodput never exceeds capacity, so in falling capacity order the bisections
    // stop once a layout's capacity cannot beat the last of the best `top` goodputs.
    std::stable_sort(
        prospects.begin(), prospects.end(), [](const GoodputProspect& a, const GoodputProspect& b) {
            return a.candidate.capacityRps > b.candidate.capacityRps;
        });
    // An xPyD pair whose split misses the SLO even at 1% of its capacity misses it at every
    // split: near zero load a request meets no queue, so its TTFT and TPOT are the pools'
    // layouts' and the transfer's, whatever the worker counts. Its other splits are not bisected.
    // One flag per (prefill role, decode role): the roles of one format pair only with each other.
    std::vector<char> pairMisses(roles.size() * roles.size(), 0);
    const auto pairOf = [&](const GoodputProspect& p) {
        return size_t(p.prefillRole) * roles.size() + size_t(p.decodeRole);
    };
    // A pool's rank alone, once per layout and role: unloaded only until the top list is full
    // (one simulation, which rules out a pool no rate suits), then with its goodput bound (a
    // bisection, worth it only once there is a goodput to beat).
    const auto poolAlone = [&](PoolRole& role, PoolSide side) -> const PoolAlone& {
        return poolAloneOf(role, side, collect.bestIsFull(), plan, r);
    };
    for (size_t i = 0; i < prospects.size() && !r.cancelled && !r.capped; ++i) {
        GoodputProspect& p = prospects[i];
        ServingCandidate& c = p.candidate;
        if (collect.bestIsFull() && c.capacityRps <= collect.best().back().goodputRps.value_or(0)) {
            collect.reject("below-top-goodput", long(prospects.size() - i));
            break;
        }
        if (p.disaggregated() && pairMisses[pairOf(p)]) {
            collect.reject("slo");
            continue;
        }
        if (p.disaggregated()) {
            const PoolRole& prefillRole = roles[size_t(p.prefillRole)];
            const PoolRole& decodeRole = roles[size_t(p.decodeRole)];
            const PoolAlone& prefill = poolAlone(roles[size_t(p.prefillRole)], PoolSide::Prefill);
            const PoolAlone& decode = poolAlone(roles[size_t(p.decodeRole)], PoolSide::Decode);
            if (!prefill.unloadedMiss.empty() || !decode.unloadedMiss.empty()) {
                // No rate meets the SLO with these pools: figures for the nearest miss only.
                ++r.estimates;
                completeProspect(p, arch, counts, plan.gpu.gpu);
                const bool prefillMisses = !prefill.unloadedMiss.empty();
                c.sloNote = fmt::format("no request rate meets the SLO: even unloaded, the {} "
                                        "pool alone has {}",
                    prefillMisses ? "prefill" : "decode",
                    prefillMisses ? prefill.unloadedMiss : decode.unloadedMiss);
                collect.reject("slo");
                if (p.estimate.fitsWeights)
                    missed(c, sloMissRatio(c, *plan.serving.slo), true);
                continue;
            }
            // Goodput <= each pool's bound x its ranks (infinite until the top list is full).
            const ServingDisaggregation& pools = *p.config.disaggregation;
            const double bound = std::min(
                pools.prefill.workers * prefillRole.prefillRanks * prefill.boundRps,
                pools.decode.workers * decodeRole.decodeRanks * decode.boundRps);
            if (collect.bestIsFull() && bound <= collect.best().back().goodputRps.value_or(0)) {
                collect.reject("below-top-goodput");
                continue;
            }
            ++r.estimates;
            completeProspect(p, arch, counts, plan.gpu.gpu);
            if (!p.estimate.fitsWeights) {
                collect.reject("memory");
                missed(c, missRatio(c, r, p.config.gpuMemoryUtilization));
                continue;
            }
        }
        ++r.estimates;
        ++r.bisected;
        // The applied plan's bisection, from the capacity the bound used.
        const ServingLoad load
            = servingGoodputAt(arch, p.config, plan.gpu.gpu, p.estimate, c.gpus, c.capacityRps);
        c.goodputRps = load.goodputRps.value_or(0);
        c.sloNote = load.sloNote;
        c.tokensPerS = *c.goodputRps * load.meanOutputTokens;
        if (!(*c.goodputRps > 0)) {
            if (p.disaggregated())
                pairMisses[pairOf(p)] = 1;
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
