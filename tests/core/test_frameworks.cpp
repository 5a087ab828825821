// Implementation profiles (training.framework / training.loss), the three memory views and
// vLLM's KV accounting, each pinned to a hand calculation written out here.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "estimate/estimate.h"
#include "fixtures.h"
#include "model/model.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/serving.h"
#include "training/activations.h"
#include "training/memory.h"

namespace envelope {
namespace {

using namespace envelope::testing;

constexpr double kGiB = 1073741824.0;

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

TrainingConfig withFramework(const char* id)
{
    TrainingConfig c;
    c.framework = *presets().findFramework(id);
    return c;
}

TEST(Frameworks, EveryProfileNamesItsSourceAndGenericIsTheDefault)
{
    ASSERT_EQ(presets().frameworks.size(), 6u);
    for (const char* id : { "generic", "megatron", "torchtitan", "deepspeed", "hf", "torchtune" }) {
        const FrameworkProfile* p = presets().findFramework(id);
        ASSERT_NE(p, nullptr) << id;
        EXPECT_FALSE(p->source.empty()) << id;
    }
    EXPECT_EQ(TrainingConfig {}.framework.id, "generic");
    const Expected<Plan> plan
        = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm"})", presets());
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->training.framework, *presets().findFramework("generic"));
}

TEST(Frameworks, LossBytesPerLogitByImplementation)
{
    // Eager: forward bf16 logits 2 + fp32 upcast 4 + fp32 log-softmax 4 = 10; the loss backward
    // holds log-softmax 4 + its gradient 4 + the input gradient 4 = 12, the larger.
    EXPECT_DOUBLE_EQ(lossBytesPerLogit(LossKind::Eager, 2), 12);
    // Chunked over 8 chunks: bf16 logits 2 + 12 / 8 = 3.5.
    EXPECT_DOUBLE_EQ(lossBytesPerLogit(LossKind::Chunked, 2), 3.5);
    // Fused (Korthikanti's logits + fp32 copy): 2 + 4 = 6; fp32 activations: 4 + 4 = 8.
    EXPECT_DOUBLE_EQ(lossBytesPerLogit(LossKind::Fused, 2), 6);
    EXPECT_DOUBLE_EQ(lossBytesPerLogit(LossKind::Fused, 4), 8);
}

TEST(Frameworks, TorchtitanPerOpSacKeepsEveryOtherMatmulOutput)
{
    // Llama-3 8B, micro-batch 2 x 8192 tokens, tp 1. Per token and layer, bf16: the block input
    // 4096 x 2 = 8192, q 4096 x 2 = 8192, v 1024 x 2 = 2048, SDPA output 8192 and its fp32
    // log-sum-exp 32 x 4 = 128, the gate output 14336 x 2 = 28672, the down output 8192:
    // 63,616 B; x 16,384 tokens = 1,042,284,544 B.
    TrainingConfig c = withFramework("torchtitan");
    c.microBatch = 2;
    c.seqLen = 8192;
    const ActivationCosts costs = activationCosts(llama3_8b(), c, 2.0);
    EXPECT_DOUBLE_EQ(costs.dense.perOpSac, 63616.0 * 16384);
    // Under "selective" the stage keeps that per layer plus one full layer being rebuilt.
    c.recompute = Recompute::Selective;
    const StageActivation a = stageActivation(costs, c, 0, 1, 32, 0);
    EXPECT_DOUBLE_EQ(a.layers, 32 * 63616.0 * 16384);
    EXPECT_DOUBLE_EQ(a.workingSet, costs.dense.full);
    // Megatron's selective is Korthikanti's: the attention core only (flash: nothing to drop).
    TrainingConfig m = withFramework("megatron");
    m.microBatch = 2;
    m.seqLen = 8192;
    m.recompute = Recompute::Selective;
    const StageActivation sel
        = stageActivation(activationCosts(llama3_8b(), m, 2.0), m, 0, 1, 32, 0);
    EXPECT_DOUBLE_EQ(sel.workingSet, 0);
}

