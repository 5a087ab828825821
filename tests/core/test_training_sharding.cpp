// The group the ZeRO states are sharded over (issue 12): torchtitan's FSDP over dp x cp, HSDP
// (training.hsdp_shard), and the FP8 weight casts torchtitan's Float8 linears keep. Hand
// calculations on a GPT shape: 32 layers of 12 h^2 = 201,326,592 parameters at h 4096, plus a
// tied 50,000 x 4096 embedding = 204,800,000: P = 6,647,267,328.
#include <gtest/gtest.h>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

constexpr double kLayerParams = 12.0 * 4096 * 4096;
constexpr double kParams = 32 * kLayerParams + 50000.0 * 4096;

TrainingConfig fsdpConfig()
{
    TrainingConfig c = computeConfig();
    c.zeroStage = 3;
    c.overhead.fixedBytes = 0;
    c.overhead.fragmentation = 0;
    return c;
}

// cp 2 on 16 GPUs: dp = 8. A profile that shards over dp alone (generic, DeepSpeed) holds
// 2 B x P / 8; torchtitan's FSDP and Megatron's grad buffers and distributed optimizer
// (intra_dp_cp_group) shard over dp x cp = 16 (2 B x P / 16).
TEST(TrainingSharding, TorchtitanShardsOverDataAndContextParallelRanks)
{
    TrainingConfig c = fsdpConfig();
    c.cp = 2;
    c.seqLen = 8192;
    const CountedModel m = gptModel(32, 4096, 32, 50000);
    const TrainingMemory dpOnly = estimateFor(m, c, 16, kH100Bytes);
    EXPECT_EQ(dpOnly.dataParallel, 8);
    EXPECT_NEAR(dpOnly.perGpu.weights, 2 * kParams / 8, 1);
    c.framework.shardOverCp = true;
    const TrainingMemory titan = estimateFor(m, c, 16, kH100Bytes);
    EXPECT_NEAR(titan.perGpu.weights, 2 * kParams / 16, 1);
    EXPECT_NEAR(titan.perGpu.gradients, 2 * kParams / 16, 1);
}

// HSDP with shards of 8 on 64 GPUs: every state is / 8 (replicated over the 8 groups), where
// full sharding divides by 64.
TEST(TrainingSharding, HsdpShardsWithinTheGroupAndReplicatesAcross)
{
    TrainingConfig c = fsdpConfig();
    const CountedModel m = gptModel(32, 4096, 32, 50000);
    EXPECT_NEAR(estimateFor(m, c, 64, kH100Bytes).perGpu.weights, 2 * kParams / 64, 1);
    c.hsdpShard = 8;
    const TrainingMemory r = estimateFor(m, c, 64, kH100Bytes);
    EXPECT_NEAR(r.perGpu.weights, 2 * kParams / 8, 1);
    EXPECT_NEAR(r.perGpu.gradients, 2 * kParams / 8, 1);
}

// HSDP 8 on 64 GPUs (8 nodes, seed 001's links: NVLink 900 GB/s, 50 GB/s across nodes),
// ZeRO-3 with 2 B weights and gradients: the all-gathers and reduce-scatter stay in the node,
// 7/8 x (2 + 2 x 2) B x P at 900 GB/s, and the gradient shard is all-reduced across the 8
// replicas, 2 x 7/8 x 2 B x P / 8 at 50 GB/s; full sharding moves 63/64 x 6 B x P at 50 GB/s.
TEST(TrainingSharding, HsdpKeepsTheShardTrafficInTheNode)
{
    TrainingConfig c = fsdpConfig();
    const CountedModel m = gptModel(32, 4096, 32, 50000);
    const double full = 63.0 / 64 * 6 * kParams / 50e9;
    EXPECT_NEAR(computeFor(m, c, 64).communication.dpS, full, full * 1e-9);
    c.hsdpShard = 8;
    const double shard = 7.0 / 8 * 6 * kParams / 900e9;
    const double replicas = 2 * 7.0 / 8 * 2 * kParams / 8 / 50e9;
    const TrainingCompute r = computeFor(m, c, 64);
    EXPECT_NEAR(r.communication.dpS, shard + replicas, full * 1e-9);
    EXPECT_NEAR(r.communication.dpBytes, 7.0 / 8 * 6 * kParams + 2 * 7.0 / 8 * 2 * kParams / 8, 1);
}

// torchtitan Float8: each all-gathered layer is cast to FP8 (1 B per parameter) and the cast
// kept for the backward; with two layers unsharded at once (FSDP prefetch): 2 x 12 h^2 x 1 B
// = 402,653,184 B on top of the bf16 all-gathers (2 x 12 h^2 x 2 B).
TEST(TrainingSharding, Fp8WeightCastsOfTheUnshardedLayers)
{
    TrainingConfig c = fsdpConfig();
    c.framework.prefetchLayers = 2;
    c.framework.fp8WeightCastBytes = 1;
    const CountedModel m = gptModel(32, 4096, 32, 50000);
    const TrainingMemory bf16 = estimateFor(m, c, 8, kH100Bytes);
    EXPECT_NEAR(bf16.bufferBytes, 2 * kLayerParams * 2, 1);
    c.recipe.recipe.compute = ComputeDtype::Fp8;
    const TrainingMemory fp8 = estimateFor(m, c, 8, kH100Bytes);
    EXPECT_NEAR(fp8.bufferBytes - bf16.bufferBytes, 2 * kLayerParams * 1, 1);
}

} // namespace
} // namespace envelope
