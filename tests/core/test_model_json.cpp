// The architecture JSON: defaults, round trips, overrides, bare counts and field-level errors.
#include <gtest/gtest.h>

#include "model/arch_json.h"

namespace envelope {
namespace {

using nlohmann::json;

const json kLlama2_7b = json::parse(R"({"name": "Llama-2 7B", "layers": 32, "hidden": 4096,
    "ffn_hidden": 11008, "heads": 32, "vocab": 32000, "max_positions": 4096})");

TEST(ModelJson, MissingKeysTakeTheDocumentedDefaults)
{
    const auto a = archFromJson(json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32,
        "vocab": 32000})"),
        "model");
    ASSERT_TRUE(a.ok()) << a.error().toString();
    EXPECT_EQ(a->kvHeads, 32);
    EXPECT_EQ(a->headDim, 128); // 4096 / 32
    EXPECT_EQ(a->ffnHidden, 11008); // 8/3 x 4096 = 10922.7, rounded to 43 x 256
    EXPECT_EQ(a->ffn, FfnKind::Gated);
    EXPECT_EQ(a->norm, NormKind::RmsNorm);
    EXPECT_FALSE(a->tiedEmbeddings);
    EXPECT_FALSE(a->moe.has_value());
    EXPECT_EQ(a->dropout, 0.0);
    // Same shape as Llama-2-7B, so the same published total (6,738,415,616).
    EXPECT_EQ(countParameters(*a).total, 6'738'415'616.0);
}

TEST(ModelJson, PlainFfnDefaultsToFourTimesHidden)
{
    const auto a = archFromJson(json::parse(R"({"layers": 12, "hidden": 768, "heads": 12,
        "vocab": 50257, "ffn": "gelu"})"),
        "model");
    ASSERT_TRUE(a.ok()) << a.error().toString();
    EXPECT_EQ(a->ffn, FfnKind::Plain);
    EXPECT_EQ(a->ffnHidden, 3072);
}

TEST(ModelJson, FullObjectRoundTripsWithMoeAndMla)
{
    const json text = json::parse(R"({"name": "DeepSeek-V3", "layers": 61, "hidden": 7168,
        "ffn_hidden": 18432, "ffn": "swiglu", "heads": 128, "kv_heads": 128, "head_dim": 128,
        "vocab": 129280, "tied_embeddings": false, "norm": "rmsnorm", "qkv_bias": false,
        "linear_bias": false, "max_positions": 163840, "learned_positions": false,
        "dropout": 0.0, "sliding_window": 0,
        "moe": {"experts": 256, "top_k": 8, "shared_experts": 1, "expert_ffn_hidden": 2048,
                "dense_layers": 3, "router_bias": true},
        "mla": {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                "qk_nope_head_dim": 128, "v_head_dim": 128}})");
    const auto a = archFromJson(text, "model");
    ASSERT_TRUE(a.ok()) << a.error().toString();
    EXPECT_EQ(a->moe->sharedExperts, 1);
    EXPECT_EQ(a->mla->kvLoraRank, 512);
    const json written = archToJson(*a);
    EXPECT_EQ(written["ffn"], "gated"); // the alias is written in its canonical form
    const auto again = archFromJson(written, "model");
    ASSERT_TRUE(again.ok()) << again.error().toString();
    EXPECT_EQ(*again, *a);
}

TEST(ModelJson, ArchToJsonWritesEveryKeyAndMoeMlaOnlyWhenPresent)
{
    const auto a = archFromJson(kLlama2_7b, "model");
    ASSERT_TRUE(a.ok());
    const json j = archToJson(*a);
    for (const char* key : { "name", "layers", "hidden", "ffn_hidden", "ffn", "heads", "kv_heads",
             "head_dim", "vocab", "tied_embeddings", "norm", "qkv_bias", "linear_bias",
             "max_positions", "learned_positions", "dropout", "sliding_window" })
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_FALSE(j.contains("moe"));
    EXPECT_FALSE(j.contains("mla"));
    EXPECT_EQ(*archFromJson(j, "model"), *a);
}

TEST(ModelJson, OverridesChangeOnlyTheStatedKeysAndRederiveDefaults)
{
    const ModelArch base = *archFromJson(kLlama2_7b, "model");
    const auto a = applyArchOverrides(
        base, json::parse(R"({"preset": "llama-2-7b", "layers": 16, "heads": 16})"), "model");
    ASSERT_TRUE(a.ok()) << a.error().toString();
    EXPECT_EQ(a->layers, 16);
    EXPECT_EQ(a->heads, 16);
    EXPECT_EQ(a->kvHeads, 16); // base was MHA
    EXPECT_EQ(a->headDim, 256); // 4096 / 16, base had the derived head dim
    EXPECT_EQ(a->ffnHidden, 11008);
    EXPECT_EQ(a->name, "Llama-2 7B");
    // Adding MoE by override builds on the base's FFN width.
    const auto m
        = applyArchOverrides(base, json::parse(R"({"moe": {"experts": 8, "top_k": 2}})"), "model");
    ASSERT_TRUE(m.ok()) << m.error().toString();
    EXPECT_EQ(m->moe->expertFfnHidden, 11008);
    const auto removed = applyArchOverrides(*m, json::parse(R"({"moe": null})"), "model");
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, base);
}

