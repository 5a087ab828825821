// The compute side against the seeds' worked examples and a published run. Every expected
// figure is worked out by hand in the test from the source's own numbers.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

constexpr double kDay = 86400;

// Seed 000, "FLOP math": ~800 TFLOP/s sustained on one H100 over 6 x P FLOPs per token gives
// ~19k tokens/s for 7B, ~1.9k for 70B, ~330 for 405B.
struct SustainedRow {
    double params;
    double seedTokensPerS; // as the seed rounds it
};

class SeedZeroThroughput : public ::testing::TestWithParam<SustainedRow> { };

TEST_P(SeedZeroThroughput, PerGpuTrainingTokensAtEightHundredTflops)
{
    const SustainedRow row = GetParam();
    TrainingConfig c = computeConfig();
    c.mfu = 800.0 / 989.0; // 800 TFLOP/s sustained of the 989 TFLOP/s peak
    const TrainingCompute r = computeFor(sixPsiModel(row.params), c, 1);
    const double byHand = 800e12 / (6 * row.params); // 7B: 8e14 / 4.2e10 = 19,048
    EXPECT_NEAR(r.tokensPerSPerGpu, byHand, byHand * 1e-9);
    EXPECT_NEAR(r.tokensPerSPerGpu, row.seedTokensPerS, row.seedTokensPerS * 0.03);
}

INSTANTIATE_TEST_SUITE_P(Seed000, SeedZeroThroughput,
    ::testing::Values(
        SustainedRow { 7e9, 19e3 }, SustainedRow { 70e9, 1.9e3 }, SustainedRow { 405e9, 330 }));

// Seed 001, "Time per Step": 70B, batch 1M tokens, 128 H100s at 989 TFLOP/s, 45% MFU:
// 6 x 70e9 x 1e6 / (128 x 989e12 x 0.45) = 4.2e17 / 5.6966e16 = 7.373 s. The seed leaves
// communication out; here it is all overlapped (it is shorter than the compute, see below).
TEST(ComputeSeed001, WorkedExampleStepTimeTokensPerSecondAndTrainingTime)
{
    TrainingConfig c = computeConfig();
    // 1e6 tokens: tp = 8 -> dp = 16; 16 x 25 micro-batches x 1 x 2,500 tokens.
    c.tp = 8;
    c.seqLen = 2500;
    c.gradAccum = 25;
    c.commOverlap = 1.0;
    const TrainingCompute r = computeFor(sixPsiModel(70e9), c, 128);

    EXPECT_DOUBLE_EQ(r.globalBatchTokens, 1e6);
    const double stepByHand = 6 * 70e9 * 1e6 / (128 * 989e12 * 0.45);
    EXPECT_NEAR(stepByHand, 7.373, 0.001);
    EXPECT_NEAR(r.stepTimeS, stepByHand, stepByHand * 1e-9);
    EXPECT_NEAR(r.stepTimeS, 7.4, 0.05); // the seed's "~7.4 s"
    EXPECT_DOUBLE_EQ(r.communication.exposedS, 0.0);
    // DP: 70e9 / 8 params x 2 x 2 B x 15/16 = 32.8 GB at 50 GB/s = 0.66 s < 7.37 s.
    EXPECT_NEAR(r.communication.dpS, 70e9 / 8 * 4 * 15 / 16 / 50e9, 1e-9);

    const double tokensPerS = 1e6 / stepByHand; // 135,630 tokens/s
    EXPECT_NEAR(r.tokensPerS, tokensPerS, 1e-6 * tokensPerS);
    EXPECT_NEAR(r.tokensPerSPerGpu, tokensPerS / 128, 1e-6 * tokensPerS);
    // 2T tokens / 135,630 tokens/s = 1.4746e7 s = 170.7 days; GPU-hours x USD 4.
    const double trainS = 2e12 / tokensPerS;
    EXPECT_NEAR(r.trainTimeS / kDay, 170.7, 0.1);
    EXPECT_NEAR(r.trainTimeS, trainS, 1e-6 * trainS);
    EXPECT_NEAR(r.gpuHours, 128 * trainS / 3600, 1e-3);
    EXPECT_NEAR(r.cost, 4 * 128 * trainS / 3600, 1e-2);
    EXPECT_EQ(r.bottleneck, "compute");
}

