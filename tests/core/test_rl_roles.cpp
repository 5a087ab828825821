// The algorithm presets (which copies each keeps), placement (disjoint pools vs colocated
// phases), the old-policy snapshot, one-step off-policy overlap, explanations, validation and
// degenerate inputs. Expectations derived by hand from seed 000's plan (test_rl_fixtures.h).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "plan/planio.h"
#include "plan/presets.h"
#include "compute/compute.h"
#include "rl/rl.h"
#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

std::set<std::string> roleNames(const RlEstimate& r)
{
    std::set<std::string> names;
    for (const RoleEstimate& e : r.perRole)
        names.insert(e.role);
    return names;
}

TEST(RlAlgorithms, GrpoKeepsTrainerReferenceRolloutWithoutCritic)
{
    const RlEstimate r = estimateRl(seedGrpoPlan(), bareCounts(7e9));
    EXPECT_EQ(roleNames(r), (std::set<std::string> { "trainer", "reference", "rollout" }));
    EXPECT_EQ(r.totalGpus, 8); // 4 + 1 + 3
}

TEST(RlAlgorithms, PpoAddsATrainerSizedCriticAndAForwardOnlyRewardModel)
{
    Plan plan = seedGrpoPlan();
    plan.rl.algorithm = RlAlgorithm::Ppo;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_EQ(roleNames(r),
        (std::set<std::string> { "trainer", "reference", "rollout", "critic", "reward" }));
    const RoleEstimate* trainer = findRole(r, "trainer");
    const RoleEstimate* critic = findRole(r, "critic");
    const RoleEstimate* reward = findRole(r, "reward");
    ASSERT_TRUE(trainer && critic && reward);
    // The critic defaults to the trainer's 4 GPUs and the same 18 B/param states.
    EXPECT_EQ(critic->gpus, 4);
    EXPECT_DOUBLE_EQ(critic->perGpu.total(), trainer->perGpu.total());
    // The reward model defaults to the reference's 1 GPU: 2 x 7e9 bf16 weights, no optimizer.
    EXPECT_EQ(reward->gpus, 1);
    EXPECT_DOUBLE_EQ(reward->perGpu.weights, 14e9);
    EXPECT_DOUBLE_EQ(reward->perGpu.optimizer, 0);
    EXPECT_EQ(r.totalGpus, 4 + 1 + 3 + 4 + 1);
    // Disjoint pools: reference, reward and the critic's value pass run side by side; the
    // critic's update (4 GPUs, 5.24 s at the measured rate) beside the policy's.
    const double tokens = 256.0 * 4096;
    EXPECT_NEAR(r.referenceS, tokens / 150000, 1e-9);
    EXPECT_NEAR(r.trainS, tokens / 200000, 1e-9);
}

TEST(RlAlgorithms, DpoHasNoRolloutAndTrainsOnChosenAndRejected)
{
    Plan plan = seedGrpoPlan();
    plan.rl.algorithm = RlAlgorithm::Dpo;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_EQ(roleNames(r), (std::set<std::string> { "trainer", "reference" }));
    EXPECT_EQ(findRole(r, "rollout"), nullptr);
    EXPECT_EQ(r.rolloutTokens, 0);
    EXPECT_EQ(r.rolloutS, 0);
    // 32 prompts x 2 (chosen, rejected) x 4096 tokens = 262,144 at 200k tok/s = 1.31 s.
    EXPECT_DOUBLE_EQ(r.trainTokens, 32.0 * 2 * 4096);
    EXPECT_NEAR(r.trainS, 32.0 * 2 * 4096 / 200000, 1e-9);
    EXPECT_EQ(r.bottleneck, "training");
    // No rollout to balance: every GPU of the rollout pool goes to training.
    EXPECT_EQ(r.suggestedRolloutGpus, 0);
    EXPECT_EQ(r.suggestedTrainerGpus, 4 + 3);
    // DPO keeps its reference whatever `kl` says; reference_gpus 0 = precomputed log-probs.
    plan.rl.kl = false;
    EXPECT_NE(findRole(estimateRl(plan, bareCounts(7e9)), "reference"), nullptr);
    plan.rl.referenceGpus = 0;
    EXPECT_EQ(findRole(estimateRl(plan, bareCounts(7e9)), "reference"), nullptr);
}

