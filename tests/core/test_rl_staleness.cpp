// Off-policy RL beyond one step (issue 28): a staleness bound k (AReaL's
// max_head_offpolicyness) and partial rollouts (AReaL's interruptible generation, verl
// fully_async's partial_rollout). Every count below is a hand calculation from the engine's pool
// (the same 60.79 GB vLLM pool as test_rl_engine.cpp) and the formulas of docs/formulas-rl.md §4,
// written out here; the times compose the serving engine's own prefill and decode steps.
#include <gtest/gtest.h>

#include <cmath>

#include "rl_engine_fixtures.h"
#include "plan/planio.h"
#include "rl/rl.h"
#include "serving/serving.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// 16 prompts x 8 = 128 completions of a 512-token prompt and responses of mean 1,792 under a
// 3,584 cap, on one TP-1 H100 engine at gpu_memory_utilization 0.9; one trainer GPU, no KL.
Plan longTailGrpo()
{
    Plan plan = twoGpuGrpo();
    plan.rl.prompts = 16;
    plan.rl.responseLenMean = 1792;
    return plan;
}

// The pool of rl_engine_fixtures.h (kPool: 28,989 blocks of 16 tokens x 131,072 B). A sequence
// at the mean, 512 + 1,792 = 2,304 tokens, takes 144 blocks: 201 run at once.
double meanSequencesInPool() { return std::floor(std::floor(kPool / (16 * 131072.0)) / 144); }

TEST(RlStaleness, ThePoolHoldsTwoHundredAndOneMeanLengthSequences)
{
    EXPECT_EQ(meanSequencesInPool(), 201);
}

TEST(RlStaleness, WithoutPartialRolloutsEveryBoundStillWaitsForTheLongest)
{
    // Batch generation (verl one_step_off_policy, OpenRLHF async): the engine runs the step's
    // 128 sequences and waits for the longest, whatever k: 1,792 steps of the full batch, then
    // 3,584 - 128 x 1,792 / 128 = 1,792 tail steps.
    Plan plan = longTailGrpo();
    const ParamCounts counts = bareCounts(7e9);
    for (int k : { 0, 1, 4 }) {
        plan.rl.staleness = k;
        const RlEstimate r = estimateRl(plan, counts);
        EXPECT_EQ(r.staleness, k);
        EXPECT_FALSE(r.partialRollouts);
        EXPECT_DOUBLE_EQ(r.rolloutRunningBatch, 128);
        EXPECT_DOUBLE_EQ(r.rolloutTailSteps, 1792);
        EXPECT_DOUBLE_EQ(r.rolloutReprefillS, 0);
    }
}

TEST(RlStaleness, PartialRolloutsFillThePoolAndShortenTheWait)
{
    // Partial rollouts admit the next k steps' prompts: at k = 1 up to 2 x 128 = 256 sequences,
    // of which the pool holds 201. The step's 128 x 1,792 tokens take 128 x 1,792 / 201 =
    // 1,141.2 steps of that batch, and a sequence may span k + 1 = 2 rollouts, so each runs at
    // least 3,584 / 2 = 1,792 steps: 650.8 tail steps. At k = 3, 3,584 / 4 = 896 < 1,141.2: no
    // wait at all.
    Plan plan = longTailGrpo();
    const ParamCounts counts = bareCounts(7e9);
    plan.rl.staleness = 1;
    plan.rl.partialRollouts = true;
    const RlEstimate one = estimateRl(plan, counts);
    EXPECT_TRUE(one.partialRollouts);
    EXPECT_DOUBLE_EQ(one.rolloutRunningBatch, 201);
    EXPECT_NEAR(one.rolloutTailSteps, 1792 - 128.0 * 1792 / 201, 1e-9);
    EXPECT_NEAR(one.rolloutTailSteps, 650.8, 0.05);
    plan.rl.staleness = 3;
    const RlEstimate three = estimateRl(plan, counts);
    EXPECT_DOUBLE_EQ(three.rolloutTailSteps, 0);

    // The rollout at k = 3, term by term: 128 / 201 prefills of 201 prompts of 512 tokens,
    // 1,141.2 decode steps of 201 sequences at the mean context 512 + 1,792 / 2 = 1,408, and the
    // carried batch's KV recomputed under the new weights: a prefill of 201 sequences of 1,408.
    const Gpu& g = plan.gpu.gpu;
    const double reprefill = prefillTime(plan.model.arch, plan.serving, g, 201, 1408);
    EXPECT_NEAR(three.rolloutReprefillS, reprefill, 1e-12);
    EXPECT_GT(three.rolloutReprefillS, 0);
    const double expected = 128.0 / 201 * prefillTime(plan.model.arch, plan.serving, g, 201, 512)
        + 128.0 * 1792 / 201 * decodeTokenTime(plan.model.arch, plan.serving, g, 201, 1408)
        + reprefill;
    EXPECT_NEAR(three.rolloutS, expected, 1e-9 * expected);

    // Against batch generation at the same bound: shorter, since no step waits 1,792 steps at a
    // near-empty batch.
    plan.rl.partialRollouts = false;
    const RlEstimate batch = estimateRl(plan, counts);
    EXPECT_LT(three.rolloutS, batch.rolloutS);
    EXPECT_GT(batch.rolloutS,
        1792 * decodeTokenTime(plan.model.arch, plan.serving, g, 1, 512 + 3584));
}