// Seed 001 ex. 2: 150K tokens/s on 64 H100s, 7B: 150e3 x 6 x 7e9 / (64 x 989e12)
// = 6.3e15 / 6.3296e16 = 9.95% ("this is a very low MFU", ~10%).
TEST(ComputeSeed001, ObservedThroughputGivesTheExerciseMfu)
{
    TrainingConfig c = computeConfig();
    c.observedTokensPerS = 150e3;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 64);
    ASSERT_TRUE(r.observedMfu.has_value());
    EXPECT_NEAR(*r.observedMfu, 150e3 * 6 * 7e9 / (64 * 989e12), 1e-12);
    EXPECT_NEAR(*r.observedMfu, 0.10, 0.005);
    // No recompute: the hardware does exactly the model's FLOPs.
    EXPECT_DOUBLE_EQ(*r.observedHfu, *r.observedMfu);
}

TEST(ComputeSeed001, ObservedStepTimeIsTurnedIntoTokensPerSecond)
{
    TrainingConfig c = computeConfig();
    c.recompute = Recompute::Full;
    // 64 x 1 x 4096 = 262,144 tokens per step; at 150K tokens/s a step takes 1.7476 s.
    c.observedStepTimeS = 64 * 4096 / 150e3;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 64);
    ASSERT_TRUE(r.observedMfu && r.observedHfu);
    EXPECT_NEAR(*r.observedMfu, 0.09953, 1e-4);
    // Full recompute adds a forward: 8 P instead of 6 P (seed 000), HFU = 8/6 x MFU.
    EXPECT_NEAR(*r.observedHfu, *r.observedMfu * 8 / 6, 1e-12);
}

// Seed 001 ex. 3: USD 2M, 30 days, USD 4/h: 2e6 / 4 = 500,000 GPU-hours over 720 h = 694
// GPUs. Required MFU = 6 x 30e9 x tokens / (GPUs x 989e12 x 2,592,000 s).
struct BudgetRow {
    double tokens;
    int gpus;
    double seedMfu; // the seed's summary table
};

class SeedOneBudget : public ::testing::TestWithParam<BudgetRow> { };

TEST_P(SeedOneBudget, RequiredMfuMatchesTheSummaryTable)
{
    const BudgetRow row = GetParam();
    TrainingConfig c = computeConfig();
    c.trainTokens = row.tokens;
    c.budgetUsd = 2e6;
    c.deadlineS = 30 * kDay;
    const TrainingCompute r = computeFor(sixPsiModel(30e9), c, row.gpus);
    ASSERT_TRUE(r.affordableGpus && r.requiredMfu);
    EXPECT_EQ(*r.affordableGpus, 694); // floor(694.4)
    const double byHand = 6 * 30e9 * row.tokens / (row.gpus * 989e12 * 30 * kDay);
    EXPECT_NEAR(*r.requiredMfu, byHand, 1e-12);
    EXPECT_NEAR(*r.requiredMfu, row.seedMfu, 0.006);
}

INSTANTIATE_TEST_SUITE_P(Seed001, SeedOneBudget,
    ::testing::Values(BudgetRow { 600e9, 640, 0.066 }, // Chinchilla: 6.58%
        BudgetRow { 2e12, 640, 0.22 }, // extended: 21.9%
        BudgetRow { 2e12, 512, 0.28 })); // budget-limited: 27.4% ("~28%")

// Seed 001, "Data Parallelism": all-reduce of 2 Psi bytes, ring over P GPUs at beta:
// 2 (128-1)/128 x 140e9 B / 50e9 B/s = 5.556 s for 70B across 128 GPUs (16 nodes: the NIC).
TEST(ComputeSeed001, DataParallelAllReduceOfSeventyBillionAcross128Gpus)
{
    const TrainingCompute r = computeFor(sixPsiModel(70e9), computeConfig(), 128);
    const double bytes = 2.0 * 127 / 128 * 2 * 70e9;
    EXPECT_NEAR(r.communication.dpBytes, bytes, 1);
    EXPECT_NEAR(r.communication.dpS, bytes / 50e9, 1e-9);
    EXPECT_NEAR(r.communication.dpS, 5.556, 0.001);
}

// Seed 001, "Pipeline Parallelism": p = 8, m = 32 -> bubble 7/39 = 18%.
TEST(ComputeSeed001, PipelineBubbleOfEightStagesAndThirtyTwoMicroBatches)
{
    TrainingConfig c = computeConfig();
    c.pp = 8;
    c.gradAccum = 32;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_NEAR(r.communication.ppBubbleFraction, 7.0 / 39.0, 1e-12);
    // The idle time is (p-1)/m of the ideal time (Narayanan et al. 2021 sec. 2.2.1), so it is
    // 7/39 of the pipeline's compute + bubble.
    EXPECT_NEAR(r.communication.ppBubbleS, r.computeTimeS * 7 / 32, 1e-12);
    EXPECT_NEAR(r.communication.ppBubbleS / (r.computeTimeS + r.communication.ppBubbleS),
        7.0 / 39.0, 1e-12);
}

