// The two-GPU GRPO job test_rl_engine.cpp and test_rl_staleness.cpp size their rollout engine
// on, and the engine's pool worked out by hand from vLLM 0.19's accounting
// (Worker.determine_available_memory; docs/formulas-serving.md §3).
#pragma once

#include "fixtures.h"

namespace envelope::testing {

// A GRPO step that needs far more KV than one GPU has: a Llama-3-8B-shaped 7B policy, 64
// prompts x 8 completions of 512 + 3584 tokens, one rollout GPU and one trainer GPU (LoRA-free
// states do not matter here: only the rollout role is checked).
inline Plan twoGpuGrpo()
{
    Plan plan = seedGrpoPlan();
    plan.cluster = Cluster { 2, 2 };
    plan.rl.trainerGpus = 1;
    plan.rl.referenceGpus = 0;
    plan.rl.kl = false;
    plan.rl.rolloutGpus = 1;
    plan.rl.prompts = 64;
    plan.rl.rolloutTokensPerS.reset();
    return plan;
}

// The engine's pool on one H100 at TP 1 and utilization 0.9, as in test_rl_seed000.cpp:
// 81,559 MiB x 0.9 - 14 GB weights - 1.906 GB sampler peak - 0.25 GiB non-torch = 60.79 GB,
// 28,989 blocks of 16 tokens x 131,072 B; a 4096-token sequence takes 256 blocks: 113 at once.
inline constexpr double kUsable = 81559.0 * 1024 * 1024 * 0.9;
inline constexpr double kSampler = 1024.0 * 128256 * 14 + 8192.0 * 4096 * 2;
inline constexpr double kPool = kUsable - 14e9 - kSampler - 0.25 * 1073741824.0;

} // namespace envelope::testing
