// Serving number formats (issue 23: serving.kv_format, serving.weight_format): each format's
// scales counted as the format defines them, the engines' own 8-bit KV cache, and the plan keys.
// Every expected figure is worked out in the comments from the published layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "estimate/estimate.h"
#include "export/export.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/serving.h"
#include "ops/ops.h"

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


// Mixed checkpoints (serving.attention_weight_format, serving.expert_weight_format). OpenAI's
// gpt-oss model card (Aug 2025), Table 1, gives the shipped checkpoints -- routed experts in
// MXFP4, everything else in bf16 -- as 60.8 GiB (gpt-oss-120b) and 12.8 GiB (gpt-oss-20b).
// By hand: 120b has 36 layers x 128 experts x 3 x 2880^2 = 114,661,785,600 expert weights at
// 0.5 + 1/32 B = 60,914,073,600 B; the other 116,829,156,672 - 114,661,785,600 =
// 2,167,371,072 params (attention, router, embeddings, biases, norms) at 2 B = 4,334,742,144 B;
// 65,248,815,744 B = 60.77 GiB. 20b: 24 x 32 x 3 x 2880^2 = 19,110,297,600 at 17/32 B =
// 10,152,345,600 B plus (20,914,757,184 - 19,110,297,600) x 2 = 3,608,919,168 B: 12.82 GiB.
// (The experts' biases ship in bf16 but are counted with the experts here: 40 M params,
// 0.06 GB on 120b.)
TEST(ServingFormats, GptOssCheckpointsShipExpertsInMxfp4AndTheRestInBf16)
{
    constexpr double gib = 1024.0 * 1024 * 1024;
    const auto total = [](const char* model, const std::string& serving) {
        const Plan p = readOrDie(serving, model);
        const ServingWeights w = servingWeights(
            countParameters(p.model.arch), p.model.arch.layers, p.serving, 1);
        return w.totalBytes;
    };
    const std::string shipped = R"({"weight_format": "bf16", "expert_weight_format": "mxfp4"})";
    const double oss120 = total("gpt-oss-120b", shipped);
    const double oss20 = total("gpt-oss-20b", shipped);
    EXPECT_NEAR(oss120, 114661785600.0 * 17 / 32 + 2167371072.0 * 2, 0.12e9); // bias share
    EXPECT_NEAR(oss120 / gib, 60.8, 0.1);
    EXPECT_NEAR(oss20, 19110297600.0 * 17 / 32 + 1804459584.0 * 2, 0.03e9);
    EXPECT_NEAR(oss20 / gib, 12.8, 0.05);
    // The model card: "gpt-oss-120b ... fit[s] on a single 80GB GPU". In bf16 throughout it is
    // 233.7 GB; with MXFP4 everywhere the attention too would be 4-bit:
    // 0.956e9 attention weights x (2 - 17/32) B = 1.40 GB less than the shipped checkpoint.
    EXPECT_NEAR(total("gpt-oss-120b", R"({"weight_format": "bf16"})"), 2 * 116829156672.0, 1.0);
    const double attention = 36 * (2880.0 * 64 * 64 + 2 * 2880.0 * 8 * 64 + 64 * 64 * 2880.0
                                      + 64 * 64 + 2 * 8 * 64 + 2880 + 64); // q, k, v, o, biases, sinks
    EXPECT_NEAR(oss120 - total("gpt-oss-120b", R"({"weight_format": "mxfp4"})"),
        (attention + 36 * (128 * 2880.0 + 128)) * (2 - 17.0 / 32), 1e3); // + the router
    // One 80 GB H100 holds the shipped checkpoint, not the bf16 one.
    const Plan one = readOrDie(shipped, "gpt-oss-120b");
    Plan onGpu = one;
    onGpu.cluster.gpus = 1;
    onGpu.serving.concurrency = 1;
    onGpu.serving.context = 8192;
    EXPECT_TRUE(estimate(onGpu).serving.fitsWeights);
    onGpu.serving.expertWeightFormat.reset();
    EXPECT_FALSE(estimate(onGpu).serving.fitsWeights);
}