TEST(RlRoles, OldPolicySnapshotSitsOnTheTrainerGpusAndCountsTowardTheirFit)
{
    Plan plan = seedGrpoPlan();
    plan.rl.oldPolicyBytesPerParam = 2;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    const RoleEstimate* old = findRole(r, "old-policy");
    ASSERT_NE(old, nullptr);
    EXPECT_EQ(old->gpus, 4);
    EXPECT_DOUBLE_EQ(old->perGpu.weights, 2 * 7e9 / 4); // 3.5 GB
    EXPECT_TRUE(old->fits);
    // Shrink the GPU to the trainer's own total + 1 GB: the trainer alone would fit, but the
    // 3.5 GB snapshot on the same GPUs does not, so both roles report it.
    const double trainerTotal = findRole(r, "trainer")->perGpu.total();
    plan.gpu.gpu.memoryBytes = trainerTotal + 1e9; // room for 1 GB, the snapshot needs 3.5
    const RlEstimate tight = estimateRl(plan, bareCounts(7e9));
    EXPECT_FALSE(findRole(tight, "trainer")->fits);
    EXPECT_FALSE(findRole(tight, "old-policy")->fits);
    EXPECT_FALSE(tight.fits);
}

TEST(RlSuggestion, NoSplitFitsWhenTheUnshardedTrainerOverflowsAtEveryCount)
{
    // 70B under ZeRO-0 replicates every state on every trainer GPU: 18 B/param x 70e9 =
    // 1,260 GB per GPU however many of the 7 rollout + trainer GPUs train, against 80 GB of HBM.
    // No split lets the trainer fit, so the suggestion must say so instead of offering the
    // current split as a balance.
    Plan plan = seedGrpoPlan();
    plan.training.zeroStage = 0;
    Explainer ex;
    const RlEstimate r = estimateRl(plan, bareCounts(70e9), &ex);
    ASSERT_GT(18.0 * 70e9, plan.gpu.gpu.memoryBytes);
    EXPECT_FALSE(r.suggestionFits);
    EXPECT_EQ(r.suggestedRolloutGpus, 3); // the current split stands in
    EXPECT_EQ(r.suggestedTrainerGpus, 4);
    const Explanation* e = ex.find("rl.suggested_rollout_gpus");
    ASSERT_NE(e, nullptr);
    EXPECT_NE(e->formula.find("no split of these 7"), std::string::npos) << e->formula;
    EXPECT_NE(e->formula.find("ZeRO-3"), std::string::npos) << e->formula;

    // Sharded (ZeRO-3) the same 70B needs 1,260 GB / n per GPU: n >= 16 trainer GPUs to fit in
    // 80 GB, more than 7, so still none fits; with 64 GPUs (63 + 1) a split exists.
    plan.training.zeroStage = 3;
    EXPECT_FALSE(estimateRl(plan, bareCounts(70e9)).suggestionFits);
    plan.rl.trainerGpus = 60;
    plan.rl.rolloutGpus = 4;
    const RlEstimate sharded = estimateRl(plan, bareCounts(70e9));
    EXPECT_TRUE(sharded.suggestionFits);
    EXPECT_GE(sharded.suggestedTrainerGpus, 16);

    // The seed's 7B plan fits on its own split.
    EXPECT_TRUE(estimateRl(seedGrpoPlan(), bareCounts(7e9)).suggestionFits);
}

TEST(RlPlacement, ColocatedPeakIsTheRolloutPhaseWithTheTrainerStatesResident)
{
    // verl and TRL's colocate mode run the engine beside the trainer at a lower
    // gpu_memory_utilization (verl's examples 0.4-0.6, TRL's vllm_gpu_memory_utilization 0.3):
    // the engine's share is a per-instance limit and what the trainer keeps resident comes on
    // top.
    Plan plan = seedGrpoPlan();
    plan.rl.placement = RlPlacement::Colocated;
    plan.serving.gpuMemoryUtilization = 0.5;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_EQ(r.totalGpus, 8);
    for (const RoleEstimate& e : r.perRole)
        EXPECT_EQ(e.gpus, 8) << e.role;
    // Every role spread over the same 8 GPUs. Resident in every phase: trainer weights
    // 2 x 7e9 / 8 = 1.75 GB and optimizer 12 x 7e9 / 8 = 10.5 GB, reference 14e9 / 8 = 1.75 GB.
    const double resident = 1.75e9 + 10.5e9 + 1.75e9;
    // Rollout phase: the resident states + the engine's own 81,559 MiB x 0.5 = 42.76 GB (its
    // 14 GB of weights, 1.91 GB sampler peak, 0.25 GiB non-torch and a 26.6 GB KV pool).
    const double engine = 81559.0 * 1024 * 1024 * 0.5;
    EXPECT_NEAR(r.rolloutPhaseBytes, resident + engine, 1.0); // 56.8 GB
    // Training phase: resident + gradients 4 x 7e9 / 8 = 3.5 GB + the trainer's activations.
    const double activations = findRole(r, "trainer")->perGpu.activations;
    EXPECT_NEAR(r.trainingPhaseBytes, resident + 3.5e9 + activations, 1.0);
    EXPECT_DOUBLE_EQ(r.colocatedPeakBytes, std::max(r.rolloutPhaseBytes, r.trainingPhaseBytes));
    EXPECT_TRUE(r.fits);
    // 8 engines of 32 completions; the 26.6 GB pool holds floor(26.59e9 / 2,097,152) = 12,677
    // blocks = 49 sequences of 4096 tokens: one wave.
    EXPECT_EQ(r.rolloutMaxSequences, 49);
    EXPECT_EQ(r.rolloutWaves, 1);
}

