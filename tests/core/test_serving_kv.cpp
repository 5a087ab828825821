// KV cache per token: the seeds' figures (000, 002), MLA (DeepSeek-V3), sliding window
// (Mistral), quantized KV with its scale overhead, and TP's split of the KV heads. Every
// expectation is the arithmetic written out here.
#include <gtest/gtest.h>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

struct KvCase {
    const char* name;
    ModelArch arch;
    double expectedBytes; // hand arithmetic
    double seedFigure; // as the seed prints it
    double seedUnit;
};

class ServingKvSeedFigures : public ::testing::TestWithParam<KvCase> { };

TEST_P(ServingKvSeedFigures, BytesPerTokenMatchTheSeedArithmetic)
{
    const KvCase& c = GetParam();
    EXPECT_DOUBLE_EQ(kvBytesPerToken(c.arch, 16), c.expectedBytes) << c.name;
    EXPECT_NEAR(c.expectedBytes / c.seedUnit, c.seedFigure, 0.01 * c.seedFigure) << c.name;
}

// Seed 000, "KV cache math": 2 x N_layers x d x bytes for MHA, divided by heads / kv_heads.
INSTANTIATE_TEST_SUITE_P(Seed000, ServingKvSeedFigures,
    ::testing::Values(
        // "a 32-layer, d=4096 model in bf16 would cost 2 x 32 x 4096 x 2 = 524 KB / token"
        KvCase { "32 layers d 4096 MHA", llama2_7b(), 2.0 * 32 * 4096 * 2, 524, 1e3 },
        // "8 KV heads against 32 query heads for 8B (4x smaller, ~131 KB / token)"
        KvCase { "Llama-3 8B GQA", llama3_8b(), 2.0 * 32 * 8 * 128 * 2, 131, 1e3 },
        // "8 KV heads against 64 query heads for 70B (8x smaller, ~328 KB / token)"
        KvCase { "Llama-3 70B GQA", llama3_70b(), 2.0 * 80 * 8 * 128 * 2, 328, 1e3 },
        // "an 80-layer, d=8192 model would cost 2 x 80 x 8192 x 2 = 2.6 MB / token"
        KvCase { "80 layers d 8192 MHA", llamaShape(80, 8192, 64, 64, 128, 28672, 32000),
            2.0 * 80 * 8192 * 2, 2.6, 1e6 }));

TEST(ServingKv, Seed000SeventyBServing256StreamsOf8kNeedsAbout670GB)
{
    // 256 x 8192 x 327,680 B = 687.2e9 B. The seed's "~670 GB" reads 8k as 8000 and 328 KB as
    // 328e3: 256 x 8000 x 328e3 = 671.7e9; the two agree to 3%.
    const double bytes = 256 * kvBytesForTokens(llama3_70b(), 16, 8192);
    EXPECT_DOUBLE_EQ(bytes, 256.0 * 8192 * 327680);
    EXPECT_NEAR(bytes / 670e9, 1.0, 0.03);
}

TEST(ServingKv, Seed002Llama2At4096By32Is68Point7GB)
{
    // Seed 002: "M_KV = 524288 x 4096 x 32 = 68.7 GB".
    const double bytes = 32 * kvBytesForTokens(llama2_7b(), 16, 4096);
    EXPECT_DOUBLE_EQ(bytes, 524288.0 * 4096 * 32);
    EXPECT_NEAR(bytes / 1e9, 68.7, 0.05);
}

TEST(ServingKv, Seed002Llama3EightBWithGqaIsAQuarter)
{
    // Seed 002's kv_cache_size_gb(32, 8, 128, 4096, 32) = 2 x 32 x 8 x 128 x 4096 x 32 x 2.
    const double bytes = 32 * kvBytesForTokens(llama3_8b(), 16, 4096);
    EXPECT_DOUBLE_EQ(bytes, 2.0 * 32 * 8 * 128 * 4096 * 32 * 2);
    EXPECT_NEAR(bytes / 1e9, 17.2, 0.05);
}

