// Exact parameter counts against published totals, hand calculations for each part, the
// standard shape for a bare count, and the range checks.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures.h"
#include "model/model.h"

namespace envelope {
namespace {

ModelArch llamaLike(
    int layers, std::int64_t hidden, std::int64_t ffn, int heads, int kvHeads, std::int64_t vocab)
{
    ModelArch a = testing::llamaShape(
        layers, hidden, heads, kvHeads, static_cast<int>(hidden / heads), ffn, vocab);
    a.name = "llama-like";
    a.maxPositions = 4096;
    return a;
}

ModelArch gpt2Like(int layers, std::int64_t hidden, int heads, std::int64_t positions)
{
    ModelArch a = testing::denseShape("gpt2-like", layers, hidden, heads, 50257);
    a.tiedEmbeddings = true;
    a.norm = NormKind::LayerNorm;
    a.qkvBias = true;
    a.linearBias = true;
    a.maxPositions = positions;
    a.learnedPositions = true;
    return a;
}

ModelArch mixtral8x7b()
{
    ModelArch a = llamaLike(32, 4096, 14336, 32, 8, 32000);
    a.moe = MoeConfig { 8, 2, 0, 14336, 0, false };
    return a;
}

ModelArch deepseekV3()
{
    ModelArch a = llamaLike(61, 7168, 18432, 128, 128, 129280);
    a.headDim = 128;
    a.moe = MoeConfig { 256, 8, 1, 2048, 3, true };
    a.mla = MlaConfig { 1536, 512, 64, 128, 128 };
    return a;
}

struct Published {
    const char* name;
    ModelArch arch;
    double total;
    const char* source;
};

// Dense models whose exact totals are published (HF model cards / safetensors index total_size
// / 2 for bf16 checkpoints). The shapes are the configs' own numbers.
TEST(ModelParams, DenseModelsMatchTheirPublishedTotalsExactly)
{
    ModelArch qwen = llamaLike(28, 3584, 18944, 28, 4, 152064);
    qwen.qkvBias = true;
    const Published cases[] = {
        { "gpt2", gpt2Like(12, 768, 12, 1024), 124'439'808, "HF gpt2 model card / safetensors" },
        { "llama-2-7b", llamaLike(32, 4096, 11008, 32, 32, 32000), 6'738'415'616,
            "meta-llama/Llama-2-7b-hf safetensors index total_size 13,476,839,424 / 2" },
        { "llama-2-13b", llamaLike(40, 5120, 13824, 40, 40, 32000), 13'015'864'320,
            "meta-llama/Llama-2-13b-hf: 13,015,864,320 params (HF safetensors)" },
        { "llama-2-70b", llamaLike(80, 8192, 28672, 64, 8, 32000), 68'976'648'192,
            "meta-llama/Llama-2-70b-hf: 68,976,648,192 params (HF safetensors)" },
        { "llama-3-8b", llamaLike(32, 4096, 14336, 32, 8, 128256), 8'030'261'248,
            "meta-llama/Meta-Llama-3-8B safetensors index total_size 16,060,522,496 / 2" },
        { "llama-3-70b", llamaLike(80, 8192, 28672, 64, 8, 128256), 70'553'706'496,
            "meta-llama/Meta-Llama-3-70B safetensors index total_size 141,107,412,992 / 2" },
        { "llama-3.1-405b", llamaLike(126, 16384, 53248, 128, 8, 128256), 405'853'388'800,
            "meta-llama/Llama-3.1-405B: 405,853,388,800 params (HF safetensors)" },
        { "mistral-7b", llamaLike(32, 4096, 14336, 32, 8, 32000), 7'241'732'096,
            "mistralai/Mistral-7B-v0.1 safetensors index total_size 14,483,464,192 / 2" },
        { "qwen2.5-7b", qwen, 7'615'616'512,
            "Qwen/Qwen2.5-7B safetensors index total_size 15,231,233,024 / 2" },
    };
    for (const Published& c : cases) {
        SCOPED_TRACE(c.name);
        const ParamCounts p = countParameters(c.arch);
        EXPECT_EQ(p.total, c.total) << c.source;
        EXPECT_EQ(p.active, c.total);
    }
}

TEST(ModelParams, Gpt2PartsAddUpByHand)
{
    const ParamCounts p = countParameters(gpt2Like(12, 768, 12, 1024));
    // wte 50257 x 768, wpe 1024 x 768, tied head, final LayerNorm 2 x 768.
    EXPECT_EQ(p.embedding, 50257.0 * 768);
    EXPECT_EQ(p.positions, 1024.0 * 768);
    EXPECT_EQ(p.lmHead, 0);
    EXPECT_EQ(p.finalNorm, 2 * 768);
    // c_attn 768 x 2304 + 2304, c_proj 768 x 768 + 768.
    EXPECT_EQ(p.attentionPerLayer, 768.0 * 2304 + 2304 + 768.0 * 768 + 768);
    // c_fc 768 x 3072 + 3072, c_proj 3072 x 768 + 768.
    EXPECT_EQ(p.denseFfnPerLayer, 768.0 * 3072 + 3072 + 3072.0 * 768 + 768);
    EXPECT_EQ(p.normsPerLayer, 4 * 768);
    EXPECT_EQ(p.denseLayers, 12);
    EXPECT_EQ(p.moeLayers, 0);
    EXPECT_EQ(p.layerTotal(), 12 * (p.attentionPerLayer + p.denseFfnPerLayer + p.normsPerLayer));
}

TEST(ModelParams, Gpt3ShapeFromThePaperIsWithinHalfAPercentOf175B)
{
    // Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads of 128, ctx 2048; the
    // GPT-2 tokenizer (50257) and block (LayerNorm, biases, 4d GELU FFN, learned positions,
    // tied head). Per layer: attention 4d^2 + 4d, FFN 8d^2 + 5d, two LayerNorms 4d.
    const double d = 12288;
    const double perLayer = 12 * d * d + 13 * d;
    const double expected = 96 * perLayer + 50257 * d + 2048 * d + 2 * d;
    const ParamCounts p = countParameters(gpt2Like(96, 12288, 96, 2048));
    EXPECT_EQ(p.total, expected);
    EXPECT_EQ(expected, 174'604'259'328.0);
    EXPECT_LT(std::fabs(p.total - 175.0e9) / 175.0e9, 0.005);
}

TEST(ModelParams, MixtralCountsAllExpertsInTotalAndTopTwoInActive)
{
    const ParamCounts p = countParameters(mixtral8x7b());
    // mistralai/Mixtral-8x7B-v0.1: 46,702,792,704 (safetensors index total_size / 2); the
    // active figure 12,879,925,248 is the same sum with 2 of 8 experts (Jiang et al. 2024: "13B
    // active").
    EXPECT_EQ(p.total, 46'702'792'704.0);
    EXPECT_EQ(p.active, 12'879'925'248.0);
    const double expert = 3.0 * 4096 * 14336;
    EXPECT_EQ(p.expertParamsPerLayer, 8 * expert);
    EXPECT_EQ(p.moeFfnPerLayer, 8 * expert + 4096 * 8);
    EXPECT_EQ(p.moeActiveFfnPerLayer, 2 * expert + 4096 * 8);
    EXPECT_EQ(p.moeLayers, 32);
    EXPECT_EQ(p.denseLayers, 0);
}

TEST(ModelParams, DeepSeekV3MatchesThe671BMainModelAnd37BActive)
{
    // Hand count (DeepSeek-V3 config.json, modeling_deepseek.py):
    //  MLA per layer: q_a 7168x1536 + norm 1536 + q_b 1536x(128x192) + kv_a 7168x(512+64)
    //                 + norm 512 + kv_b 512x(128x256) + o 128x128x7168
    const double mla = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512
        + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
    const double norms = 2 * 7168;
    const double expert = 3.0 * 7168 * 2048;
    const double router = 7168.0 * 256 + 256; // gate weight + e_score_correction_bias
    const double dense = 3.0 * 7168 * 18432;
    const double outside = 2.0 * 129280 * 7168 + 7168;
    const double total
        = outside + 3 * (mla + norms + dense) + 58 * (mla + norms + 257 * expert + router);
    const double active
        = outside + 3 * (mla + norms + dense) + 58 * (mla + norms + 9 * expert + router);
    const ParamCounts p = countParameters(deepseekV3());
    EXPECT_EQ(p.total, total);
    EXPECT_EQ(p.active, active);
    EXPECT_EQ(p.attentionPerLayer, mla);
    EXPECT_EQ(p.denseLayers, 3);
    EXPECT_EQ(p.moeLayers, 58);
    // DeepSeek-V3 technical report (arXiv 2412.19437), abstract: 671B total, 37B activated.
    EXPECT_NEAR(p.total / 1e9, 671.0, 0.5);
    EXPECT_NEAR(p.active / 1e9, 37.0, 1.0);
}

TEST(ModelParams, QueryLoraRankZeroProjectsQueriesDirectly)
{
    ModelArch a = deepseekV3();
    a.mla->qLoraRank = 0; // DeepSeek-V2-Lite: q_proj hidden x heads x (nope + rope)
    const double mla
        = 7168.0 * 128 * 192 + 7168.0 * 576 + 512 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
    EXPECT_EQ(countParameters(a).attentionPerLayer, mla);
}

TEST(ModelParams, GroupedQueryAttentionUsesKvHeadsForKeysAndValues)
{
    // Llama-3-8B: q, o 4096 x 4096; k, v 4096 x (8 x 128).
    const ParamCounts p = countParameters(llamaLike(32, 4096, 14336, 32, 8, 128256));
    EXPECT_EQ(p.attentionPerLayer, 2 * 4096.0 * 4096 + 2 * 4096.0 * 1024);
    EXPECT_EQ(p.denseFfnPerLayer, 3 * 4096.0 * 14336);
    EXPECT_EQ(p.normsPerLayer, 2 * 4096);
    EXPECT_EQ(p.lmHead, 128256.0 * 4096);
}

TEST(ModelParams, ExplicitHeadDimDecouplesAttentionWidthFromHidden)
{
    // Gemma-7B: hidden 3072, 16 heads of 256 -> q/k/v/o are 3072 x 4096.
    ModelArch a = llamaLike(28, 3072, 24576, 16, 16, 256000);
    a.headDim = 256;
    EXPECT_EQ(countParameters(a).attentionPerLayer, 4 * 3072.0 * 4096);
}

TEST(ModelParams, QkvBiasAddsOnlyQueryKeyValueBiases)
{
    ModelArch a = llamaLike(2, 1024, 2816, 16, 4, 1000);
    const double without = countParameters(a).attentionPerLayer;
    a.qkvBias = true;
    EXPECT_EQ(countParameters(a).attentionPerLayer - without, 1024 + 2 * 4 * 64);
    a.linearBias = true; // adds the output-projection bias
    EXPECT_EQ(countParameters(a).attentionPerLayer - without, 1024 + 2 * 4 * 64 + 1024);
}

TEST(ModelParams, MultiQueryAttentionHasOneKeyValueHead)
{
    ModelArch a = llamaLike(1, 2048, 5632, 16, 1, 1000);
    EXPECT_EQ(countParameters(a).attentionPerLayer, 2 * 2048.0 * 2048 + 2 * 2048.0 * 128);
}

TEST(ModelParams, UntyingTheHeadAddsOneVocabByHiddenMatrix)
{
    ModelArch a = llamaLike(2, 512, 1536, 8, 8, 1000);
    a.tiedEmbeddings = true;
    const double tied = countParameters(a).total;
    a.tiedEmbeddings = false;
    EXPECT_EQ(countParameters(a).total - tied, 1000.0 * 512);
}

TEST(ModelParams, DeclaredCountIsExactAndItsPartsSumToIt)
{
    ModelArch a = llamaLike(32, 4096, 11008, 32, 32, 32000);
    a.declaredParams = 7e9;
    const ParamCounts p = countParameters(a);
    EXPECT_EQ(p.total, 7e9);
    EXPECT_EQ(p.active, 7e9);
    const double sum = p.embedding + p.positions + p.lmHead + p.finalNorm + p.layerTotal();
    EXPECT_NEAR(sum, 7e9, 1.0);
    // Scaled from Llama-2-7B's 6,738,415,616 by 7e9 / 6,738,415,616.
    EXPECT_NEAR(p.embedding, 32000.0 * 4096 * 7e9 / 6738415616.0, 1e-3);
}

TEST(ModelParams, StandardShapeForSevenBillionIsLlamaSevenB)
{
    const ModelArch a = standardShapeForParams(7e9);
    EXPECT_EQ(a.hidden, 4096);
    EXPECT_NEAR(a.layers, 32, 1);
    EXPECT_EQ(a.heads, 32);
    EXPECT_EQ(a.headDim, 128);
    EXPECT_EQ(a.ffnHidden, 11008); // 8/3 x 4096 = 10922.7 -> 43 x 256
    EXPECT_EQ(a.vocab, 32000);
    EXPECT_EQ(a.ffn, FfnKind::Gated);
    EXPECT_EQ(a.norm, NormKind::RmsNorm);
    ASSERT_TRUE(a.declaredParams.has_value());
    EXPECT_EQ(*a.declaredParams, 7e9);
    EXPECT_FALSE(validateArch(a).has_value());
    // Its own shape's count is close to the number asked for.
    ModelArch shape = a;
    shape.declaredParams.reset();
    EXPECT_LT(std::fabs(countParameters(shape).total - 7e9) / 7e9, 0.05);
}

TEST(ModelParams, StandardShapeKeepsStatedDimensions)
{
    const ModelArch a = standardShapeForParams(7e9, 32, 4096, 32);
    EXPECT_EQ(a.layers, 32);
    EXPECT_EQ(a.hidden, 4096);
    EXPECT_EQ(a.heads, 32);
    const ModelArch b = standardShapeForParams(70e9, 80);
    EXPECT_EQ(b.layers, 80);
    ModelArch shape = b;
    shape.declaredParams.reset();
    EXPECT_LT(std::fabs(countParameters(shape).total - 70e9) / 70e9, 0.05);
    const ModelArch c = standardShapeForParams(13e9, 0, 5120, 40, 50000);
    EXPECT_EQ(c.hidden, 5120);
    EXPECT_EQ(c.heads, 40);
    EXPECT_EQ(c.vocab, 50000);
    // (13e9 - 2 x 50000 x 5120 - 5120) / per-layer(5120, ffn 13568) = 40.5 -> 40 or 41.
    EXPECT_NEAR(c.layers, 40.5, 0.5);
}

TEST(ModelParams, StandardShapesGrowWithTheCount)
{
    int lastLayers = 0;
    std::int64_t lastHidden = 0;
    for (double params : { 1e8, 1e9, 7e9, 70e9, 400e9, 2e12 }) {
        SCOPED_TRACE(params);
        const ModelArch a = standardShapeForParams(params);
        EXPECT_GE(a.layers, lastLayers);
        EXPECT_GE(a.hidden, lastHidden);
        EXPECT_FALSE(validateArch(a).has_value());
        lastLayers = a.layers;
        lastHidden = a.hidden;
    }
}

TEST(ModelParams, StandardShapeForANonsenseCountIsReportedNotACrash)
{
    for (double params : { 0.0, -5.0, std::nan("") }) {
        const ModelArch a = standardShapeForParams(params);
        EXPECT_GT(a.heads, 0);
        const auto error = validateArch(a);
        ASSERT_TRUE(error.has_value());
        EXPECT_EQ(error->path, "params");
    }
}

struct BadArch {
    const char* what;
    void (*change)(ModelArch&);
    const char* path;
    const char* message;
};

TEST(ModelParams, ValidateArchNamesTheFieldAndTheAllowedRange)
{
    const BadArch cases[] = {
        { "kv heads not dividing", [](ModelArch& a) { a.kvHeads = 5; }, "kv_heads",
            "must divide heads (32), got 5" },
        { "zero layers", [](ModelArch& a) { a.layers = 0; }, "layers", "must be 1..1000, got 0" },
        { "absurd hidden", [](ModelArch& a) { a.hidden = 2'000'000; }, "hidden",
            "must be 1..1000000, got 2000000" },
        { "zero head dim", [](ModelArch& a) { a.headDim = 0; }, "head_dim",
            "must be 1..100000, got 0" },
        { "zero vocab", [](ModelArch& a) { a.vocab = 0; }, "vocab", "must be 1..100000000, got 0" },
        { "dropout one", [](ModelArch& a) { a.dropout = 1.0; }, "dropout",
            "must be in [0, 1), got 1" },
        { "dropout NaN", [](ModelArch& a) { a.dropout = NAN; }, "dropout",
            "must be in [0, 1), got nan" },
        { "top-k above experts", [](ModelArch& a) { a.moe->topK = 9; }, "moe.top_k",
            "must be 1..experts (8), got 9" },
        { "dense layers above layers", [](ModelArch& a) { a.moe->denseLayers = 33; },
            "moe.dense_layers", "must be 0..layers (32), got 33" },
        { "negative mla rank",
            [](ModelArch& a) {
                a.mla = MlaConfig { -1, 512, 64, 128, 128 };
            },
            "mla.q_lora_rank", "must be 0..1000000, got -1" },
        { "learned positions without a count",
            [](ModelArch& a) {
                a.learnedPositions = true;
                a.maxPositions = 0;
            },
            "max_positions", "must be at least 1 with learned_positions" },
    };
    EXPECT_FALSE(validateArch(mixtral8x7b()).has_value());
    EXPECT_FALSE(validateArch(deepseekV3()).has_value());
    for (const BadArch& c : cases) {
        SCOPED_TRACE(c.what);
        ModelArch a = mixtral8x7b();
        c.change(a);
        const auto error = validateArch(a);
        ASSERT_TRUE(error.has_value());
        EXPECT_EQ(error->path, c.path);
        EXPECT_EQ(error->message, c.message);
    }
}

} // namespace
} // namespace envelope
