// FLOPs per token: the attention term, embeddings vs the LM head, MoE, recompute (MFU vs HFU),
// the peak per compute dtype. Expected values are worked out by hand from the formulas' sources.
#include <gtest/gtest.h>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// Narayanan et al. 2021 eq. 3 without recompute (Korthikanti et al. 2022 eq. 7), per token:
// 72 l h^2 (1 + s/(6h) + V/(12 l h)). GPT-2 XL shape: l = 48, h = 1600, 25 heads, V = 50257.
TEST(ComputeFlops, GptShapeMatchesNarayananEquationThreeWithoutRecompute)
{
    const double l = 48, h = 1600, v = 50257, s = 1024;
    TrainingConfig c = computeConfig();
    c.seqLen = 1024;
    const TrainingCompute r = computeFor(gptModel(48, 1600, 25, 50257), c, 1);
    const double paper = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
    EXPECT_NEAR(r.flopsPerToken, paper, paper * 1e-12);
    // Forward alone: 24 l h^2 (1 + s/(6h)) + 2 V h.
    EXPECT_NEAR(r.forwardFlopsPerToken, 24 * l * h * h * (1 + s / (6 * h)) + 2 * v * h, 1e3);
    EXPECT_DOUBLE_EQ(r.hardwareFlopsPerToken, r.flopsPerToken);
}

// The attention term is 12 x l x s x heads x head_dim: not h when head_dim x heads != h
// (Gemma-7B: 16 heads x 256 with h = 3072), and GQA's fewer K/V heads do not change it.
TEST(ComputeFlops, AttentionTermUsesHeadsTimesHeadDimNotHidden)
{
    testing::CountedModel m = sixPsiModel(8.5e9);
    m.arch.layers = 28;
    m.arch.hidden = 3072;
    m.arch.heads = 16;
    m.arch.kvHeads = 16;
    m.arch.headDim = 256;
    TrainingConfig c = computeConfig();
    c.seqLen = 8192;
    const double expected = 6 * 8.5e9 + 12.0 * 28 * 8192 * (16 * 256);
    EXPECT_NEAR(computeFor(m, c, 1).flopsPerToken, expected, 1);

    m.arch.kvHeads = 1; // MQA: same QK^T and AV work per query head
    EXPECT_NEAR(computeFor(m, c, 1).flopsPerToken, expected, 1);
}

TEST(ComputeFlops, SlidingWindowBoundsTheAttendedLength)
{
    testing::CountedModel m = sixPsiModel(7e9);
    m.arch.layers = 32;
    m.arch.hidden = 4096;
    m.arch.heads = 32;
    m.arch.headDim = 128;
    m.arch.slidingWindow = 4096; // Mistral 7B v0.1
    TrainingConfig c = computeConfig();
    c.seqLen = 32768;
    // Each query sees 4,096 keys, not 32,768: 12 x 32 x 4096 x 4096.
    EXPECT_NEAR(computeFor(m, c, 1).flopsPerToken, 6 * 7e9 + 12.0 * 32 * 4096 * 4096, 1);
}

// MLA (DeepSeek-V3): QK^T over d_nope + d_rope = 192, AV over d_v = 128 per head, 128 heads.
// Forward per token and layer 2 x s x 128 x (192 + 128); training 3x that.
TEST(ComputeFlops, MultiHeadLatentAttentionCountsQueryKeyAndValueWidths)
{
    testing::CountedModel m = sixPsiModel(37e9);
    m.arch.layers = 61;
    m.arch.hidden = 7168;
    m.arch.heads = 128;
    m.arch.mla = MlaConfig { 1536, 512, 64, 128, 128 };
    TrainingConfig c = computeConfig();
    c.seqLen = 4096;
    const double attention = 3 * 2.0 * 61 * 4096 * 128 * (192 + 128);
    EXPECT_NEAR(computeFor(m, c, 1).flopsPerToken, 6 * 37e9 + attention, 1);
}

// Embedding lookups are not matmuls (Kaplan et al. 2020 excludes them from 6N); the LM head is
// a V x h matmul whether tied or not. Llama-2-7B-like: V = 32000, h = 4096, 6.476e9 in layers.
TEST(ComputeFlops, EmbeddingLookupsAreLeftOutAndTheLmHeadIsKeptTiedOrNot)
{
    const double vh = 32000.0 * 4096, layers = 6.476e9;
    testing::CountedModel untied = sixPsiModel(0);
    untied.counts.embedding = vh;
    untied.counts.lmHead = vh;
    untied.counts.total = untied.counts.active = layers + 2 * vh;
    const double expected = 6 * (layers + vh);
    EXPECT_NEAR(computeFor(untied, computeConfig(), 1).flopsPerToken, expected, 1);

    testing::CountedModel tied = untied;
    tied.arch.tiedEmbeddings = true;
    tied.counts.lmHead = 0;
    tied.counts.total = tied.counts.active = layers + vh; // the shared matrix counted once
    EXPECT_NEAR(computeFor(tied, computeConfig(), 1).flopsPerToken, expected, 1);

    testing::CountedModel learnedPositions = untied; // GPT-2's position table is a lookup too
    learnedPositions.counts.positions = 1024.0 * 4096;
    learnedPositions.counts.total = learnedPositions.counts.active
        = layers + 2 * vh + 1024.0 * 4096;
    EXPECT_NEAR(computeFor(learnedPositions, computeConfig(), 1).flopsPerToken, expected, 1);
}

