// The tensor-counting activation model against Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models") for a GPT block with dropout, and its
// generalisation to real blocks. Each expectation is the paper's expression or a tensor list
// written out by hand.
#include <gtest/gtest.h>

#include "training/activations.h"
#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// A concrete point: s = 2048, b = 2, h = 4096, a = 32, t = 4, L = 8.
constexpr double s = 2048, b = 2, h = 4096, a = 32, t = 4;
constexpr double sbh = s * b * h;

// GPT-2/3 style block: LayerNorm, GELU FFN of 4h, MHA, dropout 0.1, vocab 0 so the output
// layer is only its two h-wide inputs.
CountedModel gptBlockModel(int layers = 8, std::int64_t vocab = 0)
{
    CountedModel m = bareModel(1e9, layers, 4096, 32, vocab);
    m.arch.norm = NormKind::LayerNorm;
    m.arch.dropout = 0.1;
    return m;
}

TrainingConfig tensorConfig()
{
    TrainingConfig c = seedConfig();
    c.activationModel.kind = ActivationModel::Kind::Tensors;
    c.microBatch = 2;
    c.seqLen = 2048;
    c.flashAttention = false;
    c.recompute = Recompute::None;
    return c;
}

double perLayer(const CountedModel& m, const TrainingConfig& c)
{
    return estimateFor(m, c, c.tp * c.pp * c.cp, 1e15).activationBytesPerLayer;
}

TEST(Activations, KorthikantiNoParallelismIsSbh34Plus5asOverH)
{
    // Korthikanti sec. 4.1: sbh (34 + 5as/h).
    EXPECT_DOUBLE_EQ(perLayer(gptBlockModel(), tensorConfig()), sbh * (34 + 5 * a * s / h));
}

TEST(Activations, KorthikantiTensorParallelSplitsAllButTenSbh)
{
    // Sec. 4.2.1: sbh (10 + 24/t + 5as/(ht)).
    TrainingConfig c = tensorConfig();
    c.tp = 4;
    EXPECT_DOUBLE_EQ(perLayer(gptBlockModel(), c), sbh * (10 + 24 / t + 5 * a * s / (h * t)));
}

TEST(Activations, KorthikantiSequenceParallelSplitsEverything)
{
    // Sec. 4.2.2: sbh/t (34 + 5as/h).
    TrainingConfig c = tensorConfig();
    c.tp = 4;
    c.sequenceParallel = true;
    EXPECT_DOUBLE_EQ(perLayer(gptBlockModel(), c), sbh / t * (34 + 5 * a * s / h));
}

TEST(Activations, KorthikantiSelectiveRecomputeDropsTheScores)
{
    // Sec. 5: 34 sbh/t with TP + SP.
    TrainingConfig c = tensorConfig();
    c.tp = 4;
    c.sequenceParallel = true;
    c.recompute = Recompute::Selective;
    EXPECT_DOUBLE_EQ(perLayer(gptBlockModel(), c), 34 * sbh / t);
}

TEST(Activations, KorthikantiFullRecomputeKeepsLayerInputsPlusOneLayer)
{
    // Table 2: 2sbh per layer; one layer's sbh(34 + 5as/h) is rebuilt at a time. The embedding
    // keeps token ids (8 B) and its dropout mask (sbh x 1 B); the output layer keeps the final
    // norm input and the head input (2sbh each) and, with vocab 0, no logits.
    const CountedModel m = gptBlockModel(8);
    TrainingConfig c = tensorConfig();
    c.recompute = Recompute::Full;
    const TrainingMemory r = estimateFor(m, c, 1, 1e15);
    EXPECT_DOUBLE_EQ(r.activationBytesPerLayer, 2 * sbh);
    const double embedding = s * b * 8 + sbh;
    const double output = 4 * sbh;
    EXPECT_DOUBLE_EQ(r.embeddingActivationBytes, embedding);
    EXPECT_DOUBLE_EQ(r.logitsBytes, output);
    EXPECT_DOUBLE_EQ(
        r.perGpu.activations, 8 * 2 * sbh + sbh * (34 + 5 * a * s / h) + embedding + output);
}

TEST(Activations, WholeModelIsLayersPlusEmbeddingPlusLogits)
{
    // Sec. 4.3 (with t = 1): the output layer keeps 4sbh (1 + v/h) = 4sbh + 4sbv for the fp32
    // loss; we add the logits in the activation dtype (2sbv) that live alongside it.
    const double v = 50304;
    const CountedModel m = gptBlockModel(8, 50304);
    const TrainingMemory r = estimateFor(m, tensorConfig(), 1, 1e15);
    const double layers = 8 * sbh * (34 + 5 * a * s / h);
    const double embedding = s * b * 8 + sbh;
    const double output = 4 * sbh + 4 * s * b * v + 2 * s * b * v;
    EXPECT_DOUBLE_EQ(r.perGpu.activations, layers + embedding + output);
}