TEST(RlPlacement, ColocatedEngineAtTheServingDefaultDoesNotFitBesideTheTrainer)
{
    // At gpu_memory_utilization 0.9 the engine alone claims 76.97 GB; with the trainer's 14 GB
    // resident the rollout phase needs 91 GB of an 85.5 GB H100 (vLLM would refuse to start:
    // "Free memory on device ... is less than desired GPU memory utilization").
    Plan plan = seedGrpoPlan();
    plan.rl.placement = RlPlacement::Colocated;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    EXPECT_NEAR(r.rolloutPhaseBytes, 14e9 + 81559.0 * 1024 * 1024 * 0.9, 1.0);
    EXPECT_FALSE(r.fits);
    // Offloading the optimizer between phases (verl optimizer_offload, OpenRLHF --adam_offload)
    // takes its 10.5 GB off the GPUs: 3.5 + 76.97 = 80.5 GB fits.
    plan.training.offloadOptimizer = true;
    const RlEstimate offloaded = estimateRl(plan, bareCounts(7e9));
    EXPECT_NEAR(offloaded.rolloutPhaseBytes, 3.5e9 + 81559.0 * 1024 * 1024 * 0.9, 1.0);
    EXPECT_TRUE(offloaded.fits);
}

TEST(RlPlacement, ColocatedPhasesTakeTurnsSoTheStepIsASum)
{
    Plan plan = seedGrpoPlan();
    plan.rl.placement = RlPlacement::Colocated;
    plan.rl.offPolicyPipeline = true; // cannot overlap on the same GPUs
    plan.rl.rolloutTokensPerS.reset();
    plan.rl.trainTokensPerS.reset();
    const ParamCounts counts = countParameters(plan.model.arch);
    const RlEstimate r = estimateRl(plan, counts);
    const double tokens = 256.0 * 4096;
    // Training and the reference forward both run on all 8 GPUs: the trainer's op-timed step
    // on an 8-GPU cluster, and a forward at its share of a trained token (full recompute: one
    // of four forward-sized passes, so a quarter of the train time).
    const TrainingCompute eight
        = estimateCompute(plan.model.arch, counts, plan.training, Cluster { 8, 8 }, plan.gpu.gpu);
    EXPECT_NEAR(r.trainS, tokens / eight.tokensPerS, 1e-9 * r.trainS);
    // The reference's forward and the policy's old log-probs, one after the other: 2 x 0.25.
    EXPECT_NEAR(r.oldLogProbS / r.trainS, 0.25, 0.02);
    EXPECT_NEAR(r.referenceS / r.trainS, 0.50, 0.04);
    EXPECT_NEAR(r.stepS, r.rolloutS + r.weightSyncS + r.referenceS + r.trainS, 1e-9 * r.stepS);
}

TEST(RlTiming, OneStepOffPolicyOverlapsRolloutWithTraining)
{
    Plan plan = seedGrpoPlan();
    plan.rl.offPolicyPipeline = true;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9));
    const double tokens = 256.0 * 4096;
    // max(29.96 + 0.031 weight sync, 6.99 + 5.24) = 29.99 s: 120 steps/hour.
    EXPECT_NEAR(r.stepS, tokens / 35000 + 14e9 / 450e9, 1e-9);
    EXPECT_NEAR(r.stepsPerHour, 3600 / (tokens / 35000 + 14e9 / 450e9), 1e-9);
}

