// Communication per step (ZeRO volumes, link choice, overlap), the bottleneck, the budget
// solver's other directions, edge inputs and the explanations.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// ZeRO (Rajbhandari et al. 2020) sec. 7: stages 1-2 move 2 Psi per GPU like the all-reduce
// (reduce-scatter + all-gather), stage 3 moves 3 Psi: 1.5x. 7B on 8 GPUs of one node:
// all-reduce 2 x 7/8 x 2 B x 7e9 = 24.5 GB at 900 GB/s.
TEST(ComputeComm, ZeroStagesOneAndTwoMatchTheAllReduceAndStageThreeIsOneAndAHalfTimes)
{
    TrainingConfig c = computeConfig();
    const double allReduce = 2 * 7.0 / 8 * 2 * 7e9;
    EXPECT_NEAR(computeFor(sixPsiModel(7e9), c, 8).communication.dpBytes, allReduce, 1);
    for (int stage : { 1, 2 }) {
        c.zeroStage = stage;
        EXPECT_NEAR(computeFor(sixPsiModel(7e9), c, 8).communication.dpBytes, allReduce, 1)
            << "stage " << stage;
    }
    c.zeroStage = 3;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_NEAR(r.communication.dpBytes, 1.5 * allReduce, 1);
    EXPECT_NEAR(r.communication.dpS, 1.5 * allReduce / 900e9, 1e-12);
}

// fp32 gradients (the 18 B recipe) double the all-reduced bytes: 2 x 7/8 x 4 B x 7e9.
TEST(ComputeComm, GradientBytesFollowTheRecipe)
{
    TrainingConfig c = computeConfig();
    c.recipe.recipe.gradientBytes = 4;
    EXPECT_NEAR(computeFor(sixPsiModel(7e9), c, 8).communication.dpBytes, 2 * 7.0 / 8 * 4 * 7e9, 1);
}

// TP and PP each hold 1/(tp pp) of the parameters, so each GPU syncs that share over dp.
TEST(ComputeComm, DataParallelSyncsTheShardEachGpuHolds)
{
    TrainingConfig c = computeConfig();
    c.tp = 4;
    c.pp = 2;
    // 64 GPUs -> dp = 8; 70e9 / 8 params per GPU, 2 x 7/8 x 2 B each.
    const TrainingCompute r = computeFor(sixPsiModel(70e9), c, 64);
    EXPECT_NEAR(r.communication.dpBytes, 2 * 7.0 / 8 * 2 * 70e9 / 8, 1);
}

// Routed experts sync over the expert-data-parallel group dp / ep with 1/ep of the experts.
TEST(ComputeComm, RoutedExpertsSyncOverTheExpertDataParallelGroup)
{
    testing::CountedModel m = sixPsiModel(47e9);
    m.counts.active = 13e9;
    m.counts.moeLayers = 32;
    m.counts.expertParamsPerLayer = 45e9 / 32; // 45e9 in experts, 2e9 elsewhere
    TrainingConfig c = computeConfig();
    c.ep = 4; // 8 GPUs: dp = 8, expert dp = 2
    const TrainingCompute r = computeFor(m, c, 8);
    const double dense = 2 * 7.0 / 8 * 2 * 2e9;
    const double experts = 2 * 1.0 / 2 * 2 * 45e9 / 4;
    EXPECT_NEAR(r.communication.dpBytes, dense + experts, 1e3);
}

// Tensor parallelism stays on NVLink while tp <= GPUs per node; 16-way crosses the NIC.
TEST(ComputeComm, TensorParallelLinkIsNvlinkInsideANode)
{
    TrainingConfig c = computeConfig();
    c.tp = 8;
    const testing::CountedModel m = gptModel(80, 8192, 64, 32000);
    const TrainingCompute inside = computeFor(m, c, 8);
    EXPECT_NEAR(inside.communication.tpS, inside.communication.tpBytes / 900e9, 1e-12);

    c.tp = 16;
    const TrainingCompute across = computeFor(m, c, 16);
    EXPECT_NEAR(across.communication.tpS, across.communication.tpBytes / 50e9, 1e-12);
}

// Data parallel inside one node uses NVLink; once its ranks span nodes, the NIC.
TEST(ComputeComm, DataParallelLinkCrossesNodesWhenTheGroupSpansThem)
{
    const TrainingConfig c = computeConfig();
    const TrainingCompute node = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_NEAR(node.communication.dpS, node.communication.dpBytes / 900e9, 1e-12);
    const TrainingCompute cluster = computeFor(sixPsiModel(7e9), c, 16);
    EXPECT_NEAR(cluster.communication.dpS, cluster.communication.dpBytes / 50e9, 1e-12);
}

