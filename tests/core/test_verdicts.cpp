// Honest verdicts (issue 11): "fits", "tight", "over", the bottleneck and the serving "fits"
// mean what a user reads them to mean. Every expectation is a hand calculation written out here.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures.h"
#include "estimate/estimate.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// ---- Three-valued training verdict (issue 11 item 5) ---------------------------------------

TEST(TrainingVerdict, IssueExampleAboveTheUsableLineIsTightNotFits)
{
    // The issue's "✓ FITS at 84.8 of 85.5 GB": 84.8 / 85.5 = 0.992, above the 90% line.
    EXPECT_EQ(memoryVerdict(84.8e9, 85.5e9, 0.9), Verdict::Tight);
    EXPECT_EQ(memoryVerdict(76.9e9, 85.5e9, 0.9), Verdict::Fits); // 0.899 of HBM
    EXPECT_EQ(memoryVerdict(85.6e9, 85.5e9, 0.9), Verdict::Over);
    EXPECT_EQ(memoryVerdict(1e9, 0, 0.9), Verdict::Over); // no HBM given
    EXPECT_EQ(verdictId(Verdict::Fits), "fits");
    EXPECT_EQ(verdictId(Verdict::Tight), "tight");
    EXPECT_EQ(verdictId(Verdict::Over), "over");
}

TEST(TrainingVerdict, SevenBZero3OnTwoGpusAgainstTheUsableFraction)
{
    // Seed 003 case A under ZeRO-3 on 2 GPUs: 16 B x 7e9 / 2 = 56 GB of states plus
    // 12 x 32 x 4096 x 4096 x 2 = 12.88 GB of activations = 68.88 GB per GPU.
    const CountedModel m = bareModel(7e9, 32, 4096);
    TrainingConfig c = seedConfig();
    c.zeroStage = 3;
    c.usableFraction = 0.9; // the plan's default (the seeds' config uses the whole HBM)
    const double total = 16 * 7e9 / 2 + 12.0 * 32 * 4096 * 4096 * 2;
    // 80 GB: usable 72 GB >= 68.88 GB -> fits.
    TrainingMemory r = estimateFor(m, c, 2, 80e9);
    EXPECT_DOUBLE_EQ(r.perGpu.total(), total);
    EXPECT_DOUBLE_EQ(r.usableBytes, 72e9);
    EXPECT_EQ(r.verdict, Verdict::Fits);
    // 75 GB: usable 67.5 GB < 68.88 GB <= 75 GB -> tight, and still `fits` in the old sense.
    r = estimateFor(m, c, 2, 75e9);
    EXPECT_EQ(r.verdict, Verdict::Tight);
    EXPECT_TRUE(r.fits);
    // A usable fraction of 0.95 on 75 GB (71.25 GB) makes it fit again.
    c.usableFraction = 0.95;
    EXPECT_EQ(estimateFor(m, c, 2, 75e9).verdict, Verdict::Fits);
    // 68 GB: over.
    r = estimateFor(m, c, 2, 68e9);
    EXPECT_EQ(r.verdict, Verdict::Over);
    EXPECT_FALSE(r.fits);
}

TEST(TrainingVerdict, MinGpusIsTheFirstCountWhoseVerdictIsFitsNotTight)
{
    // The same 7B under ZeRO-3 on a 75 GB GPU: per GPU = 112e9 / dp + 12,884,901,888 (batch-1
    // activations, not sharded by dp).
    //   within HBM (75e9):        112e9 / dp <= 62.115e9 -> dp >= 1.80 -> 2 (68.88 GB: tight)
    //   usable line (0.9 x 75e9): 112e9 / dp <= 54.615e9 -> dp >= 2.05 -> 3 (50.22 GB: fits)
    // min_gpus answers "fits", so 3, where counting "not over" would say 2.
    const CountedModel m = bareModel(7e9, 32, 4096);
    TrainingConfig c = seedConfig();
    c.zeroStage = 3;
    c.usableFraction = 0.9;
    const double activations = 12.0 * 32 * 4096 * 4096 * 2;
    const TrainingMemory atTwo = estimateFor(m, c, 2, 75e9);
    EXPECT_DOUBLE_EQ(atTwo.perGpu.total(), 56e9 + activations);
    EXPECT_EQ(atTwo.verdict, Verdict::Tight);
    EXPECT_EQ(atTwo.minGpus, 3);
    const TrainingMemory atThree = estimateFor(m, c, 3, 75e9);
    EXPECT_NEAR(atThree.perGpu.total(), 112e9 / 3 + activations, 1);
    EXPECT_EQ(atThree.verdict, Verdict::Fits);
    EXPECT_EQ(atThree.minGpus, 3);
    // With the usable line at the whole HBM (the seeds' convention) the two agree on 2.
    c.usableFraction = 1.0;
    EXPECT_EQ(estimateFor(m, c, 2, 75e9).minGpus, 2);
}

TEST(TrainingVerdict, UsableFractionIsAPlanKeyDefaultingToNinetyPercent)
{
    const Expected<Plan> plan = readPlan(kMinimalPlan, testPresets());
    ASSERT_TRUE(plan.ok());
    EXPECT_DOUBLE_EQ(plan.value().training.usableFraction, 0.9);
    const Expected<Plan> set = readPlan(
        R"({"model": "test-7b", "gpu": "h100-sxm", "training": {"usable_fraction": 0.8}})",
        testPresets());
    ASSERT_TRUE(set.ok());
    EXPECT_DOUBLE_EQ(set.value().training.usableFraction, 0.8);
    const Expected<Plan> bad = readPlan(
        R"({"model": "test-7b", "gpu": "h100-sxm", "training": {"usable_fraction": 1.5}})",
        testPresets());
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().toString(), "training.usable_fraction: must be > 0 and <= 1, got 1.5");
}