TEST(RlStaleness, ADisjointJobOverlapsRolloutAndUpdateFromOneStepOn)
{
    Plan plan = longTailGrpo();
    const ParamCounts counts = bareCounts(7e9);
    const RlEstimate sync = estimateRl(plan, counts);
    EXPECT_EQ(sync.staleness, 0);
    EXPECT_FALSE(sync.overlapped);
    EXPECT_NEAR(sync.stepS, sync.rolloutS + sync.weightSyncS + sync.referenceS + sync.trainS,
        1e-9 * sync.stepS);

    plan.rl.staleness = 2;
    const RlEstimate async = estimateRl(plan, counts);
    EXPECT_TRUE(async.overlapped);
    // Both pools pause for the weight sync; k >= 1 / N leaves neither waiting on the other.
    EXPECT_NEAR(async.stepS,
        async.weightSyncS + std::max(async.rolloutS, async.referenceS + async.trainS),
        1e-9 * async.stepS);
    EXPECT_DOUBLE_EQ(async.rolloutIdleS, 0);
    EXPECT_DOUBLE_EQ(async.trainerIdleS, 0);
    // The same rollout (batch generation): only the overlap differs.
    EXPECT_DOUBLE_EQ(async.rolloutS, sync.rolloutS);
    EXPECT_LT(async.stepS, sync.stepS);

    // off_policy_pipeline alone is staleness 1.
    plan.rl.staleness.reset();
    plan.rl.offPolicyPipeline = true;
    const RlEstimate oneStep = estimateRl(plan, counts);
    EXPECT_EQ(oneStep.staleness, 1);
    EXPECT_TRUE(oneStep.overlapped);
}

TEST(RlStaleness, ColocatedPhasesTakeTurnsButPartialRolloutsStillCutTheTail)
{
    // slime / APRIL on one pool: generation and training share the GPUs, so the step is the
    // sum of its phases whatever k; the carried sequences still spare the wait.
    Plan plan = longTailGrpo();
    plan.rl.placement = RlPlacement::Colocated;
    plan.cluster = Cluster { 1, 1 };
    plan.serving.gpuMemoryUtilization = 0.5;
    const ParamCounts counts = bareCounts(7e9);
    plan.rl.staleness = 2;
    const RlEstimate batch = estimateRl(plan, counts);
    plan.rl.partialRollouts = true;
    const RlEstimate partial = estimateRl(plan, counts);
    for (const RlEstimate* r : { &batch, &partial }) {
        EXPECT_FALSE(r->overlapped);
        EXPECT_NEAR(r->stepS, r->rolloutS + r->weightSyncS + r->referenceS + r->trainS,
            1e-9 * r->stepS);
    }
    EXPECT_GT(batch.rolloutTailSteps, 0);
    EXPECT_LT(partial.rolloutTailSteps, batch.rolloutTailSteps);
    EXPECT_LT(partial.rolloutS, batch.rolloutS);
}

