// The step time from ops (issue 22; docs/formulas-compute.md sec. 3): op shapes checked by hand,
// op times pinned to entries of the measured kernel tables (presets/kernels/*.json, read off
// the file by hand and written here), the spec fallback computed by hand, the mechanisms a
// constant could not carry, and Korthikanti et al. 2022 Table 5 end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "estimate/estimate.h"
#include "kernels/timing.h"
#include "ops/ops.h"
#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope {
namespace {

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

const Gpu& presetGpu(const char* id)
{
    const GpuPreset* preset = presets().findGpu(id);
    EXPECT_NE(preset, nullptr) << id;
    return preset->gpu;
}

Plan planFrom(const std::string& json)
{
    Expected<Plan> plan = readPlan(json, presets());
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().toString());
    return plan.ok() ? plan.value() : Plan {};
}

// presets/kernels/h100-sxm.json, gemm bf16 (aiconfigurator vllm 0.19.0 gemm_perf): the grid
// point m = 256, n = k = 4096 holds 438.7 TFLOP/s, so one such GEMM takes 2 x 256 x 4096^2 /
// 438.7e12 = 19.58 us. The point m = n = k = 4096 holds 827.8 TFLOP/s, above the H100's
// maximum achievable matmul rate of 794.5 (the table's matmul_ceiling: ml-engineering's MAMF,
// the fastest of a shape search sustained over 100 calls; the lent H100 peaked at 792.0), so it
// reads 794.5: 2 x 4096^3 / 794.5e12 = 172.99 us, not the table's 166.0. m = 1, n = k = 8192
// holds 2.599 TFLOP/s: 2 x 8192^2 / 2.599e12 = 51.64 us, the 134.2 MB of weights at 2.60 TB/s
// (78% of the 3.35 TB/s HBM: decode GEMMs are memory-bound).
TEST(OpTiming, GemmAtAGridPointIsTheMeasuredEntry)
{
    const Gpu& h100 = presetGpu("h100-sxm");
    ASSERT_NE(h100.kernels, nullptr);
    const OpTime mid = gemmTime(256, 4096, 4096, 1, GemmDtype::Bf16, h100);
    EXPECT_TRUE(mid.measured);
    EXPECT_NEAR(mid.seconds * 1e6, 19.58, 0.01);
    const OpTime big = gemmTime(4096, 4096, 4096, 1, GemmDtype::Bf16, h100);
    EXPECT_TRUE(big.measured);
    EXPECT_NEAR(big.seconds * 1e6, 172.99, 0.01);
    const OpTime decode = gemmTime(1, 8192, 8192, 1, GemmDtype::Bf16, h100);
    EXPECT_NEAR(decode.seconds * 1e6, 51.64, 0.05);
    // Between grid points the throughput interpolates in log space, so a shape between two
    // entries takes between their times scaled by FLOPs.
    const OpTime between = gemmTime(256, 4096, 5000, 1, GemmDtype::Bf16, h100);
    EXPECT_GT(between.seconds, mid.seconds);
    EXPECT_LT(between.seconds, mid.seconds * 6144.0 / 4096.0);
}

// A format without a measured table (int4 weight-only on an H100, whose table has bf16, fp8 and
// fp8-block) takes the bf16 table's time scaled by the roofline of the format over bf16's. The
// decode GEMM m = 1, n = k = 8192 is memory-bound: bf16 reads 2 x 8192 + 2 x 8192^2 + 2 x 8192 =
// 134.25 MB, int4 at 0.5625 B a weight 2 x 8192 + 0.5625 x 8192^2 + 2 x 8192 = 37.78 MB, so
// 51.64 us x 37.78 / 134.25 = 14.53 us (it was timed as bf16, 51.64 us: a 4-bit decode step
// slower than an 8-bit one). A large GEMM is compute-bound on the bf16 peak either way: the
// same time. Neither is a measurement of the format, and says so.
TEST(OpTiming, AFormatWithoutATableScalesTheBf16TableByItsRoofline)
{
    const Gpu& h100 = presetGpu("h100-sxm");
    ASSERT_NE(h100.kernels, nullptr);
    ASSERT_EQ(h100.kernels->findGemm(GemmDtype::Int4WeightOnly), nullptr);
    const OpTime decode = gemmTime(1, 8192, 8192, 1, GemmDtype::Int4WeightOnly, h100);
    EXPECT_NEAR(decode.seconds * 1e6, 51.64 * 37.781248 / 134.250496, 0.05);
    EXPECT_FALSE(decode.measured);
    const OpTime big = gemmTime(4096, 4096, 4096, 1, GemmDtype::Int4WeightOnly, h100);
    EXPECT_NEAR(big.seconds * 1e6, 172.99, 0.01); // bf16's, at the MAMF ceiling (above)
    EXPECT_FALSE(big.measured);
    EXPECT_TRUE(gemmTime(1, 8192, 8192, 1, GemmDtype::Bf16, h100).measured);
}

