// LoRA / QLoRA (training.lora): trainable counts per target from the architecture, the frozen
// base at its bits, adapter-only gradients and optimizer state. Figures worked by hand.
#include <gtest/gtest.h>

#include "estimate/estimate.h"
#include "model/model.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "fixtures.h"
#include "training/lora.h"
#include "training/memory.h"

namespace envelope {
namespace {

using namespace envelope::testing;

LoraConfig qkvo(int rank)
{
    LoraConfig l;
    l.enabled = true;
    l.rank = rank;
    l.targets = LoraConfig::Q | LoraConfig::K | LoraConfig::V | LoraConfig::O;
    return l;
}

TEST(Lora, Seed002QloraTrainableCountIsSixteenMillionNotFour)
{
    // Seed 002: r = 16 on q_proj, k_proj, v_proj, o_proj of Llama-2 7B, "trainable params: ~4M".
    // By hand: each of the four 4096 x 4096 projections gets A (16 x 4096) and B (4096 x 16):
    // 16 x (4096 + 4096) = 131,072; x 4 targets = 524,288 per layer; x 32 layers = 16,777,216
    // (0.25% of 6.74B). ~4M is r = 8 on q and v only: 8 x 8192 x 2 x 32 = 4,194,304.
    EXPECT_DOUBLE_EQ(loraTrainableParams(llama2_7b(), qkvo(16)), 16777216.0);
    LoraConfig qv = qkvo(8);
    qv.targets = LoraConfig::Q | LoraConfig::V;
    EXPECT_DOUBLE_EQ(loraTrainableParams(llama2_7b(), qv), 4194304.0);
}

TEST(Lora, GqaAndGatedFfnTargetsUseTheirOwnWidths)
{
    // Llama-3 8B, r = 8, all seven targets, per layer: q 8 x (4096 + 4096) = 65,536;
    // k and v 8 x (4096 + 1024) = 40,960 each; o 65,536; gate and up 8 x (4096 + 14336) =
    // 147,456 each; down 147,456: 655,360 per layer, x 32 = 20,971,520.
    LoraConfig all;
    all.enabled = true;
    all.rank = 8;
    EXPECT_DOUBLE_EQ(loraParamsPerLayer(llama3_8b(), all, false), 655360.0);
    EXPECT_DOUBLE_EQ(loraTrainableParams(llama3_8b(), all), 20971520.0);
}

TEST(Lora, NormalFloat4BaseWithDoubleQuantization)
{
    // QLoRA sec. 3: NF4 0.5 B + fp32 absmax per 64 weights (4/64 B) = 0.5625 B; double
    // quantization: 8-bit absmax per 64 (1/64 B) + fp32 per 256 absmax (4 / 16384 B).
    LoraConfig l = qkvo(16);
    l.baseBits = 4;
    EXPECT_DOUBLE_EQ(loraBaseBytesPerParam(l), 0.5625);
    l.doubleQuant = true;
    EXPECT_DOUBLE_EQ(loraBaseBytesPerParam(l), 0.5 + 0.015625 + 0.000244140625);
    l.baseBits = 8;
    EXPECT_DOUBLE_EQ(loraBaseBytesPerParam(l), 1.0);
}

TEST(Lora, Seed002QloraMemoryOnOneGpu)
{
    // Llama-2 7B (6,738,415,616 params: embedding and LM head 32000 x 4096 = 131,072,000 each),
    // NF4 + double quantization, adapters r = 16 on q, k, v, o in bf16 mixed (2 + 2 + 12 B).
    const ModelArch arch = llama2_7b();
    const ParamCounts counts = countParameters(arch);
    TrainingConfig c;
    c.lora = qkvo(16);
    c.lora.baseBits = 4;
    c.lora.doubleQuant = true;
    c.recipe.recipe.weightBytes = 2;
    c.recipe.recipe.gradientBytes = 2;
    c.recipe.recipe.masterBytes = 4;
    c.recipe.recipe.momentBytes = 4;
    Cluster one;
    one.gpus = 1;
    const TrainingMemory m = estimateTrainingMemory(arch, counts, c, one, h100());
    // Frozen base: the layers (6,738,415,616 - 262,144,000 embedding and head - 4,096 final norm)
    // x 0.515869140625 B + the embedding, head and final norm 262,148,096 x 2 B.
    const double linear = 6738415616.0 - 262144000.0 - 4096.0;
    EXPECT_NEAR(m.perGpu.weights, linear * 0.515869140625 + 262148096.0 * 2, 1.0); // 3.87 GB
    EXPECT_EQ(m.perGpu.gradients, 0);
    EXPECT_EQ(m.perGpu.optimizer, 0);
    // Adapters: 16,777,216 x (2 + 2 + 4 + 8) = 268,435,456 B (the seed's "50 MB" counts only
    // their bf16 weights: 33.5 MB).
    EXPECT_DOUBLE_EQ(m.perGpu.lora, 16777216.0 * 16);
    EXPECT_DOUBLE_EQ(m.loraTrainableParams, 16777216.0);
}

TEST(Lora, PlanKeyReadsWritesAndNamesBadFields)
{
    const PresetLibrary presets = builtinPresets().value();
    const Expected<Plan> plan = readPlan(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "training": {"lora": {"rank": 16, "alpha": 32, "targets": ["q", "k", "v", "o"],
                              "base_bits": 4, "double_quant": true}}})",
        presets);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_EQ(plan->training.lora, [] {
        LoraConfig l = qkvo(16);
        l.baseBits = 4;
        l.doubleQuant = true;
        return l;
    }());
    const Expected<Plan> again = readPlan(writePlan(*plan), presets);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->training.lora, plan->training.lora);
    const Expected<Plan> bad = readPlan(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "training": {"lora": {"base_bits": 6}}})",
        presets);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().toString().find("training.lora.base_bits"), std::string::npos);
    const Expected<Plan> badTarget = readPlan(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "training": {"lora": {"targets": ["qkv"]}}})",
        presets);
    ASSERT_FALSE(badTarget.ok());
    EXPECT_NE(badTarget.error().toString().find("training.lora.targets"), std::string::npos);
}

} // namespace
} // namespace envelope