TEST(RlUpdateEpochs, EachPassOverTheCompletionsIsAnotherUpdate)
{
    // The measured 200,000 tokens/s trainer (seed 000's) on its one GPU trains the step's
    // 128 x (512 + 1,792) = 294,912 tokens in 1.47456 s; three PPO epochs (verl ppo_epochs,
    // OpenRLHF --train.max_epochs, TRL num_iterations) take 4.42368 s. The rollout and the
    // forwards are the same.
    Plan plan = longTailGrpo();
    const ParamCounts counts = bareCounts(7e9);
    const RlEstimate one = estimateRl(plan, counts);
    EXPECT_NEAR(one.trainS, 1.47456, 1e-9);
    plan.rl.updateEpochs = 3;
    const RlEstimate three = estimateRl(plan, counts);
    EXPECT_NEAR(three.trainS, 4.42368, 1e-9);
    EXPECT_DOUBLE_EQ(three.rolloutS, one.rolloutS);
    EXPECT_DOUBLE_EQ(three.referenceS, one.referenceS);
    // A second pass without the old log-probs' forward is probably not what ran.
    plan.rl.oldLogProbForward = false;
    bool warned = false;
    for (const std::string& w : planWarnings(plan))
        warned = warned || w.find("rl.update_epochs = 3") != std::string::npos;
    EXPECT_TRUE(warned);
    plan.rl.updateEpochs = 101;
    const std::optional<Error> e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->path, "rl.update_epochs");
}

// The refusal validatePlan gives: its field, and a part of its message.
void expectRefused(const Plan& plan, const std::string& path, const std::string& fragment)
{
    const std::optional<Error> e = validatePlan(plan);
    ASSERT_TRUE(e.has_value()) << path;
    EXPECT_EQ(e->path, path);
    EXPECT_NE(e->message.find(fragment), std::string::npos) << e->message;
}

TEST(RlStaleness, ContradictionsAndRangesNameTheirField)
{
    Plan plan = longTailGrpo();
    plan.rl.offPolicyPipeline = true;
    plan.rl.staleness = 0;
    expectRefused(plan, "rl.staleness", "off_policy_pipeline");

    plan.rl.offPolicyPipeline = false;
    plan.rl.partialRollouts = true;
    expectRefused(plan, "rl.partial_rollouts", "above 0");

    // A fraction of a step is verl's staleness_threshold; off_policy_pipeline is a whole step.
    plan.rl.staleness = 1.5;
    EXPECT_FALSE(validatePlan(plan).has_value());
    plan.rl.staleness = 0.5;
    EXPECT_FALSE(validatePlan(plan).has_value());
    plan.rl.offPolicyPipeline = true;
    expectRefused(plan, "rl.staleness", "0.5 contradicts rl.off_policy_pipeline");
    plan.rl.offPolicyPipeline = false;

    // Each of the N updates trains at least one prompt's group: 16 prompts, at most 16.
    plan.rl.updatesPerSync = 17;
    expectRefused(plan, "rl.updates_per_sync", "1..prompts_per_step (16)");
    plan.rl.updatesPerSync = 16;
    EXPECT_FALSE(validatePlan(plan).has_value());
    plan.rl.updatesPerSync = 0;
    EXPECT_FALSE(readPlan(writePlan(plan), testPresets()).ok());
    plan.rl.updatesPerSync = 1;

    plan.rl.staleness = 1001;
    expectRefused(plan, "rl.staleness", "0..1000");

    plan.rl.staleness = 4;
    EXPECT_FALSE(validatePlan(plan).has_value());
}