TEST(RlExplain, EveryResultKeyHasAFormula)
{
    Plan plan = seedGrpoPlan();
    plan.rl.algorithm = RlAlgorithm::Ppo;
    Explainer ex;
    const RlEstimate r = estimateRl(plan, bareCounts(7e9), &ex);
    for (const char* key : { "rl.rollout_s", "rl.train_s", "rl.step_s", "rl.steps_per_hour",
             "rl.bottleneck", "rl.reference_s", "rl.rollout_tokens", "rl.train_tokens",
             "rl.suggested_rollout_gpus", "rl.suggested_trainer_gpus",
             "rl.per_role.trainer.per_gpu_bytes", "rl.per_role.reference.per_gpu_bytes",
             "rl.per_role.rollout.per_gpu_bytes", "rl.per_role.critic.per_gpu_bytes",
             "rl.per_role.reward.per_gpu_bytes", "rl.per_role.rollout.fits",
             "rl.rollout_kv_pool_bytes", "rl.rollout_max_sequences", "rl.rollout_waves" })
        EXPECT_NE(ex.find(key), nullptr) << key;
    ASSERT_NE(ex.find("rl.step_s"), nullptr);
    EXPECT_DOUBLE_EQ(ex.find("rl.step_s")->value, r.stepS);
    EXPECT_DOUBLE_EQ(ex.find("rl.per_role.rollout.per_gpu_bytes")->value,
        findRole(r, "rollout")->perGpu.total());
    // The fast path records nothing and computes the same figures.
    const RlEstimate quiet = estimateRl(plan, bareCounts(7e9));
    EXPECT_DOUBLE_EQ(quiet.stepS, r.stepS);
}

TEST(RlExplain, ServingKeysOfTheResultContractAreExplained)
{
    Explainer ex;
    const ServingEstimate s
        = estimateServing(llama3_8b(), bareCounts(8.03e9), ServingConfig {}, h100(), &ex);
    for (const char* key :
        { "serving.kv_bytes_per_token", "serving.weights_bytes_per_gpu", "serving.kv_budget_bytes",
            "serving.max_tokens", "serving.max_sequences", "serving.decode_tokens_per_s",
            "serving.prefill_time_s", "serving.ttft_s", "serving.itl_s",
            "serving.compute_bound_concurrency", "serving.contiguous_waste_bytes" })
        EXPECT_NE(ex.find(key), nullptr) << key;
    EXPECT_DOUBLE_EQ(ex.find("serving.kv_bytes_per_token")->value, 131072);
    EXPECT_DOUBLE_EQ(ex.find("serving.max_sequences")->value, s.maxSequences);
}

TEST(RlEdges, DegenerateInputsStayFinite)
{
    for (RlAlgorithm algorithm : { RlAlgorithm::Grpo, RlAlgorithm::Ppo, RlAlgorithm::Dpo })
        for (RlPlacement placement : { RlPlacement::Disjoint, RlPlacement::Colocated }) {
            Plan plan = seedGrpoPlan();
            plan.rl.algorithm = algorithm;
            plan.rl.placement = placement;
            plan.rl.trainerGpus = 0;
            plan.rl.rolloutGpus = 0;
            plan.rl.prompts = 0;
            plan.rl.responseLen = 0;
            plan.rl.rolloutTokensPerS.reset();
            plan.rl.trainTokensPerS.reset();
            plan.gpu.gpu = Gpu {};
            Explainer ex;
            const RlEstimate r = estimateRl(plan, bareCounts(0), &ex);
            for (double v : { r.rolloutS, r.referenceS, r.trainS, r.stepS, r.stepsPerHour,
                     r.rolloutTokens, r.colocatedPeakBytes })
                EXPECT_TRUE(std::isfinite(v));
            for (const RoleEstimate& e : r.perRole)
                EXPECT_TRUE(std::isfinite(e.perGpu.total())) << e.role;
            for (const Explanation& e : ex.items())
                EXPECT_TRUE(std::isfinite(e.value)) << e.figure;
        }
}

// The rl section is checked where every plan is: validatePlan (planio), which the reader, the CLI
// and the app share.
TEST(RlValidation, ErrorsNameTheJsonPathAndTheAllowedRange)
{
    const Plan base = defaultPlan();
    Plan plan = base;
    EXPECT_FALSE(validatePlan(plan).has_value());
    plan.rl.groupSize = 0;
    auto e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->path, "rl.group_size");
    plan = base;
    plan.rl.oldPolicyBytesPerParam = 3;
    e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->toString(), "rl.old_policy_bytes_per_param: must be 0, 1 or 2, got 3");
    plan = base;
    plan.rl.rolloutGpus = 0; // GRPO needs a rollout engine ...
    e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->path, "rl.rollout_gpus");
    plan.rl.algorithm = RlAlgorithm::Dpo; // ... DPO does not
    EXPECT_FALSE(validatePlan(plan).has_value());
}

} // namespace
} // namespace envelope