// MI300X has no kernel table: a 4096^3 bf16 GEMM at 70% of its 1,307.4 TFLOP/s peak is
// 2 x 4096^3 / (0.70 x 1307.4e12) = 150.2 us (compute-bound: its 3 x 33.6 MB at 80% of
// 5.3 TB/s take 23.7 us), and a plan on it says "spec estimate".
TEST(OpTiming, AGpuWithoutTablesFallsBackToItsSpecsAndSaysSo)
{
    const Gpu& mi300x = presetGpu("mi300x");
    EXPECT_EQ(mi300x.kernels, nullptr);
    const OpTime t = gemmTime(4096, 4096, 4096, 1, GemmDtype::Bf16, mi300x);
    EXPECT_FALSE(t.measured);
    EXPECT_NEAR(t.seconds * 1e6, 150.2, 0.1);
    Plan plan = planFrom(presets().defaultPlanJson);
    plan.gpu.gpu = mi300x;
    plan.gpu.presetId = "mi300x";
    EXPECT_EQ(estimate(plan).compute.timingSource, "spec estimate");
    plan.gpu.gpu = presetGpu("h100-sxm");
    EXPECT_EQ(estimate(plan).compute.timingSource, "measured kernels");
}

// presets/kernels/h100-sxm.json, collectives all_reduce nccl 8 GPUs (nccl 2.29.2 nccl-tests):
// 1,048,576 bytes in 25.4 us. Above the largest buffer the bus bandwidth holds: twice the
// largest buffer takes twice its time.
TEST(OpTiming, CollectivesReadTheNcclTable)
{
    const Gpu& h100 = presetGpu("h100-sxm");
    const OpTime t = collectiveTime(CollectiveKind::AllReduce, 1048576, 8, true, false, h100);
    EXPECT_TRUE(t.measured);
    EXPECT_NEAR(t.seconds * 1e6, 25.4, 0.01);
    const CollectiveTable* table = h100.kernels->findCollective(CollectiveKind::AllReduce, 8, false);
    ASSERT_NE(table, nullptr);
    const double largest = table->bytes.back();
    EXPECT_NEAR(collectiveTime(CollectiveKind::AllReduce, 2 * largest, 8, true, false, h100).seconds,
        2 * table->seconds.back(), 1e-9);
    // Across nodes: the NIC (50 GB/s on the H100 preset) at 85%, ring factor 2 x 15/16 for 16
    // ranks, plus 30 us: 1 GB all-reduced in 30e-6 + 1.875e9 / 42.5e9 = 44.15 ms.
    EXPECT_NEAR(collectiveTime(CollectiveKind::AllReduce, 1e9, 16, false, false, h100).seconds * 1e3,
        44.15, 0.01);
}