TEST(Frameworks, HfSelectiveIsFullCheckpointingAndEagerKernelsAddTheirCopies)
{
    TrainingConfig c = withFramework("hf");
    c.microBatch = 1;
    c.seqLen = 1;
    c.recompute = Recompute::Selective;
    const ActivationCosts costs = activationCosts(llama3_8b(), c, 2.0);
    const StageActivation a = stageActivation(costs, c, 0, 1, 32, 0);
    // transformers' gradient checkpointing keeps each layer's input only: 4096 x 2 B per token.
    EXPECT_DOUBLE_EQ(a.layers, 32 * 8192.0);
    // Eager kernels, per token: 2 norms x (fp32 upcast 4 B + bf16 normalised 2 B - the bf16
    // input a fused norm keeps 2 B) x 4096 = 32,768; RoPE's fp32 q and k (32 + 8) x 128 x 4 =
    // 20,480; silu(gate) 14336 x 2 = 28,672.
    TrainingConfig g = withFramework("generic");
    g.microBatch = 1;
    g.seqLen = 1;
    EXPECT_DOUBLE_EQ(costs.dense.full - activationCosts(llama3_8b(), g, 2.0).dense.full,
        32768.0 + 20480 + 28672);
}

TEST(Frameworks, AllocatedReservedAndDeviceViews)
{
    // Llama-3 8B on 8 GPUs, FSDP (ZeRO-3), torchtitan's fp32 sharded state 4 + 4 + 8 B/param,
    // mbs 1 x 1024 tokens, full recompute, fixed 2.5 GB, fragmentation 0.1.
    const ModelArch arch = llama3_8b();
    const ParamCounts counts = countParameters(arch);
    TrainingConfig c = withFramework("torchtitan");
    c.recipe.recipe.weightBytes = 4;
    c.recipe.recipe.gradientBytes = 4;
    c.recipe.recipe.masterBytes = 0;
    c.recipe.recipe.momentBytes = 4;
    c.recipe.recipe.activationBytes = 2;
    c.zeroStage = 3;
    c.microBatch = 1;
    c.seqLen = 1024;
    c.recompute = Recompute::Full;
    Cluster cluster;
    cluster.gpus = 8;
    cluster.gpusPerNode = 8;
    Gpu gpu = h100();
    const TrainingMemory m = estimateTrainingMemory(arch, counts, c, cluster, gpu);
    // One layer: attention 4096 x (4096 + 1024 + 1024 + 4096) = 41,943,040, SwiGLU 3 x 4096 x
    // 14336 = 176,160,768, two norms 8192: 218,112,000 params. FSDP all-gathers two of them in
    // bf16: 2 x 218,112,000 x 2 B = 872,448,000 B.
    EXPECT_DOUBLE_EQ(m.bufferBytes, 872448000.0);
    // foreach AdamW temporaries: 4 B x 8,030,261,248 / 8 params = 4,015,130,624 B.
    EXPECT_DOUBLE_EQ(m.optimizerTempBytes, 4.0 * 8030261248.0 / 8);
    const double states = 16.0 * 8030261248.0 / 8;
    const double transient = std::max(m.perGpu.activations + m.bufferBytes, m.optimizerTempBytes);
    EXPECT_NEAR(m.allocatedBytes, states + transient, 1.0);
    EXPECT_NEAR(m.reservedBytes, 1.1 * m.allocatedBytes, 1.0);
    EXPECT_NEAR(m.perGpu.total(), m.reservedBytes + 2.5e9, 1.0);
}

TEST(Frameworks, GenericKeepsTheFormulasWithoutProfile)
{
    // The generic profile adds nothing: total = fixed + 1.1 x (weights + grads + optimizer +
    // activations), allocated is the sum, reserved 1.1 x that.
    const ModelArch arch = llama3_8b();
    TrainingConfig c;
    c.zeroStage = 3;
    Cluster cluster;
    cluster.gpus = 8;
    const TrainingMemory m
        = estimateTrainingMemory(arch, countParameters(arch), c, cluster, h100());
    const MemoryBreakdown& b = m.perGpu;
    const double sum = b.weights + b.gradients + b.optimizer + b.activations;
    EXPECT_EQ(m.bufferBytes, 0);
    EXPECT_EQ(m.optimizerTempBytes, 0);
    EXPECT_DOUBLE_EQ(m.allocatedBytes, sum);
    EXPECT_DOUBLE_EQ(b.overhead, 2.5e9 + 0.1 * sum);
}

