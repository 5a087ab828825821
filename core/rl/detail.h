// Internal to the core: what rl.cpp and rl_explain.cpp share.
#pragma once

#include "rl/rl.h"

namespace envelope {

// Which copies an algorithm keeps, the GPUs of each pool and the tokens of one step.
struct RlSetup {
    bool rollout = true; // GRPO, PPO; DPO trains on a fixed preference dataset
    bool reference = true; // KL anchor (DPO: its implicit reward needs it)
    bool critic = false; // PPO
    bool reward = false; // PPO reward model
    bool oldPolicy = false; // old_policy_bytes_per_param > 0
    bool colocated = false;
    // rl.staleness (rlStaleness): generation may run k steps' completions ahead of training
    // (a fraction of a step under verl's staleness_threshold).
    double staleness = 0;
    // rl.updates_per_sync: the step's update in N streamed parts (verl fully_async).
    int updatesPerSync = 1;
    // Disjoint pools with k > 0 or N > 1 overlap the rollout with the update (docs/
    // formulas-rl.md §4); colocated ones take turns.
    bool overlap = false;
    bool partial = false; // rl.partial_rollouts (staleness > 0): unfinished sequences carried
    int trainerGpus = 1, referenceGpus = 0, rolloutGpus = 0, criticGpus = 0, rewardGpus = 0;
    int totalGpus = 1; // sum of the pools (colocated: the one shared pool)
    double completions = 0; // sequences per step: prompts x group size (DPO: x 2)
    double tokensPerSequence = 0; // prompt + response (the cap: the engine's max_model_len)
    double meanResponse = 0; // rl.response_len_mean, at most response_len
    double meanTokensPerSequence = 0; // prompt + mean response: what is generated and trained
    double rolloutTokens = 0;
    double trainTokens = 0;
    double updateEpochs = 1; // rl.update_epochs: passes of the update over trainTokens
    double trainPeakFlops = 0; // one GPU, at the recipe's compute dtype
    // One rollout engine (tp GPUs) as plan.serving's engine sizes it, at context = prompt +
    // response (core/serving: vLLM's pool from gpu_memory_utilization).
    ServingEstimate engine;
    // Full-length sequences one engine runs at once: the pool's (whole blocks), and with vLLM
    // at most max_num_seqs (its scheduler's cap). 0: not one sequence fits.
    double engineMaxSequences = 0;
    // Sequences of mean length one engine runs at once (vLLM allocates blocks as a sequence
    // grows): the pool in blocks over prompt + mean response, max_num_seqs at most.
    double engineMeanSequences = 0;
    // Pools that cannot hold their role's layout: "field: why, and the minimum" (empty: laid
    // out). The trainer's memory is then a lower bound (its states fully sharded, ZeRO-3).
    std::string trainerProblem, criticProblem, rolloutProblem;
    // The trainer's speed per GPU: measured (rl.train_tokens_per_s over its pool), or its
    // op-timed step (core/compute) on its own pool. A forward takes `forwardShare` of a
    // trained token's time: model forward FLOPs / hardware FLOPs of the trained token.
    double trainerTokensPerSPerGpu = 0;
    double forwardShare = 1.0 / 3.0;
    std::string trainerTimingSource; // "measured", or core/compute's timing source
    // Colocated with training.offload_*: the states leave the GPUs between phases and come back
    // for the update (verl param_offload / optimizer_offload), once per step over the host
    // link, not streamed per micro-batch as ZeRO-Infinity would: out and back, seconds.
    double phaseOffloadS = 0;
};

// The training config a role of `gpus` GPUs runs: the plan's, or, when its layout does not fit
// the pool, every state sharded over the pool (ZeRO-3, no model parallelism): the least memory
// any layout of those GPUs could have, so the figure shown is a lower bound.
TrainingConfig trainerConfig(const TrainingConfig& t, bool laidOut);

RlSetup rlSetup(const Plan& plan, const ParamCounts& counts);
// Only the pools and their layout problems (no tokens, rates or engine): cheap.
RlSetup rlPools(const Plan& plan);

// How one engine of a pool of `gpus` works through its share of the step's completions:
// ceil(C / engines) sequences, at most engineMaxSequences at a time, in waves (vLLM's FCFS
// scheduler admits a new sequence only when one finishes; every response is response_len long,
// so the batch turns over whole). docs/formulas-rl.md §2.
struct RolloutWaves {
    double sequencesPerEngine = 0;
    double batch = 0; // sequences of a full wave: min(sequencesPerEngine, engineMaxSequences)
    double fullWaves = 0; // waves of `batch` sequences
    double lastBatch = 0; // the remainder's wave (0: none)
    double waves = 0; // fullWaves + (lastBatch > 0)
};
RolloutWaves rolloutWaves(const Plan& plan, const RlSetup& s, int gpus);

// One engine's share of the step's rollout on a pool of `gpus` (docs/formulas-rl.md §2, §4).
struct RolloutTime {
    double seconds = 0;
    // Sequences one engine decodes at once: the waves' batch when every response is
    // response_len long; else what its pool holds at the mean length, at most its share S, or
    // under partial rollouts at most (k + 1) S (the next k steps' prompts admitted).
    double runningBatch = 0;
    // Decode steps past the full batches waiting for the longest responses: L - S m / B, or
    // under partial rollouts L / (k + 1) - S m / B (a sequence may span k + 1 rollouts).
    double tailSteps = 0;
    // Partial rollouts: the carried batch's KV recomputed under the new weights (in `seconds`).
    double reprefillS = 0;
    RolloutWaves waves; // how the engine's share splits into waves (rolloutWaves)
};
RolloutTime rlRollout(const Plan& plan, const RlSetup& s, int gpus);

// One step from its phases (docs/formulas-rl.md §4): synchronous or colocated, the sum; disjoint
// pools with a staleness k > 0 or N updates per sync, the streamed overlap
//   step = sync + max(rollout + rollout idle, forwards + train + trainer idle)
//   rollout idle = max(0, (forwards + train) / N - k x rollout)
//   trainer idle = max(0, rollout / N - k x rollout)
struct RlStepTime {
    double stepS = 0;
    double rolloutIdleS = 0; // the rollout pool waiting for the update (disjoint pools)
    double trainerIdleS = 0; // the trainer waiting for completions (disjoint pools)
};
RlStepTime rlStepTime(const RlSetup& s, double rolloutS, double syncS, double trainSideS);

// Times of one step's phases for the given pool sizes (docs/formulas-rl.md).
double rlPolicyTrainS(const Plan& plan, const ParamCounts& counts, const RlSetup& s, int gpus);
double rlForwardS(const Plan& plan, const ParamCounts& counts, const RlSetup& s, int gpus);
// New weights from trainer to rollout engines (docs/formulas-rl.md §4).
double rlWeightSyncS(const Plan& plan, const ParamCounts& counts, const RlSetup& s);

// Records every rl.* figure of `r` (rl_explain.cpp).
void explainRl(const Plan& plan, const ParamCounts& counts, const RlSetup& s, const RlEstimate& r,
    Explainer& ex);

} // namespace envelope