// Streamed updates and a fractional bound (verl recipe/fully_async_policy:
// trigger_parameter_sync_step N, staleness_threshold k), by hand. Measured rates make every
// phase a round figure: 16 x 8 = 128 completions of 512 + 3,584 = 4,096 tokens = 524,288 tokens;
// the rollout at 5,242.88 tok/s takes 100 s, the trainer at 13,107.2 tok/s 40 s (no KL, no old
// log-prob forward: nothing else on its side); the weight sync 2 B x 7e9 / 450 GB/s over NVLink
// (both GPUs in one node) = 0.0311 s.
Plan streamedGrpo(double trainTokensPerS)
{
    Plan plan = twoGpuGrpo();
    plan.rl.prompts = 16;
    plan.rl.oldLogProbForward = false;
    plan.rl.rolloutTokensPerS = 5242.88;
    plan.rl.trainTokensPerS = trainTokensPerS;
    return plan;
}

TEST(RlStreaming, UpdatesPerSyncOverlapTheUpdateWithTheRestOfTheRollout)
{
    const ParamCounts counts = bareCounts(7e9);
    const double W = 2 * 7e9 / 450e9;
    Plan plan = streamedGrpo(13107.2);
    const RlEstimate sync = estimateRl(plan, counts);
    EXPECT_NEAR(sync.rolloutS, 100, 1e-9);
    EXPECT_NEAR(sync.trainS, 40, 1e-9);
    EXPECT_DOUBLE_EQ(sync.referenceS, 0);
    EXPECT_NEAR(sync.weightSyncS, W, 1e-12);
    // Synchronous: 100 + W + 40; each pool idles while the other works.
    EXPECT_FALSE(sync.overlapped);
    EXPECT_NEAR(sync.stepS, 140 + W, 1e-9);
    EXPECT_NEAR(sync.rolloutIdleS, 40, 1e-9);
    EXPECT_NEAR(sync.trainerIdleS, 100, 1e-9);

    // N = 4, on-policy (verl's "stream off policy pipeline", staleness_threshold 0): the trainer
    // starts on the first 32 completions at 100 / 4 = 25 s; the rollout waits only for the last
    // quarter's update, 40 / 4 = 10 s. Step W + max(100 + 10, 40 + 25) = W + 110.
    plan.rl.updatesPerSync = 4;
    const RlEstimate streamed = estimateRl(plan, counts);
    EXPECT_TRUE(streamed.overlapped);
    EXPECT_EQ(streamed.updatesPerSync, 4);
    EXPECT_NEAR(streamed.rolloutIdleS, 10, 1e-9);
    EXPECT_NEAR(streamed.trainerIdleS, 25, 1e-9);
    EXPECT_NEAR(streamed.stepS, 110 + W, 1e-9);
    EXPECT_EQ(streamed.bottleneck, "rollout");

    // k = 0.05 of a step lets the rollout generate 0.05 x 100 = 5 s of the next step meanwhile:
    // its wait 10 - 5 = 5 s, step W + 105. From k = 40 / (4 x 100) = 0.1 it never waits: W + 100,
    // and a larger k gains nothing more (verl's 128-GPU ablation: 0.3 and 0.5 about equal).
    plan.rl.staleness = 0.05;
    const RlEstimate small = estimateRl(plan, counts);
    EXPECT_NEAR(small.rolloutIdleS, 5, 1e-9);
    EXPECT_NEAR(small.trainerIdleS, 20, 1e-9);
    EXPECT_NEAR(small.stepS, 105 + W, 1e-9);
    for (double k : { 0.1, 0.3, 0.5, 1.0 }) {
        plan.rl.staleness = k;
        const RlEstimate r = estimateRl(plan, counts);
        EXPECT_NEAR(r.stepS, 100 + W, 1e-9) << k;
        EXPECT_NEAR(r.rolloutIdleS, 0, 1e-9) << k;
    }

    // Colocated pools take turns whatever N: the sum, as synchronous.
    plan.rl.staleness.reset();
    plan.rl.placement = RlPlacement::Colocated;
    const RlEstimate colocated = estimateRl(plan, counts);
    EXPECT_FALSE(colocated.overlapped);
    EXPECT_DOUBLE_EQ(colocated.rolloutIdleS, 0);
    EXPECT_DOUBLE_EQ(colocated.trainerIdleS, 0);
}

