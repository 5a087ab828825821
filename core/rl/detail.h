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
    int trainerGpus = 1, referenceGpus = 0, rolloutGpus = 0, criticGpus = 0, rewardGpus = 0;
    int totalGpus = 1; // sum of the pools (colocated: the one shared pool)
    double completions = 0; // sequences per step: prompts x group size (DPO: x 2)
    double tokensPerSequence = 0; // prompt + response
    double rolloutTokens = 0;
    double trainTokens = 0;
    double trainPeakFlops = 0; // one GPU, at the recipe's compute dtype
};

RlSetup rlSetup(const Plan& plan);

// Times of one step's phases for the given pool sizes (docs/formulas-rl.md).
double rlRolloutS(const Plan& plan, const ParamCounts& counts, const RlSetup& s, int gpus);
double rlPolicyTrainS(const Plan& plan, const ParamCounts& counts, const RlSetup& s, int gpus);
double rlForwardS(const Plan& plan, const ParamCounts& counts, const RlSetup& s, int gpus);

// Records every rl.* figure of `r` (rl_explain.cpp).
void explainRl(const Plan& plan, const ParamCounts& counts, const RlSetup& s, const RlEstimate& r,
    Explainer& ex);

} // namespace envelope
