// DeepSeek Sparse Attention (DeepSeek-V3.2; issue 23's deepseek_v32): the lightning indexer's
// weights and FP8 key cache, each query attending to its top-k earlier tokens, the indexer
// scoring all of them. Every figure is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "estimate/estimate.h"
#include "model/arch_json.h"
#include "model/attention.h"
#include "ops/ops.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/serving.h"

namespace envelope {
namespace {

// deepseek-ai/DeepSeek-V3.2-Exp config.json, the keys the importer reads: DeepSeek-V3's shape
// and the indexer's index_n_heads 64, index_head_dim 128, index_topk 2048.
constexpr const char* kV32Config = R"({"model_type": "deepseek_v32",
    "num_hidden_layers": 61, "hidden_size": 7168, "intermediate_size": 18432,
    "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280,
    "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1,
    "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
    "topk_method": "noaux_tc", "max_position_embeddings": 163840, "num_nextn_predict_layers": 1,
    "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048})";

// Per layer the indexer adds wq_b 1536 x (64 x 128) = 12,582,912, wk 7168 x 128 = 917,504, a
// LayerNorm of 128 (weight and bias) = 256 and weights_proj 7168 x 64 = 458,752: 13,959,424;
// 61 layers: 851,524,864 over DeepSeek-V3's 671,026,419,200 = 671,877,944,064.
TEST(SparseAttention, ImportsDeepSeekV32WithItsIndexer)
{
    const Expected<ModelArch> a = importHfConfig(kV32Config);
    ASSERT_TRUE(a.ok()) << a.error().toString();
    ASSERT_TRUE(a->mla && a->mla->sparse());
    EXPECT_EQ(a->mla->indexHeads, 64);
    EXPECT_EQ(a->mla->indexHeadDim, 128);
    EXPECT_EQ(a->mla->indexTopK, 2048);
    EXPECT_EQ(a->mtpLayers, 1);
    constexpr double indexer = 1536.0 * 64 * 128 + 7168.0 * 128 + 2 * 128 + 7168.0 * 64;
    static_assert(indexer == 13'959'424.0);
    EXPECT_EQ(countParameters(*a).total, 671026419200.0 + 61 * indexer);
    // The same without the indexer is DeepSeek-V3 exactly.
    ModelArch dense = *a;
    dense.mla->indexTopK = dense.mla->indexHeads = dense.mla->indexHeadDim = 0;
    EXPECT_EQ(countParameters(dense).total, 671026419200.0);
    // The model object round-trips, and a partial indexer is refused by its key.
    const std::string written = writeArchitecture(*a);
    const Expected<ModelArch> back = archFromJson(nlohmann::json::parse(written), "model");
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(*back, *a);
    nlohmann::json partial = nlohmann::json::parse(written);
    partial["mla"].erase("index_topk");
    const Expected<ModelArch> refused = archFromJson(partial, "model");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().path, "model.mla.index_topk");
}

// The latent cache as DeepSeek-V3's, (512 + 64) x 2 B in bf16, plus the indexer's 128 FP8
// values and one fp32 scale a token and layer (vLLM's indexer cache: 132 B): 61 x 1,284 =
// 78,324 B; with an FP8 latent 61 x (576 + 132) = 43,188 B.
TEST(SparseAttention, TheIndexerKeepsItsOwnFp8Keys)
{
    const ModelArch a = importHfConfig(kV32Config).value();
    EXPECT_DOUBLE_EQ(indexerKeyBytes(*a.mla), 132.0);
    EXPECT_DOUBLE_EQ(kvBytesPerToken(a, KvCacheFormat::Bf16), 61.0 * (576 * 2 + 132));
    EXPECT_DOUBLE_EQ(kvBytesPerToken(a, KvCacheFormat::Fp8), 61.0 * (576 + 132));
    // Every token stays cached (top-k picks from all of them): no window.
    EXPECT_DOUBLE_EQ(meanKeptTokens(a, 131072), 131072.0);
}

// A 131,072-token prompt: dense causal attention scores n^2 / 2 = 8,589,934,592 pairs a layer;
// top-2048 scores n k - k^2 / 2 = 268,435,456 - 2,097,152 = 266,338,304, 32.25 times fewer.
TEST(SparseAttention, EachQueryAttendsToItsTopK)
{
    const ModelArch a = importHfConfig(kV32Config).value();
    EXPECT_DOUBLE_EQ(meanCausalPairs(a, 131072), 266338304.0);
    EXPECT_DOUBLE_EQ(meanCausalPairs(a, 2048), 2048.0 * 2048 / 2); // short prompts: dense
    // A decode step at 131,072 cached tokens: the attention reads 2,048 latents, the indexer
    // all 131,072 of its keys (64 heads of 128 over one key head).
    InferenceLayout l;
    const std::vector<Op> ops = decodeStepOps(a, l, 4, 131072);
    int seen = 0;
    for (const Op& op : ops) {
        if (op.cls != OpClass::Attention)
            continue;
        ++seen;
        if (std::string_view(op.name) == "indexer logits") {
            EXPECT_EQ(op.kvLen, 131072);
            EXPECT_EQ(op.heads, 64);
            EXPECT_EQ(op.kvHeads, 1);
            EXPECT_DOUBLE_EQ(op.kvHeads * (op.headDimQk + op.headDimV) * op.kvBytesPerElement, 132.0);
        } else {
            EXPECT_EQ(op.kvLen, 2048);
        }
    }
    EXPECT_EQ(seen, 4); // attention and indexer, in the dense and the MoE layers
}

// DeepSeek-V3.2-Exp's report (Fig. 3) shows the prefill cost per million tokens at 128K falling
// to about a third of DeepSeek-V3.1's on H800s, with the same weights and layout. The ops carry
// that: at 131,072 tokens on eight H200s with data-parallel attention (each rank the whole
// attention, as DeepSeek serves it), the time to first token of V3.2 is between a quarter and a
// half of V3's; at 4,096 tokens, below top-k plus the indexer's cost, it is within 10%.
TEST(SparseAttention, LongPromptsPrefillSeveralTimesFaster)
{
    const PresetLibrary presets = builtinPresets().value();
    const auto ttft = [&](const char* model, int context) {
        const Expected<Plan> p = readPlan(std::string(R"({"format": "envelope.plan", "version": 1,
            "model": ")") + model + R"(", "gpu": "h200", "cluster": {"gpus": 8, "gpus_per_node": 8},
            "serving": {"weight_format": "fp8-block", "tp": 1, "ep": 8, "dp_attention": true,
            "concurrency": 8, "context": )" + std::to_string(context) + "}}",
            presets);
        EXPECT_TRUE(p.ok()) << (p ? "" : p.error().toString());
        return estimate(*p).serving.ttftS;
    };
    const double ratio = ttft("deepseek-v3.2", 131072) / ttft("deepseek-v3", 131072);
    EXPECT_GT(ratio, 0.25);
    EXPECT_LT(ratio, 0.5);
    EXPECT_NEAR(ttft("deepseek-v3.2", 4096) / ttft("deepseek-v3", 4096), 1.0, 0.1);
}

} // namespace
} // namespace envelope
