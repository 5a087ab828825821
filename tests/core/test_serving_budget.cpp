// Weights under quantization, the vLLM-style KV budget, PagedAttention capacity (seed 002's
// table), contiguous pre-allocation waste, and the decode / prefill rooflines, each derived by
// hand in the test.
#include <gtest/gtest.h>

#include <cmath>

#include "plan/planio.h"
#include "plan/presets.h"
#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

TEST(ServingWeights, SevenBAtInt8IsAboutSevenGBPlusGroupScales)
{
    // GPTQ layout: per 128 weights one fp16 scale (2 B) and one 8-bit zero (1 B).
    const ServingWeights w = servingWeights(bareCounts(7e9), 32, 8, 128, 1);
    EXPECT_DOUBLE_EQ(w.perGpuBytes, 7e9 * (1.0 + 3.0 / 128)); // 7.164 GB
    EXPECT_NEAR(w.perGpuBytes / 1e9, 7.0, 0.2);
}

TEST(ServingWeights, SevenBAtInt4IsThreeAndAHalfGBPlusScales)
{
    // 0.5 B per weight + (2 B scale + 0.5 B zero) / 128 = 3.5 GB + 0.137 GB of scales.
    const ServingWeights w = servingWeights(bareCounts(7e9), 32, 4, 128, 1);
    EXPECT_DOUBLE_EQ(w.perGpuBytes, 3.5e9 + 7e9 * 2.5 / 128);
    // A smaller group costs more scales: group 32 -> 7e9 x 2.5 / 32 = 0.547 GB.
    EXPECT_DOUBLE_EQ(
        servingWeights(bareCounts(7e9), 32, 4, 32, 1).perGpuBytes, 3.5e9 + 7e9 * 2.5 / 32);
}

TEST(ServingWeights, EmbeddingsHeadAndNormsStaySixteenBitAndTpSplitsMatrices)
{
    // Llama-2 7B by part: embedding and LM head 32000 x 4096 each, two RMSNorms of 4096 per
    // layer, a final norm; total 6,738,415,616 (the model card's 6.74B).
    ParamCounts c = bareCounts(6738415616.0);
    c.embedding = 32000.0 * 4096;
    c.lmHead = 32000.0 * 4096;
    c.normsPerLayer = 2 * 4096;
    c.finalNorm = 4096;
    const double kept = 2 * 32000.0 * 4096; // 262,144,000
    const double norms = 32 * 8192.0 + 4096; // 266,240
    const double linear = 6738415616.0 - kept - norms;
    const double int4 = 0.5 + 2.5 / 128;
    const ServingWeights w = servingWeights(c, 32, 4, 128, 1);
    EXPECT_DOUBLE_EQ(w.quantizedParams, linear);
    EXPECT_DOUBLE_EQ(w.totalBytes, linear * int4 + 2 * (kept + norms));
    const ServingWeights w2 = servingWeights(c, 32, 4, 128, 2);
    EXPECT_DOUBLE_EQ(w2.perGpuBytes, (linear * int4 + 2 * kept) / 2 + 2 * norms);
    // bf16: 2 B for everything.
    EXPECT_DOUBLE_EQ(servingWeights(c, 32, 16, 128, 1).perGpuBytes, 2 * 6738415616.0);
}

// Seed 002's pagedattention_capacity(60.0, 32, 8, 128): a 60 GB KV budget for Llama-3 8B.
struct PagedCase {
    int context;
    double maxConcurrent;
};
class ServingPagedCapacity : public ::testing::TestWithParam<PagedCase> { };

TEST_P(ServingPagedCapacity, Seed002SixtyGBBudgetTable)
{
    // bytes_per_page = 2 x 32 x 8 x 128 x 16 x 2 = 2,097,152; total_pages = int(60e9 / that)
    // = int(28610.2) = 28610; total_tokens = 28610 x 16 = 457,760.
    // max_concurrent = total_pages // ceil(len / 16).
    ServingConfig cfg;
    cfg.engine = ServingEngine::Generic; // the seeds' arithmetic, not vLLM's accounting
    cfg.context = GetParam().context;
    cfg.gpuMemoryUtilization = 1.0;
    cfg.runtimeOverheadBytes = 0;
    const ModelArch arch = llama3_8b();
    const ParamCounts counts = bareCounts(0); // no weights: the whole memory is the budget
    Gpu gpu = h100();
    // Memory = 60 GB + the forward's activation peak, so exactly 60 GB is left for KV.
    gpu.memoryBytes
        = 60e9 + inferenceActivationPeakBytes(arch, cfg.maxBatchedTokens, cfg.concurrency, 1);
    const ServingEstimate r = estimateServing(arch, counts, cfg, gpu);
    EXPECT_NEAR(r.kvBudgetBytes, 60e9, 1.0);
    EXPECT_EQ(r.blocks, 28610);
    EXPECT_EQ(r.maxTokens, 457760);
    EXPECT_EQ(r.maxSequences, GetParam().maxConcurrent);
}