TEST(RlStreaming, ATrainerBoundJobWaitsForItsFirstCompletionsUntilTheBoundCoversThem)
{
    // The trainer at 2,621.44 tok/s: 200 s, twice the rollout.
    const ParamCounts counts = bareCounts(7e9);
    const double W = 2 * 7e9 / 450e9;
    Plan plan = streamedGrpo(2621.44);
    plan.rl.updatesPerSync = 4;
    // k = 0: the trainer waits 100 / 4 = 25 s for its first quarter, the rollout 200 / 4 = 50 s
    // for the last update: W + max(100 + 50, 200 + 25) = W + 225.
    RlEstimate r = estimateRl(plan, counts);
    EXPECT_NEAR(r.trainerIdleS, 25, 1e-9);
    EXPECT_NEAR(r.rolloutIdleS, 50, 1e-9);
    EXPECT_NEAR(r.stepS, 225 + W, 1e-9);
    EXPECT_EQ(r.bottleneck, "training");
    // k = 0.1: 10 s of completions ready, the trainer waits 15 s: W + 215.
    plan.rl.staleness = 0.1;
    r = estimateRl(plan, counts);
    EXPECT_NEAR(r.trainerIdleS, 15, 1e-9);
    EXPECT_NEAR(r.stepS, 215 + W, 1e-9);
    // k = 1 / N = 0.25 covers the first quarter: the trainer never waits, W + 200, as one-step
    // off-policy with one update per sync.
    plan.rl.staleness = 0.25;
    r = estimateRl(plan, counts);
    EXPECT_NEAR(r.trainerIdleS, 0, 1e-9);
    EXPECT_NEAR(r.stepS, 200 + W, 1e-9);
    plan.rl.staleness = 1;
    plan.rl.updatesPerSync = 1;
    EXPECT_NEAR(estimateRl(plan, counts).stepS, 200 + W, 1e-9);
}

TEST(RlStreaming, AFractionalBoundCarriesPartialRolloutsOverAFractionOfAStep)
{
    // Partial rollouts under k = 0.5 (verl's staleness_threshold 0.5, partial_rollout True):
    // the engine admits up to 1.5 x 128 = 192 sequences (its pool holds 201 at the mean), and a
    // sequence spans at most 1.5 steps' rollouts: each waits 3,584 / 1.5 - 128 x 1,792 / 192 =
    // 2,389.3 - 1,194.7 = 1,194.7 tail steps.
    Plan plan = longTailGrpo();
    plan.rl.staleness = 0.5;
    plan.rl.partialRollouts = true;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_TRUE(r.partialRollouts);
    EXPECT_DOUBLE_EQ(r.rolloutRunningBatch, 192);
    EXPECT_NEAR(r.rolloutTailSteps, 3584 / 1.5 - 128.0 * 1792 / 192, 1e-9);
    EXPECT_NEAR(r.rolloutTailSteps, 1194.7, 0.05);
}

TEST(RlStaleness, ThePlanKeysRoundTrip)
{
    const PresetLibrary presets = testPresets();
    const Expected<Plan> read = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "cluster": {"gpus": 8, "gpus_per_node": 8},
        "rl": {"staleness": 0.5, "partial_rollouts": true, "prompts_per_step": 32,
               "updates_per_sync": 4}})",
        presets);
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(rlStaleness(read->rl), 0.5);
    EXPECT_TRUE(read->rl.partialRollouts);
    EXPECT_EQ(read->rl.updatesPerSync, 4);
    const Expected<Plan> back = readPlan(writePlan(*read), presets);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_TRUE(*back == *read);
    // Absent, the bound follows off_policy_pipeline: 0, or 1 when it is on.
    const Expected<Plan> plain = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "rl": {"off_policy_pipeline": true}})",
        presets);
    ASSERT_TRUE(plain.ok()) << plain.error().toString();
    EXPECT_FALSE(plain->rl.staleness.has_value());
    EXPECT_EQ(rlStaleness(plain->rl), 1);
}

} // namespace
} // namespace envelope