// An EP all-to-all over 64 ranks on 8 nodes of 8 (DeepSeek-V3's EP 64): of each rank's 470 MB
// send buffer (4,096 tokens x top-8 x 7,168 hidden x 2 B = 469.8 MB), 7/64 goes to the 7 peers
// on its node over NVLink and 56/64 to the 56 peers on other nodes over the NIC. By hand, the
// NIC part alone: 30e-6 + (56/64) x 469.8e6 / (50e9 x 0.85) = 9.70 ms; priced all over the NIC
// as before, (63/64) x 469.8e6 / 42.5e9 + 30e-6 = 10.91 ms. The NVLink part (an 8-GPU
// all-to-all of 58.7 MB, 7/8 of it sent, at the table's ~360 GB/s bus) is ~0.15 ms: hidden.
TEST(OpTiming, AnAllToAllAcrossNodesSendsOnlyTheRemoteShareOverTheNetwork)
{
    const Gpu& h100 = presetGpu("h100-sxm");
    Op a2a;
    a2a.cls = OpClass::Collective;
    a2a.collective = CollectiveKind::AllToAll;
    a2a.bytes = 4096.0 * 8 * 7168 * 2;
    a2a.group = 64;
    a2a.intraNode = false;
    const double before = timeOp(a2a, h100, SpecDefaults {}).seconds;
    EXPECT_NEAR(before * 1e3, 10.91, 0.01);
    a2a.ranksPerNode = 8;
    const OpTime split = timeOp(a2a, h100, SpecDefaults {});
    EXPECT_NEAR(split.seconds * 1e3, 9.70, 0.01);
    EXPECT_FALSE(split.measured); // the network part is the NIC's spec, not a table
    // Four GPUs of each node in the group (TP 2 on 8-GPU nodes): 60/64 over the network.
    a2a.ranksPerNode = 4;
    EXPECT_NEAR(timeOp(a2a, h100, SpecDefaults {}).seconds * 1e3,
        (30e-6 + 60.0 / 64 * a2a.bytes / 42.5e9) * 1e3, 1e-6);
}

TrainingLayout llamaLayout(int tp)
{
    TrainingLayout l;
    l.tp = tp;
    l.microBatch = 1;
    l.seqLen = 4096;
    return l;
}

double gemmFlops(const std::vector<Op>& ops, bool weightsOnly)
{
    double flops = 0;
    for (const Op& op : ops)
        if (op.cls == OpClass::Gemm && (!weightsOnly || !op.weightless))
            flops += op.flops() * op.repeat;
    return flops;
}

// Llama 3 8B, one layer: q 4096 x 4096, k and v 4096 x 1024, o 4096 x 4096, gate, up, down
// 3 x 4096 x 14336 = 218,103,808 matmul weights, so the forward runs 2 x 218,103,808 /
// tp FLOPs per token on each GPU, and the backward twice that (input and weight gradients).
TEST(TrainingOps, LayerGemmsAreTheLayersWeightsSplitByTensorParallelism)
{
    const ModelArch arch = presets().findModel("llama-3-8b")->arch;
    for (int tp : { 1, 8 }) {
        const TrainingLayout l = llamaLayout(tp);
        const std::vector<Op> forward = layerForwardOps(arch, l, false);
        const double tokens = 4096;
        EXPECT_NEAR(gemmFlops(forward, true) / tokens, 2.0 * 218103808 / tp, 1) << tp;
        EXPECT_NEAR(gemmFlops(backwardOps(forward, l), true), 2 * gemmFlops(forward, true), 1);
        // QKV: (32 + 2 x 8) / tp heads of 128.
        const auto qkv = std::find_if(forward.begin(), forward.end(),
            [](const Op& op) { return std::string_view(op.name) == "qkv"; });
        ASSERT_NE(qkv, forward.end());
        EXPECT_EQ(qkv->n, (32.0 + 16.0) / tp * 128);
        EXPECT_EQ(qkv->k, 4096);
        // Two all-reduces of b s h bf16 = 4096 x 4096 x 2 bytes per layer forward at tp > 1.
        int allReduces = 0;
        for (const Op& op : forward)
            if (op.cls == OpClass::Collective) {
                EXPECT_EQ(op.bytes, 4096.0 * 4096 * 2);
                ++allReduces;
            }
        EXPECT_EQ(allReduces, tp > 1 ? 2 : 0);
    }
}