TEST(Activations, FlashAttentionRemovesTheQuadraticTerm)
{
    // The 5as^2b of scores, mask and dropout output go; flash keeps an fp32 log-sum-exp per head
    // and query: 4 a s b bytes.
    TrainingConfig c = tensorConfig();
    c.flashAttention = true;
    EXPECT_DOUBLE_EQ(perLayer(gptBlockModel(), c), 34 * sbh + 4 * a * s * b);
    // Selective recompute has nothing left to drop under flash.
    c.recompute = Recompute::Selective;
    EXPECT_DOUBLE_EQ(perLayer(gptBlockModel(), c), 34 * sbh + 4 * a * s * b);
}

TEST(Activations, NoDropoutMeansNoMasksAndOneCopyOfTheProbabilities)
{
    // Dropout 0: the two sbh masks go (34 -> 32), and the softmax output is the matmul input,
    // kept once: 2as^2b instead of 5as^2b.
    CountedModel m = gptBlockModel();
    m.arch.dropout = 0;
    EXPECT_DOUBLE_EQ(perLayer(m, tensorConfig()), sbh * (32 + 2 * a * s / h));
}

// Llama-3-8B's block: hidden 4096, SwiGLU 14336, 32 heads, 8 KV heads of 128, RMSNorm, no
// dropout, vocab 128256.
CountedModel llama3Block()
{
    CountedModel m = bareModel(8e9, 32, 4096, 32, 128256);
    m.arch.ffn = FfnKind::Gated;
    m.arch.ffnHidden = 14336;
    m.arch.kvHeads = 8;
    m.arch.headDim = 128;
    return m;
}

TEST(Activations, GqaAndSwiGluWithFlash)
{
    // Per token, 2 bytes each: norm inputs 2h, norm outputs 2h, Q 32x128, K 8x128, V 8x128,
    // attention output 32x128, gate + up + product 3 x 14336; plus 4 x 32 bytes of flash stats.
    TrainingConfig c = tensorConfig();
    c.microBatch = 1;
    c.seqLen = 8192;
    c.flashAttention = true;
    const double perToken
        = 2 * (2 * 4096 + 2 * 4096 + 4096 + 1024 + 1024 + 4096 + 3 * 14336) + 4 * 32;
    EXPECT_DOUBLE_EQ(perToken, 139392);
    EXPECT_DOUBLE_EQ(perLayer(llama3Block(), c), 8192 * perToken);
}

TEST(Activations, GqaWithoutFlashKeepsKeysAndValuesRepeatedToAllHeads)
{
    // The eager path repeats K and V to 32 heads before the matmuls, and keeps the softmax
    // output (no dropout): 32 x 8192 keys x 2 bytes per token.
    TrainingConfig c = tensorConfig();
    c.microBatch = 1;
    c.seqLen = 8192;
    const double perToken = 2 * (2 * 4096 + 2 * 4096 + 4 * 4096 + 3 * 14336) + 32 * 8192.0 * 2;
    EXPECT_DOUBLE_EQ(perLayer(llama3Block(), c), 8192 * perToken);
}

TEST(Activations, LogitsOverA128kVocabAreSeveralGigabytes)
{
    // Last stage, one micro-batch of 8192 tokens, tp = 2 (vocab-parallel head): final norm and
    // head inputs 2 x 2 x 4096 (replicated without SP) + (2 + 4) x 128256 / 2 bytes per token.
    TrainingConfig c = tensorConfig();
    c.microBatch = 1;
    c.seqLen = 8192;
    c.tp = 2;
    c.flashAttention = true;
    const TrainingMemory r = estimateFor(llama3Block(), c, 2, 1e15);
    EXPECT_DOUBLE_EQ(r.logitsBytes, 8192 * (2 * 2 * 4096 + 6 * 128256 / 2.0));
    EXPECT_GT(r.logitsBytes, 3e9);
}

