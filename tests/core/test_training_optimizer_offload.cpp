// Issue 24, training features that were not expressible: bitsandbytes 8-bit and paged
// optimizers, the optimizer step fused into the backward (torchtune optimizer_in_bwd), and
// activation offloading (torchtune enable_activation_offloading, Megatron --cpu-offloading).
// Each figure is a hand calculation written out here from the sources' own numbers, or a
// published measurement (torchtune README @ bd2a0fc, "Optimization flags").
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "estimate/estimate.h"
#include "export/export.h"
#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope {
namespace {

constexpr double kGiB = 1073741824.0;

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

Plan plan(const std::string& json)
{
    const Expected<Plan> p = readPlan(json, presets());
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().toString());
    return p.ok() ? *p : Plan {};
}

std::string readError(const std::string& json)
{
    const Expected<Plan> p = readPlan(json, presets());
    return p.ok() ? std::string("(read)") : p.error().toString();
}

Estimate explained(const Plan& p)
{
    EstimateOptions o;
    o.explain = true;
    return estimate(p, o);
}

const Explanation* findExplain(const Estimate& e, const std::string& figure)
{
    for (const Explanation& entry : e.explain)
        if (entry.figure == figure)
            return &entry;
    return nullptr;
}

// torchtune's "Optimization flags" table (README @ bd2a0fc): Llama 3.2 3B, one A100 80GB, pure
// bf16, packed 4096 x batch 2, compile, chunked CE, full activation checkpointing.
// Llama 3.2 3B's parameters (meta-llama/Llama-3.2-3B config.json, tied embeddings):
//   embedding 128256 x 3072                                     =   394,002,432
//   one layer: q, o 3072 x 3072 (2 x 9,437,184) + k, v 3072 x 1024 (2 x 3,145,728)
//              + gate, up, down 3 x 3072 x 8192 (75,497,472) + 2 norms x 3072
//                                                               =   100,669,440
//   28 layers                                                   = 2,818,744,320
//   + embedding + final norm 3072                               = 3,212,749,824
constexpr double kParams = 3'212'749'824.0;
constexpr double kEmbedding = 128256.0 * 3072.0; // 394,002,432: the largest tensor

std::string torchtune3b(const std::string& extra, const std::string& gpu = R"("a100-80gb")")
{
    return std::string(R"({"model": {"name": "Llama 3.2 3B", "layers": 28, "hidden": 3072,
        "ffn_hidden": 8192, "ffn": "gated", "heads": 24, "kv_heads": 8, "head_dim": 128,
        "vocab": 128256, "tied_embeddings": true, "dropout": 0}, "gpu": )")
        + gpu + R"(, "cluster": {"gpus": 1, "gpus_per_node": 1},
        "training": {"framework": "torchtune", "recipe": "bf16-pure", "micro_batch": 2,
        "grad_accum": 1, "seq_len": 4096, "recompute": "full", "compile": true,
        "loss": "chunked")"
        + extra + "}}";
}

// ---- 1. bitsandbytes 8-bit and paged optimizers ---------------------------------------------

TEST(BnbOptimizers, StateBytesPerParamFollowTheOptimizerNotTheRecipe)
{
    Recipe bf16Moments; // bf16-pure: 2 B per moment
    bf16Moments.momentBytes = 2;
    // AdamW: 2 moments x 2 B = 4 B.
    EXPECT_DOUBLE_EQ(optimizerStateBytesPerParam(bf16Moments, OptimizerKind::AdamW), 4.0);
    // bitsandbytes Optimizer2State.init_state, optim_bits 8: uint8 state1 and state2, each with
    // one fp32 absmax per 256 elements (blocksize 256 since 0.44.0):
    // 2 x (1 + 4 / 256) = 2 x 1.015625 = 2.03125 B, whatever the recipe's moment width.
    EXPECT_DOUBLE_EQ(optimizerStateBytesPerParam(bf16Moments, OptimizerKind::AdamW8bit), 2.03125);
    EXPECT_DOUBLE_EQ(
        optimizerStateBytesPerParam(bf16Moments, OptimizerKind::PagedAdamW8bit), 2.03125);
    // PagedAdamW (optim_bits 32): fp32 state1 and state2 = 2 x 4 = 8 B, even over bf16 params.
    EXPECT_DOUBLE_EQ(optimizerStateBytesPerParam(bf16Moments, OptimizerKind::PagedAdamW), 8.0);
    // A custom recipe's optimizer bytes are used as given, whatever the optimizer.
    Recipe custom;
    custom.optimizerBytes = 6.0;
    EXPECT_DOUBLE_EQ(optimizerStateBytesPerParam(custom, OptimizerKind::AdamW8bit), 6.0);
    EXPECT_TRUE(pagedOptimizer(OptimizerKind::PagedAdamW));
    EXPECT_TRUE(pagedOptimizer(OptimizerKind::PagedAdamW8bit));
    EXPECT_FALSE(pagedOptimizer(OptimizerKind::AdamW8bit));
}