// LoRA: the frozen base runs no weight-gradient GEMMs, so its backward is one GEMM per linear
// (the input gradient) instead of two: the base's backward FLOPs equal its forward's.
TEST(TrainingOps, LoraBaseComputesNoWeightGradients)
{
    const ModelArch arch = presets().findModel("llama-3-8b")->arch;
    TrainingLayout l = llamaLayout(1);
    l.frozenBase = true;
    l.loraRank = 16;
    const std::vector<Op> forward = layerForwardOps(arch, l, false);
    const std::vector<Op> backward = backwardOps(forward, l);
    double baseForward = 0, baseBackward = 0;
    for (const Op& op : forward)
        if (op.cls == OpClass::Gemm && std::string_view(op.name).rfind("lora", 0) != 0)
            baseForward += op.flops();
    for (const Op& op : backward)
        if (op.cls == OpClass::Gemm && std::string_view(op.name).rfind("lora", 0) != 0)
            baseBackward += op.flops();
    EXPECT_NEAR(baseBackward / baseForward, 1.0, 1e-12);
}

// ZeRO-3 / FSDP gather the weights for every micro-batch (issue 22: 70B, ZeRO-3, 64 GPUs,
// 32 micro-batches was charged one gather): the data-parallel time grows with grad_accum,
// while ZeRO-1 reduces once per step.
TEST(TrainingStep, Zero3GathersOnEveryMicroBatch)
{
    const auto dpSeconds = [](int zero, int accum) {
        Plan plan = planFrom(R"({"model": "llama-3-70b", "gpu": "h100-sxm",
            "cluster": {"gpus": 64, "gpus_per_node": 8},
            "training": {"zero_stage": 3, "micro_batch": 1, "seq_len": 4096, "recompute": "full"}})");
        plan.training.zeroStage = zero;
        plan.training.gradAccum = accum;
        return estimate(plan).compute.communication.dpS;
    };
    EXPECT_NEAR(dpSeconds(3, 32) / dpSeconds(3, 1), 32, 1e-6);
    EXPECT_NEAR(dpSeconds(1, 32) / dpSeconds(1, 1), 1, 1e-9);
    // The gather volume alone, by hand: 70.55e9 bf16 weights all-gathered twice and their
    // gradients reduce-scattered once per micro-batch, each GPU sending 63/64 of 3 x 141 GB
    // per micro-batch over its 50 GB/s NIC at 85%: 32 x 416.6e9 / 42.5e9 = 313.6 s, beyond
    // the issue's ">= 178 s".
    EXPECT_GT(dpSeconds(3, 32), 300);
}

