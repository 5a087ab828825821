// Throughput as a framework runs it (issue 12): FP8 linears beside a BF16 attention core, what
// each framework's selective recompute re-runs, the overlap of data-parallel and tensor-parallel
// communication per framework, and Korthikanti et al. 2022 Table 5's HFU convention. Every
// expected figure is written out by hand from the shapes below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "fixtures.h"
#include "model/model.h"
#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope {
namespace {

using namespace envelope::testing;

FrameworkProfile profile(const char* id, SelectivePolicy selective, DpOverlap overlap)
{
    FrameworkProfile p;
    p.id = id;
    p.selective = selective;
    p.dpOverlap = overlap;
    return p;
}

// GPT shape (Narayanan et al. 2021 eq. 3): layers 12 l h^2 = 6.44e9 at l 32, h 4096; a tied
// 50,000 x 4096 head. Per token at s = 4096 with no recompute:
//   layer linears 6 x 12 l h^2 = 72 x 32 x 4096^2 = 3.865e10 (FP8 peak 1979e12)
//   LM head 6 V h = 6 x 50000 x 4096 = 1.229e9 and attention 12 l s h = 12 x 32 x 4096 x 4096
//   = 6.442e9 (BF16 peak 989e12).
TEST(ComputeProfiles, Fp8RunsTheLinearsAtTheFp8PeakAndTheAttentionCoreAtTheBf16Peak)
{
    const CountedModel m = gptModel(32, 4096, 32, 50000);
    TrainingConfig c = computeConfig();
    c.recipe.recipe.compute = ComputeDtype::Fp8;
    c.mfu = 0.4;
    const double l = 32, h = 4096, s = 4096, v = 50000;
    const double linear = 72 * l * h * h, other = 6 * v * h + 12 * l * s * h;
    // One GPU, batch 1 x 4096 tokens.
    const double expected = (linear / 1979e12 + other / 989e12) * s / 0.4;
    const TrainingCompute r = computeFor(m, c, 1, h100());
    EXPECT_NEAR(r.computeTimeS, expected, expected * 1e-9);
    // All at the FP8 peak would be 16% faster here; all at BF16 (the bf16 recipe) is slower.
    EXPECT_GT(r.computeTimeS, (linear + other) / 1979e12 * s / 0.4 * 1.1);
    c.recipe.recipe.compute = ComputeDtype::Bf16;
    EXPECT_NEAR(computeFor(m, c, 1, h100()).computeTimeS, (linear + other) / 989e12 * s / 0.4,
        expected * 1e-9);
}

// torchtitan's per-op SAC (selective_ac_option "op") saves every other matmul output and the
// SDPA output: in forward order q k v o gate up down it re-runs k, o and up. Llama 3 8B:
// k 4096 x 8 x 128 = 4,194,304, o 4096 x 4096 = 16,777,216, up 4096 x 14336 = 58,720,256:
// 79,691,776 per layer x 32 layers x 2 FLOPs = 5.1003e9 FLOPs per token, no attention core.
// Megatron's selective re-runs the attention core forward only: 4 l s h = 4 x 32 x 8192 x 4096
// = 4.295e9; a framework whose only checkpointing is per layer runs selective as full.
TEST(ComputeProfiles, SelectiveRecomputeReRunsWhatTheFrameworkDiscards)
{
    const ModelArch arch = llama3_8b();
    const ParamCounts counts = countParameters(arch);
    TrainingConfig c = computeConfig();
    c.seqLen = 8192;
    c.recompute = Recompute::Selective;
    const auto extra = [&](const FrameworkProfile& p) {
        c.framework = p;
        const TrainingCompute r
            = estimateCompute(arch, counts, c, Cluster { 8, 8 }, h100(), nullptr);
        return r.hardwareFlopsPerToken - r.flopsPerToken;
    };
    EXPECT_NEAR(extra(profile("torchtitan", SelectivePolicy::PerOpSac, DpOverlap::None)),
        2.0 * 32 * 79691776, 1);
    EXPECT_NEAR(extra(profile("megatron", SelectivePolicy::AttentionCore, DpOverlap::None)),
        4.0 * 32 * 8192 * 4096, 1);
    c.recompute = Recompute::Full;
    const double full = extra(profile("generic", SelectivePolicy::AttentionCore, DpOverlap::None));
    c.recompute = Recompute::Selective;
    EXPECT_NEAR(extra(profile("hf", SelectivePolicy::Full, DpOverlap::None)), full, 1);
}

// FSDP prefetch: every layer's all-gather hides behind the previous layer's compute but the
// first all-gather and the last reduce-scatter: exposed = dp time / layers. 7B as a GPT of
// 32 layers x 4096 on 8 GPUs of a node under ZeRO-3: 1.5 x 2 x 7/8 x 2 B x P at 900 GB/s.
TEST(ComputeProfiles, FsdpPrefetchLeavesOneLayerOfTheDataParallelTimeExposed)
{
    const CountedModel m = gptModel(32, 4096, 32, 50000);
    TrainingConfig c = computeConfig();
    c.zeroStage = 3;
    c.microBatch = 8; // enough compute to hide the rest
    const double params = 12.0 * 32 * 4096 * 4096 + 50000.0 * 4096;
    const double dpS = 3 * 7.0 / 8 * 2 * params / 900e9;
    c.framework = profile("generic", SelectivePolicy::AttentionCore, DpOverlap::None);
    EXPECT_NEAR(computeFor(m, c, 8).communication.exposedS, dpS, dpS * 1e-9);
    c.framework = profile("torchtitan", SelectivePolicy::PerOpSac, DpOverlap::Prefetch);
    const TrainingCompute r = computeFor(m, c, 8);
    EXPECT_NEAR(r.communication.dpS, dpS, dpS * 1e-9);
    EXPECT_NEAR(r.communication.exposedS, dpS / 32, dpS * 1e-9);
}

// DDP buckets (bucket_cap_mb 25 = 26,214,400 B): the all-reduce of every bucket but the last
// overlaps the backward. 7B of bf16 gradients = 14e9 B: exposed 26,214,400 / 14e9 of it.
// Below ZeRO-3 a "prefetch"-only framework (torchtitan's FSDP2) hides nothing.
TEST(ComputeProfiles, DdpBucketsLeaveTheLastBucketExposed)
{
    TrainingConfig c = computeConfig();
    c.microBatch = 64;
    c.framework = profile("hf", SelectivePolicy::Full, DpOverlap::BucketsAndPrefetch);
    c.framework.gradBucketBytes = 26214400;
    const CountedModel m = bareModel(7e9, 32, 4096);
    const double dpS = 2 * 7.0 / 8 * 2 * 7e9 / 900e9;
    const TrainingCompute r = computeFor(m, c, 8);
    EXPECT_NEAR(r.communication.exposedS, dpS * 26214400 / 14e9, dpS * 1e-9);
    c.framework.dpOverlap = DpOverlap::Prefetch;
    EXPECT_NEAR(computeFor(m, c, 8).communication.exposedS, dpS, dpS * 1e-9);
}

// Megatron-LM's --overlap-grad-reduce / --overlap-param-gather under the distributed optimizer
// (ZeRO-1), by hand for a 7B of bf16 weights and gradients on 8 GPUs over NVLink at 900 GB/s
// (seed 001's H100): the reduce-scatter and the all-gather each move 7/8 x 2 B x 7e9 = 12.25e9 B,
// 13.61 ms. Megatron's bucket is max(40e6, 1e6 x 8) = 40e6 parameters, 40e6 / 7e9 = 0.571% of
// each: with a window longer than both, only that bucket of each stays exposed. Without the plan
// keys the megatron profile (dp_overlap none) exposes all of it.
TEST(ComputeProfiles, MegatronDpOverlapLeavesOneBucketOfEachCollectiveExposed)
{
    TrainingConfig c = computeConfig();
    c.zeroStage = 1;
    c.microBatch = 64; // one micro-batch of 262,144 tokens: seconds of compute, a wide window
    c.framework = profile("megatron", SelectivePolicy::AttentionCore, DpOverlap::None);
    c.framework.overlapBucketParams = 40e6;
    c.framework.overlapBucketParamsPerDp = 1e6;
    const CountedModel m = bareModel(7e9, 32, 4096);
    const double collectiveS = 7.0 / 8 * 2 * 7e9 / 900e9;
    const TrainingCompute off = computeFor(m, c, 8);
    EXPECT_NEAR(off.communication.dpS, 2 * collectiveS, collectiveS * 1e-9);
    EXPECT_NEAR(off.communication.exposedS, 2 * collectiveS, collectiveS * 1e-9);
    c.overlapGradReduce = true;
    const TrainingCompute grad = computeFor(m, c, 8);
    EXPECT_NEAR(grad.communication.exposedS, collectiveS * (1 + 40e6 / 7e9), collectiveS * 1e-9);
    c.overlapParamGather = true;
    const TrainingCompute both = computeFor(m, c, 8);
    EXPECT_NEAR(both.communication.exposedS, 2 * collectiveS * 40e6 / 7e9, collectiveS * 1e-9);
    // At dp 64 over the network the bucket grows to 64e6 parameters (1e6 x dp).
    c.framework.overlapBucketParams = 0;
    const TrainingCompute perDp = computeFor(m, c, 8);
    EXPECT_NEAR(perDp.communication.exposedS, 2 * collectiveS * 8e6 / 7e9, collectiveS * 1e-9);
}

// The reduction waits for the last micro-batch: gradients accumulate locally before it, so the
// overlap is bounded by one micro-batch's backward, not the step's (issue 22: the planner must
// not favour huge accumulation for hiding DP traffic). The same 7B, ZeRO-1, both switches on,
// one 4,096-token sequence per micro-batch: (6 x 7e9 + 12 l s h = 12 x 32 x 4096 x 4096) x 4096
// / (989e12 x 0.45) = 0.4458 s of compute each, the backward 2/3 of it (0.2972 s) and the
// forward 1/3 (0.1486 s). With one GPU per node the 8 ranks meet over the 50 GB/s network and
// each collective takes 7/8 x 2 x 7e9 / 50e9 = 245 ms: the reduction hides 243.6 ms behind the
// backward, the all-gather only the forward's 148.6 ms, whatever the accumulation.
TEST(ComputeProfiles, DpOverlapHidesBehindOneMicroBatchWhateverTheAccumulation)
{
    TrainingConfig c = computeConfig();
    c.zeroStage = 1;
    c.framework = profile("megatron", SelectivePolicy::AttentionCore, DpOverlap::None);
    c.framework.overlapBucketParams = 40e6;
    c.overlapGradReduce = true;
    c.overlapParamGather = true;
    const CountedModel m = bareModel(7e9, 32, 4096);
    const double computeS = (6 * 7e9 + 12.0 * 32 * 4096 * 4096) * 4096 / (989e12 * 0.45);
    for (const int accum : { 1, 32 }) {
        c.gradAccum = accum;
        // One GPU per node: the 8 ranks reach each other over the 50 GB/s network.
        const TrainingCompute r = computeFor(m, c, 8, seed001H100(), 1);
        ASSERT_NEAR(r.computeTimeS, computeS * accum, computeS * accum * 1e-6) << accum;
        const double collectiveS = 7.0 / 8 * 2 * 7e9 / 50e9;
        EXPECT_NEAR(r.communication.dpS, 2 * collectiveS, collectiveS * 1e-9) << accum;
        const double hidden = std::min(collectiveS * (1 - 40e6 / 7e9), computeS * 2 / 3)
            + std::min(collectiveS * (1 - 40e6 / 7e9), computeS / 3);
        EXPECT_NEAR(r.communication.exposedS, 2 * collectiveS - hidden, collectiveS * 1e-6) << accum;
    }
}

// ZeRO-3: overlap_param_gather turns the prefetch rule on or off whatever the framework says
// (all-gathers a layer ahead: 1 - 1/32 of the DP time hidden for 32 layers).
TEST(ComputeProfiles, OverlapParamGatherSwitchesTheZero3Prefetch)
{
    TrainingConfig c = computeConfig();
    c.zeroStage = 3;
    c.microBatch = 64;
    c.framework = profile("generic", SelectivePolicy::AttentionCore, DpOverlap::None);
    const CountedModel m = bareModel(7e9, 32, 4096);
    const TrainingCompute off = computeFor(m, c, 8);
    ASSERT_GT(off.communication.dpS, 0);
    EXPECT_NEAR(off.communication.exposedS, off.communication.dpS, 1e-12);
    c.overlapParamGather = true;
    EXPECT_NEAR(computeFor(m, c, 8).communication.exposedS, off.communication.dpS / 32, 1e-12);
    c.framework.dpOverlap = DpOverlap::Prefetch;
    c.overlapParamGather = false;
    EXPECT_NEAR(computeFor(m, c, 8).communication.exposedS, off.communication.dpS, 1e-12);
}

// TP collectives sit between dependent matmuls and stay exposed unless async TP decomposes
// them (training.async_tp). The plan's comm_overlap applies to what the framework leaves:
// 1 - (1 - 0) x (1 - 0.5) = 0.5 of the TP time hides.
TEST(ComputeProfiles, TensorParallelTimeHidesOnlyUnderAsyncTp)
{
    const CountedModel m = gptModel(32, 4096, 32, 50000);
    TrainingConfig c = computeConfig();
    c.tp = 8;
    c.microBatch = 4;
    const TrainingCompute exposed = computeFor(m, c, 8);
    ASSERT_GT(exposed.communication.tpS, 0);
    EXPECT_NEAR(exposed.communication.exposedS, exposed.communication.tpS, 1e-12);
    c.asyncTp = true;
    EXPECT_NEAR(computeFor(m, c, 8).communication.exposedS, 0, 1e-12);
    c.asyncTp = false;
    c.commOverlap = 0.5;
    EXPECT_NEAR(computeFor(m, c, 8).communication.exposedS, 0.5 * exposed.communication.tpS, 1e-12);
}

// Korthikanti et al. 2022 Table 5 (selective recompute + sequence parallelism on A100, s 2048,
// V 51,200): MFU -> HFU 22B 41.5 -> 43.7, 175B 51.4 -> 52.8, 530B 56.0 -> 57.0, 1T 56.3 -> 57.0
// (Megatron-LM README's table). Shapes from their Table 3: 22B l 48 h 6144, 175B l 96 h 12288,
// 530B l 105 h 20480, 1T l 128 h 25600. Their HFU counts the attention term as s/(3h), their
// MFU as s/(6h) (eq. 8 bracket): HFU / MFU = (1 + s/3h + V/12lh) / (1 + s/6h + V/12lh),
// 1.0519 for 22B. Envelope's default counts the forward re-run only, s/(6h) + s/(18h):
// (1 + 2s/9h + V/12lh) / (1 + s/6h + V/12lh) = 1.0173 for 22B (42.2 %).
TEST(ComputeProfiles, KorthikantiTable5HfuUnderTheirConvention)
{
    struct Row {
        int layers;
        double hidden, heads, mfu, hfu;
    };
    const Row rows[] = { { 48, 6144, 64, 0.415, 0.437 }, { 96, 12288, 96, 0.514, 0.528 },
        { 105, 20480, 128, 0.560, 0.570 }, { 128, 25600, 160, 0.563, 0.570 } };
    const double s = 2048, v = 51200, peak = 312e12;
    for (const Row& row : rows) {
        const CountedModel m
            = gptModel(row.layers, std::int64_t(row.hidden), int(row.heads), 51200);
        const double l = row.layers, h = row.hidden;
        const double modelFlops = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
        TrainingConfig c = computeConfig();
        c.seqLen = 2048;
        c.recompute = Recompute::Selective;
        c.observedTokensPerS = row.mfu * peak / modelFlops; // one GPU at the table's MFU
        c.hfuConvention = HfuConvention::Korthikanti;
        Gpu a100 = h100();
        a100.bf16Flops = peak;
        const TrainingCompute theirs = computeFor(m, c, 1, a100);
        ASSERT_TRUE(theirs.observedMfu && theirs.observedHfu);
        EXPECT_NEAR(*theirs.observedMfu, row.mfu, 1e-9) << row.layers;
        EXPECT_NEAR(*theirs.observedHfu, row.hfu, 0.001) << "Table 5, " << row.layers << " layers";
        c.hfuConvention = HfuConvention::Forward;
        const double forward = row.mfu * (1 + 2 * s / (9 * h) + v / (12 * l * h))
            / (1 + s / (6 * h) + v / (12 * l * h));
        EXPECT_NEAR(*computeFor(m, c, 1, a100).observedHfu, forward, 1e-9);
    }
}

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

std::string readError(const std::string& training)
{
    const Expected<Plan> plan = readPlan(
        R"({"model": "llama-3-8b", "gpu": "h100-sxm", "cluster": {"gpus": 16, "gpus_per_node": 8},
            "training": )"
            + training + "}",
        presets());
    return plan.ok() ? std::string() : plan.error().toString();
}