// Full recompute repeats the forward pass and with it the forward pair of TP all-reduces.
TEST(ComputeComm, FullRecomputeAddsTheForwardAllReducesAgain)
{
    TrainingConfig c = computeConfig();
    c.tp = 8;
    const testing::CountedModel m = gptModel(80, 8192, 64, 32000);
    const double plain = computeFor(m, c, 8).communication.tpBytes;
    c.recompute = Recompute::Full;
    EXPECT_NEAR(computeFor(m, c, 8).communication.tpBytes, plain * 6 / 4, 1);
}

// Pipeline p2p: 2 x m x b x s x h x 2 B per GPU per step (activation forward, gradient back).
TEST(ComputeComm, PipelineSendsOneActivationAndOneGradientPerMicroBatch)
{
    TrainingConfig c = computeConfig();
    c.pp = 4;
    c.gradAccum = 16;
    const TrainingCompute r = computeFor(gptModel(32, 4096, 32, 32000), c, 4);
    EXPECT_NEAR(r.communication.ppS, 2 * 16 * 4096.0 * 4096 * 2 / 900e9, 1e-12);
}

// Context parallel (ring attention): 3 (cp-1) K,V chunks per layer and micro-batch.
// Llama-3-8B-like: 8 K/V heads x 128, s = 32768 over cp = 4 -> 8192 local tokens.
TEST(ComputeComm, ContextParallelMovesKeyValueChunksAroundTheRing)
{
    testing::CountedModel m = gptModel(32, 4096, 32, 128256);
    m.arch.kvHeads = 8;
    TrainingConfig c = computeConfig();
    c.cp = 4;
    c.seqLen = 32768;
    const TrainingCompute r = computeFor(m, c, 4);
    const double chunk = 8192.0 * 8 * (128 + 128) * 2; // K and V, 2 B
    EXPECT_NEAR(r.communication.cpS, 3 * 3 * chunk * 32 / 900e9, 1e-12);
}

// Expert parallel: 4 all-to-alls per MoE layer of tokens x top-k x h x 2 B x (ep-1)/ep.
TEST(ComputeComm, ExpertParallelAllToAllsPerMoeLayer)
{
    testing::CountedModel m = gptModel(32, 4096, 32, 32000);
    m.arch.moe = MoeConfig { 8, 2, 0, 14336, 0, false };
    m.counts.moeLayers = 32;
    TrainingConfig c = computeConfig();
    c.ep = 8;
    const TrainingCompute r = computeFor(m, c, 8);
    const double message = 4096.0 * 2 * 4096 * 2 * 7 / 8;
    EXPECT_NEAR(r.communication.epS, 4 * message * 32 / 900e9, 1e-12);
}

// comm_overlap hides that fraction behind compute, but no more than the compute time.
TEST(ComputeComm, OverlapHidesCommunicationUpToTheComputeTime)
{
    TrainingConfig c = computeConfig();
    c.commOverlap = 0.5;
    TrainingCompute r = computeFor(sixPsiModel(7e9), c, 16);
    const double comm = r.communication.dpS;
    ASSERT_LT(0.5 * comm, r.computeTimeS);
    EXPECT_NEAR(r.communication.exposedS, 0.5 * comm, 1e-12);
    EXPECT_NEAR(r.stepTimeS, r.computeTimeS + 0.5 * comm, 1e-12);

    // A slow NIC: 1 GB/s makes the all-reduce (2 x 15/16 x 14 GB = 26 GB) outlast the compute.
    Gpu slow = seed001H100();
    slow.interNodeBytesPerS = 1e9;
    c.commOverlap = 1.0;
    r = computeFor(sixPsiModel(7e9), c, 16, slow);
    ASSERT_GT(r.communication.dpS, r.computeTimeS);
    EXPECT_NEAR(r.communication.exposedS, r.communication.dpS - r.computeTimeS, 1e-9);
    EXPECT_NEAR(r.stepTimeS, r.communication.dpS, 1e-9);
    EXPECT_EQ(r.bottleneck, "dp-comm");
}

// Interleaving divides the idle time by v (Narayanan et al. 2021 sec. 2.2.2):
// (p-1)/(v m) of the ideal time, (p-1)/(v m + p - 1) of the step. p = 8, m = 32, v = 2: 7/71.
TEST(ComputeComm, InterleavedScheduleDividesTheBubbleByVirtualStages)
{
    TrainingConfig c = computeConfig();
    c.pp = 8;
    c.gradAccum = 32;
    c.virtualStages = 2;
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_NEAR(r.communication.ppBubbleFraction, 7.0 / 71.0, 1e-12);
    EXPECT_NEAR(r.communication.ppBubbleS, r.computeTimeS * 7 / 64, 1e-12);
}