// The pipeline schedules' bubbles (DeepSeek-AI 2024 Table 2, F + B = one micro-batch's stage
// time T, W its weight-gradient GEMMs): 1F1B (p - 1) T; ZB1P (p - 1)(T - 2W), so between a third
// and all of 1F1B's (W is at most a third of T: the forward and the input gradient each take as
// long as it on a linear, longer with attention and elementwise work); DualPipe
// (p/2 - 1)(T + B - 3W): none at all on two stages. And DualPipe hides the EP all-to-all
// behind the other micro-batch's compute (sec. 3.2.1): no EP time exposed where compute
// outlasts it.
TEST(TrainingStep, ZeroBubbleAndDualPipeShrinkTheBubble)
{
    const auto step = [](const char* schedule, int pp) {
        Plan plan = planFrom(std::string(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm",
            "cluster": {"gpus": 64, "gpus_per_node": 8},
            "training": {"zero_stage": 1, "tp": 2, "ep": 4, "micro_batch": 1, "grad_accum": 16,
                         "seq_len": 4096, "recompute": "full", "pp_schedule": ")")
            + schedule + "\", \"pp\": " + std::to_string(pp) + "}}");
        return estimate(plan).compute;
    };
    const TrainingCompute oneF = step("1f1b", 4), zb = step("zb1p", 4), dual = step("dualpipe", 4);
    ASSERT_GT(oneF.communication.ppBubbleS, 0);
    EXPECT_LT(zb.communication.ppBubbleS, oneF.communication.ppBubbleS);
    EXPECT_GE(zb.communication.ppBubbleS, oneF.communication.ppBubbleS / 3 - 1e-9);
    EXPECT_LT(dual.communication.ppBubbleS, oneF.communication.ppBubbleS);
    EXPECT_EQ(step("dualpipe", 2).communication.ppBubbleS, 0.0);
    // EP 4 x TP 2 spans 8 GPUs: one node. DualPipe hides its all-to-all (and the p2p) when the
    // compute outlasts it; 1F1B exposes every second of it.
    ASSERT_GT(oneF.communication.epS, 0);
    EXPECT_LT(dual.stepTimeS, oneF.stepTimeS - oneF.communication.epS * 0.99 + 1e-9);
}

// Megatron's interleaved schedule posts the pipeline's sends and receives asynchronously
// (overlap_p2p_comm: on by default in megatron/training, set by Megatron-Bridge with virtual
// stages): the steady state's p2p hides behind the chunks' compute. Without virtual stages, or in
// a framework that waits on each send, every second of it is exposed. Megatron-Bridge's Llama 3
// 70B FP8 on 64 H100s (TP 4, PP 8, VP 5, SP): 2 x 64 micro-batches x 5 chunks x (8192 x 8192 x
// 2 B / 4) = 33.55 MB messages over the 50 GB/s network, >= 429.5 ms per step.
TEST(TrainingStep, InterleavedMegatronHidesThePipelinesP2p)
{
    const auto step = [](const char* framework, int virtualStages) {
        Plan plan = planFrom(std::string(R"({"model": "llama-3-70b", "gpu": "h100-sxm",
            "cluster": {"gpus": 64, "gpus_per_node": 8},
            "training": {"recipe": "fp8-te", "zero_stage": 1, "tp": 4, "pp": 8,
                         "sequence_parallel": true, "micro_batch": 1, "grad_accum": 64,
                         "seq_len": 8192, "recompute": "none", "framework": ")")
            + framework + "\", \"virtual_stages\": " + std::to_string(virtualStages) + "}}");
        return estimate(plan).compute;
    };
    const TrainingCompute interleaved = step("megatron", 5);
    const Communication& c = interleaved.communication;
    // At least the messages at the network's 50 GB/s (the NCCL send-recv table adds its latency
    // and efficiency: 524.5 ms).
    EXPECT_GE(c.ppS, 2.0 * 64 * 5 * (8192.0 * 8192 * 2 / 4) / 50e9);
    // Exposed: everything but the DP share its overlap hides and the p2p.
    const TrainingCompute flat = step("megatron", 1);
    EXPECT_GT(flat.communication.ppS, 0);
    // The p2p of v = 5 is 5x that of v = 1 (five chunk boundaries per micro-batch), yet the
    // interleaved step exposes none of it in the steady state.
    EXPECT_NEAR(c.ppS, 5 * flat.communication.ppS, 1e-9);
    const double exposedNonPp = c.exposedS;
    EXPECT_LT(exposedNonPp, c.dpS + c.tpS + c.cpS + c.epS + 1e-9);
    EXPECT_GE(flat.communication.exposedS, flat.communication.ppS);
    // torchtitan's interleaved schedules wait on each send: exposed.
    const TrainingCompute titan = step("torchtitan", 5);
    EXPECT_GE(titan.communication.exposedS, titan.communication.ppS);
}

// An `mfu` in the plan is an explicit override of the op timing, reported as such; without it
// the step comes from the ops and MFU is an output.
TEST(TrainingStep, MfuIsAnOverrideAndOtherwiseAnOutput)
{
    Plan plan = planFrom(presets().defaultPlanJson);
    const Estimate timed = estimate(plan);
    EXPECT_FALSE(plan.training.mfuOverride);
    EXPECT_EQ(timed.compute.timingSource, "measured kernels");
    EXPECT_GT(timed.compute.effectiveMfu, 0.2);
    EXPECT_LT(timed.compute.effectiveMfu, 0.8);
    const Plan overridden = planFrom(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "training": {"mfu": 0.5}})");
    EXPECT_TRUE(overridden.training.mfuOverride);
    EXPECT_EQ(estimate(overridden).compute.timingSource, "mfu override");
    // Written back, the override stays and the op-timed plan stays op-timed.
    EXPECT_NE(writePlan(overridden).find("\"mfu\""), std::string::npos);
    EXPECT_EQ(writePlan(plan).find("\"mfu\""), std::string::npos);
}

// Bad input names the field and the allowed range or the known ids.
// Eager PyTorch's kernel chains (docs/formulas-compute.md, 'Eager kernels'), by hand for a
// Llama-3.2-1B shape at micro-batch 2 x 4096 (T = 8,192 tokens, h = 2,048, q + k width
// (32 + 8) x 64 = 2,560, SwiGLU width 8,192, a = 2, no recompute), hf (eager_kernels) against
// deepspeed (same eager loss, fused counts). Bytes per element the chains add, forward +
// backward: RMSNorm (36 - 4) + (84 - 8) = 108, RoPE (20 - 4) + (30 - 8) = 38, SwiGLU
// (10 - 6) + (18 - 12) = 10. Per layer 2 x 16,777,216 x 108 + 20,971,520 x 38 + 67,108,864 x 10
// = 5,091,885,056 bytes; 16 layers and the final norm (16,777,216 x 108): 83,282,100,224 bytes
// at 3,350 GB/s x 0.8 = 31.075 ms more elementwise time. Measured on a lent H100, the profiled
// eager step's elementwise + loss kernels took 98 ms against 34 counted one-pass
// (docs/validation.md, 'Measured on a lent H100').
TEST(TrainingStep, EagerNormsRopeAndSwigluRunAsKernelChains)
{
    const auto elementwise = [](const char* framework) {
        Plan plan = planFrom(std::string(R"({"model": {"name": "1B", "layers": 16, "hidden": 2048,
            "ffn_hidden": 8192, "ffn": "gated", "heads": 32, "kv_heads": 8, "head_dim": 64,
            "vocab": 128256, "tied_embeddings": true, "norm": "rmsnorm"}, "gpu": "h100-sxm",
            "cluster": {"gpus": 1, "gpus_per_node": 1},
            "training": {"recipe": "bf16-pure", "micro_batch": 2, "seq_len": 4096,
            "recompute": "none", "flash_attention": true, "framework": ")") + framework + R"("}})");
        return estimate(plan).compute.elementwiseS;
    };
    EXPECT_NEAR(elementwise("hf") - elementwise("deepspeed"), 83282100224.0 / (3350e9 * 0.8), 1e-6);
}

