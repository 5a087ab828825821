// A checkpoint's quantization_config as the plan's serving formats (issue 23, mixed per-module
// precision). Each config below is copied, cut to the keys read, from the repository named.
#include <gtest/gtest.h>

#include <string>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/checkpoint.h"

namespace envelope {
namespace {

CheckpointFormats formatsOf(const std::string& config)
{
    const Expected<std::optional<CheckpointFormats>> f = checkpointFormats(config);
    EXPECT_TRUE(bool(f)) << (f ? "" : f.error().toString());
    EXPECT_TRUE(f && f->has_value());
    return f && *f ? **f : CheckpointFormats {};
}

// openai/gpt-oss-20b config.json: transformers' MXFP4 quantizer swaps in only the MoE experts.
TEST(CheckpointFormats, GptOssIsBf16WithMxfp4Experts)
{
    const CheckpointFormats f = formatsOf(R"({"model_type": "gpt_oss", "quantization_config": {
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
            "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"}})");
    EXPECT_EQ(f.weightFormat, WeightFormat::Bf16);
    EXPECT_EQ(f.weightBits, 16);
    EXPECT_EQ(f.expertWeightFormat, std::optional(WeightFormat::Mxfp4));
    EXPECT_FALSE(f.attentionWeightFormat.has_value());
    EXPECT_NE(f.reason.find("self_attn"), std::string::npos) << f.reason;
}

// moonshotai/Kimi-K2-Thinking config.json: compressed-tensors pack-quantized INT4, symmetric,
// group 32, ignoring attention, the shared experts and the dense layers' MLP.
TEST(CheckpointFormats, KimiK2ThinkingIsBf16WithInt4Experts)
{
    const CheckpointFormats f = formatsOf(R"({"model_type": "kimi_k2", "quantization_config": {
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4,
            "type": "int", "strategy": "group", "group_size": 32, "symmetric": true}}},
        "format": "pack-quantized", "quant_method": "compressed-tensors",
        "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
            "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]}})");
    EXPECT_EQ(f.weightFormat, WeightFormat::Bf16);
    EXPECT_EQ(f.expertWeightFormat, std::optional(WeightFormat::Int4));
    EXPECT_EQ(f.quantGroupSize, 32);
    EXPECT_FALSE(f.attentionWeightFormat.has_value()); // with the rest, in bf16
    const nlohmann::ordered_json keys = checkpointServingKeys(f);
    EXPECT_EQ(keys.dump(), R"({"weight_format":"bf16","weight_bits":16,"quant_group_size":32,"expert_weight_format":"int4"})");
}

// RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic config.json (nested under text_config's
// parent): FP8 per-channel weights, the language model's q, k, v, o and routers ignored, with
// the vision tower's layers.
TEST(CheckpointFormats, Llama4Fp8KeepsAttentionInBf16)
{
    const CheckpointFormats f = formatsOf(R"({"model_type": "llama4", "text_config": {},
        "quantization_config": {"config_groups": {"group_0": {"targets": ["Linear"],
            "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
        "format": "float-quantized", "quant_method": "compressed-tensors",
        "ignore": ["vision_model.model.layers.0.self_attn.q_proj", "multi_modal_projector.linear_1",
            "language_model.model.layers.0.self_attn.q_proj", "language_model.model.layers.0.feed_forward.router",
            "language_model.lm_head"]}})");
    EXPECT_EQ(f.weightFormat, WeightFormat::Fp8);
    EXPECT_EQ(f.weightBits, 8);
    EXPECT_EQ(f.attentionWeightFormat, std::optional(WeightFormat::Bf16));
    EXPECT_FALSE(f.expertWeightFormat.has_value());
}

// moonshotai/Kimi-K2-Instruct (DeepSeek's fp8 with 128 x 128 blocks) and MiniMaxAI/MiniMax-M2
// (the same, its router gate and LM head left out): every linear layer in fp8-block.
TEST(CheckpointFormats, BlockFp8EverywhereWhenOnlyRoutersAreKept)
{
    for (const char* config :
        { R"({"quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
              "quant_method": "fp8", "weight_block_size": [128, 128]}})",
            R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
              "modules_to_not_convert": ["gate", "e_score_correction_bias", "lm_head"]}})" }) {
        const CheckpointFormats f = formatsOf(config);
        EXPECT_EQ(f.weightFormat, WeightFormat::Fp8Block) << config;
        EXPECT_FALSE(f.attentionWeightFormat || f.expertWeightFormat) << config;
    }
}

// An AWQ checkpoint (TheBloke/Llama-2-70B-AWQ's quant_config: 4 bits, group 128): the
// group-quantized layout of the plan's weight_bits and quant_group_size.
TEST(CheckpointFormats, AwqIsTheGroupLayout)
{
    const CheckpointFormats f = formatsOf(
        R"({"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true}})");
    EXPECT_EQ(f.weightFormat, WeightFormat::Auto);
    EXPECT_EQ(f.weightBits, 4);
    EXPECT_EQ(f.quantGroupSize, 128);
}

TEST(CheckpointFormats, NoConfigIsSixteenBitAndUnknownMethodsNameTheField)
{
    const auto none = checkpointFormats(R"({"model_type": "qwen3"})");
    ASSERT_TRUE(bool(none));
    EXPECT_FALSE(none->has_value());
    const auto bitnet = checkpointFormats(R"({"quantization_config": {"quant_method": "bitnet"}})");
    ASSERT_FALSE(bool(bitnet));
    EXPECT_EQ(bitnet.error().path, "quantization_config.quant_method");
    const auto fp6 = checkpointFormats(R"({"quantization_config": {"quant_method": "compressed-tensors",
        "config_groups": {"g": {"weights": {"num_bits": 6, "type": "float"}}}}})");
    ASSERT_FALSE(bool(fp6));
    EXPECT_EQ(fp6.error().path, "quantization_config.config_groups.g.weights");
    for (const char* hostile : { "[", "{\"quantization_config\": 3}", "[1, 2]" })
        EXPECT_FALSE(bool(checkpointFormats(hostile))) << hostile;
}

// The keys a config gives, merged into a plan, size gpt-oss-20b as its model card does (Table 1:
// 12.8 GiB checkpoint).
TEST(CheckpointFormats, KeysMergeIntoAPlanThatSizesTheShippedCheckpoint)
{
    const CheckpointFormats f = formatsOf(R"({"quantization_config": {"quant_method": "mxfp4",
        "modules_to_not_convert": ["model.layers.*.self_attn"]}})");
    nlohmann::ordered_json plan = { { "format", "envelope.plan" }, { "version", 1 },
        { "model", "gpt-oss-20b" }, { "gpu", "h100-sxm" }, { "cluster", { { "gpus", 1 } } } };
    plan["serving"] = checkpointServingKeys(f);
    const Expected<Plan> p = readPlan(plan.dump(), builtinPresets().value());
    ASSERT_TRUE(bool(p)) << p.error().toString();
    EXPECT_NEAR(estimate(*p).serving.weightsBytesPerGpu / (1024.0 * 1024 * 1024), 12.8, 0.05);
}

} // namespace
} // namespace envelope