TEST(ComputeComm, FewMicroBatchesMakeTheBubbleTheBottleneck)
{
    TrainingConfig c = computeConfig();
    c.pp = 8;
    c.gradAccum = 1; // bubble = 7 x the ideal time, 7/8 of the step
    const TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_EQ(r.bottleneck, "pp-bubble");
    EXPECT_NEAR(r.bottleneckS, 7 * r.computeTimeS, 1e-12);
    EXPECT_NEAR(r.effectiveMfu, 0.45 / 8, 1e-3);
}

// HFU counts the recomputed forward too (Korthikanti et al. 2022 sec. 6). One GPU, no
// communication, so the step is the compute time at the plan's kernel efficiency 0.45, which
// the hardware FLOPs run at: HFU = 0.45. A 6P model under full recompute runs 2P + 6P = 8P FLOPs
// per token on the hardware, so the model FLOPs achieve MFU = 0.45 x 6 / 8 = 0.3375. Without
// recompute the hardware runs what the model counts: HFU = MFU = 0.45.
TEST(ComputeUtilisation, FullRecomputeRaisesHfuByTheRepeatedForward)
{
    TrainingConfig c = computeConfig();
    c.recompute = Recompute::Full;
    TrainingCompute r = computeFor(sixPsiModel(7e9), c, 1);
    EXPECT_NEAR(r.effectiveMfu, 0.3375, 1e-12);
    EXPECT_NEAR(r.hfu, 0.45, 1e-12);

    c.recompute = Recompute::None;
    r = computeFor(sixPsiModel(7e9), c, 1);
    EXPECT_NEAR(r.hfu, 0.45, 1e-12);
}

// Deadline + MFU give the GPUs; budget + MFU the tokens the money buys and the deadline.
// 30B, 2T tokens, 45% MFU, 30 days: 3.6e23 / (989e12 x 0.45 x 2,592,000) = 312.07 -> 313.
TEST(ComputeSolver, DeadlineAndMfuGiveTheGpuCount)
{
    TrainingConfig c = computeConfig();
    c.deadlineS = 30 * 86400.0;
    const TrainingCompute r = computeFor(sixPsiModel(30e9), c, 640);
    ASSERT_TRUE(r.gpusForDeadline.has_value());
    EXPECT_EQ(*r.gpusForDeadline, 313);
    EXPECT_FALSE(r.affordableGpus.has_value()); // no budget given
}

TEST(ComputeSolver, BudgetAndMfuGiveTokensAndTheDeadline)
{
    TrainingConfig c = computeConfig();
    c.budgetUsd = 2e6;
    c.trainTokens = 600e9;
    TrainingCompute r = computeFor(sixPsiModel(30e9), c, 8); // one node: NVLink, tiny comm
    ASSERT_TRUE(r.budgetTokens.has_value());
    // 500,000 GPU-hours x 3600 s x tokens/s per GPU.
    EXPECT_NEAR(*r.budgetTokens, 2e6 / 4 * 3600 * r.tokensPerSPerGpu, 1);
    ASSERT_LE(r.cost, 2e6);
    ASSERT_TRUE(r.achievableDeadlineS.has_value());
    EXPECT_DOUBLE_EQ(*r.achievableDeadlineS, r.trainTimeS);

    c.budgetUsd = 1e3; // far too little: no deadline can be met
    r = computeFor(sixPsiModel(30e9), c, 8);
    EXPECT_FALSE(r.achievableDeadlineS.has_value());
}

bool allFinite(const TrainingCompute& r)
{
    const Communication& c = r.communication;
    for (double x : { r.flopsPerToken, r.hardwareFlopsPerToken, r.forwardFlopsPerToken,
             r.globalBatchTokens, r.peakFlopsPerGpu, r.stepFlops, r.tokensPerS, r.tokensPerSPerGpu,
             r.effectiveMfu, r.hfu, c.dpS, c.tpS, c.ppS, c.cpS, c.epS, c.exposedS,
             c.ppBubbleFraction, c.dpBytes, c.tpBytes })
        if (!std::isfinite(x))
            return false;
    return true;
}

TEST(ComputeEdges, ZeroOrNegativeGpuCountsRunOnOneGpu)
{
    for (int gpus : { 0, -4 }) {
        const TrainingCompute r = computeFor(sixPsiModel(7e9), computeConfig(), gpus);
        EXPECT_EQ(r.gpus, 1);
        EXPECT_TRUE(allFinite(r));
        EXPECT_TRUE(std::isfinite(r.stepTimeS));
        EXPECT_GT(r.tokensPerS, 0);
    }
}