TEST(ModelJson, BareParameterCountGivesAStandardShapeWithTheExactCount)
{
    const auto a = paramsModelFromJson(json::parse(R"({"params": 7e9})"), "model");
    ASSERT_TRUE(a.ok()) << a.error().toString();
    EXPECT_EQ(countParameters(*a).total, 7e9);
    EXPECT_EQ(a->hidden, 4096);
    const auto b = paramsModelFromJson(
        json::parse(R"({"params": 1.3e10, "layers": 40, "hidden": 5120, "heads": 40,
            "vocab": 50000, "name": "my 13B"})"),
        "model");
    ASSERT_TRUE(b.ok()) << b.error().toString();
    EXPECT_EQ(b->layers, 40);
    EXPECT_EQ(b->hidden, 5120);
    EXPECT_EQ(b->heads, 40);
    EXPECT_EQ(b->vocab, 50000);
    EXPECT_EQ(b->name, "my 13B");
    const json j = paramsModelToJson(*b);
    EXPECT_EQ(j["params"], 1.3e10);
    EXPECT_EQ(*paramsModelFromJson(j, "model"), *b);
}

struct BadJson {
    const char* text;
    const char* error;
};

TEST(ModelJson, BadArchitecturesNameThePathAndTheAllowedRange)
{
    const BadJson cases[] = {
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000, "colour": 1})",
            "model: unknown key(s) colour; allowed: attention_chunk attention_output_gate "
            "attention_pattern attention_sinks dropout ffn ffn_hidden head_dim heads hidden "
            "kv_heads layers learned_positions linear_attention linear_bias max_positions mla moe "
            "mtp_layers name norm partial_rotary_factor qk_norm qkv_bias rope_scaling rope_theta "
            "sandwich_norms sliding_window tied_embeddings "
            "vision_params vocab" },
        { R"({"hidden": 4096, "heads": 32, "vocab": 32000})", "model.layers: is required" },
        { R"({"layers": "32", "hidden": 4096, "heads": 32, "vocab": 32000})",
            "model.layers: must be an integer in 1..1000, got \"32\"" },
        { R"({"layers": 32.5, "hidden": 4096, "heads": 32, "vocab": 32000})",
            "model.layers: must be an integer in 1..1000, got 32.5" },
        { R"({"layers": -3, "hidden": 4096, "heads": 32, "vocab": 32000})",
            "model.layers: must be an integer in 1..1000, got -3" },
        { R"({"layers": 32, "hidden": 1e12, "heads": 32, "vocab": 32000})",
            "model.hidden: must be an integer in 1..1000000, got 1000000000000.0" },
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 5, "vocab": 32000})",
            "model.kv_heads: must divide heads (32), got 5" },
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000, "dropout": 1.5})",
            "model.dropout: must be a probability in [0, 1), got 1.5" },
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000, "norm": "batchnorm"})",
            "model.norm: must be \"rmsnorm\" or \"layernorm\", got \"batchnorm\"" },
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000, "qkv_bias": 1})",
            "model.qkv_bias: must be true or false, got 1" },
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000,
            "moe": {"experts": 8, "top_k": 9}})",
            "model.moe.top_k: must be 1..experts (8), got 9" },
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000, "moe": {"top_k": 2}})",
            "model.moe.experts: is required" },
        { R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000,
            "mla": {"kv_lora_rank": 512, "rank": 1}})",
            "model.mla: unknown key(s) rank; allowed: index_head_dim index_heads index_topk "
            "kv_lora_rank q_lora_rank qk_nope_head_dim qk_rope_head_dim v_head_dim" },
        { R"([1, 2])", "model: must be an architecture object, got [1,2]" },
    };
    for (const BadJson& c : cases) {
        SCOPED_TRACE(c.text);
        const auto a = archFromJson(json::parse(c.text), "model");
        ASSERT_FALSE(a.ok());
        EXPECT_EQ(a.error().toString(), c.error);
    }
}