TEST(ServingKv, DeepSeekV3MlaCachesTheLatentAndRopeKeyWithoutFactorTwo)
{
    // DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64; MLA caches
    // c_KV (512) and k^R (64) per layer: 61 x 576 x 2 B = 70,272 B.
    ModelArch a = llamaShape(61, 7168, 128, 128, 128, 18432, 129280);
    a.mla = MlaConfig { 1536, 512, 64, 128, 128 };
    EXPECT_DOUBLE_EQ(kvBytesPerToken(a, 16), 70272.0);
    // The same model as MHA with 128 heads of 128 would cache 2 x 61 x 128 x 128 x 2 = 4.0 MB.
    a.mla.reset();
    EXPECT_DOUBLE_EQ(kvBytesPerToken(a, 16), 2.0 * 61 * 128 * 128 * 2);
}

TEST(ServingKv, SlidingWindowCapsTheTokensASequenceKeeps)
{
    // Mistral 7B: 32 layers, 8 KV heads of 128, sliding_window 4096. Mistral paper sec. 2:
    // "on a sequence length of 32k tokens, this reduces the cache memory usage by 8x".
    ModelArch a = llamaShape(32, 4096, 32, 8, 128, 14336, 32000);
    a.slidingWindow = 4096;
    EXPECT_DOUBLE_EQ(kvTokensKept(a, 1000), 1000);
    EXPECT_DOUBLE_EQ(kvTokensKept(a, 32768), 4096);
    const double perToken = 2.0 * 32 * 8 * 128 * 2;
    EXPECT_DOUBLE_EQ(kvBytesForTokens(a, 16, 32768), perToken * 4096);
    a.slidingWindow = 0;
    EXPECT_DOUBLE_EQ(kvBytesForTokens(a, 16, 32768), perToken * 32768); // 8x the windowed cache
}

TEST(ServingKv, QuantizedKvAddsAnFp16ScaleAndZeroPerHeadPerToken)
{
    // Convention (LMDeploy int8/int4 KV, KIVI): each K or V head vector of a token carries an
    // fp16 scale and an fp16 zero point, 4 B. Llama-3 8B: 2 x 32 layers x 8 heads = 512 vectors.
    const ModelArch a = llama3_8b();
    EXPECT_DOUBLE_EQ(kvBytesPerToken(a, 8), 512 * (128 * 1.0 + 4)); // 67,584 B, 51.6% of bf16
    EXPECT_DOUBLE_EQ(kvBytesPerToken(a, 4), 512 * (128 * 0.5 + 4)); // 34,816 B, 26.6% of bf16
    // MLA: one latent vector per layer and token: 61 x (576 x 1 + 4).
    ModelArch mla = llamaShape(61, 7168, 128, 128, 128, 18432, 129280);
    mla.mla = MlaConfig { 1536, 512, 64, 128, 128 };
    EXPECT_DOUBLE_EQ(kvBytesPerToken(mla, 8), 61.0 * (576 + 4));
}

TEST(ServingKv, TensorParallelSplitsKvHeadsAndReplicatesThemPastKvHeads)
{
    const ModelArch a = llama3_8b(); // 8 KV heads
    EXPECT_EQ(kvHeadsPerGpu(a, 1), 8);
    EXPECT_EQ(kvHeadsPerGpu(a, 2), 4);
    EXPECT_DOUBLE_EQ(kvBytesPerTokenPerGpu(a, 16, 2), 131072.0 / 2);
    EXPECT_EQ(kvHeadsPerGpu(a, 8), 1);
    // tp 16 > 8 KV heads: each rank still holds one whole head (vLLM replicates), 1/8 not 1/16.
    EXPECT_EQ(kvHeadsPerGpu(a, 16), 1);
    EXPECT_DOUBLE_EQ(kvBytesPerTokenPerGpu(a, 16, 16), 131072.0 / 8);
    // MLA's latent is not split by heads: every rank keeps it whole.
    ModelArch mla = llamaShape(61, 7168, 128, 128, 128, 18432, 129280);
    mla.mla = MlaConfig { 1536, 512, 64, 128, 128 };
    EXPECT_DOUBLE_EQ(kvBytesPerTokenPerGpu(mla, 16, 8), 70272.0);
}

TEST(ServingKv, EmptyArchitectureGivesZeroNotNan)
{
    const ModelArch empty;
    EXPECT_EQ(kvBytesPerToken(empty, 16), 0);
    EXPECT_EQ(kvBytesPerTokenPerGpu(empty, 16, 4), 0);
    EXPECT_EQ(kvBytesForTokens(empty, 4, -5), 0);
}

} // namespace
} // namespace envelope
