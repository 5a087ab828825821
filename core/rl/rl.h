// The four-copy RL post-training job: trainer, frozen reference, rollout engine, old-policy
// snapshot (+ critic and reward model for PPO); placement; per-step timing; the balancing split.
//
// Source: seed 000 ("The four copies cost", the 7B GRPO on 8x H100 worked example).
#pragma once

#include <optional>

#include "base/expected.h"
#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

// Pure; `counts` must be countParameters(plan.model.arch). Uses plan.training for the trainer's
// recipe, ZeRO stage, recompute and MFU, plan.serving for the rollout engine's KV settings.
// `suggestSplit` false skips the split-balancing loop (rl.suggested_*: each split times its own
// rollout and update), which a search over the pools does not need.
RlEstimate estimateRl(const Plan& plan, const ParamCounts& counts, Explainer* ex = nullptr,
    bool suggestSplit = true);

// The first RL pool that cannot hold its role's layout: the trainer (and PPO's critic) a
// multiple of training.tp x pp x cp with training.ep dividing its data-parallel ranks, the
// rollout whole engines of serving.tp. Names the field and the minimum. For plans that have an
// `rl` section (a training-only plan keeps the defaults it never reads).
std::optional<Error> rlLayoutError(const Plan& plan);

} // namespace envelope