INSTANTIATE_TEST_SUITE_P(Seed002, ServingPagedCapacity,
    ::testing::Values(PagedCase { 256, 28610 / 16 }, // 1788
        PagedCase { 512, 28610 / 32 }, // 894
        PagedCase { 1024, 28610 / 64 }, // 447
        PagedCase { 2048, 28610 / 128 }, // 223
        PagedCase { 4096, 28610 / 256 }, // 111
        PagedCase { 4100, 28610 / 257 })); // a partial block still takes a whole one: 111

// Llama-3 8B (8.03e9 params, bare) on one H100 at the plan defaults: bf16, context 8192,
// concurrency 64, block 16, utilization 0.9, max_batched_tokens 8192, 1.5 GB runtime overhead.
class ServingLlama3OnH100 : public ::testing::Test {
protected:
    ModelArch arch = llama3_8b();
    ParamCounts counts = bareCounts(8.03e9);
    // The seeds' arithmetic, not vLLM's accounting.
    ServingConfig cfg { .engine = ServingEngine::Generic };
    Gpu gpu = h100();

    static constexpr double kKv = 131072; // 2 x 32 x 8 x 128 x 2
    // Activation peak by hand: 8192 tokens x (2 x 4096 residual + norm output + max(attention
    // (2 x 32 + 2 x 8) x 128 = 10240, gated FFN 3 x 14336 = 43008)) x 2 B + fp32 logits of
    // min(8192, 64) sampled rows x 128256.
    static constexpr double kActivations = 8192.0 * (8192 + 43008) * 2 + 64.0 * 128256 * 4;
    static constexpr double kUsable = 81559.0 * 1024 * 1024 * 0.9;
    static constexpr double kBudget = kUsable - 2 * 8.03e9 - kActivations - 1.5e9;
};

TEST_F(ServingLlama3OnH100, KvBudgetIsUtilizationMinusWeightsActivationsOverhead)
{
    const ServingEstimate r = estimateServing(arch, counts, cfg, gpu);
    EXPECT_DOUBLE_EQ(r.weightsBytesPerGpu, 16.06e9);
    EXPECT_DOUBLE_EQ(r.activationPeakBytes, kActivations); // 871.7 MB
    EXPECT_NEAR(r.kvBudgetBytes, kBudget, 1.0); // 58.54 GB
    EXPECT_TRUE(r.fitsWeights);
    const double blocks = std::floor(kBudget / (16 * kKv)); // 27,912
    EXPECT_EQ(r.blocks, blocks);
    EXPECT_EQ(r.maxTokens, blocks * 16);
    EXPECT_EQ(r.maxSequences, std::floor(blocks / 512)); // 8192 / 16 = 512 blocks: 54
}

TEST_F(ServingLlama3OnH100, ContiguousPreallocationWastesThreeQuartersAtTheDefaultAverage)
{
    // average 0 = context / 4 = 2048 tokens; a max-length slot is 8192 x 131072 = 1.07 GB.
    const ServingEstimate r = estimateServing(arch, counts, cfg, gpu);
    const double slots = std::floor(kBudget / (8192 * kKv)); // 54
    EXPECT_DOUBLE_EQ(r.contiguousWasteFraction, 0.75);
    EXPECT_EQ(r.contiguousSequences, slots);
    EXPECT_NEAR(r.contiguousWasteBytes, slots * (8192 - 2048) * kKv, 1.0);
    // PagedAttention fits sequences of the average length: blocks / 128.
    EXPECT_EQ(r.pagedSequencesAtAverage, std::floor(std::floor(kBudget / (16 * kKv)) / 128));
    // Seed 002: "pre-allocate 8192 tokens per sequence but the average is 512: you waste 94%":
    // 1 - 512 / 8192 = 0.9375.
    ServingConfig seed = cfg;
    seed.averageLength = 512;
    const double fraction = estimateServing(arch, counts, seed, gpu).contiguousWasteFraction;
    EXPECT_DOUBLE_EQ(fraction, 1 - 512.0 / 8192);
    EXPECT_NEAR(fraction, 0.94, 0.005);
}