TEST(Activations, MoeLayerCountsTopKExpertsAndSharedOnes)
{
    // Mixtral-like MoE layer, flash, no dropout: 8 experts, top-2, expert FFN 14336, SwiGLU.
    // Per token: norms 4h + 4h bytes, attention 2 x (4096 + 1024 + 1024 + 4096), flash 4 x 32,
    // expert intermediates 2 x 3 x 14336 x 2 experts, dispatched inputs and expert outputs
    // 2 x 2 x 4096 x 2, router probabilities 4 x 8.
    CountedModel m = llama3Block();
    m.arch.moe = MoeConfig { 8, 2, 0, 14336, 0, false };
    m.counts.moeLayers = 32;
    TrainingConfig c = tensorConfig();
    c.microBatch = 1;
    c.seqLen = 4096;
    c.flashAttention = true;
    const double perToken = 2 * (2 * 4096 + 2 * 4096 + 4096 + 1024 + 1024 + 4096) + 4 * 32
        + 2 * 3 * 14336 * 2 + 2 * 2 * 4096 * 2 + 4 * 8;
    const LayerTerms terms = layerTerms(m.arch, c, 2, true);
    EXPECT_DOUBLE_EQ(terms.replicated() + terms.split(), perToken);
    // A shared expert adds its own intermediates (DeepSeek): + 2 x 3 x 14336.
    m.arch.moe->sharedExperts = 1;
    const LayerTerms shared = layerTerms(m.arch, c, 2, true);
    EXPECT_DOUBLE_EQ(shared.replicated() + shared.split(), perToken + 2 * 3 * 14336);
}

TEST(Activations, OneFOneBKeepsPpMicroBatchesOnTheFirstStage)
{
    // Narayanan et al. 2021 / Korthikanti sec. 4.3: with pp = 4 and enough micro-batches, stage
    // 0 holds 4 micro-batches of its 2 layers = L layers' worth; stage s holds pp - s.
    EXPECT_EQ(microBatchesInFlight(0, 4, 1, 8), 4);
    EXPECT_EQ(microBatchesInFlight(3, 4, 1, 8), 1);
    EXPECT_EQ(microBatchesInFlight(0, 4, 1, 2), 2); // only 2 micro-batches exist
    EXPECT_EQ(microBatchesInFlight(0, 1, 1, 8), 1);
    // Interleaved, v = 2: stage 0 holds L (1 + (p-1)/(pv)) = 8 x (1 + 3/8) = 11 layers, i.e.
    // 5.5 micro-batches of its 2 layers.
    EXPECT_DOUBLE_EQ(microBatchesInFlight(0, 4, 2, 8), 5.5);

    const CountedModel m = gptBlockModel(8);
    TrainingConfig c = tensorConfig();
    c.pp = 4;
    c.gradAccum = 8;
    const TrainingMemory r = estimateFor(m, c, 4, 1e15);
    const double layer = sbh * (34 + 5 * a * s / h);
    EXPECT_EQ(r.worstStage, 0);
    EXPECT_EQ(r.microBatchesInFlight, 4);
    EXPECT_DOUBLE_EQ(r.perGpu.activations, 4 * 2 * layer + 4 * (s * b * 8 + sbh));
}

TEST(Activations, RecomputeEveryKLayersKeepsSegmentInputsAndOneSegment)
{
    // 8 layers, checkpoint every 2: ceil(8/2) = 4 segment inputs (2sbh each) + 2 layers rebuilt.
    const CountedModel m = gptBlockModel(8);
    TrainingConfig c = tensorConfig();
    c.recompute = Recompute::EveryK;
    c.recomputeEvery = 2;
    const TrainingMemory r = estimateFor(m, c, 1, 1e15);
    const double layer = sbh * (34 + 5 * a * s / h);
    EXPECT_DOUBLE_EQ(r.perGpu.activations, 4 * 2 * sbh + 2 * layer + (s * b * 8 + sbh) + 4 * sbh);
}

TEST(Activations, ContextParallelDividesTheTokens)
{
    // cp = 2 halves the tokens each GPU holds; with flash there is no s^2 term left to differ.
    TrainingConfig c = tensorConfig();
    c.flashAttention = true;
    const double one = perLayer(gptBlockModel(), c);
    c.cp = 2;
    EXPECT_DOUBLE_EQ(perLayer(gptBlockModel(), c), one / 2);
}

TEST(Activations, CalibrationMultipliesTheWholeFigure)
{
    const CountedModel m = gptBlockModel(8, 50304);
    TrainingConfig c = tensorConfig();
    const double plain = estimateFor(m, c, 1, 1e15).perGpu.activations;
    c.activationModel.calibration = 1.25;
    EXPECT_DOUBLE_EQ(estimateFor(m, c, 1, 1e15).perGpu.activations, 1.25 * plain);
}

TEST(Activations, SimpleModelScalesWithTheRecipesActivationWidth)
{
    // bytes_per_sbh_per_layer is stated for 2-byte activations: fp32 activations double it.
    const CountedModel m = bareModel(7e9, 32, 4096);
    TrainingConfig c = seedConfig();
    c.recipe.recipe.activationBytes = 4;
    EXPECT_DOUBLE_EQ(
        estimateFor(m, c, 1, 1e15).perGpu.activations, 2 * 12.0 * 32 * 4096 * 4096 * 2);
}

} // namespace
} // namespace envelope