// Llama 4 Scout FP8 (RedHatAI's compressed-tensors checkpoint, whose config.json ignores every
// layer's q, k, v and o projections): FFN and experts in FP8, attention in bf16. Scout's
// attention: 48 layers x (q 5120 x 5120 + k, v 5120 x 1024 each + o 5120 x 5120) =
// 48 x 62,914,560 = 3,019,898,880 weights, one byte each above per-tensor FP8.
TEST(ServingFormats, AttentionKeptInBf16CostsOneByteAnAttentionWeight)
{
    const auto weights = [](const std::string& serving) {
        const Plan p = readOrDie(serving, "llama-4-scout");
        return servingWeights(countParameters(p.model.arch), p.model.arch.layers, p.serving, 1).totalBytes;
    };
    EXPECT_NEAR(weights(R"({"weight_format": "fp8", "attention_weight_format": "bf16"})")
            - weights(R"({"weight_format": "fp8"})"),
        48 * 62914560.0, 1.0);
    // "same" is the default and writes nothing.
    EXPECT_EQ(weights(R"({"weight_format": "fp8", "attention_weight_format": "same"})"),
        weights(R"({"weight_format": "fp8"})"));
    // Kimi K2 Thinking's experts: INT4 with a scale per 32 (compressed-tensors
    // pack-quantized, group_size 32), counted as the GPTQ layout: 0.5 + 2.5 / 32 B a weight.
    const Plan kimi = readOrDie(R"({"weight_format": "bf16", "expert_weight_format": "int4",
        "quant_group_size": 32})", "kimi-k2");
    const ServingWeights w = servingWeights(countParameters(kimi.model.arch), kimi.model.arch.layers, kimi.serving, 1);
    EXPECT_DOUBLE_EQ(w.bytesPerExpert, 0.5 + 2.5 / 32);
    EXPECT_DOUBLE_EQ(w.bytesPerQuantized, 2.0);
    EXPECT_EQ(kimi.serving.weightBits, 16); // the experts' format does not set weight_bits
}

TEST(ServingFormats, ModuleGroupFormatsRoundTripAndRefuseAuto)
{
    const Plan p = readOrDie(R"({"weight_format": "bf16", "attention_weight_format": "fp8",
        "expert_weight_format": "mxfp4"})", "gpt-oss-20b");
    ASSERT_TRUE(p.serving.attentionWeightFormat && p.serving.expertWeightFormat);
    EXPECT_EQ(*p.serving.attentionWeightFormat, WeightFormat::Fp8);
    EXPECT_EQ(*p.serving.expertWeightFormat, WeightFormat::Mxfp4);
    const std::string written = writePlan(p);
    EXPECT_NE(written.find(R"("expert_weight_format": "mxfp4")"), std::string::npos) << written;
    const Expected<Plan> back = readPlan(written, presets());
    ASSERT_TRUE(bool(back)) << back.error().toString();
    EXPECT_EQ(*back, p);
    for (const char* bad : { R"({"expert_weight_format": "auto"})", R"({"attention_weight_format": 4})",
             R"({"expert_weight_format": "fp6"})" }) {
        const Expected<Plan> e = read(bad, "gpt-oss-20b");
        ASSERT_FALSE(bool(e)) << bad;
        EXPECT_NE(e.error().toString().find("\"same\" (serving.weight_format)"), std::string::npos)
            << e.error().toString();
        EXPECT_NE(e.error().toString().find("_weight_format"), std::string::npos) << e.error().toString();
    }
    // The text report names both formats.
    EXPECT_EQ(servingWeightFormatText(p.serving),
        "bf16 weights with attention in fp8 and experts in mxfp4");
}

// The decode step times each module group's GEMMs in its own format: on B200 (kernel tables
// with NVFP4 GEMMs) the MXFP4 experts run the FP4 GEMM and the bf16 attention the bf16 one; on
// H100 (no FP4 tensor cores) the experts dequantize into bf16 matmuls (int4 weight-only).
TEST(ServingFormats, EachModuleGroupRunsItsOwnGemm)
{
    const auto dtypes = [](const char* gpu) {
        const Expected<Plan> p = readPlan(std::string(R"({"format": "envelope.plan", "version": 1,
            "model": "gpt-oss-20b", "gpu": ")") + gpu + R"(", "cluster": {"gpus": 1},
            "serving": {"weight_format": "bf16", "expert_weight_format": "mxfp4"}})",
            presets());
        EXPECT_TRUE(bool(p)) << (p ? "" : p.error().toString());
        const InferenceLayout l = servingInferenceLayout(p->model.arch, p->serving, p->gpu.gpu);
        std::map<std::string, GemmDtype> byName;
        for (const Op& op : decodeStepOps(p->model.arch, l, 8, 1024))
            if (op.cls == OpClass::Gemm)
                byName[op.name] = op.dtype;
        return byName;
    };
    const auto b200 = dtypes("b200");
    EXPECT_EQ(b200.at("experts up"), GemmDtype::Nvfp4);
    EXPECT_EQ(b200.at("experts down"), GemmDtype::Nvfp4);
    EXPECT_EQ(b200.at("qkv"), GemmDtype::Bf16);
    EXPECT_EQ(b200.at("o"), GemmDtype::Bf16);
    const auto h100 = dtypes("h100-sxm");
    EXPECT_EQ(h100.at("experts up"), GemmDtype::Int4WeightOnly);
    EXPECT_EQ(h100.at("qkv"), GemmDtype::Bf16);
}

} // namespace
} // namespace envelope