// ---- Bottleneck on the critical path (issue 11 item 4) -------------------------------------

// 7e9 parameters (6 x P FLOPs per token) on 16 GPUs over 2 nodes, ZeRO-0 all-reduce over the
// 50 GB/s NIC: DP = 2 x 15/16 x 2 B x 7e9 / 50e9 = 0.525 s; compute = 6 x 7e9 x 16 x 4096 /
// (16 x 989e12 x 0.45) = 0.3866 s.
constexpr double kDpS = 2.0 * 15 / 16 * 2 * 7e9 / 50e9;
constexpr double kComputeS = 6 * 7e9 * 16 * 4096 / (16 * 989e12 * 0.45);

TEST(Bottleneck, OverlappedDpLongerThanComputeIsTheWholeStep)
{
    TrainingConfig c = computeConfig();
    c.commOverlap = 1;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 16);
    EXPECT_NEAR(r.communication.dpS, kDpS, 1e-12);
    EXPECT_NEAR(r.computeTimeS, kComputeS, 1e-12);
    // Compute hides behind the longer all-reduce: step = DP = 0.525 s, all of it DP.
    EXPECT_NEAR(r.stepTimeS, kDpS, 1e-12);
    EXPECT_EQ(r.bottleneck, "dp-comm");
    EXPECT_NEAR(r.bottleneckS, kDpS, 1e-12);
    EXPECT_NEAR(r.bottleneckShare, 1.0, 1e-12);
}

TEST(Bottleneck, NoOverlapNamesTheLargerTermWithItsShare)
{
    const TrainingCompute r = computeFor(sixPsiModel(7e9), computeConfig(), 16);
    EXPECT_NEAR(r.stepTimeS, kComputeS + kDpS, 1e-12); // 0.912 s
    EXPECT_EQ(r.bottleneck, "dp-comm");
    EXPECT_NEAR(r.bottleneckShare, kDpS / (kComputeS + kDpS), 1e-12); // 57.6%
}

TEST(Bottleneck, ComputeLongerThanOverlappedCommIsCompute)
{
    // One node of 8: the all-reduce goes over NVLink, 2 x 7/8 x 2 x 7e9 / 900e9 = 27.2 ms;
    // half of it hides behind 386.6 ms of compute, 13.6 ms stays exposed.
    TrainingConfig c = computeConfig();
    c.commOverlap = 0.5;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    const double dp = 2.0 * 7 / 8 * 2 * 7e9 / 900e9;
    const double compute = 6 * 7e9 * 8 * 4096 / (8 * 989e12 * 0.45);
    EXPECT_NEAR(r.stepTimeS, compute + dp / 2, 1e-12);
    EXPECT_EQ(r.bottleneck, "compute");
    EXPECT_NEAR(r.bottleneckShare, compute / (compute + dp / 2), 1e-12);
}

// ---- Serving fits = the requested concurrency fits (issue 11 item 1) -----------------------

Estimate servingEstimate(int concurrency)
{
    const std::string text = R"({"model": "llama-2-7b", "gpu": "h100-sxm", "serving":
        {"context": 4096, "concurrency": )"
        + std::to_string(concurrency) + "}}";
    const Expected<Plan> plan = readPlan(text, testPresets());
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().toString());
    return estimate(plan.ok() ? plan.value() : Plan {});
}

// Llama-2 7B (6,738,415,616 parameters, 32 layers of 32 KV heads x 128) on one H100 (81,559 MiB)
// at the serving defaults (utilization 0.9, 8192 batched tokens, 1.5 GB runtime overhead):
//   KV per token   2 x 32 x 32 x 128 x 2 B = 524,288 B, one 16-token block 8,388,608 B
//   activations    8192 x (2 x 4096 + max(attention 128 x 128, FFN 3 x 11008)) x 2 B
//                  + fp32 logits of min(8192, concurrency) rows x 32000
//   budget         85,520,809,984 x 0.9 - 2 x 6,738,415,616 - activations - 1.5e9
//   max sequences  floor(floor(budget / block) / (4096 / 16)) = 28 at concurrency 32
double maxSequencesByHand(int concurrency)
{
    const double activations
        = 8192.0 * (2 * 4096 + 3 * 11008) * 2 + std::min(8192, concurrency) * 32000.0 * 4;
    const double budget = 85520809984.0 * 0.9 - 2 * 6738415616.0 - activations - 1.5e9;
    return std::floor(std::floor(budget / (16 * 524288.0)) / 256);
}

TEST(ServingVerdict, ThirtyTwoSequencesOfFourKDoNotFitWhereTwentyEightDo)
{
    const Estimate e = servingEstimate(32);
    EXPECT_EQ(maxSequencesByHand(32), 28);
    EXPECT_EQ(e.serving.maxSequences, 28);
    EXPECT_TRUE(e.serving.fitsWeights);
    EXPECT_FALSE(e.serving.fits);
    const Estimate ok = servingEstimate(28);
    EXPECT_EQ(ok.serving.maxSequences, maxSequencesByHand(28));
    EXPECT_TRUE(ok.serving.fits);
}

} // namespace
} // namespace envelope