TEST(Frameworks, VllmKvPoolByHandForLlama31On80GbH100)
{
    // vLLM 0.19, Llama 3.1 8B, TP 1, gpu_memory_utilization 0.95, max_num_seqs 1024,
    // max_num_batched_tokens 8192. By hand:
    //   torch total 85,029,158,912 B x 0.95                        = 80,777,700,966.4
    //   weights 2 B x 8,030,261,248                                = 16,060,522,496
    //   sampler 1024 x 128,256 x (2 + 4 + 4 + 4) + 8192 x 4096 x 2 = 1,838,678,016 + 67,108,864
    //     = 1,905,786,880 (forward 8192 x (2 x 4096 + 3 x 14336) x 2 = 838,860,800 is smaller)
    //   non-torch at TP 1: 0.25 GiB                                = 268,435,456
    //   KV = 62,542,956,134.4 B = 58.25 GiB (the startup log: 58.11 GiB)
    ServingConfig s;
    s.gpuMemoryUtilization = 0.95;
    Gpu gpu = h100();
    gpu.torchTotalBytes = 85029158912.0;
    const ModelArch arch = llama3_8b();
    const ServingEstimate r = estimateServing(arch, countParameters(arch), s, gpu);
    EXPECT_DOUBLE_EQ(r.forwardPeakBytes, 838860800.0);
    EXPECT_DOUBLE_EQ(r.samplerPeakBytes, 1024.0 * 128256 * 14 + 8192.0 * 4096 * 2);
    EXPECT_DOUBLE_EQ(r.overheadBytes, 0.25 * kGiB);
    EXPECT_NEAR(r.kvBudgetBytes, 62542956134.4, 1.0);
    EXPECT_NEAR(r.kvBudgetBytes / kGiB, 58.11, 0.02 * 58.11);
    // TP 2: the sampler is not divided by TP; non-torch memory is 2.07 GiB (NCCL).
    s.tp = 2;
    const ServingEstimate r2 = estimateServing(arch, countParameters(arch), s, gpu);
    EXPECT_DOUBLE_EQ(r2.samplerPeakBytes, r.samplerPeakBytes);
    EXPECT_DOUBLE_EQ(r2.overheadBytes, 2.07 * kGiB);
}

TEST(Frameworks, BadFrameworkLossAndEngineNameTheField)
{
    const auto error = [](const char* json) {
        const Expected<Plan> plan = readPlan(json, presets());
        return plan.ok() ? std::string() : plan.error().toString();
    };
    EXPECT_NE(
        error(R"({"model": "llama-3-8b", "gpu": "h100-sxm", "training": {"framework": "jax"}})")
            .find("training.framework"),
        std::string::npos);
    EXPECT_NE(
        error(R"({"model": "llama-3-8b", "gpu": "h100-sxm", "training": {"loss": "default"}})")
            .find("training.loss"),
        std::string::npos);
    EXPECT_NE(error(R"({"model": "llama-3-8b", "gpu": "h100-sxm", "serving": {"engine": "tgi"}})")
                  .find("serving.engine"),
        std::string::npos);
    // Round trip: a named framework, loss and engine write back as read.
    const Expected<Plan> plan = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "training": {"framework": "torchtune", "loss": "chunked"},
        "serving": {"engine": "generic", "max_num_seqs": 256}})",
        presets());
    ASSERT_TRUE(plan.ok());
    const Expected<Plan> again = readPlan(writePlan(*plan), presets());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *plan);
    EXPECT_EQ(again->training.effectiveLoss(), LossKind::Chunked);
}

// Measured, not derived: tools/measure_saved_activations.py counted the bytes autograd keeps for
// one transformers-style eager Llama block (torch 1.13, CPU, b 2, s 256, h 512, 8 heads, 2 KV
// heads, FFN 1376, no dropout, no checkpointing; docs/validation-activations.md): 20,385,800 B in
// bf16 and 28,184,584 B in fp32. The bf16 block also keeps the fp32 softmax output (4 x a s^2 b
// = 16 sbh here) beside its bf16 copy; in fp32 the two are one tensor.
TEST(Frameworks, HfEagerLlamaBlockMatchesTheBytesAutogradSaves)
{
    for (const auto& [recipe, measured] :
        { std::pair { "bf16-mixed-16", 20385800.0 }, std::pair { "fp32", 28184584.0 } }) {
        const std::string plan = std::string(R"({"model": {"name": "measured llama block",
            "layers": 1, "hidden": 512, "ffn_hidden": 1376, "ffn": "swiglu", "heads": 8,
            "kv_heads": 2, "head_dim": 64, "vocab": 1024}, "gpu": "h100-sxm",
            "training": {"framework": "hf", "recipe": ")")
            + recipe + R"(", "zero_stage": 0, "micro_batch": 2, "grad_accum": 1,
            "seq_len": 256, "recompute": "none", "flash_attention": false}})";
        const Expected<Plan> p = readPlan(plan, presets());
        ASSERT_TRUE(p.ok()) << p.error().toString();
        const double perLayer = estimate(*p).training.activationBytesPerLayer;
        EXPECT_NEAR(perLayer / measured, 1.0, 0.05) << recipe << ": " << perLayer;
    }
}

} // namespace
} // namespace envelope