// A plan without `mfu` runs at its framework's kernel_efficiency: torchtitan 0.40 (its 2024
// performance.md: 405B on 128 H100, MFU 29.0% under full AC = 38.7% HFU with exposed TP),
// Megatron 0.47 (Megatron-Core: up to 47% MFU on H100); a plan's own `mfu` wins; generic 0.45.
TEST(ComputeProfiles, TheKernelEfficiencyDefaultsToTheFrameworks)
{
    const auto mfu = [](const std::string& training) {
        const Expected<Plan> plan = readPlan(
            R"({"model": "llama-3-8b", "gpu": "h100-sxm", "training": )" + training + "}",
            presets());
        EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().toString());
        return plan.ok() ? plan->training.mfu : 0.0;
    };
    EXPECT_DOUBLE_EQ(mfu(R"({})"), 0.45);
    EXPECT_DOUBLE_EQ(mfu(R"({"framework": "torchtitan"})"), 0.40);
    EXPECT_DOUBLE_EQ(mfu(R"({"framework": "megatron"})"), 0.47);
    EXPECT_DOUBLE_EQ(mfu(R"({"framework": "torchtitan", "mfu": 0.3})"), 0.3);
}

// The new keys read, write back and name themselves in errors.
TEST(ComputeProfiles, AsyncTpHsdpAndHfuConventionReadWriteAndNameTheField)
{
    const Expected<Plan> plan = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "cluster": {"gpus": 16, "gpus_per_node": 8},
        "training": {"zero_stage": 3, "async_tp": true, "hsdp_shard": 8,
                     "hfu_convention": "korthikanti"}})",
        presets());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_TRUE(plan->training.asyncTp);
    EXPECT_EQ(plan->training.hsdpShard, 8);
    EXPECT_EQ(plan->training.hfuConvention, HfuConvention::Korthikanti);
    const Expected<Plan> again = readPlan(writePlan(*plan), presets());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *plan);
    EXPECT_NE(readError(R"({"hfu_convention": "palm"})").find("training.hfu_convention"),
        std::string::npos);
    // 16 GPUs = dp 16: a shard group of 3 does not divide it; HSDP needs ZeRO-3.
    EXPECT_NE(readError(R"({"zero_stage": 3, "hsdp_shard": 3})")
                  .find("training.hsdp_shard: must "
                        "divide the sharding group 16"),
        std::string::npos);
    EXPECT_NE(readError(R"({"zero_stage": 1, "hsdp_shard": 8})").find("needs zero_stage 3"),
        std::string::npos);
}