// Seed 001, "Tensor Parallelism": 8-way TP, B = 4, S = 4096, H = 8192, 80 layers, "~48 ms".
// The seed's 48 ms is 80 layers x 2 all-reduces x 2BSH bytes at 900 GB/s with no ring factor:
// 160 x 268,435,456 B / 900e9 B/s = 47.7 ms. That counts the forward pass only and sends each
// byte once. We count 2 forward + 2 backward all-reduces (Megatron-LM sec. 3) and the ring's
// 2 (t-1)/t = 1.75 bytes per byte, so the same link gives 2 x 1.75 = 3.5x the seed: 167 ms.
TEST(ComputeSeed001, TensorParallelAllReducesAreTheSeedFigureTimesBackwardAndRing)
{
    TrainingConfig c = computeConfig();
    c.tp = 8;
    c.microBatch = 4;
    c.seqLen = 4096;
    const TrainingCompute r = computeFor(gptModel(80, 8192, 64, 32000), c, 8);
    const double message = 2.0 * 4 * 4096 * 8192; // 2BSH bytes
    const double seedS = 80 * 2 * message / 900e9;
    EXPECT_NEAR(seedS, 0.048, 0.001);
    EXPECT_NEAR(r.communication.tpS, 80 * 4 * (2.0 * 7 / 8) * message / 900e9, 1e-12);
    EXPECT_NEAR(r.communication.tpS / 3.5, seedS, 1e-12);
    EXPECT_NEAR(r.communication.tpBytes, 80 * 4 * 1.75 * message, 1);
}

// Narayanan et al. 2021, sec. 5.1 after eq. 4: GPT-3 175B (l = 96, h = 12288, V = 51200,
// s = 2048) on n = 1024 A100s, batch 1536, X = 140 TFLOP/s per GPU -> 34 days for
// T = 300B tokens. Their FLOPs count activation recomputation (eq. 3):
// F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration.
TEST(ComputePublished, Gpt3OnOneThousandA100sTrainsInThirtyFourDays)
{
    const double l = 96, h = 12288, v = 51200, s = 2048, batch = 1536;
    const testing::CountedModel gpt3 = gptModel(96, 12288, 96, 51200);
    TrainingConfig c = computeConfig();
    c.recompute = Recompute::Full;
    c.seqLen = 2048;
    c.tp = 8; // dp = 1024 / 8 = 128; 128 x 12 micro-batches x 1 = 1536 sequences
    c.gradAccum = 12;
    c.trainTokens = 300e9;
    Gpu a100 = seed001H100();
    a100.bf16Flops = 312e12;
    a100.intraNodeBytesPerS = a100.interNodeBytesPerS = 0; // X already includes all losses

    // The plan's mfu is the kernel efficiency over the hardware FLOPs (recompute included), so
    // the paper's X = 140 TFLOP/s per GPU is mfu = X / peak directly.
    const double eq3 = 96 * batch * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
    const double modelFlops = 72 * batch * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
    c.mfu = 140e12 / 312e12;
    const TrainingCompute r = computeFor(gpt3, c, 1024, a100);

    EXPECT_DOUBLE_EQ(r.globalBatchTokens, batch * s);
    EXPECT_NEAR(r.hardwareFlopsPerToken * batch * s, eq3, eq3 * 1e-12);
    EXPECT_NEAR(r.flopsPerToken * batch * s, modelFlops, modelFlops * 1e-12);
    // Eq. 4: end-to-end time ~ 8 T P / (n X) = 8 x 300e9 x 175e9 / (1024 x 140e12) = 33.9 days;
    // the attention and logits terms of eq. 3 add 2.4% to the 8 P approximation.
    const double eq4Days = 8 * 300e9 * 175e9 / (1024 * 140e12) / kDay;
    EXPECT_NEAR(eq4Days, 33.9, 0.05);
    EXPECT_NEAR(r.trainTimeS / kDay, 300e9 / (batch * s) * eq3 / (1024 * 140e12) / kDay, 1e-6);
    EXPECT_NEAR(r.trainTimeS / kDay, 34, 34 * 0.03);
}

} // namespace
} // namespace envelope