TEST(BnbOptimizers, EightBitStateOfLlama32_3b)
{
    const Estimate adamw = estimate(plan(torchtune3b("")));
    const Estimate eightBit = estimate(plan(torchtune3b(R"(, "optimizer": "adamw-8bit")")));
    // bf16-pure has no master copy: the optimizer tenant is the moments alone.
    // AdamW bf16: 3,212,749,824 x 4 = 12,850,999,296 B.
    EXPECT_DOUBLE_EQ(adamw.training.perGpu.optimizer, kParams * 4);
    EXPECT_DOUBLE_EQ(adamw.training.perGpu.optimizer, 12'850'999'296.0);
    // 8-bit: 3,212,749,824 x 2.03125 = 6,425,499,648 + 100,398,432 (the absmax scales)
    //        = 6,525,898,080 B.
    EXPECT_DOUBLE_EQ(eightBit.training.perGpu.optimizer, 6'525'898'080.0);
    EXPECT_EQ(eightBit.training.pagedOptimizerBytes, 0.0);
    // The bitsandbytes step is one in-place kernel per tensor: it streams fewer state bytes,
    // 2 x (4 - 2.03125) B per parameter less, so it is not slower than AdamW's.
    EXPECT_LT(eightBit.compute.optimizerS, adamw.compute.optimizerS);
}

TEST(BnbOptimizers, PagedStateIsOnTheDeviceButOutsideTorchsAllocator)
{
    const std::string noOverhead = R"(, "overhead": {"fixed_bytes": 0, "fragmentation": 0})";
    const Estimate ordinary
        = estimate(plan(torchtune3b(R"(, "optimizer": "adamw-8bit")" + noOverhead)));
    const Estimate paged
        = estimate(plan(torchtune3b(R"(, "optimizer": "paged-adamw-8bit")" + noOverhead)));
    // bitsandbytes get_paged: cudaMallocManaged, then torch.frombuffer: the 6,525,898,080 B of
    // state are on the device while they fit, but not in torch.cuda.max_memory_allocated.
    EXPECT_DOUBLE_EQ(paged.training.pagedOptimizerBytes, 6'525'898'080.0);
    EXPECT_DOUBLE_EQ(paged.training.perGpu.optimizer, 6'525'898'080.0);
    EXPECT_DOUBLE_EQ(
        ordinary.training.allocatedBytes - paged.training.allocatedBytes, 6'525'898'080.0);
    EXPECT_NEAR(paged.training.perGpu.total(), ordinary.training.perGpu.total(), 1.0);
    // With fragmentation f the caching allocator's share no longer covers the paged state:
    // the device totals differ by f x 6,525,898,080 = 0.1 x ... = 652,589,808 B.
    const Estimate orderedF = estimate(plan(torchtune3b(
        R"(, "optimizer": "adamw-8bit", "overhead": {"fixed_bytes": 0, "fragmentation": 0.1})")));
    const Estimate pagedF = estimate(plan(torchtune3b(
        R"(, "optimizer": "paged-adamw-8bit", "overhead": {"fixed_bytes": 0, "fragmentation": 0.1})")));
    EXPECT_NEAR(orderedF.training.perGpu.total() - pagedF.training.perGpu.total(),
        652'589'808.0, 1.0);
}

TEST(BnbOptimizers, PagedOptimizerDoesNotMakeAnOverPlanFit)
{
    // A 16 GB GPU: weights 6.43 GB + the paged 8-bit state 6.53 GB + activations exceed it.
    const std::string gpu = R"({"name": "16 GB", "memory_bytes": 1.6e10, "bf16_tflops": 312,
        "hbm_gbps": 2039, "intra_node_gbps": 300, "inter_node_gbps": 25})";
    const Estimate e = explained(plan(torchtune3b(R"(, "optimizer": "paged-adamw-8bit")", gpu)));
    EXPECT_GT(e.training.perGpu.total(), 1.6e10);
    EXPECT_EQ(e.training.verdict, Verdict::Over);
    const Explanation* paged = findExplain(e, "training.paged_optimizer_bytes");
    ASSERT_NE(paged, nullptr);
    EXPECT_NE(paged->formula.find("stays 'over'"), std::string::npos) << paged->formula;
    EXPECT_NE(paged->source.find("get_paged"), std::string::npos);
    const Explanation* optimizer = findExplain(e, "training.per_gpu_bytes.optimizer");
    ASSERT_NE(optimizer, nullptr);
    EXPECT_NE(optimizer->formula.find("1 B uint8 + 4 B fp32 absmax / 256"), std::string::npos)
        << optimizer->formula;
    EXPECT_NE(optimizer->source.find("aa57bd89"), std::string::npos);
}

// ---- 2. Optimizer step in the backward --------------------------------------------------------

TEST(OptimizerInBackward, KeepsOneGradientTheLargestTensor)
{
    const Estimate e = explained(plan(torchtune3b(R"(, "optimizer_in_backward": true)")));
    // One gradient at a time; the largest is the tied embedding, 128256 x 3072 x 2 B
    // = 788,004,864 B, instead of every parameter's 3,212,749,824 x 2 = 6,425,499,648 B.
    EXPECT_DOUBLE_EQ(e.training.perGpu.gradients, kEmbedding * 2);
    EXPECT_DOUBLE_EQ(e.training.perGpu.gradients, 788'004'864.0);
    // allocated = weights + optimizer + that gradient + activations (+ 0 buffers, 0 temporaries
    // under torchtune's fused AdamW), the step running inside the backward.
    const double expected = kParams * 2 + kParams * 4 + 788'004'864.0
        + e.training.perGpu.activations;
    EXPECT_DOUBLE_EQ(e.training.allocatedBytes, expected);
    const Explanation* g = findExplain(e, "training.optimizer_in_backward_gradient_bytes");
    ASSERT_NE(g, nullptr);
    EXPECT_NE(g->source.find("optimizer_in_bwd"), std::string::npos);
    // The step time is the same work in another place.
    const Estimate plain = estimate(plan(torchtune3b("")));
    EXPECT_DOUBLE_EQ(e.compute.stepTimeS, plain.compute.stepTimeS);
}

TEST(OptimizerInBackward, PublishedTorchtuneRow)
{
    // README @ bd2a0fc: "+ Activation Checkpointing" 24.9 GiB, "+ Fuse optimizer step into
    // backward" 23.1 GiB peak memory active. The estimate stays within 6% of the measurement.
    const Estimate e = estimate(plan(torchtune3b(R"(, "optimizer_in_backward": true)")));
    EXPECT_NEAR(e.training.allocatedBytes / kGiB / 23.1, 1.0, 0.06)
        << e.training.allocatedBytes / kGiB;
}

TEST(OptimizerInBackward, RefusesGradientAccumulation)
{
    std::string json = torchtune3b(R"(, "optimizer_in_backward": true)");
    const std::string one = R"("grad_accum": 1)";
    json.replace(json.find(one), one.size(), R"("grad_accum": 4)");
    EXPECT_EQ(readError(json),
        "training.optimizer_in_backward: needs grad_accum 1 (each gradient is consumed by the "
        "optimizer as it is produced), got grad_accum 4");
}

// ---- 3. Activation offloading -----------------------------------------------------------------

TEST(ActivationOffload, TorchtuneMovesTheCheckpointsAndKeepsOneInFlight)
{
    const Estimate kept = estimate(plan(torchtune3b(R"(, "optimizer_in_backward": true)")));
    const Estimate e = explained(plan(
        torchtune3b(R"(, "optimizer_in_backward": true, "activation_offload": true)")));
    // Under full AC a layer keeps its input: 2 x 4096 tokens x 3072 x 2 B = 50,331,648 B; all
    // 28 layers' go to the host: 28 x 50,331,648 = 1,409,286,144 B. One stays in flight.
    EXPECT_DOUBLE_EQ(e.training.activationOffloadBytes, 1'409'286'144.0);
    EXPECT_DOUBLE_EQ(e.training.activationOffloadBufferBytes, 50'331'648.0);
    EXPECT_DOUBLE_EQ(kept.training.perGpu.activations - e.training.perGpu.activations,
        1'409'286'144.0 - 50'331'648.0);
    EXPECT_DOUBLE_EQ(e.training.hostBytesPerNode, 1'409'286'144.0);
    // README @ bd2a0fc: "+ Activation Offloading" 21.8 GiB after 23.1: 1.3 GiB saved.
    // 1,358,954,496 B = 1.266 GiB.
    const double saved = (kept.training.allocatedBytes - e.training.allocatedBytes) / kGiB;
    EXPECT_NEAR(saved, 23.1 - 21.8, 0.1);
    ASSERT_NE(findExplain(e, "training.activation_offload_bytes"), nullptr);
    ASSERT_NE(findExplain(e, "training.activation_offload_buffer_bytes"), nullptr);
}

TEST(ActivationOffload, MegatronLayersKeepTheRestAndADoubleBuffer)
{
    std::string json = torchtune3b(R"(, "activation_offload": 16)");
    const std::string torchtune = R"("framework": "torchtune")";
    json.replace(json.find(torchtune), torchtune.size(), R"("framework": "megatron")");
    const Estimate e = estimate(plan(json));
    // 16 of the 28 layers' inputs go: 16 x 50,331,648 = 805,306,368 B; Transformer Engine's
    // double buffer keeps 2 x 50,331,648 = 100,663,296 B of them on the GPU.
    EXPECT_DOUBLE_EQ(e.training.activationOffloadBytes, 805'306'368.0);
    EXPECT_DOUBLE_EQ(e.training.activationOffloadBufferBytes, 100'663'296.0);
}

TEST(ActivationOffload, TransfersCrossTheHostLinkBehindTheCompute)
{
    const Estimate a100 = explained(plan(torchtune3b(R"(, "activation_offload": true)")));
    // Down in the forward and back in the backward, one micro-batch per step:
    // 2 x 1 x 1,409,286,144 = 2,818,572,288 B; at the A100 preset's PCIe Gen4 32 GB/s:
    // 2,818,572,288 / 32e9 = 0.0880804 s, well under the step's compute: nothing exposed.
    EXPECT_DOUBLE_EQ(a100.compute.communication.activationOffloadBytes, 2'818'572'288.0);
    EXPECT_NEAR(a100.compute.communication.activationOffloadS, 0.0880804, 1e-6);
    EXPECT_EQ(a100.compute.communication.activationOffloadExposedS, 0.0);
    const Explanation* link = findExplain(a100, "training.communication.activation_offload_s");
    ASSERT_NE(link, nullptr);
    EXPECT_NE(link->formula.find("32 GB/s"), std::string::npos) << link->formula;

    // A 0.1 GB/s link: 28.18572288 s of transfers, of which what the compute does not cover
    // is added to the step.
    const std::string slow = R"({"name": "slow link", "memory_bytes": 85899345920,
        "bf16_tflops": 312, "hbm_gbps": 2039, "intra_node_gbps": 300, "inter_node_gbps": 25,
        "host_link_gbps": 0.1, "kernels": "a100-80gb"})";
    const Estimate withLink = estimate(plan(torchtune3b(R"(, "activation_offload": true)", slow)));
    const Estimate without = estimate(plan(torchtune3b("", slow)));
    const Communication& c = withLink.compute.communication;
    EXPECT_NEAR(c.activationOffloadS, 28.18572288, 1e-6);
    EXPECT_NEAR(c.activationOffloadExposedS, 28.18572288 - withLink.compute.computeTimeS, 1e-6);
    EXPECT_NEAR(withLink.compute.stepTimeS - without.compute.stepTimeS,
        c.activationOffloadExposedS, 1e-6);
}

TEST(ActivationOffload, LayersBeyondTheStageAreRefused)
{
    EXPECT_EQ(readError(torchtune3b(R"(, "activation_offload": 29)")),
        "training.activation_offload: must be true or 1..28 (the layers of one pipeline stage), "
        "got 29");
}

// ---- Plan keys round-trip -----------------------------------------------------------------------

TEST(OptimizerOffloadKeys, RoundTrip)
{
    const Plan p = plan(torchtune3b(
        R"(, "optimizer": "paged-adamw-8bit", "optimizer_in_backward": true, "activation_offload": 16)"));
    EXPECT_EQ(p.training.optimizer, OptimizerKind::PagedAdamW8bit);
    EXPECT_TRUE(p.training.optimizerInBackward);
    EXPECT_TRUE(p.training.activationOffload);
    EXPECT_EQ(p.training.activationOffloadLayers, 16);
    const std::string text = writePlan(p);
    EXPECT_NE(text.find(R"("optimizer": "paged-adamw-8bit")"), std::string::npos);
    EXPECT_NE(text.find(R"("optimizer_in_backward": true)"), std::string::npos);
    EXPECT_NE(text.find(R"("activation_offload": 16)"), std::string::npos);
    EXPECT_EQ(plan(text), p);

    const Plan all = plan(torchtune3b(R"(, "activation_offload": true, "optimizer": "paged-adamw")"));
    EXPECT_EQ(all.training.activationOffloadLayers, 0);
    const std::string allText = writePlan(all);
    EXPECT_NE(allText.find(R"("activation_offload": true)"), std::string::npos);
    EXPECT_EQ(plan(allText), all);
    // Off by default, and not written then.
    const std::string plain = writePlan(plan(torchtune3b("")));
    EXPECT_EQ(plain.find("activation_offload"), std::string::npos);
    EXPECT_EQ(plain.find("optimizer_in_backward"), std::string::npos);
}

// ---- Exports: only what the engines accept --------------------------------------------------

TEST(OptimizerOffloadKeys, ExportsNameTheEnginesOwnSwitches)
{
    // transformers TrainingArguments optim: adamw_bnb_8bit, paged_adamw_32bit, paged_adamw_8bit.
    const struct {
        const char* id;
        const char* optim;
    } rows[] = { { "adamw-8bit", "adamw_bnb_8bit" }, { "paged-adamw", "paged_adamw_32bit" },
        { "paged-adamw-8bit", "paged_adamw_8bit" } };
    for (const auto& row : rows) {
        const Plan p = plan(torchtune3b(std::string(R"(, "optimizer": ")") + row.id + "\""));
        const EngineConfig hf = exportPlan(p, estimate(p), Engine::Hf, "meta-llama/Llama-3.2-3B");
        EXPECT_NE(hf.text.find(std::string("\"optim\": \"") + row.optim + "\""), std::string::npos)
            << row.id << "\n" << hf.text;
    }
    // Megatron --cpu-offloading-num-layers takes 0 .. num_layers - 1 (Megatron-Bridge docs).
    const Plan sixteen = plan(torchtune3b(R"(, "activation_offload": 16)"));
    const EngineConfig megatron = exportPlan(sixteen, estimate(sixteen), Engine::Megatron, "");
    EXPECT_NE(megatron.text.find("--cpu-offloading\n"), std::string::npos) << megatron.text;
    EXPECT_NE(megatron.text.find("--cpu-offloading-num-layers 16"), std::string::npos);
    const Plan all = plan(torchtune3b(R"(, "activation_offload": true, "optimizer_in_backward": true)"));
    const EngineConfig capped = exportPlan(all, estimate(all), Engine::Megatron, "");
    EXPECT_NE(capped.text.find("--cpu-offloading-num-layers 27"), std::string::npos);
    std::string warnings;
    for (const std::string& w : capped.warnings)
        warnings += w + "\n";
    EXPECT_NE(warnings.find("at most num_layers - 1 = 27"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("training.optimizer_in_backward"), std::string::npos) << warnings;
}

TEST(OptimizerOffloadKeys, MegatronImportReadsCpuOffloading)
{
    ImportOptions options;
    options.modelJson = "\"llama-2-7b\"";
    const Expected<ImportedPlan> imported = importEngineConfig(Engine::Megatron,
        "--num-layers 32 --cpu-offloading --cpu-offloading-num-layers 16\n", presets(), options);
    ASSERT_TRUE(imported.ok()) << imported.error().toString();
    const Plan p = plan(imported->planJson);
    EXPECT_TRUE(p.training.activationOffload);
    EXPECT_EQ(p.training.activationOffloadLayers, 16);
    // 0 layers (Megatron's default) offloads nothing.
    const Expected<ImportedPlan> none = importEngineConfig(Engine::Megatron,
        "--cpu-offloading --cpu-offloading-num-layers 0\n", presets(), options);
    ASSERT_TRUE(none.ok()) << none.error().toString();
    EXPECT_FALSE(plan(none->planJson).training.activationOffload);
}

} // namespace
} // namespace envelope