TEST_F(ServingLlama3OnH100, DecodeIsBandwidthBoundAtLongContext)
{
    // Per step: weights 16.06 GB + 64 x 8192 x 131072 B = 68.72 GB of KV, at 3.35 TB/s x 0.8.
    const ServingEstimate r = estimateServing(arch, counts, cfg, gpu);
    const double memoryS = (16.06e9 + 64.0 * 8192 * kKv) / (3.35e12 * 0.8); // 31.6 ms
    // FLOPs per token: 2 P + 2 x L x heads x (d_qk + d_v) x context = 16.06e9 + 4.29e9.
    const double flops = 2 * 8.03e9 + 2.0 * 32 * 32 * 256 * 8192;
    const double computeS = 64 * flops / 989e12; // 1.3 ms
    EXPECT_NEAR(r.decodeMemoryS, memoryS, 1e-12);
    EXPECT_NEAR(r.decodeComputeS, computeS, 1e-12);
    // The step itself is timed op by op (this test GPU has no kernel table: the spec
    // fallback, GEMMs at m = 64 reading their weights at 80% of HBM, decode attention reading
    // the KV): the same bytes as the roofline but the embedding table, of which a step reads
    // only 64 rows, plus each memory-bound kernel's launch floor (the H100's measured default:
    // per layer two norms at 4.17 us and two residual adds, RoPE and SwiGLU at 1.34 us:
    // 32 x 13.70 us = 0.44 ms), so within 1% of their sum.
    const double floors = 32 * (2 * 4.17e-6 + 4 * 1.34e-6);
    EXPECT_EQ(r.timingSource, "spec estimate");
    EXPECT_NEAR(r.itlS, memoryS + floors, 0.01 * memoryS);
    EXPECT_GT(r.itlS, memoryS);
    EXPECT_NEAR(r.decodeTokensPerS, 64 / r.itlS, 1e-6); // ~2,030 tokens/s
    // The batch's KV (68.7 GB) exceeds the 58.5 GB budget: 64 x 8k does not fit at once.
    EXPECT_DOUBLE_EQ(r.perGpu.kvCache, 64.0 * 8192 * kKv);
    EXPECT_FALSE(r.fits);
    // At 8k each sequence adds 1.07 GB of KV reads per step but only 20.4 GFLOPs, below the
    // ridge (295 FLOP/B x 1.07 GB = 317 GFLOPs): decode never turns compute-bound.
    EXPECT_EQ(r.computeBoundConcurrency, 0);
}

TEST_F(ServingLlama3OnH100, ShortContextDecodeTurnsComputeBoundAtTheRidge)
{
    // Context 128: F = 16.06e9 + 2 x 32 x 32 x 256 x 128 FLOPs per token, K = 128 x 131072 B
    // per sequence, ridge = 989e12 / 3.35e12 = 295.2 FLOP/B: B = ridge x W / (F - ridge x K).
    cfg.context = 128;
    const ServingEstimate r = estimateServing(arch, counts, cfg, gpu);
    const double ridge = 989e12 / 3.35e12;
    const double f = 2 * 8.03e9 + 2.0 * 32 * 32 * 256 * 128;
    const double k = 128.0 * kKv;
    EXPECT_EQ(r.computeBoundConcurrency, std::ceil(ridge * 16.06e9 / (f - ridge * k))); // 425
    EXPECT_GT(r.computeBoundConcurrency, 400);
}

TEST_F(ServingLlama3OnH100, PrefillIsComputeBoundAndSetsTimeToFirstToken)
{
    // 2 P n + causal attention 2 x L x heads x (128 + 128) x n^2 / 2 at 989 TFLOP/s.
    const ServingEstimate r = estimateServing(arch, counts, cfg, gpu);
    const double n = 8192;
    const double flops = 2 * 8.03e9 * n + 2.0 * 32 * 32 * 256 * n * n / 2;
    // From ops, on the spec fallback: GEMMs at 70% of the peak, flash attention at 55%, so
    // between the FLOPs at the peak (0.151 s) and at half of it.
    EXPECT_GT(r.prefillTimeS, flops / 989e12);
    EXPECT_LT(r.prefillTimeS, flops / (0.5 * 989e12));
    // One chunk of 8192 tokens: TTFT = max(prefill, 1 x decode step) = prefill.
    EXPECT_NEAR(r.ttftS, r.prefillTimeS, 1e-12);
    // Chunks of 512: 16 engine steps of at least one decode step (31.6 ms) each = 0.51 s.
    cfg.maxBatchedTokens = 512;
    const ServingEstimate chunked = estimateServing(arch, counts, cfg, gpu);
    EXPECT_NEAR(chunked.ttftS, 16 * chunked.itlS, 1e-12);
}