TEST(OpTiming, BadKernelInputNamesTheField)
{
    const auto error = [](const std::string& json) {
        const Expected<Plan> plan = readPlan(json, presets());
        return plan.ok() ? std::string() : plan.error().toString();
    };
    const std::string unknown = error(R"({"model": "llama-2-7b", "gpu": {"memory_bytes": 1e11,
        "bf16_tflops": 900, "hbm_gbps": 3000, "intra_node_gbps": 400, "inter_node_gbps": 50,
        "kernels": "h900"}})");
    EXPECT_NE(unknown.find("gpu.kernels"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("h100-sxm"), std::string::npos) << unknown; // the known ids
    const std::string scale = error(
        R"({"model": "llama-2-7b", "gpu": "h100-sxm", "training": {"efficiency_scale": 0}})");
    EXPECT_NE(scale.find("training.efficiency_scale"), std::string::npos) << scale;
    EXPECT_NE(scale.find("0.05"), std::string::npos) << scale;

    // A kernel table whose grid does not match its axes, in a user preset file.
    PresetLibrary library = presets();
    const std::optional<Error> bad = mergePresetFile(library,
        R"({"kernels": [{"format": "envelope.kernels", "version": 1, "gpu": "h100-sxm",
            "source": "test", "gemm": [{"dtype": "bf16", "source": "t", "m": [1, 2],
            "n": [1], "k": [1], "tflops": [1]}]}]})",
        "user.json");
    ASSERT_TRUE(bad.has_value());
    EXPECT_NE(bad->toString().find("kernels[0].gemm[0].tflops"), std::string::npos) << bad->toString();
    EXPECT_NE(bad->toString().find("2 numbers"), std::string::npos) << bad->toString();
    // Axes must ascend.
    const std::optional<Error> order = mergePresetFile(library,
        R"({"kernels": [{"format": "envelope.kernels", "version": 1, "gpu": "h100-sxm",
            "source": "test", "collectives": [{"op": "all_reduce", "gpus": 8, "source": "t",
            "bytes": [2048, 1024], "us": [1, 2]}]}]})",
        "user.json");
    ASSERT_TRUE(order.has_value());
    EXPECT_NE(order->toString().find("collectives[0].bytes"), std::string::npos) << order->toString();
    // A launch floor outside 0.1-100 us.
    const std::optional<Error> floor = mergePresetFile(library,
        R"({"kernels": [{"format": "envelope.kernels", "version": 1, "gpu": "h100-sxm",
            "source": "test", "launch_floor": {"pointwise_us": 0, "reduction_us": 4,
            "source": "t"}}]})",
        "user.json");
    ASSERT_TRUE(floor.has_value());
    EXPECT_NE(floor->toString().find("launch_floor.pointwise_us"), std::string::npos) << floor->toString();
    EXPECT_NE(floor->toString().find("0.1"), std::string::npos) << floor->toString();
}