TEST(ModelJson, BadBareCountsAndOverridesNameThePath)
{
    const BadJson params[] = {
        { R"({"params": -7})", "model.params: must be a parameter count in 1e6..1e15, got -7" },
        { R"({"params": "7B"})",
            "model.params: must be a parameter count in 1e6..1e15, got \"7B\"" },
        { R"({"params": 7e9, "hidden": 4096, "heads": 30})",
            "model.hidden: must be a multiple of heads (30), got 4096" },
        { R"({"params": 7e9, "depth": 3})",
            "model: unknown key(s) depth; allowed: heads hidden layers name params vocab" },
        { R"({"layers": 3})", "model.params: is required" },
    };
    for (const BadJson& c : params) {
        SCOPED_TRACE(c.text);
        const auto a = paramsModelFromJson(json::parse(c.text), "model");
        ASSERT_FALSE(a.ok());
        EXPECT_EQ(a.error().toString(), c.error);
    }
    const ModelArch base = *archFromJson(kLlama2_7b, "model");
    const auto bad = applyArchOverrides(base, json::parse(R"({"kv_heads": 3})"), "model");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().toString(), "model.kv_heads: must divide heads (32), got 3");
    const auto unknown = applyArchOverrides(base, json::parse(R"({"layer": 3})"), "model");
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().path, "model");
}

// Issue 25: the rotary positions an engine export needs, in HF's names. Values as in
// deepseek-ai/DeepSeek-V3's config.json (rope_theta 10000; YaRN factor 40 over 4096 positions,
// mscale and mscale_all_dim 1, betas 32 and 1).
TEST(ModelJson, RotaryPositionsReadWriteAndRefuseWhatNoEngineMeans)
{
    json object = kLlama2_7b;
    object["rope_theta"] = 10000;
    object["partial_rotary_factor"] = 0.5;
    object["rope_scaling"] = json::parse(R"({"type": "yarn", "factor": 40,
        "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
        "mscale": 1.0, "mscale_all_dim": 1.0})");
    const auto a = archFromJson(object, "model");
    ASSERT_TRUE(a.ok()) << a.error().toString();
    EXPECT_EQ(a->ropeTheta, 10000.0);
    EXPECT_EQ(a->ropeFraction, 0.5);
    ASSERT_TRUE(a->ropeScaling.has_value());
    EXPECT_EQ(a->ropeScaling->kind, RopeScalingKind::Yarn);
    EXPECT_EQ(a->ropeScaling->factor, 40.0);
    EXPECT_EQ(a->ropeScaling->originalPositions, 4096);
    EXPECT_EQ(a->ropeScaling->mscaleAllDim, 1.0);
    EXPECT_FALSE(a->ropeScaling->lowFreqFactor.has_value());
    // Written back as read; a round trip is the identity.
    const json written = archToJson(*a);
    EXPECT_EQ(written["rope_scaling"], object["rope_scaling"]);
    EXPECT_EQ(archFromJson(written, "model").value(), *a);
    // Not stated: nothing written, and no estimate changes.
    const auto plain = archFromJson(kLlama2_7b, "model");
    EXPECT_FALSE(archToJson(*plain).contains("rope_theta"));
    EXPECT_FALSE(archToJson(*plain).contains("rope_scaling"));
    EXPECT_EQ(countParameters(*a).total, countParameters(*plain).total);
    // An override replaces the scaling; null removes it.
    const auto llama31 = applyArchOverrides(*a, json::parse(R"({"rope_theta": 500000,
        "rope_scaling": {"type": "llama3", "factor": 8, "low_freq_factor": 1,
        "high_freq_factor": 4, "original_max_position_embeddings": 8192}})"),
        "model");
    ASSERT_TRUE(llama31.ok()) << llama31.error().toString();
    EXPECT_EQ(llama31->ropeScaling->kind, RopeScalingKind::Llama3);
    EXPECT_FALSE(llama31->ropeScaling->mscale.has_value());
    EXPECT_FALSE(applyArchOverrides(*a, json::parse(R"({"rope_scaling": null})"), "model")
                     ->ropeScaling.has_value());
    // Errors name the key and the allowed values.
    const std::pair<const char*, const char*> bad[] = {
        { R"({"rope_theta": -1})", "model.rope_theta: must be a number in 0..1000000000000" },
        { R"({"partial_rotary_factor": 0})", "model.partial_rotary_factor: must be a fraction" },
        { R"({"rope_scaling": {"type": "dynamic", "factor": 2}})",
            "model.rope_scaling.type: must be \"llama3\", \"yarn\" or \"linear\"" },
        { R"({"rope_scaling": {"type": "yarn"}})", "model.rope_scaling.factor: is required" },
        { R"({"rope_scaling": {"type": "yarn", "factor": 0.5}})",
            "model.rope_scaling.factor: must be a number in 1..1000000" },
        { R"({"rope_scaling": {"type": "yarn", "factor": 4, "rope_type": "yarn"}})",
            "model.rope_scaling: unknown key(s) rope_type" },
    };
    for (const auto& [text, message] : bad) {
        SCOPED_TRACE(text);
        const auto e = applyArchOverrides(*plain, json::parse(text), "model");
        ASSERT_FALSE(e.ok());
        EXPECT_NE(e.error().toString().find(message), std::string::npos) << e.error().toString();
    }
}

} // namespace
} // namespace envelope