// MoE: a token runs through its top-k experts only. Mixtral 8x7B: 46.7B total, 12.9B active.
TEST(ComputeFlops, MixtureOfExpertsCountsActiveParameters)
{
    testing::CountedModel m = sixPsiModel(46.7e9);
    m.counts.active = 12.9e9;
    EXPECT_NEAR(computeFor(m, computeConfig(), 1).flopsPerToken, 6 * 12.9e9, 1);
}

// MFU vs HFU (Korthikanti et al. 2022 sec. 6): model FLOPs stay 6P + attention; the hardware
// also runs what a recompute repeats. GPT shape l = 32, h = 4096, V = 50000, s = 4096.
TEST(ComputeFlops, HardwareFlopsAddTheRecomputedForward)
{
    const double l = 32, h = 4096, v = 50000, s = 4096;
    const testing::CountedModel m = gptModel(32, 4096, 32, 50000);
    TrainingConfig c = computeConfig();
    c.seqLen = 4096;
    const double model = 72 * l * h * h + 12 * l * s * h + 6 * v * h;

    c.recompute = Recompute::Selective; // re-runs QK^T and AV forward: 4 l s h
    TrainingCompute r = computeFor(m, c, 1);
    EXPECT_NEAR(r.flopsPerToken, model, model * 1e-12);
    EXPECT_NEAR(r.hardwareFlopsPerToken, model + 4 * l * s * h, model * 1e-12);

    c.recompute = Recompute::Full; // every layer's forward, 24 l h^2 + 4 l s h; not the logits
    r = computeFor(m, c, 1);
    EXPECT_NEAR(r.flopsPerToken, model, model * 1e-12);
    const double full = model + 24 * l * h * h + 4 * l * s * h;
    EXPECT_NEAR(r.hardwareFlopsPerToken, full, model * 1e-12);
    EXPECT_GT(r.hardwareFlopsPerToken, r.flopsPerToken);

    c.recompute = Recompute::EveryK; // each segment rebuilt once: the same extra forward
    c.recomputeEvery = 4;
    EXPECT_NEAR(computeFor(m, c, 1).hardwareFlopsPerToken, full, model * 1e-12);
}

TEST(ComputeFlops, ObservedHfuExceedsMfuOnlyByTheRecomputedWork)
{
    const testing::CountedModel m = gptModel(32, 4096, 32, 50000);
    TrainingConfig c = computeConfig();
    c.observedTokensPerS = 1e6;
    c.recompute = Recompute::Selective;
    const TrainingCompute selective = computeFor(m, c, 64);
    c.recompute = Recompute::Full;
    const TrainingCompute full = computeFor(m, c, 64);
    ASSERT_TRUE(selective.observedHfu && full.observedHfu);
    EXPECT_DOUBLE_EQ(*selective.observedMfu, *full.observedMfu);
    EXPECT_GT(*selective.observedHfu, *selective.observedMfu);
    EXPECT_GT(*full.observedHfu, *selective.observedHfu);
    // Selective: (1 + 4 l s h / model) x MFU, with the numbers above.
    const double model = 72 * 32.0 * 4096 * 4096 + 12 * 32.0 * 4096 * 4096 + 6 * 50000.0 * 4096;
    EXPECT_NEAR(
        *selective.observedHfu / *selective.observedMfu, 1 + 4 * 32.0 * 4096 * 4096 / model, 1e-12);
}

// TF32 tensor cores run at half the BF16 rate (H100 SXM datasheet: 495 vs 989 TFLOP/s dense).
TEST(ComputeFlops, PeakFollowsTheRecipesComputeDtype)
{
    TrainingConfig c = computeConfig();
    EXPECT_DOUBLE_EQ(computeFor(sixPsiModel(7e9), c, 1).peakFlopsPerGpu, 989e12);
    c.recipe.recipe.compute = ComputeDtype::Fp8;
    EXPECT_DOUBLE_EQ(computeFor(sixPsiModel(7e9), c, 1).peakFlopsPerGpu, 1979e12);
    c.recipe.recipe.compute = ComputeDtype::Tf32;
    EXPECT_DOUBLE_EQ(computeFor(sixPsiModel(7e9), c, 1).peakFlopsPerGpu, 494.5e12);

    Gpu a100 = seed001H100(); // no FP8 tensor cores: the FP8 recipe runs its matmuls at BF16
    a100.bf16Flops = 312e12;
    a100.fp8Flops = 0;
    c.recipe.recipe.compute = ComputeDtype::Fp8;
    EXPECT_DOUBLE_EQ(computeFor(sixPsiModel(7e9), c, 1, a100).peakFlopsPerGpu, 312e12);
}

TEST(ComputeFlops, FasterPeakShortensTheComputeInProportion)
{
    TrainingConfig c = computeConfig();
    const TrainingCompute bf16 = computeFor(sixPsiModel(7e9), c, 8);
    c.recipe.recipe.compute = ComputeDtype::Fp8;
    const TrainingCompute fp8 = computeFor(sixPsiModel(7e9), c, 8);
    // Compute scales by 989 / 1979; the gradients moved are the same.
    EXPECT_NEAR(fp8.computeTimeS, bf16.computeTimeS * 989 / 1979, 1e-12);
    EXPECT_DOUBLE_EQ(fp8.communication.dpS, bf16.communication.dpS);
}

} // namespace
} // namespace envelope