// MFU 0 (or a GPU without a peak) never finishes: infinite time and cost, zero throughput.
TEST(ComputeEdges, NoUtilisationMeansInfiniteTimeNotNan)
{
    TrainingConfig c = computeConfig();
    c.mfu = 0;
    c.pp = 4;
    TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_TRUE(allFinite(r));
    EXPECT_TRUE(std::isinf(r.stepTimeS) && r.stepTimeS > 0);
    EXPECT_TRUE(std::isinf(r.trainTimeS) && std::isinf(r.gpuHours) && std::isinf(r.cost));
    EXPECT_EQ(r.tokensPerS, 0);
    EXPECT_EQ(r.bottleneck, "compute");

    Gpu free = seed001H100();
    free.pricePerHour = 0;
    free.bf16Flops = 0;
    c.mfu = 0.45;
    r = computeFor(sixPsiModel(7e9), c, 8, free);
    EXPECT_TRUE(allFinite(r));
    EXPECT_EQ(r.cost, 0); // no inf x 0
}

TEST(ComputeEdges, DegenerateBatchesAndNonsenseInputsStayFinite)
{
    TrainingConfig c = computeConfig();
    c.microBatch = 0;
    TrainingCompute r = computeFor(sixPsiModel(7e9), c, 8);
    EXPECT_TRUE(allFinite(r));
    EXPECT_EQ(r.tokensPerS, 0);
    EXPECT_TRUE(std::isinf(r.trainTimeS));

    c = computeConfig();
    c.seqLen = -5;
    c.gradAccum = 0;
    c.tp = 0;
    c.mfu = std::nan("");
    c.commOverlap = 7;
    c.budgetUsd = 1e30;
    c.deadlineS = 1e-30;
    c.observedTokensPerS = -1;
    r = computeFor(gptModel(32, 4096, 32, 32000), c, 8);
    EXPECT_TRUE(allFinite(r));
    EXPECT_FALSE(r.observedMfu.has_value());
    EXPECT_FALSE(r.affordableGpus.has_value()); // beyond any real cluster
}

TEST(ComputeExplain, EveryResultKeyIsExplainedWithItsValue)
{
    TrainingConfig c = computeConfig();
    c.tp = 2;
    c.pp = 2;
    c.gradAccum = 8;
    c.recompute = Recompute::Selective;
    c.observedTokensPerS = 1e5;
    c.deadlineS = 30 * 86400.0;
    c.budgetUsd = 2e6;
    Explainer ex;
    const TrainingCompute r = computeFor(gptModel(32, 4096, 32, 32000), c, 16, seed001H100(), 8, &ex);
    const struct {
        const char* key;
        double value;
    } expected[] = {
        { "training.flops_per_token", r.flopsPerToken },
        { "training.hardware_flops_per_token", r.hardwareFlopsPerToken },
        { "training.forward_flops_per_token", r.forwardFlopsPerToken },
        { "training.step_time_s", r.stepTimeS },
        { "training.compute_time_s", r.computeTimeS },
        { "training.tokens_per_s", r.tokensPerS },
        { "training.hfu", r.hfu },
        { "training.train_time_s", r.trainTimeS },
        { "training.gpu_hours", r.gpuHours },
        { "training.cost", r.cost },
        { "training.communication.dp_s", r.communication.dpS },
        { "training.communication.tp_s", r.communication.tpS },
        { "training.communication.pp_s", r.communication.ppS },
        { "training.communication.exposed_s", r.communication.exposedS },
        { "training.communication.pp_bubble_fraction", r.communication.ppBubbleFraction },
        { "training.bottleneck", r.bottleneckS },
        { "training.observed_mfu", r.observedMfu.value_or(-1) },
        { "training.observed_hfu", r.observedHfu.value_or(-1) },
        { "training.required_mfu", r.requiredMfu.value_or(-1) },
        { "training.affordable_gpus", double(r.affordableGpus.value_or(-1)) },
        { "training.gpus_for_deadline", double(r.gpusForDeadline.value_or(-1)) },
    };
    for (const auto& e : expected) {
        const Explanation* found = ex.find(e.key);
        ASSERT_NE(found, nullptr) << e.key;
        EXPECT_DOUBLE_EQ(found->value, e.value) << e.key;
        EXPECT_FALSE(found->formula.empty()) << e.key;
        EXPECT_FALSE(found->source.empty()) << e.key;
    }
    EXPECT_NE(ex.find("training.bottleneck")->formula.find(r.bottleneck), std::string::npos);
}

TEST(ComputeExplain, ExplainingChangesNoFigure)
{
    TrainingConfig c = computeConfig();
    c.tp = 2;
    c.pp = 2;
    Explainer ex;
    const TrainingCompute quiet = computeFor(gptModel(32, 4096, 32, 32000), c, 16);
    const TrainingCompute told = computeFor(gptModel(32, 4096, 32, 32000), c, 16, seed001H100(), 8, &ex);
    EXPECT_DOUBLE_EQ(quiet.stepTimeS, told.stepTimeS);
    EXPECT_EQ(quiet.bottleneck, told.bottleneck);
    EXPECT_FALSE(ex.items().empty());
}

} // namespace
} // namespace envelope