// A user preset file can replace a GPU's kernel table: the GPU preset then times from it.
TEST(OpTiming, AUserKernelTableReplacesTheBuiltIn)
{
    PresetLibrary library = presets();
    const std::optional<Error> e = mergePresetFile(library,
        R"({"kernels": [{"format": "envelope.kernels", "version": 1, "gpu": "h100-sxm",
            "source": "a user's measurement", "gemm": [{"dtype": "bf16", "source": "t",
            "m": [4096], "n": [4096], "k": [4096], "tflops": [500]}]}]})",
        "user.json");
    ASSERT_FALSE(e.has_value()) << e->toString();
    const Gpu& h100 = library.findGpu("h100-sxm")->gpu;
    ASSERT_TRUE(h100.kernels);
    EXPECT_EQ(h100.kernels->source, "a user's measurement");
    // 2 x 4096^3 at 500 TFLOP/s = 274.9 us.
    EXPECT_NEAR(gemmTime(4096, 4096, 4096, 1, GemmDtype::Bf16, h100).seconds * 1e6, 274.9, 0.1);
}

// presets/kernels/h100-sxm.json at m = 128, n = k = 4096: the per-tensor fp8 row holds 296.6
// TFLOP/s (2 x 128 x 4096^2 / 296.6e12 = 14.48 us), the fp8_block row 46.81 (91.75 us: vLLM
// 0.24 ran the block-scaled kernels eagerly, so the row carries ~80 us of launch overhead).
// Block-scaled FP8 reads no slower than per-tensor FP8: 14.48 us. At m = 4096, n = k = 16384
// the block kernel is the faster (its row: 1,689 us, per-tensor 1,803) and its own row holds.
TEST(OpTiming, BlockScaledFp8IsNoSlowerThanPerTensorFp8)
{
    const Gpu& h100 = presetGpu("h100-sxm");
    const OpTime small = gemmTime(128, 4096, 4096, 1, GemmDtype::Fp8Block, h100);
    EXPECT_TRUE(small.measured);
    EXPECT_NEAR(small.seconds * 1e6, 14.48, 0.01);
    EXPECT_NEAR(gemmTime(128, 4096, 4096, 1, GemmDtype::Fp8, h100).seconds * 1e6, 14.48, 0.01);
    const OpTime large = gemmTime(4096, 16384, 16384, 1, GemmDtype::Fp8Block, h100);
    EXPECT_LT(large.seconds, gemmTime(4096, 16384, 16384, 1, GemmDtype::Fp8, h100).seconds);
    EXPECT_NEAR(large.seconds * 1e6, 1689.0, 1.0);
}