TEST_F(ServingLlama3OnH100, TooBigAModelLeavesNoBudgetAndDoesNotFit)
{
    // 70B in bf16 is 140 GB on one 85.5 GB GPU.
    const ServingEstimate r = estimateServing(llama3_70b(), bareCounts(70.6e9), cfg, gpu);
    EXPECT_FALSE(r.fitsWeights);
    EXPECT_EQ(r.kvBudgetBytes, 0);
    EXPECT_EQ(r.maxSequences, 0);
    // int4 weights (70.6e9 x 0.5195 = 36.7 GB) leave room again.
    cfg.weightBits = 4;
    EXPECT_TRUE(estimateServing(llama3_70b(), bareCounts(70.6e9), cfg, gpu).fitsWeights);
}

TEST(ServingRoofline, MoeDecodeAtBatchOneReadsOnlyTheRoutedExperts)
{
    // Mixtral-like: 8 experts, top-2; all params in the experts for clarity (32 layers x 1e9).
    ModelArch a = llama3_8b();
    a.moe = MoeConfig { 8, 2, 0, 14336, 0, false };
    ParamCounts c = bareCounts(32e9);
    c.active = 8e9;
    c.expertParamsPerLayer = 1e9;
    c.moeLayers = 32;
    ServingConfig cfg;
    cfg.engine = ServingEngine::Generic; // the seeds' arithmetic, not vLLM's accounting
    const DecodeStep one = decodeStep(a, c, cfg, h100(), 1, 1);
    // One token touches 2 of 8 experts: 1 - (1 - 2/8)^1 = 1/4 of 64 GB of expert weights.
    EXPECT_DOUBLE_EQ(one.weightReadBytes, 64e9 / 4);
    // 64 tokens touch 1 - 0.75^64 of them: practically all.
    const DecodeStep many = decodeStep(a, c, cfg, h100(), 64, 1);
    EXPECT_NEAR(many.weightReadBytes, 64e9 * (1 - std::pow(0.75, 64)), 1.0);
}

TEST(ServingEdges, DegenerateInputsStayFinite)
{
    ServingConfig cfg;
    cfg.engine = ServingEngine::Generic; // the seeds' arithmetic, not vLLM's accounting
    cfg.tp = 0;
    cfg.context = 0;
    cfg.concurrency = 0;
    cfg.blockSize = 0;
    cfg.maxBatchedTokens = 0;
    cfg.gpuMemoryUtilization = 0;
    for (const Gpu& gpu : { Gpu {}, h100() }) {
        for (const ModelArch& arch : { ModelArch {}, llama3_8b() }) {
            const ServingEstimate r = estimateServing(arch, bareCounts(0), cfg, gpu);
            for (double v : { r.kvBytesPerToken, r.weightsBytesPerGpu, r.kvBudgetBytes, r.maxTokens,
                     r.blocks, r.maxSequences, r.contiguousWasteBytes, r.decodeTokensPerS,
                     r.prefillTimeS, r.ttftS, r.itlS, r.computeBoundConcurrency, r.perGpu.total() })
                EXPECT_TRUE(std::isfinite(v));
        }
    }
}

// The serving section is checked where every plan is: validatePlan (planio), which the reader,
// the CLI and the app share.
TEST(ServingValidation, ErrorsNameTheJsonPathAndTheAllowedRange)
{
    const Plan base = defaultPlan();
    Plan plan = base;
    EXPECT_FALSE(validatePlan(plan).has_value());
    plan.serving.kvBits = 5;
    auto e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->toString(), "serving.kv_bits: must be 4, 8 or 16, got 5");
    plan = base;
    plan.serving.gpuMemoryUtilization = 1.5;
    e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->path, "serving.gpu_memory_utilization");
    plan = base;
    plan.serving.blockSize = 0;
    e = validatePlan(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->toString(), "serving.block_size: must be 1..65536, got 0");
}

} // namespace
} // namespace envelope
