// The four-copy RL job. Formulas, symbols and conventions: docs/formulas-rl.md.
//
// Seed 000, "The four copies cost": trainer 18/N B/param (sharded states), frozen reference
// 2/N, rollout engine 2/N_inf + KV cache, old-policy snapshot 0..2. PPO adds a critic (a second
// trainer) and a reward model (forward only); GRPO drops the critic; DPO drops rollout and
// reward. Per step: rollout (decode roofline or a measured rate), the forward passes of the
// frozen models, the policy update (6 P tokens / (N peak MFU)), summed or, one step off-policy,
// overlapped; the bottleneck and the split of GPUs between rollout and training that balances.
#include "rl/rl.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "compute/compute.h"
#include "rl/detail.h"
#include "serving/serving.h"
#include "training/memory.h"
#include "base/numeric.h"

namespace envelope {
namespace {

// Why a training role (trainer, PPO's critic) cannot be laid out on a pool of `gpus`, as
// "field: why and the minimum", or "" when it can: Megatron-LM's world-size rule (every GPU in
// one tp x pp x cp replica), expert groups carved from the data-parallel ranks, HSDP groups
// dividing the sharding group (the checks validatePlan makes of cluster.gpus).
std::string trainerLayoutProblem(const TrainingConfig& t, std::string_view field, int gpus)
{
    const long long replica = static_cast<long long>(std::max(t.tp, 1)) * std::max(t.pp, 1)
        * std::max(t.cp, 1);
    if (gpus < replica || gpus % replica != 0)
        return fmt::format("{}: the trainer's layout training.tp x pp x cp = {} x {} x {} needs a "
                           "multiple of {} GPUs, got {}",
            field, t.tp, t.pp, t.cp, replica, gpus);
    const long long dp = gpus / replica;
    if (dp % std::max(t.ep, 1) != 0)
        return fmt::format("{}: training.ep = {} must divide the pool's data-parallel size {} / "
                           "{} = {}; the pool needs a multiple of {} GPUs, got {}",
            field, t.ep, gpus, replica, dp, replica * std::max(t.ep, 1), gpus);
    const long long shardGroup = dp * (t.framework.shardOverCp ? std::max(t.cp, 1) : 1);
    if (t.hsdpShard > 0 && t.zeroStage >= 3 && shardGroup % t.hsdpShard != 0)
        return fmt::format("{}: training.hsdp_shard = {} must divide the pool's sharding group "
                           "of {} GPUs, got a pool of {}",
            field, t.hsdpShard, shardGroup, gpus);
    return {};
}

// Why the rollout pool cannot be cut into whole engines of serving.tp GPUs, or "".
std::string rolloutLayoutProblem(const ServingConfig& sc, std::string_view field, int gpus)
{
    const int tp = std::max(sc.tp, 1);
    if (gpus < tp || gpus % tp != 0)
        return fmt::format("{}: one rollout engine takes serving.tp = {} GPUs, so the pool needs "
                           "a multiple of {} GPUs, got {}",
            field, tp, tp, gpus);
    return {};
}

TrainingMemory trainerMemory(const Plan& plan, const ParamCounts& counts, int gpus, bool laidOut)
{
    return estimateTrainingMemory(plan.model.arch, counts,
        trainerConfig(plan.training, laidOut),
        Cluster { std::max(gpus, 1), plan.cluster.gpusPerNode }, plan.gpu.gpu, nullptr);
}

double usableFractionOf(const TrainingConfig& t)
{
    return std::isfinite(t.usableFraction) ? std::clamp(t.usableFraction, 0.0, 1.0) : 1.0;
}

Verdict worse(Verdict a, Verdict b)
{
    return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

// A frozen forward-only copy (reference, reward model): bf16 weights sharded over the pool, the
// activations of one micro-batch forward, the fixed overhead plus fragmentation.
MemoryBreakdown forwardOnly(const Plan& plan, const ParamCounts& counts, int gpus)
{
    MemoryBreakdown m;
    const TrainingConfig& t = plan.training;
    m.weights = 2.0 * positiveOrZero(counts.total) / std::max(gpus, 1);
    m.activations = inferenceActivationPeakBytes(
        plan.model.arch, positiveOrZero(t.microBatch) * positiveOrZero(t.seqLen), positiveOrZero(t.microBatch), 1);
    m.overhead = positiveOrZero(t.overhead.fixedBytes)
        + positiveOrZero(t.overhead.fragmentation) * (m.weights + m.activations);
    return m;
}

// The rollout engine on one of its GPUs: what the engine allocates at startup (core/serving):
// weights / tp, the whole KV pool it sizes from gpu_memory_utilization (vLLM pre-allocates it,
// however few sequences the step has), the profiled activation peak and the non-torch memory.
// With vLLM these add up to torch total x gpu_memory_utilization.
MemoryBreakdown rolloutMemory(const RlSetup& s)
{
    MemoryBreakdown m;
    m.weights = s.engine.weightsBytesPerGpu;
    m.kvCache = s.engine.kvBudgetBytes;
    m.activations = s.engine.activationPeakBytes;
    m.overhead = s.engine.overheadBytes;
    return m;
}

// One wave of `batch` sequences on one engine, timed from its ops like a serving engine's
// (core/serving, issue 22): prefill their prompts, then response_len decode steps of the whole
// batch at the mean context prompt + response / 2.
double waveS(const Plan& plan, double batch)
{
    if (batch <= 0)
        return 0.0;
    const RlConfig& c = plan.rl;
    const ServingConfig& sc = plan.serving;
    const ModelArch& arch = plan.model.arch;
    const double prefill
        = prefillTime(arch, sc, plan.gpu.gpu, batch, positiveOrZero(c.promptLen));
    const double meanContext = positiveOrZero(c.promptLen) + positiveOrZero(c.responseLen) / 2;
    return prefill
        + positiveOrZero(c.responseLen) * decodeTokenTime(arch, sc, plan.gpu.gpu, batch, meanContext);
}

RoleEstimate role(std::string name, int gpus, const MemoryBreakdown& m)
{
    RoleEstimate r;
    r.role = std::move(name);
    r.gpus = gpus;
    r.perGpu = m;
    return r;
}

} // namespace

TrainingConfig trainerConfig(const TrainingConfig& t, bool laidOut)
{
    if (laidOut)
        return t;
    TrainingConfig sharded = t;
    sharded.tp = sharded.pp = sharded.cp = sharded.ep = 1;
    sharded.virtualStages = 1;
    sharded.sequenceParallel = false;
    sharded.zeroStage = 3;
    sharded.hsdpShard = 0;
    return sharded;
}

RlSetup rlPools(const Plan& plan)
{
    const RlConfig& c = plan.rl;
    RlSetup s;
    s.colocated = c.placement == RlPlacement::Colocated;
    s.rollout = c.algorithm != RlAlgorithm::Dpo;
    s.staleness = s.rollout ? rlStaleness(c) : 0.0;
    s.updatesPerSync = s.rollout ? std::max(c.updatesPerSync, 1) : 1;
    s.overlap = s.rollout && !s.colocated && (s.staleness > 0 || s.updatesPerSync > 1);
    s.partial = s.rollout && c.partialRollouts && s.staleness > 0;
    // DPO's implicit reward compares with the reference; referenceGpus 0 = its log-probs were
    // precomputed offline (TRL precompute_ref_log_probs). GRPO/PPO keep it only for the KL term.
    s.reference = c.referenceGpus > 0 && (c.algorithm == RlAlgorithm::Dpo || c.kl);
    s.critic = c.algorithm == RlAlgorithm::Ppo;
    s.reward = c.algorithm == RlAlgorithm::Ppo;
    s.oldPolicy = s.rollout && c.oldPolicyBytesPerParam > 0;
    s.trainerGpus = std::max(c.trainerGpus, 1);
    s.referenceGpus = s.reference ? c.referenceGpus : 0;
    s.rolloutGpus = s.rollout ? std::max(c.rolloutGpus, 1) : 0;
    s.criticGpus = s.critic ? (c.criticGpus > 0 ? c.criticGpus : s.trainerGpus) : 0;
    s.rewardGpus = s.reward ? (c.rewardGpus > 0 ? c.rewardGpus : std::max(c.referenceGpus, 1)) : 0;
    // Colocated roles share one pool: the cluster is the budget, never the sum of the roles'
    // counts (issue 11: five roles of 8 on an 8-GPU cluster read "on 40 x H100").
    s.totalGpus = s.colocated
        ? std::max(plan.cluster.gpus, 1)
        : s.trainerGpus + s.referenceGpus + s.rolloutGpus + s.criticGpus + s.rewardGpus;

    // Each role's layout on its own pool (colocated: the whole cluster).
    const int trainerPool = s.colocated ? s.totalGpus : s.trainerGpus;
    s.trainerProblem = trainerLayoutProblem(
        plan.training, s.colocated ? "cluster.gpus" : "rl.trainer_gpus", trainerPool);
    if (s.critic)
        s.criticProblem = trainerLayoutProblem(plan.training,
            s.colocated             ? "cluster.gpus"
                : c.criticGpus > 0 ? "rl.critic_gpus"
                                   : "rl.trainer_gpus",
            s.colocated ? s.totalGpus : s.criticGpus);
    if (s.rollout)
        s.rolloutProblem = rolloutLayoutProblem(plan.serving,
            s.colocated ? "cluster.gpus" : "rl.rollout_gpus",
            s.colocated ? s.totalGpus : s.rolloutGpus);
    return s;
}

RlSetup rlSetup(const Plan& plan, const ParamCounts& counts)
{
    const RlConfig& c = plan.rl;
    RlSetup s = rlPools(plan);
    const int trainerPool = s.colocated ? s.totalGpus : s.trainerGpus;

    const double perPrompt = c.algorithm == RlAlgorithm::Dpo ? 2.0 : positiveOrZero(c.groupSize);
    s.completions = positiveOrZero(c.prompts) * perPrompt;
    s.tokensPerSequence = positiveOrZero(c.promptLen) + positiveOrZero(c.responseLen);
    s.meanResponse = std::min(positiveOrZero(c.responseLenMean.value_or(c.responseLen)),
        positiveOrZero(c.responseLen));
    s.meanTokensPerSequence = positiveOrZero(c.promptLen) + s.meanResponse;
    // The policy trains on what was generated: prompt + the mean response (no padding to the
    // cap: verl's remove-padding, OpenRLHF's packing).
    s.trainTokens = s.completions * s.meanTokensPerSequence;
    s.updateEpochs = std::max(c.updateEpochs, 1);
    s.rolloutTokens = s.rollout ? s.trainTokens : 0.0;
    s.trainPeakFlops = peakFlops(plan.gpu.gpu, plan.training.recipe.recipe.compute);

    // The trainer's speed: measured over its pool, or its own op-timed step on that pool (the
    // layout the plan gives it; the lower-bound layout when that does not fit the pool).
    if (c.trainTokensPerS && *c.trainTokensPerS > 0) {
        s.trainerTokensPerSPerGpu = *c.trainTokensPerS / trainerPool;
        s.forwardShare = 1.0 / 3.0; // forward = 2 P of forward + backward's 6 P
        s.trainerTimingSource = "measured";
    } else if (s.trainTokens > 0) {
        TrainingConfig timed = trainerConfig(plan.training, s.trainerProblem.empty());
        if (s.colocated) {
            // Colocated offload is per phase (verl's hybrid engine): the update itself runs with
            // the states on the GPU; their trip out and back is phaseOffloadS.
            const double perGpu = positiveOrZero(counts.total) / trainerPool;
            const Recipe& recipe = plan.training.recipe.recipe;
            const double bytes = (timed.offloadParams ? perGpu * recipe.weightBytes : 0.0)
                + (timed.offloadOptimizer
                        ? perGpu
                            * (recipe.masterBytes
                                + optimizerStateBytesPerParam(recipe, timed.optimizer))
                        : 0.0);
            const double link = positiveOrZero(plan.gpu.gpu.hostLinkBytesPerS);
            s.phaseOffloadS = link > 0 ? 2.0 * bytes / link : 0.0;
            timed.offloadParams = timed.offloadOptimizer = false;
        }
        const TrainingCompute tc = estimateCompute(plan.model.arch, counts, timed,
            Cluster { trainerPool, plan.cluster.gpusPerNode }, plan.gpu.gpu);
        s.trainerTokensPerSPerGpu = positiveOrZero(tc.tokensPerSPerGpu);
        s.forwardShare = tc.hardwareFlopsPerToken > 0
            ? positiveOrZero(tc.flopsPerToken) / 3.0 / tc.hardwareFlopsPerToken
            : 1.0 / 3.0;
        s.trainerTimingSource = tc.timingSource;
    }

    // The engine's pool and how many full-length sequences it holds (vLLM refuses to start when
    // not even one max_model_len sequence fits).
    if (!s.rollout)
        return s;
    ServingConfig engine = plan.serving;
    // The rollout engines are aggregated (prefill and decode on the same GPUs).
    engine.disaggregation.reset();
    engine.context = static_cast<int>(std::min(s.tokensPerSequence, 1e9));
    // Only the engine's memory is needed here; its times come from waveS.
    s.engine = estimateServing(plan.model.arch, counts, engine, plan.gpu.gpu, nullptr, false);
    s.engineMaxSequences = s.engine.maxSequences;
    const double blockSize = std::max(engine.blockSize, 1);
    s.engineMeanSequences = std::floor(s.engine.blocks
        / std::max(1.0, std::ceil(kvTokensKept(plan.model.arch, s.meanTokensPerSequence) / blockSize)));
    if (engine.engine == ServingEngine::Vllm) {
        const double cap = static_cast<double>(std::max(engine.maxNumSeqs, 1));
        s.engineMaxSequences = std::min(s.engineMaxSequences, cap);
        s.engineMeanSequences = std::min(s.engineMeanSequences, cap);
    }
    return s;
}

RolloutWaves rolloutWaves(const Plan& plan, const RlSetup& s, int gpus)
{
    RolloutWaves w;
    if (!s.rollout || gpus < 1)
        return w;
    // Whole engines of serving.tp GPUs (a pool of fewer is reported by rolloutProblem; one
    // engine stands in so the figures stay finite).
    const double engines = std::max(1, gpus / std::max(plan.serving.tp, 1));
    w.sequencesPerEngine = std::ceil(s.completions / engines);
    // An engine that holds no full sequence is reported (rollout fits = false); the time is
    // then that of one sequence at a time, so the figures stay finite.
    const double most = std::max(1.0, s.engineMaxSequences);
    w.batch = std::min(w.sequencesPerEngine, most);
    w.fullWaves = w.batch > 0 ? std::floor(w.sequencesPerEngine / w.batch) : 0.0;
    w.lastBatch = w.sequencesPerEngine - w.fullWaves * w.batch;
    w.waves = w.fullWaves + (w.lastBatch > 0 ? 1 : 0);
    return w;
}

RolloutTime rlRollout(const Plan& plan, const RlSetup& s, int gpus)
{
    RolloutTime t;
    if (!s.rollout || gpus < 1)
        return t;
    const RlConfig& c = plan.rl;
    t.waves = rolloutWaves(plan, s, gpus);
    const RolloutWaves& w = t.waves;
    const double cap = positiveOrZero(c.responseLen);
    // Every response response_len long, whole batches: each engine runs its share in waves of
    // what its KV pool holds, the batch turning over whole.
    const bool waves = !s.partial && s.meanResponse >= cap;
    // Partial rollouts admit the next steps' prompts while this step's finish (up to k steps
    // ahead), so an engine whose share is smaller than its pool still runs a full pool.
    const double S = w.sequencesPerEngine;
    t.runningBatch = waves
        ? w.batch
        : std::min(s.partial ? S * (s.staleness + 1.0) : S, std::max(1.0, s.engineMeanSequences));
    if (!waves) {
        // A sequence of the cap's length takes L decode steps; under partial rollouts it may
        // span k + 1 steps' rollouts, so each rollout runs at least L / (k + 1) of them.
        const double longest = s.partial ? cap / (s.staleness + 1.0) : cap;
        t.tailSteps = std::max(0.0, longest - S * s.meanResponse / t.runningBatch);
    }
    if (s.rolloutTokens <= 0)
        return t;
    if (c.rolloutTokensPerS && *c.rolloutTokensPerS > 0) {
        // A measured rate of the configured pool, scaled per GPU to a pool of `gpus`.
        const double measuredGpus = s.colocated ? s.totalGpus : s.rolloutGpus;
        t.seconds = s.rolloutTokens / (*c.rolloutTokensPerS * gpus / measuredGpus);
        return t;
    }
    if (waves) {
        t.seconds = w.fullWaves * waveS(plan, w.batch) + waveS(plan, w.lastBatch);
        return t;
    }
    // Responses of mean length m under the cap L: continuous batching keeps B sequences running
    // (the pool at mean occupancy), so an engine decodes its S x m tokens in S x m / B steps of
    // the full batch at the mean context; a synchronous step then waits for its longest
    // response, up to L steps in all, and those tail steps run a near-empty batch (one sequence:
    // decode reads the same weights whatever the batch). Partial rollouts carry the unfinished
    // sequences into the next step instead: the wait shrinks to what the staleness bound
    // forces, and the carried sequences' KV is recomputed under the new weights (vLLM resets its
    // prefix cache on a weight update; AReaL discards and recomputes), one prefill of the
    // running batch at its mean context prompt + m / 2.
    const ServingConfig& sc = plan.serving;
    const ModelArch& arch = plan.model.arch;
    const double B = t.runningBatch;
    const double prompt = positiveOrZero(c.promptLen);
    if (s.partial)
        t.reprefillS = prefillTime(arch, sc, plan.gpu.gpu, B, prompt + s.meanResponse / 2);
    t.seconds = S / B * prefillTime(arch, sc, plan.gpu.gpu, B, prompt)
        + S * s.meanResponse / B
            * decodeTokenTime(arch, sc, plan.gpu.gpu, B, prompt + s.meanResponse / 2)
        + t.tailSteps * decodeTokenTime(arch, sc, plan.gpu.gpu, 1, prompt + cap) + t.reprefillS;
    return t;
}

RlStepTime rlStepTime(const RlSetup& s, double rolloutS, double syncS, double trainSideS)
{
    RlStepTime t;
    if (s.overlap) {
        // Disjoint pools, steady state. The trainer takes the step's completions in N parts as
        // they are generated (at the rollout's mean rate, S / N every rollout / N), and
        // generation may run k steps' completions ahead (k x rollout of work). The rollout idles
        // while the last part trains, less what k lets it generate meanwhile; the trainer idles
        // until the first part is out, less what k had ready. Both pause for the weight sync.
        // k = 0 with N = 1 is the synchronous sum; k >= 1 / N the plain max.
        const double ahead = s.staleness * rolloutS;
        t.rolloutIdleS = std::max(0.0, trainSideS / s.updatesPerSync - ahead);
        t.trainerIdleS = std::max(0.0, rolloutS / s.updatesPerSync - ahead);
        t.stepS = syncS + std::max(rolloutS + t.rolloutIdleS, trainSideS + t.trainerIdleS);
        return t;
    }
    // One phase after another: colocated phases share the GPUs; disjoint synchronous pools
    // wait for each other (each idles while the other works).
    t.stepS = rolloutS + syncS + trainSideS;
    if (!s.colocated && s.rollout) {
        t.rolloutIdleS = trainSideS;
        t.trainerIdleS = rolloutS;
    }
    return t;
}

double rlWeightSyncS(const Plan& plan, const ParamCounts& counts, const RlSetup& s)
{
    if (!s.rollout)
        return 0.0;
    // Each rollout GPU receives its tensor-parallel shard of the bf16 weights.
    const double bytes = 2.0 * positiveOrZero(counts.total) / std::max(plan.serving.tp, 1);
    const Gpu& g = plan.gpu.gpu;
    const int perNode = std::max(plan.cluster.gpusPerNode, 1);
    // Disjoint pools inside one node share NVLink; otherwise the shards cross the network.
    // Colocated: the FSDP shards are gathered in place, the part from other nodes over the
    // network.
    const int span = s.colocated ? s.totalGpus : s.trainerGpus + s.rolloutGpus;
    const double remote = span <= perNode ? 0.0 : 1.0 - double(perNode) / span;
    const double intra = positiveOrZero(g.intraNodeBytesPerS), inter = positiveOrZero(g.interNodeBytesPerS);
    double t = 0;
    if (remote < 1 && intra > 0)
        t += bytes * (1 - remote) / intra;
    if (remote > 0 && inter > 0)
        t += bytes * remote / inter;
    return t;
}

double rlPolicyTrainS(const Plan&, const ParamCounts&, const RlSetup& s, int gpus)
{
    // The trainer's per-GPU rate (measured, or its op-timed step on its own pool), on `gpus`;
    // rl.update_epochs passes over the step's tokens.
    const double rate = s.trainerTokensPerSPerGpu * gpus;
    return s.trainTokens > 0 && rate > 0 ? s.updateEpochs * s.trainTokens / rate : 0.0;
}

double rlForwardS(const Plan&, const ParamCounts&, const RlSetup& s, int gpus)
{
    // A forward-only pass over the step's tokens: the forward's share of a trained token.
    const double rate = s.trainerTokensPerSPerGpu * gpus;
    return s.trainTokens > 0 && rate > 0 ? s.trainTokens * s.forwardShare / rate : 0.0;
}

RlEstimate estimateRl(
    const Plan& plan, const ParamCounts& counts, Explainer* ex, bool suggestSplit)
{
    RlEstimate r;
    const RlSetup s = rlSetup(plan, counts);
    const double memory = positiveOrZero(plan.gpu.gpu.memoryBytes);
    const double usable = usableFractionOf(plan.training);
    const double oldPolicyParamBytes
        = s.oldPolicy ? std::clamp(plan.rl.oldPolicyBytesPerParam, 0.0, 2.0) : 0.0;
    r.totalGpus = s.totalGpus;
    r.rolloutTokens = s.rolloutTokens;
    r.trainTokens = s.trainTokens;

    // Pool sizes: each role's own (disjoint), or every role spread over all GPUs (colocated).
    const int N = s.totalGpus;
    auto pool = [&](int own) { return s.colocated ? N : own; };

    const TrainingMemory trainer
        = trainerMemory(plan, counts, pool(s.trainerGpus), s.trainerProblem.empty());
    MemoryBreakdown oldPolicy;
    oldPolicy.weights = oldPolicyParamBytes * positiveOrZero(counts.total) / pool(s.trainerGpus);
    r.perRole.push_back(role("trainer", pool(s.trainerGpus), trainer.perGpu));
    r.perRole.back().problem = s.trainerProblem;
    if (s.reference)
        r.perRole.push_back(role(
            "reference", pool(s.referenceGpus), forwardOnly(plan, counts, pool(s.referenceGpus))));
    if (s.rollout) {
        r.perRole.push_back(role("rollout", pool(s.rolloutGpus), rolloutMemory(s)));
        r.perRole.back().problem = s.rolloutProblem;
    }
    if (s.oldPolicy) {
        r.perRole.push_back(role("old-policy", pool(s.trainerGpus), oldPolicy));
        r.perRole.back().problem = s.trainerProblem;
    }
    TrainingMemory critic;
    if (s.critic) {
        critic = trainerMemory(plan, counts, pool(s.criticGpus), s.criticProblem.empty());
        r.perRole.push_back(role("critic", pool(s.criticGpus), critic.perGpu));
        r.perRole.back().problem = s.criticProblem;
    }
    if (s.reward)
        r.perRole.push_back(
            role("reward", pool(s.rewardGpus), forwardOnly(plan, counts, pool(s.rewardGpus))));

    auto find = [&](const char* name) -> MemoryBreakdown {
        for (const RoleEstimate& e : r.perRole)
            if (e.role == name)
                return e.perGpu;
        return {};
    };
    // The engine runs when its weights fit its gpu_memory_utilization share and its KV pool
    // holds one prompt + response sequence (vLLM refuses to start otherwise).
    const bool engineRuns = !s.rollout || (s.engine.fitsWeights && s.engineMaxSequences >= 1);

    if (s.colocated) {
        // Phases time-share the GPUs; what stays resident is in every phase. The rollout
        // engine's KV and weights are released after generation (vLLM sleep mode, verl's hybrid
        // engine); gradients exist only during the update (zero_grad(set_to_none)); trainer
        // states leave the GPUs only when offloaded (training.offload_*: verl param_offload /
        // optimizer_offload, OpenRLHF --adam_offload).
        const MemoryBreakdown ref = find("reference"), rew = find("reward"), out = find("rollout");
        const double resident = trainer.perGpu.weights + trainer.perGpu.optimizer
            + critic.perGpu.weights + critic.perGpu.optimizer + ref.weights + rew.weights
            + oldPolicy.weights;
        const double forward = resident + std::max(ref.activations, rew.activations);
        const double training = resident
            + std::max(trainer.perGpu.gradients + trainer.perGpu.activations,
                critic.perGpu.gradients + critic.perGpu.activations);
        const OverheadConfig& o = plan.training.overhead;
        auto withOverhead = [&](double bytes) {
            return positiveOrZero(o.fixedBytes) + (1.0 + positiveOrZero(o.fragmentation)) * bytes;
        };
        // The engine claims its own share on top of what is resident: gpu_memory_utilization is
        // a per-instance limit (vLLM V1 refuses to start unless that much is free), so its
        // allocation is its own accounting, not the trainer's fragmentation.
        r.rolloutPhaseBytes = withOverhead(resident) + out.total();
        r.trainingPhaseBytes = withOverhead(training);
        r.colocatedPeakBytes
            = std::max({ r.rolloutPhaseBytes, r.trainingPhaseBytes, withOverhead(forward) });
        // One pool, one verdict: the peak phase against the training tab's usable line.
        const bool laidOut = s.trainerProblem.empty() && s.criticProblem.empty()
            && s.rolloutProblem.empty();
        const Verdict verdict = laidOut && engineRuns
            ? memoryVerdict(r.colocatedPeakBytes, memory, usable)
            : Verdict::Over;
        for (RoleEstimate& e : r.perRole) {
            e.verdict = verdict;
            e.fits = verdict != Verdict::Over;
        }
    } else {
        // The old-policy snapshot shares the trainer's GPUs, so both count it; the rollout
        // engine keeps to its gpu_memory_utilization share by construction and fits when its
        // pool holds at least one prompt + response sequence. Every other pool is judged by
        // the training tab's rule: fits under usable_fraction x HBM, tight up to HBM.
        const double trainerPool = trainer.perGpu.total() + oldPolicy.weights;
        for (RoleEstimate& e : r.perRole) {
            if (!e.problem.empty())
                e.verdict = Verdict::Over;
            else if (e.role == "trainer" || e.role == "old-policy")
                e.verdict = memoryVerdict(trainerPool, memory, usable);
            else if (e.role == "rollout")
                e.verdict = engineRuns && e.perGpu.total() <= memory ? Verdict::Fits
                                                                     : Verdict::Over;
            else
                e.verdict = memoryVerdict(e.perGpu.total(), memory, usable);
            e.fits = e.verdict != Verdict::Over;
        }
    }
    r.fits = true;
    r.verdict = Verdict::Fits;
    for (const RoleEstimate& e : r.perRole) {
        r.fits = r.fits && e.fits;
        r.verdict = worse(r.verdict, e.verdict);
        if (r.problem.empty())
            r.problem = e.problem;
    }

    // Step time. Disjoint pools run the frozen forwards (and the two updates of PPO) side by
    // side; colocated ones take turns.
    const double refS = s.reference ? rlForwardS(plan, counts, s, pool(s.referenceGpus)) : 0.0;
    const double rewardS = s.reward ? rlForwardS(plan, counts, s, pool(s.rewardGpus)) : 0.0;
    const double valuesS = s.critic ? rlForwardS(plan, counts, s, pool(s.criticGpus)) : 0.0;
    const double policyS = rlPolicyTrainS(plan, counts, s, pool(s.trainerGpus));
    // The policy's forward for the old log-probs, on the trainer's GPUs, before its update.
    r.oldLogProbS = s.rollout && plan.rl.oldLogProbForward
        ? rlForwardS(plan, counts, s, pool(s.trainerGpus))
        : 0.0;
    r.weightSyncS = rlWeightSyncS(plan, counts, s);
    r.meanResponseTokens = s.meanResponse;
    const RolloutTime rollout = rlRollout(plan, s, pool(s.rolloutGpus));
    r.rolloutS = rollout.seconds;
    r.rolloutTailSteps = rollout.tailSteps;
    r.rolloutReprefillS = rollout.reprefillS;
    r.rolloutRunningBatch = rollout.runningBatch;
    r.staleness = s.staleness;
    r.updatesPerSync = s.updatesPerSync;
    r.partialRollouts = s.partial;
    r.overlapped = s.overlap;
    const double criticS = s.critic ? rlPolicyTrainS(plan, counts, s, pool(s.criticGpus)) : 0.0;
    r.rolloutWaves = rollout.waves.waves;
    r.rolloutSequencesPerEngine = rollout.waves.sequencesPerEngine;
    r.rolloutMaxSequences = s.rollout ? s.engineMaxSequences : 0.0;
    r.rolloutKvPoolBytes = s.rollout ? s.engine.kvBudgetBytes : 0.0;
    // The forward passes: the reference's (and PPO's reward and values) on their pools and the
    // policy's old log-probs on the trainer's, side by side on disjoint pools, in turn when
    // colocated.
    r.referenceS = s.colocated ? refS + rewardS + valuesS + r.oldLogProbS
                               : std::max({ refS, rewardS, valuesS, r.oldLogProbS });
    r.trainS = s.colocated ? policyS + criticS + s.phaseOffloadS : std::max(policyS, criticS);
    const double trainSide = r.referenceS + r.trainS;
    const RlStepTime step = rlStepTime(s, r.rolloutS, r.weightSyncS, trainSide);
    r.stepS = step.stepS;
    r.rolloutIdleS = step.rolloutIdleS;
    r.trainerIdleS = step.trainerIdleS;
    r.stepsPerHour = r.stepS > 0 ? 3600.0 / r.stepS : 0.0;
    r.bottleneck = r.rolloutS + r.weightSyncS > trainSide ? "rollout" : "training";

    // The split of rollout + trainer GPUs that minimises max(rollout, forwards + update), with
    // the trainer fitting and each pool a multiple of its parallel group.
    const int total = s.rollout ? s.rolloutGpus + s.trainerGpus : s.trainerGpus;
    r.suggestedRolloutGpus = s.rolloutGpus;
    r.suggestedTrainerGpus = s.trainerGpus;
    // A split counts when the trainer is laid out on its pool and fits under the usable line
    // (the training tab's `fits`, not merely within HBM).
    // The trainer's configuration and setup are the same on every split: built once, and each
    // split only sizes its stages at its data-parallel width (TrainingPeakProbe).
    const TrainingConfig laidOutTrainer = trainerConfig(plan.training, true);
    std::optional<TrainingPeakProbe> probe;
    auto trainerFits = [&](int trainerGpus) {
        trainerGpus = std::max(trainerGpus, 1);
        if (!trainerLayoutProblem(plan.training, "rl.trainer_gpus", trainerGpus).empty())
            return false;
        if (!probe)
            probe.emplace(plan.model.arch, counts, laidOutTrainer, plan.gpu.gpu);
        const double total
            = probe->perGpuTotal(Cluster { trainerGpus, plan.cluster.gpusPerNode });
        const double snapshot = oldPolicyParamBytes * positiveOrZero(counts.total) / trainerGpus;
        return memoryVerdict(total + snapshot, memory, usable) == Verdict::Fits;
    };
    if (s.colocated) {
        // Every role runs on every GPU in turn: there is no split to balance.
        r.suggestedRolloutGpus = 0;
        r.suggestedTrainerGpus = 0;
        r.suggestionFits = r.fits;
    } else if (!suggestSplit) {
        r.suggestionFits = r.fits; // not searched: the current split stands
    } else if (s.rollout && total >= 2) {
        RlSetup d = s;
        d.colocated = false;
        const int rolloutUnit = std::max(plan.serving.tp, 1);
        const int trainerUnit = std::max(1, plan.training.tp * plan.training.pp * plan.training.cp);
        // At most about 128 splits: each times its own rollout from the engine's ops.
        const int stride = std::max(1, total / 128);
        double best = std::numeric_limits<double>::infinity(), bestSum = best;
        for (int rollout = 1; rollout < total; rollout += stride) {
            const int trainerGpus = total - rollout;
            if (rollout % rolloutUnit != 0 || trainerGpus % trainerUnit != 0)
                continue;
            if (!trainerFits(trainerGpus))
                continue;
            const double generateS = rlRollout(plan, d, rollout).seconds;
            const double rolloutS = generateS + r.weightSyncS;
            const double trainS = std::max(rlPolicyTrainS(plan, counts, d, trainerGpus),
                s.critic ? rlPolicyTrainS(plan, counts, d, s.criticGpus) : 0.0);
            const double oldLogProbS = r.oldLogProbS > 0 ? rlForwardS(plan, counts, d, trainerGpus)
                                                         : 0.0;
            const double refSide = std::max({ refS, rewardS, valuesS, oldLogProbS });
            // Overlapped pools: the step itself; synchronous ones: the balance (seed 000).
            const double worst = s.overlap
                ? rlStepTime(d, generateS, r.weightSyncS, refSide + trainS).stepS
                : std::max(rolloutS, refSide + trainS);
            const double sum = rolloutS + refSide + trainS;
            if (worst < best * (1 - 1e-12) || (worst <= best * (1 + 1e-12) && sum < bestSum)) {
                best = worst;
                bestSum = sum;
                r.suggestedRolloutGpus = rollout;
                r.suggestedTrainerGpus = trainerGpus;
            }
        }
        // No candidate: the trainer overflows on every split, and the current split stands in.
        r.suggestionFits = std::isfinite(best);
    } else if (!s.rollout) {
        r.suggestedRolloutGpus = 0;
        r.suggestedTrainerGpus = s.trainerGpus + std::max(plan.rl.rolloutGpus, 0);
        r.suggestionFits = trainerFits(r.suggestedTrainerGpus);
    } else {
        r.suggestionFits = trainerFits(r.suggestedTrainerGpus);
    }

    if (ex)
        explainRl(plan, counts, s, r, *ex);
    return r;
}

std::optional<Error> rlLayoutError(const Plan& plan)
{
    const RlSetup s = rlPools(plan);
    for (const std::string* problem : { &s.trainerProblem, &s.criticProblem, &s.rolloutProblem }) {
        if (problem->empty())
            continue;
        const std::size_t colon = problem->find(": ");
        return Error { problem->substr(0, colon), problem->substr(colon + 2) };
    }
    return std::nullopt;
}

} // namespace envelope
