// The RL rollout engine accounted as the serving engine accounts it (issue 12): vLLM allocates
// weights / tp + a KV pool sized from gpu_memory_utilization + its profiled activation peak +
// non-torch memory, and a step's completions run in waves of what the pool holds. Every figure
// below is a hand calculation from the engine's published accounting (vLLM 0.19
// Worker.determine_available_memory; docs/formulas-serving.md §3), written out here.
#include <gtest/gtest.h>

#include <cmath>

#include "rl_engine_fixtures.h"
#include "plan/planio.h"
#include "rl/rl.h"
#include "serving/serving.h"

namespace envelope {
namespace {

using namespace envelope::testing;

TEST(RlRolloutEngine, KvIsCappedAtThePoolInsteadOfHoldingEverySequence)
{
    const RlEstimate r = estimateRl(twoGpuGrpo(), bareCounts(7e9));
    const RoleEstimate* rollout = findRole(r, "rollout");
    ASSERT_NE(rollout, nullptr);
    // Holding all 512 completions at once would be 512 x 4096 x 131,072 B = 256 GiB of KV,
    // 269 GiB with the weights, on one 80 GB GPU. vLLM allocates its pool and no more.
    EXPECT_NEAR(rollout->perGpu.kvCache, kPool, 1.0);
    EXPECT_NEAR(rollout->perGpu.total(), kUsable, 1.0);
    EXPECT_LT(rollout->perGpu.total(), 81559.0 * 1024 * 1024);
    EXPECT_TRUE(rollout->fits);
    // 512 sequences, 113 at a time: ceil(512 / 113) = 5 waves (4 of 113, then 60).
    EXPECT_EQ(r.rolloutMaxSequences, 113);
    EXPECT_EQ(r.rolloutWaves, 5);
    EXPECT_NEAR(r.rolloutKvPoolBytes, kPool, 1.0);
}

TEST(RlRolloutEngine, RolloutTimeIsTheSumOfItsWaves)
{
    const Plan plan = twoGpuGrpo();
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    // 512 completions on one engine that holds 113 at once: 512 = 4 x 113 + 60, so four full
    // waves and one of 60. One wave of b sequences: prefill b prompts of 512 tokens, then 3584
    // decode steps of the batch at the mean context 512 + 3584 / 2 = 2304, each step timed as
    // the serving engine times its own (core/serving).
    auto wave = [&](double b) {
        return prefillTime(plan.model.arch, plan.serving, plan.gpu.gpu, b, 512)
            + 3584 * decodeStepTime(plan.model.arch, plan.serving, plan.gpu.gpu, b, 2304);
    };
    EXPECT_EQ(r.rolloutWaves, 5);
    EXPECT_NEAR(r.rolloutS, 4 * wave(113) + wave(60), 1e-9 * r.rolloutS);
    // Each decode step reads at least the 16.06 GB of weights at the full 3.35 TB/s: five waves
    // of 3584 steps cannot take less than 5 x 3584 x 4.79 ms = 85.9 s.
    EXPECT_GT(r.rolloutS, 5 * 3584 * 16.06e9 / 3.35e12);
    // Against one impossible batch of 512: the waves re-read the weights five times.
    EXPECT_GT(r.rolloutS, wave(512));
}

TEST(RlRolloutEngine, MaxNumSeqsCapsTheBatchBelowWhatThePoolHolds)
{
    // vLLM's scheduler runs at most max_num_seqs sequences; with 64 the 113-sequence pool runs
    // 512 completions in ceil(512 / 64) = 8 waves. The sampler warm-up also shrinks to 64 rows:
    // 64 x 128,256 x 14 + 8192 x 4096 x 2 = 0.182 GB, so the forward's 0.839 GB is the peak and
    // the pool grows to 76.97 - 14 - 0.839 - 0.268 = 61.86 GB.
    Plan plan = twoGpuGrpo();
    plan.serving.maxNumSeqs = 64;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_EQ(r.rolloutMaxSequences, 64);
    EXPECT_EQ(r.rolloutWaves, 8);
    const double forward = 8192.0 * (2 * 4096 + 3 * 14336) * 2;
    EXPECT_NEAR(r.rolloutKvPoolBytes, kUsable - 14e9 - forward - 0.25 * 1073741824.0, 1.0);
}

TEST(RlRolloutEngine, MoreEnginesShareTheCompletions)
{
    // Four rollout GPUs at TP 1 are four engines of ceil(512 / 4) = 128 sequences: 2 waves
    // (113, then 15).
    Plan plan = twoGpuGrpo();
    plan.rl.rolloutGpus = 4;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_EQ(r.rolloutWaves, 2);
    // At TP 2 the two engines hold ceil(512 / 2) = 256 each; each GPU keeps 4 of the 8 KV
    // heads (65,536 B per token) and 7 GB of weights, and TP >= 2 adds NCCL's 2.07 GiB of
    // non-torch memory: pool 76.97 - 7 - 1.906 - 2.223 = 65.84 GB = 62,790 blocks of
    // 1,048,576 B = 245 sequences, so 2 waves.
    plan.serving.tp = 2;
    const RlEstimate tp2 = estimateRl(plan, bareCounts(7e9));
    const double pool = kUsable - 7e9 - kSampler - 2.07 * 1073741824.0;
    EXPECT_NEAR(tp2.rolloutKvPoolBytes, pool, 1.0);
    EXPECT_EQ(tp2.rolloutMaxSequences, std::floor(std::floor(pool / (16 * 65536.0)) / 256));
    EXPECT_EQ(tp2.rolloutMaxSequences, 245);
    EXPECT_EQ(tp2.rolloutWaves, 2);
}

TEST(RlRolloutEngine, APoolThatHoldsNoFullSequenceDoesNotFit)
{
    // 512 + 131,072 tokens of 131,072 B = 17.2 GB per sequence, in a pool of 60.79 GB: 3 fit.
    // At 512 + 480,000 tokens (63 GB) none does: vLLM refuses max_model_len beyond its pool.
    Plan plan = twoGpuGrpo();
    plan.rl.responseLen = 480000;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_EQ(r.rolloutMaxSequences, 0);
    EXPECT_FALSE(findRole(r, "rollout")->fits);
    EXPECT_FALSE(r.fits);
    EXPECT_TRUE(std::isfinite(r.rolloutS));
    EXPECT_GT(r.rolloutS, 0);
}

TEST(RlRolloutEngine, AMeasuredRolloutRateStandsAsMeasured)
{
    // A measured tokens/s already includes the waves the engine ran.
    Plan plan = twoGpuGrpo();
    plan.rl.rolloutTokensPerS = 5000;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_NEAR(r.rolloutS, 512.0 * 4096 / 5000, 1e-9);
    EXPECT_EQ(r.rolloutWaves, 5);
}

} // namespace
} // namespace envelope

