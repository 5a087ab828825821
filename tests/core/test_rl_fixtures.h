// The plan of seed 000's worked example ("a 7B GRPO run on 8x H100"), built by hand.
#pragma once

#include <string_view>

#include "estimate/estimate.h"
#include "test_serving_fixtures.h"

namespace envelope::testing {

// 7B parameters in a Llama-3-8B shape (the seed's "131 KB per token, Llama-3-8B-style GQA"),
// H100s, the 18 B/param recipe (2 + 4 + 4 + 2 x 4) under FSDP (ZeRO-3), full recompute, one
// 4096-token micro-batch, no overhead allowance (the seed counts none), MFU 0.45; GRPO with
// 4 trainer + 1 reference + 3 rollout GPUs, 32 prompts x 8 completions of 512 + 3584 tokens,
// and the seed's measured rates (35k tok/s rollout, 200k tok/s training).
inline Plan seedGrpoPlan()
{
    Plan p;
    p.model.arch = llama3_8b();
    p.gpu.gpu = h100();
    p.cluster = Cluster { 8, 8 };
    TrainingConfig& t = p.training;
    t.recipe.presetId = "bf16-mixed-18";
    t.recipe.recipe.weightBytes = 2;
    t.recipe.recipe.gradientBytes = 4;
    t.recipe.recipe.masterBytes = 4;
    t.recipe.recipe.momentBytes = 4;
    t.recipe.recipe.activationBytes = 2;
    t.optimizer = OptimizerKind::AdamW;
    t.zeroStage = 3;
    t.microBatch = 1;
    t.seqLen = 4096;
    t.recompute = Recompute::Full;
    t.overhead = { 0, 0 };
    t.mfu = 0.45;
    RlConfig& rl = p.rl;
    rl.algorithm = RlAlgorithm::Grpo;
    rl.placement = RlPlacement::Disjoint;
    rl.trainerGpus = 4;
    rl.referenceGpus = 1;
    rl.rolloutGpus = 3;
    rl.prompts = 32;
    rl.groupSize = 8;
    rl.promptLen = 512;
    rl.responseLen = 3584;
    rl.rolloutTokensPerS = 35000;
    rl.trainTokensPerS = 200000;
    return p;
}

inline const RoleEstimate* findRole(const RlEstimate& r, std::string_view role)
{
    for (const RoleEstimate& e : r.perRole)
        if (e.role == role)
            return &e;
    return nullptr;
}

} // namespace envelope::testing