// A table's matmul_ceiling bounds every lookup of its format and of the formats that run at
// its rate: a user table of one entry at 900 TFLOP/s with a bf16 ceiling of 600 times the
// 4096^3 GEMM at 600 (2 x 4096^3 / 600e12 = 229.1 us), as does its int8 weight-only table
// (dequantized into bf16 matmuls); a ceiling above the entry changes nothing. A ceiling for a
// format the table does not have is refused, naming the field.
TEST(OpTiming, NoGemmRunsFasterThanTheGpusMaximumAchievableMatmulRate)
{
    const auto withCeiling = [](double ceiling, const char* ceilingDtype) {
        PresetLibrary library = presets();
        const std::string doc = R"({"kernels": [{"format": "envelope.kernels", "version": 1, "gpu": "h100-sxm",
            "source": "test", "matmul_ceiling": [{"dtype": ")" + std::string(ceilingDtype)
            + R"(", "tflops": )" + std::to_string(ceiling) + R"(, "source": "a hand figure"}],
            "gemm": [{"dtype": "bf16", "source": "t", "m": [4096], "n": [4096], "k": [4096], "tflops": [900]},
                     {"dtype": "int8_wo", "source": "t", "m": [4096], "n": [4096], "k": [4096], "tflops": [900]}]}]})";
        const std::optional<Error> e = mergePresetFile(library, doc, "user.json");
        return std::make_pair(library, e);
    };
    const auto [capped, ok] = withCeiling(600, "bf16");
    ASSERT_FALSE(ok.has_value()) << ok->toString();
    const Gpu& h100 = capped.findGpu("h100-sxm")->gpu;
    EXPECT_NEAR(gemmTime(4096, 4096, 4096, 1, GemmDtype::Bf16, h100).seconds * 1e6, 229.07, 0.01);
    EXPECT_NEAR(gemmTime(4096, 4096, 4096, 1, GemmDtype::Int8WeightOnly, h100).seconds * 1e6, 229.07, 0.01);
    EXPECT_EQ(h100.kernels->findGemm(GemmDtype::Bf16)->ceilingSource, "a hand figure");
    const auto [loose, ok2] = withCeiling(1000, "bf16");
    ASSERT_FALSE(ok2.has_value());
    // 2 x 4096^3 / 900e12 = 152.7 us.
    EXPECT_NEAR(gemmTime(4096, 4096, 4096, 1, GemmDtype::Bf16, loose.findGpu("h100-sxm")->gpu).seconds * 1e6, 152.71, 0.01);
    const auto [unused, refused] = withCeiling(1400, "fp8");
    ASSERT_TRUE(refused.has_value());
    EXPECT_NE(refused->toString().find("matmul_ceiling[0].dtype"), std::string::npos) << refused->toString();
}

// Korthikanti et al. 2022 Table 5 (tests/data/validation/korthikanti/table5.json): time per
// iteration of GPT 22B, 175B, 530B and 1T on A100 under full recompute and under selective
// recompute + sequence parallelism. Calculon reaches 2.7% median, 8.9% worst on the same
// runs; the constant efficiency Envelope had before op timing 29% median, 44% worst. The
// thresholds guard the errors reached (docs/validation.md, "Step time from ops").
TEST(TrainingStep, KorthikantiTable5TimePerIteration)
{
    const std::string dir = std::string(ENVELOPE_TEST_DATA_DIR) + "/validation/korthikanti/";
    const nlohmann::json table = nlohmann::json::parse(testing::readText(dir + "table5.json"));
    std::vector<double> errors;
    for (const auto& point : table["points"]) {
        const Plan plan = planFrom(testing::readText(dir + point["plan"].get<std::string>()));
        const Estimate e = estimate(plan);
        EXPECT_EQ(e.compute.timingSource, "measured kernels");
        const double measured = point["measured_step_time_s"].get<double>();
        const double error = e.compute.stepTimeS / measured - 1;
        EXPECT_LT(std::abs(error), 0.10) << point["id"] << ": " << e.compute.stepTimeS << " s";
        errors.push_back(std::abs(error));
    }
    ASSERT_EQ(errors.size(), 8u);
    std::sort(errors.begin(), errors.end());
    const double median = (errors[3] + errors[4]) / 2;
    EXPECT_LE(median, 0.05); // the issue's target; 4.3% reached, 5.1% before the matmul ceilings
    EXPECT_LT(errors.back(), 0.10); // 8.1% reached
}

} // namespace
} // namespace envelope