// The DP overlap switches read, write back only when given (unset = the framework's default),
// and a value that is not a boolean names the field.
TEST(ComputeProfiles, DpOverlapSwitchesReadWriteAndNameTheField)
{
    const Expected<Plan> plan = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "cluster": {"gpus": 16, "gpus_per_node": 8},
        "training": {"framework": "megatron", "zero_stage": 1, "overlap_grad_reduce": true,
                     "overlap_param_gather": false}})",
        presets());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_EQ(plan->training.overlapGradReduce, std::optional<bool>(true));
    EXPECT_EQ(plan->training.overlapParamGather, std::optional<bool>(false));
    const std::string written = writePlan(*plan);
    EXPECT_NE(written.find("\"overlap_param_gather\": false"), std::string::npos) << written;
    const Expected<Plan> again = readPlan(written, presets());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *plan);
    const Expected<Plan> unset = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "training": {"framework": "megatron"}})", presets());
    ASSERT_TRUE(unset.ok());
    EXPECT_FALSE(unset->training.overlapGradReduce.has_value());
    EXPECT_EQ(writePlan(*unset).find("overlap_grad_reduce"), std::string::npos);
    EXPECT_NE(readError(R"({"overlap_grad_reduce": "yes"})").find("training.overlap_grad_reduce"),
        std::string::npos);
}

} // namespace
} // namespace envelope
