// Memory savers are priced (issue 11 item 3): recompute's extra forward costs compute time at
// the plan's kernel efficiency, and offload costs its host-link transfers and the CPU optimizer
// step. Expectations are hand calculations written out here.
#include <gtest/gtest.h>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

TEST(MemorySavers, FullRecomputeRunsOneMoreForwardAtTheKernelEfficiency)
{
    // 7e9 matmul parameters on one GPU, 4096 tokens: none = 6 P FLOPs per token, full
    // recompute 6 P + 2 P = 8 P. At kernel efficiency 0.45 on 989 TFLOP/s:
    const double none = 6 * 7e9 * 4096 / (989e12 * 0.45); // 0.2577 s
    const double full = 8 * 7e9 * 4096 / (989e12 * 0.45); // 0.3436 s
    TrainingConfig c = computeConfig();
    EXPECT_NEAR(computeFor(sixPsiModel(7e9), c, 1).stepTimeS, none, 1e-12);
    c.recompute = Recompute::Full;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 1);
    EXPECT_NEAR(r.computeTimeS, full, 1e-12);
    EXPECT_NEAR(r.stepTimeS, full, 1e-12);
    // The achieved MFU counts model FLOPs only: 0.45 x 6 / 8 = 0.3375; HFU stays at 0.45.
    EXPECT_NEAR(r.effectiveMfu, 0.3375, 1e-12);
    EXPECT_NEAR(r.hfu, 0.45, 1e-12);
}

TEST(MemorySavers, SelectiveRecomputeRepeatsOnlyTheAttentionCore)
{
    // GPT shape l = 24, h = 2048, 16 heads, V = 50257, s = 4096 (Narayanan et al. eq. 3):
    // P_mm = 12 l h^2 + V h (tied head); attention core forward 4 l s h per token.
    const double l = 24, h = 2048, s = 4096, v = 50257;
    const double pmm = 12 * l * h * h + v * h;
    const double attention = 4 * l * s * h;
    TrainingConfig c = computeConfig();
    c.recompute = Recompute::Selective;
    const TrainingCompute r = computeFor(gptModel(24, 2048, 16, 50257), c, 1);
    const double hardware = 3 * (2 * pmm + attention) + attention;
    EXPECT_NEAR(r.hardwareFlopsPerToken, hardware, hardware * 1e-12);
    EXPECT_NEAR(r.computeTimeS, hardware * s / (989e12 * 0.45), 1e-12);
}

TEST(MemorySavers, OptimizerOffloadAddsPcieTransfersAndTheCpuStep)
{
    // 7e9 parameters, ZeRO-2 over 8 GPUs of one node: each GPU's optimizer shard is
    // 7e9 / 8 = 875e6 parameters. Per step it sends 2 B gradients down and receives 2 B
    // weights: 875e6 x 4 = 3.5 GB at PCIe Gen5 x16's 64 GB/s = 54.7 ms. The CPU streams fp32
    // master (4) + Adam moments (2 x 4) in and out, the fp32 gradient in (4) and the 16-bit
    // weights out (2): 875e6 x 30 B = 26.25 GB at 76.8 GB/s per GPU = 341.8 ms.
    TrainingConfig c = computeConfig();
    c.recipe.recipe.masterBytes = 4;
    c.recipe.recipe.momentBytes = 4;
    c.optimizer = OptimizerKind::AdamW;
    c.zeroStage = 2;
    const TrainingCompute base = computeFor(sixPsiModel(7e9), c, 8);
    c.offloadOptimizer = true;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_DOUBLE_EQ(r.communication.offloadBytes, 3.5e9);
    EXPECT_NEAR(r.communication.offloadS, 3.5e9 / 64e9, 1e-12);
    EXPECT_NEAR(r.communication.cpuOptimizerS, 26.25e9 / 76.8e9, 1e-12);
    EXPECT_NEAR(r.stepTimeS, base.stepTimeS + 3.5e9 / 64e9 + 26.25e9 / 76.8e9, 1e-12);
    // Compute (6 x 7e9 x 8 x 4096 / (8 x 989e12 x 0.45) = 387 ms) stays the largest term, just
    // above the CPU step's 342 ms; the step grows by 396 ms.
    EXPECT_EQ(r.bottleneck, "compute");
}

TEST(MemorySavers, ParameterOffloadFetchesTheWeightShardPerForwardAndBackward)
{
    // ZeRO-3 over 8: a weight shard of 875e6 x 2 B = 1.75 GB fetched twice (forward and
    // backward) = 3.5 GB, three times under full recompute = 5.25 GB, at 64 GB/s.
    TrainingConfig c = computeConfig();
    c.zeroStage = 3;
    c.offloadParams = true;
    EXPECT_DOUBLE_EQ(computeFor(sixPsiModel(7e9), c, 8).communication.offloadBytes, 3.5e9);
    c.recompute = Recompute::Full;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_DOUBLE_EQ(r.communication.offloadBytes, 5.25e9);
    EXPECT_NEAR(r.communication.offloadS, 5.25e9 / 64e9, 1e-12);
}

} // namespace
} // namespace envelope
