// Serving number formats (issue 23: serving.kv_format, serving.weight_format): each format's
// scales counted as the format defines them, the engines' own 8-bit KV cache, and the plan keys.
// Every expected figure is worked out in the comments from the published layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "estimate/estimate.h"
#include "export/export.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/serving.h"

namespace envelope {
namespace {

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

Expected<Plan> read(const std::string& serving, const std::string& model = "llama-3-70b")
{
    return readPlan(R"({"format": "envelope.plan", "version": 1, "model": ")" + model
            + R"(", "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8}, "serving": )"
            + serving + "}",
        presets());
}

Plan readOrDie(const std::string& serving, const std::string& model = "llama-3-70b")
{
    Expected<Plan> plan = read(serving, model);
    EXPECT_TRUE(bool(plan)) << (plan ? "" : plan.error().toString());
    return plan ? *plan : Plan {};
}

// Llama-3-70B: 80 layers x 8 KV heads x 128, K and V.
constexpr double kLlama70bKvValues = 2.0 * 80 * 8 * 128; // 163,840 values a token

// vLLM's --kv-cache-dtype fp8 stores each value in one byte with one scale per layer (k_scale,
// v_scale): 163,840 B a token, the issue's 163.8 KB. The per-token INT8 layout (LMDeploy,
// KIVI) adds an fp16 scale and zero per head vector: 2 x 80 x 8 x (128 + 4) = 168,960 B.
// NVFP4 stores 4 bits a value and an e4m3 scale per 16: 163,840 x (0.5 + 1/16) = 92,160 B.
TEST(ServingFormats, EachKvFormatCountsItsOwnScales)
{
    EXPECT_DOUBLE_EQ(estimate(readOrDie(R"({"kv_bits": 8})")).serving.kvBytesPerToken, kLlama70bKvValues);
    EXPECT_DOUBLE_EQ(estimate(readOrDie(R"({"kv_bits": 8, "engine": "sglang"})")).serving.kvBytesPerToken,
        kLlama70bKvValues);
    EXPECT_DOUBLE_EQ(estimate(readOrDie(R"({"kv_format": "int8"})")).serving.kvBytesPerToken,
        2.0 * 80 * 8 * (128 + 4));
    // The seeds' generic engine keeps the per-token INT8 it always had.
    EXPECT_DOUBLE_EQ(estimate(readOrDie(R"({"kv_bits": 8, "engine": "generic"})")).serving.kvBytesPerToken,
        168960.0);
    EXPECT_DOUBLE_EQ(estimate(readOrDie(R"({"kv_format": "nvfp4"})")).serving.kvBytesPerToken, 92160.0);
    EXPECT_DOUBLE_EQ(estimate(readOrDie(R"({"kv_format": "int4"})")).serving.kvBytesPerToken,
        2.0 * 80 * 8 * (64 + 4));
    // The result names a quantized cache's format.
    EXPECT_EQ(estimate(readOrDie(R"({"kv_bits": 8})")).serving.kvFormat, "fp8");
}

// Weights: Llama-3-70B's linear layers, by hand from its config (hidden 8192, 64 heads of 128,
// 8 KV heads, FFN 28,672): q and o 8192 x 8192 each, k and v 8192 x 1024 each, gate, up and
// down 8192 x 28,672 each: 855,638,016 a layer, 68,451,041,280 in the 80 layers.
// NVFP4 (an e4m3 scale per 16) against MXFP4 (an e8m0 scale per 32) differ by 1/16 - 1/32 =
// 1/32 B a weight: 2,139,095,040 B on one GPU. FP8 with 128 x 128 block scales (4 B each) is
// 1 + 4 / 16,384 B a weight.
TEST(ServingFormats, EachWeightFormatCountsItsOwnScales)
{
    constexpr double linear = 80.0 * (2 * 8192.0 * 8192 + 2 * 8192.0 * 1024 + 3 * 8192.0 * 28672);
    static_assert(linear == 68'451'041'280.0);
    const auto weights = [](const std::string& serving) {
        return estimate(readOrDie(serving)).serving.weightsBytesPerGpu;
    };
    EXPECT_NEAR(weights(R"({"weight_format": "nvfp4"})") - weights(R"({"weight_format": "mxfp4"})"),
        linear / 32, 1.0);
    EXPECT_NEAR(weights(R"({"weight_format": "fp8-block"})") - weights(R"({"weight_format": "fp8"})"),
        linear * 4 / 16384, 1.0);
    // Per-tensor FP8 against bf16: one byte a linear weight less.
    EXPECT_NEAR(weights(R"({"weight_bits": 16})") - weights(R"({"weight_format": "fp8"})"), linear, 1.0);
    // weight_bits 8 alone stays the group-quantized layout (an fp16 scale and an 8-bit zero
    // per 128: 3 / 128 B a weight above FP8).
    EXPECT_NEAR(weights(R"({"weight_bits": 8})") - weights(R"({"weight_format": "fp8"})"),
        linear * 3 / 128, 1.0);
}

TEST(ServingFormats, PlanKeysSetTheirBitsAndRefuseOthers)
{
    const Plan p = readOrDie(R"({"kv_format": "fp8", "weight_format": "nvfp4"})");
    EXPECT_EQ(p.serving.kvBits, 8);
    EXPECT_EQ(p.serving.weightBits, 4);
    const Expected<Plan> back = readPlan(writePlan(p), presets());
    ASSERT_TRUE(bool(back)) << back.error().toString();
    EXPECT_EQ(*back, p);
    const Expected<Plan> clash = read(R"({"kv_format": "fp8", "kv_bits": 16})");
    ASSERT_FALSE(bool(clash));
    EXPECT_NE(clash.error().toString().find("serving.kv_format"), std::string::npos)
        << clash.error().toString();
    const Expected<Plan> unknown = read(R"({"weight_format": "fp6"})");
    ASSERT_FALSE(bool(unknown));
    EXPECT_NE(unknown.error().toString().find("\"mxfp4\""), std::string::npos);
    // A plan built in code is checked the same way.
    Plan built = p;
    built.serving.kvBits = 16;
    const std::optional<Error> e = validatePlan(built);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->path, "serving.kv_format");
}

// The exports write only what the engine can hold: vLLM's fp8 cache, and a warning (no flag) for
// a per-token INT8 cache it has no dtype for.
TEST(ServingFormats, ExportsWriteTheEnginesOwnCache)
{
    const Plan fp8 = readOrDie(R"({"kv_bits": 8})");
    const std::string text = exportPlan(fp8, estimate(fp8), Engine::Vllm, "meta-llama/Meta-Llama-3-70B").text;
    EXPECT_NE(text.find("--kv-cache-dtype fp8"), std::string::npos) << text;
    const Plan int8 = readOrDie(R"({"kv_format": "int8"})");
    const EngineConfig c = exportPlan(int8, estimate(int8), Engine::Vllm, "meta-llama/Meta-Llama-3-70B");
    EXPECT_EQ(c.text.find("--kv-cache-dtype"), std::string::npos) << c.text;
    EXPECT_TRUE(std::any_of(c.warnings.begin(), c.warnings.end(),
        [](const std::string& w) { return w.find("kv_format \"int8\"") != std::string::npos; }));
}

} // namespace
} // namespace envelope
