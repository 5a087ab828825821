// The RL pool search: how to split the plan's GPUs between trainer, reference and rollout
// (disjoint pools), or share them all (colocated), for the most steps per hour. Every layout is
// estimated by estimateRl, the function estimate() runs, on one working plan mutated in place.
// docs/planner.md, "RL".
//
// Disjoint pools: the trainer takes a multiple of the training layout's tp x pp x cp (every
// count up to 32 of them, then 2^k and 3 x 2^(k-1)); the reference a power of two or the plan's
// count (none when the plan has none); the rollout engines every GPU left, in whole engines of
// serving.tp. Giving the rollout pool the GPUs left loses nothing: in core/rl a larger pool
// has more engines, a smaller batch each, and no more memory per GPU.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "plan/planio.h"
#include "rl/detail.h"
#include "search/detail.h"

namespace envelope {
namespace {

using namespace searchdetail;

// Trainer pool sizes in units of the training layout: 1..32, then 2^k and 3 x 2^(k-1) units.
std::vector<int> trainerUnits(int maxUnits)
{
    std::vector<int> units;
    for (int u = 1; u <= std::min(32, maxUnits); ++u)
        units.push_back(u);
    for (long long p = 32; p <= maxUnits; p *= 2) {
        if (p > 32)
            units.push_back(static_cast<int>(p));
        if (p * 3 / 2 <= maxUnits)
            units.push_back(static_cast<int>(p * 3 / 2));
    }
    std::sort(units.begin(), units.end());
    units.erase(std::unique(units.begin(), units.end()), units.end());
    return units;
}

// The fullest GPU of the job: the colocated peak, or the largest role's per-GPU total (the
// trainer's with its old-policy snapshot).
double peakBytes(const RlEstimate& e)
{
    if (e.colocatedPeakBytes > 0)
        return e.colocatedPeakBytes;
    double trainer = 0, peak = 0;
    for (const RoleEstimate& role : e.perRole) {
        if (role.role == "trainer" || role.role == "old-policy")
            trainer += role.perGpu.total();
        else
            peak = std::max(peak, role.perGpu.total());
    }
    return std::max(peak, trainer);
}

} // namespace

RlLayout rlLayoutOf(const Plan& plan)
{
    const RlConfig& c = plan.rl;
    return { plan.cluster.gpus, c.placement, c.trainerGpus, c.referenceGpus, c.rolloutGpus,
        plan.serving.tp, plan.serving.gpuMemoryUtilization };
}

Plan applyRlLayout(const Plan& plan, const RlLayout& l)
{
    Plan p = plan;
    p.cluster.gpus = l.clusterGpus;
    p.rl.placement = l.placement;
    p.rl.trainerGpus = l.trainerGpus;
    p.rl.referenceGpus = l.referenceGpus;
    p.rl.rolloutGpus = l.rolloutGpus;
    p.serving.tp = l.rolloutTp;
    p.serving.gpuMemoryUtilization = l.gpuMemoryUtilization;
    return p;
}

RlSearchResult searchRl(const Plan& plan, const SearchOptions& o)
{
    const auto started = std::chrono::steady_clock::now();
    RlSearchResult r;
    r.goal = o.goal;
    Collector<RlCandidate> collect(o, o.partialRl);

    const ParamCounts counts = countParameters(plan.model.arch);
    const int gpusPerNode
        = std::max(1, o.gpusPerNode > 0 ? o.gpusPerNode : plan.cluster.gpusPerNode);
    const FixedField* fixedGpus = fixedOf(o, "cluster.gpus");
    const int budget = fixedGpus ? fixedGpus->number
        : o.maxGpus > 0          ? o.maxGpus
                                 : plan.cluster.gpus;

    std::vector<RlPlacement> placements = { RlPlacement::Disjoint, RlPlacement::Colocated };
    if (const FixedField* f = fixedOf(o, "rl.placement"))
        placements = { f->number ? RlPlacement::Colocated : RlPlacement::Disjoint };
    const bool rolloutRole = plan.rl.algorithm != RlAlgorithm::Dpo;
    const FixedField* fixedTp = fixedOf(o, "serving.tp");
    const std::vector<int> tps = fixedTp ? std::vector<int> { fixedTp->number }
        : rolloutRole                    ? tpChoices(plan.model.arch.heads, gpusPerNode)
                                         : std::vector<int> { plan.serving.tp };
    const TrainingConfig& t = plan.training;
    const int trainerUnit = std::max(1, t.tp * t.pp * t.cp);
    std::vector<int> trainers;
    if (const FixedField* f = fixedOf(o, "rl.trainer_gpus"))
        trainers = { f->number };
    else
        for (int u : trainerUnits(budget / trainerUnit))
            trainers.push_back(u * trainerUnit);
    std::vector<int> references;
    if (const FixedField* f = fixedOf(o, "rl.reference_gpus"))
        references = { f->number };
    else if (plan.rl.referenceGpus == 0)
        references = { 0 };
    else {
        for (int g = 1; g < budget; g *= 2)
            references.push_back(g);
        references.push_back(plan.rl.referenceGpus);
        std::sort(references.begin(), references.end());
        references.erase(std::unique(references.begin(), references.end()), references.end());
    }
    const FixedField* fixedRollout = fixedOf(o, "rl.rollout_gpus");
    // The colocated engine's share of each GPU: what the resident trainer leaves it decides
    // both whether the job fits and how many sequences the engine runs at once (verl's
    // rollout.gpu_memory_utilization, 0.4-0.6 in its examples; TRL colocate 0.25-0.3). Disjoint
    // engines own their GPUs and keep the plan's share.
    std::vector<double> colocatedShares = { plan.serving.gpuMemoryUtilization };
    if (rolloutRole)
        for (double share : { 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9 })
            if (std::fabs(share - plan.serving.gpuMemoryUtilization) > 1e-9)
                colocatedShares.push_back(share);

    Plan work = plan; // mutated in place: the layout being evaluated
    work.cluster.gpus = budget;
    RlCandidate miss;
    double missPeak = INFINITY;
    const auto evaluate = [&](RlPlacement placement, int tp, double share) {
        work.rl.placement = placement;
        work.serving.tp = tp;
        work.serving.gpuMemoryUtilization = share;
        ++r.evaluated;
        ++r.estimates;
        const RlEstimate e = estimateRl(work, counts, nullptr, false); // no split suggestion
        RlCandidate c;
        c.layout = { budget, placement, work.rl.trainerGpus, work.rl.referenceGpus,
            work.rl.rolloutGpus, tp, share };
        c.gpus = e.totalGpus;
        c.peakBytesPerGpu = peakBytes(e);
        c.gpuMemoryBytes = plan.gpu.gpu.memoryBytes;
        c.stepS = e.stepS;
        c.rolloutS = e.rolloutS;
        c.trainS = e.trainS;
        c.referenceS = e.referenceS;
        c.stepsPerHour = e.stepsPerHour;
        // One fit rule with the training tab: a candidate fits under the plan's usable line
        // (training.usable_fraction); "tight" is not recommended.
        c.fits = e.verdict == Verdict::Fits;
        c.rolloutBound = e.bottleneck == "rollout";
        if (!c.fits) {
            collect.reject("memory");
            if (c.peakBytesPerGpu < missPeak) {
                missPeak = c.peakBytesPerGpu;
                miss = c;
            }
            return;
        }
        collect.accept(c, r, r.feasibleList);
    };

    const double steps = double(placements.size()) * tps.size();
    double step = 0;
    for (RlPlacement placement : placements) {
        for (int tp : tps) {
            step += 1;
            if (placement == RlPlacement::Colocated) {
                // One pool of every GPU: the pool counts are the plan's, unused.
                work.rl.trainerGpus = plan.rl.trainerGpus;
                work.rl.referenceGpus = plan.rl.referenceGpus;
                work.rl.rolloutGpus = plan.rl.rolloutGpus;
                if (rolloutRole && budget % tp != 0)
                    collect.reject("divisibility");
                else
                    for (double share : colocatedShares)
                        evaluate(placement, tp, share);
            } else {
                for (int trainer : trainers)
                    for (int reference : references) {
                        work.rl.trainerGpus = trainer;
                        work.rl.referenceGpus = reference;
                        work.rl.rolloutGpus = rolloutRole ? 1 : 0;
                        // The other pools (PPO's critic and reward follow the trainer and the
                        // reference unless the plan sets them), then the rollout's share.
                        const int others = rlSetup(work, counts).totalGpus - work.rl.rolloutGpus;
                        const int left = budget - others;
                        const int rollout = !rolloutRole ? 0
                            : fixedRollout               ? fixedRollout->number
                                                         : left / tp * tp;
                        if (left < 0 || (rolloutRole && (rollout < tp || rollout > left))) {
                            collect.reject("gpus"); // the pools do not fit the budget
                            continue;
                        }
                        work.rl.rolloutGpus = rollout;
                        evaluate(placement, tp, plan.serving.gpuMemoryUtilization);
                    }
            }
            if (!collect.between(r, step / steps))
                break;
        }
        if (r.cancelled || r.capped)
            break;
    }
    collect.finish(r, r.candidates, r.pareto);
    const auto invalid = [&](const RlCandidate& c) {
        return validatePlan(applyRlLayout(plan, c.layout)).has_value();
    };
    const long long dropped = std::erase_if(r.candidates, invalid);
    std::erase_if(r.pareto, invalid);
    if (dropped > 0)
        r.rejected.push_back({ "invalid", dropped });
    if (r.feasible == 0 && std::isfinite(missPeak))
        r.nearestMiss = miss;
    r.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

} // namespace envelope