namespace envelope {
namespace {

TEST(RlRolloutEngine, ALongTailOfResponsesWaitsForTheLongestAtANearEmptyBatch)
{
    // 16 prompts x 8 = 128 completions on one engine that holds them all at once. Every
    // response 3,584 tokens long: 3,584 decode steps at batch 128. With a mean of 1,792 under
    // the same cap, the engine decodes 128 x 1,792 tokens in 1,792 steps of the full batch,
    // then waits 3,584 - 1,792 = 1,792 steps for the longest responses (the straggler tail).
    Plan plan = twoGpuGrpo();
    plan.rl.prompts = 16;
    const ParamCounts counts = bareCounts(7e9);
    const RlEstimate full = estimateRl(plan, counts);
    plan.rl.responseLenMean = 1792;
    const RlEstimate tail = estimateRl(plan, counts);
    EXPECT_DOUBLE_EQ(tail.meanResponseTokens, 1792);
    EXPECT_DOUBLE_EQ(tail.rolloutTailSteps, 1792);
    EXPECT_DOUBLE_EQ(full.rolloutTailSteps, 0);
    // The policy trains on what was generated: 128 x (512 + 1,792) tokens.
    EXPECT_DOUBLE_EQ(tail.trainTokens, 128.0 * (512 + 1792));
    // Shorter than the all-long step, but never shorter than 3,584 steps of one sequence: the
    // step waits for its longest response.
    EXPECT_LT(tail.rolloutS, full.rolloutS);
    EXPECT_GT(tail.rolloutS,
        3584 * decodeStepTime(plan.model.arch, plan.serving, plan.gpu.gpu, 1, 512));
    // A mean above the cap is refused by the plan's checks.
    plan.rl.responseLenMean = 4000;
    const std::optional<Error> e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->path, "rl.response_len_mean");
}

} // namespace
} // namespace envelope
