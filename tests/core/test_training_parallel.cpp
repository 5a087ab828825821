// Pipeline stages, expert parallelism, offload, min_gpus and fits, each against hand arithmetic
// on hand-built parameter counts.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures.h"
#include "training/memory.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// A dense model with named parts: embedding 1e9, LM head 1.5e9, 8 layers of 1e9 (attention
// 0.4e9 + FFN 0.6e9), no norms: 10.5e9 in all.
CountedModel partsModel()
{
    CountedModel m = bareModel(10.5e9, 8, 4096);
    m.counts.embedding = 1e9;
    m.counts.lmHead = 1.5e9;
    m.counts.attentionPerLayer = 0.4e9;
    m.counts.denseFfnPerLayer = 0.6e9;
    m.counts.denseLayers = 8;
    return m;
}

TrainingConfig staticOnly()
{
    TrainingConfig c = seedConfig();
    c.activationModel.bytesPerSbhPerLayer = 0;
    return c;
}

TEST(TrainingParallel, PipelineStagesSplitLayersAndTheHeadStageIsWorst)
{
    // pp = 4: 2 layers per stage. Stage 0: 2e9 + embedding 1e9 = 3e9; stage 3: 2e9 + head 1.5e9
    // = 3.5e9 -> the worst; 16 B/param x 3.5e9 = 56 GB.
    TrainingConfig c = staticOnly();
    c.pp = 4;
    const TrainingMemory r = estimateFor(partsModel(), c, 4, kH100Bytes);
    EXPECT_EQ(r.worstStage, 3);
    EXPECT_DOUBLE_EQ(r.paramsOnWorstGpu, 3.5e9);
    EXPECT_DOUBLE_EQ(r.perGpu.weights, 2 * 3.5e9);
    EXPECT_DOUBLE_EQ(r.perGpu.total(), 16 * 3.5e9);
}

TEST(TrainingParallel, FirstStageBecomesWorstWhenActivationsDominate)
{
    // Add the seeds' activations (24 x s x h per layer per micro-batch): stage 0 keeps 4
    // micro-batches of 2 layers, stage 3 keeps one. 24 x 4096 x 4096 = 402,653,184 per layer.
    TrainingConfig c = seedConfig();
    c.pp = 4;
    c.gradAccum = 8;
    const TrainingMemory r = estimateFor(partsModel(), c, 4, kH100Bytes);
    const double layer = 24.0 * 4096 * 4096;
    // Stage 0: 16 x 3e9 + 8 x layer = 51.22 GB; stage 3: 16 x 3.5e9 + 2 x layer = 56.81 GB.
    EXPECT_EQ(r.worstStage, 3);
    c.microBatch = 4; // stage 0: 48e9 + 32 x layer = 60.9 GB; stage 3: 56e9 + 8 x layer = 59.2 GB
    const TrainingMemory r4 = estimateFor(partsModel(), c, 4, kH100Bytes);
    EXPECT_EQ(r4.worstStage, 0);
    EXPECT_DOUBLE_EQ(r4.perGpu.total(), 16 * 3e9 + 4 * 2 * 4 * layer);
}

TEST(TrainingParallel, UnevenLayersGiveTheLastStageTheRemainder)
{
    // 10 layers of 1e9 over pp = 4: ceil(10/4) = 3 per stage, the last gets 1.
    CountedModel m = bareModel(10e9, 10, 4096);
    m.counts.denseFfnPerLayer = 1e9;
    m.counts.denseLayers = 10;
    TrainingConfig c = staticOnly();
    c.pp = 4;
    const TrainingMemory r = estimateFor(m, c, 4, kH100Bytes);
    EXPECT_EQ(r.worstStage, 0);
    EXPECT_DOUBLE_EQ(r.paramsOnWorstGpu, 3e9);
}

TEST(TrainingParallel, TiedEmbeddingsKeepACopyOnTheLastStage)
{
    CountedModel m = partsModel();
    m.counts.lmHead = 0; // tied: the head is the embedding matrix
    m.counts.total = 9e9; // embedding 1e9 + 8 layers of 1e9
    m.arch.tiedEmbeddings = true;
    TrainingConfig c = staticOnly();
    EXPECT_DOUBLE_EQ(estimateFor(m, c, 1, kH100Bytes).paramsOnWorstGpu, 9e9); // pp = 1: once
    c.pp = 4;
    const TrainingMemory r = estimateFor(m, c, 4, kH100Bytes);
    // Both stage 0 and stage 3 hold 2e9 + 1e9; the first such stage is reported.
    EXPECT_DOUBLE_EQ(r.paramsOnWorstGpu, 3e9);
    EXPECT_EQ(r.worstStage, 0);
}

TEST(TrainingParallel, TensorParallelSplitsMatricesNotNorms)
{
    // tp = 4: embedding 1e9/4, head 1.5e9/4, layers 8e9/4, norms 8 x 1e6 replicated.
    CountedModel m = partsModel();
    m.counts.normsPerLayer = 1e6;
    m.counts.total += 8e6;
    TrainingConfig c = staticOnly();
    c.tp = 4;
    const TrainingMemory r = estimateFor(m, c, 4, kH100Bytes);
    EXPECT_DOUBLE_EQ(r.paramsOnWorstGpu, 10.5e9 / 4 + 8e6);
}

// A MoE model: 4 MoE layers of attention 1e8 + routed experts 8e8 + router 1e7, embedding and
// head 1e8 each: 3.84e9 in all.
CountedModel moeModel()
{
    CountedModel m = bareModel(3.84e9, 4, 4096);
    m.arch.moe = MoeConfig { 8, 2, 0, 14336, 0, false };
    m.counts.embedding = 1e8;
    m.counts.lmHead = 1e8;
    m.counts.attentionPerLayer = 1e8;
    m.counts.moeFfnPerLayer = 8.1e8;
    m.counts.expertParamsPerLayer = 8e8;
    m.counts.moeLayers = 4;
    return m;
}

TEST(TrainingParallel, ExpertParallelDividesRoutedExpertsAndTheirStates)
{
    // ep = 4, 8 GPUs (dp = 8), ZeRO-1. One GPU holds non-expert 2e8 + 4 x 1.1e8 = 6.4e8 and
    // experts 4 x 8e8 / 4 = 8e8. Optimizer state shards over dp = 8 for the non-expert part and
    // over the expert-data-parallel group dp / ep = 2 for the experts:
    // 12 x (6.4e8 / 8 + 8e8 / 2) = 5.76e9.
    TrainingConfig c = staticOnly();
    c.ep = 4;
    c.zeroStage = 1;
    const TrainingMemory r = estimateFor(moeModel(), c, 8, kH100Bytes);
    EXPECT_DOUBLE_EQ(r.paramsOnWorstGpu, 6.4e8 + 8e8);
    EXPECT_DOUBLE_EQ(r.perGpu.weights, 2 * 1.44e9);
    EXPECT_DOUBLE_EQ(r.perGpu.gradients, 2 * 1.44e9);
    EXPECT_DOUBLE_EQ(r.perGpu.optimizer, 12 * (6.4e8 / 8 + 8e8 / 2));
}

TEST(TrainingParallel, OptimizerOffloadMovesMasterMomentsAndPartitionedGradientsToTheHost)
{
    // 7e9 params, ZeRO-3 over 8 GPUs, optimizer offload: the GPU keeps the 2 B weight shard
    // (1.75 GB); the host keeps (4 master + 8 moments + 4 fp32 grads) x 7e9 / 8 = 14 GB per GPU,
    // 8 GPUs per node -> 112 GB per node.
    const CountedModel m = bareModel(7e9, 32, 4096);
    TrainingConfig c = staticOnly();
    c.zeroStage = 3;
    c.offloadOptimizer = true;
    const TrainingMemory r = estimateFor(m, c, 8, kH100Bytes);
    EXPECT_DOUBLE_EQ(r.perGpu.weights, 1.75e9);
    EXPECT_DOUBLE_EQ(r.perGpu.gradients, 0);
    EXPECT_DOUBLE_EQ(r.perGpu.optimizer, 0);
    EXPECT_DOUBLE_EQ(r.hostBytesPerNode, 8 * 14e9);
    // Parameter offload also moves the weights: + 2 x 7e9 / 8 per GPU on the host.
    c.offloadParams = true;
    const TrainingMemory both = estimateFor(m, c, 8, kH100Bytes);
    EXPECT_DOUBLE_EQ(both.perGpu.weights, 0);
    EXPECT_DOUBLE_EQ(both.hostBytesPerNode, 8 * (14e9 + 1.75e9));
    // Below ZeRO-2 gradients are not partitioned: the full 2 x 7e9 is reduced on the GPU before
    // its copy to the host; master and moments still leave (ZeRO-1: host 16 x 7e9 / 8 per GPU).
    c.offloadParams = false;
    c.zeroStage = 1;
    const TrainingMemory stage1 = estimateFor(m, c, 8, kH100Bytes);
    EXPECT_DOUBLE_EQ(stage1.perGpu.gradients, 14e9);
    EXPECT_DOUBLE_EQ(stage1.perGpu.optimizer, 0);
    EXPECT_DOUBLE_EQ(stage1.hostBytesPerNode, 8 * 14e9);
    // No offload, no host memory.
    c.offloadOptimizer = c.offloadParams = false;
    EXPECT_DOUBLE_EQ(estimateFor(m, c, 8, kH100Bytes).hostBytesPerNode, 0);
}

TEST(TrainingParallel, MinGpusSolvesZero1WithOverheadByHand)
{
    // ZeRO-1, 7e9, 16 B/param, no activations, overhead 2.5 GB + 10%:
    // 2.5e9 + 1.1 x (4 x 7e9 + 12 x 7e9 / dp) <= 85,520,809,984
    //   => 84e9 / dp <= (85,520,809,984 - 2.5e9) / 1.1 - 28e9 = 47.47e9  => dp >= 1.77 => 2.
    const CountedModel m = bareModel(7e9, 32, 4096);
    TrainingConfig c = staticOnly();
    c.zeroStage = 1;
    c.overhead = { 2.5e9, 0.10 };
    EXPECT_EQ(estimateFor(m, c, 1, kH100Bytes).minGpus, 2);
    // With tp = 2 kept fixed the states halve: 42e9 / dp <= 75.47e9 - 14e9 => dp >= 0.68 -> 1,
    // so the tp group alone (2 GPUs).
    c.tp = 2;
    EXPECT_EQ(estimateFor(m, c, 2, kH100Bytes).minGpus, 2);
}

TEST(TrainingParallel, MinGpusAgreesWithABruteForceSearch)
{
    // For a spread of settings, min_gpus is the first GPU count (a multiple of tp*pp*cp*ep) at
    // which the estimate's own verdict is `fits` (at or below the usable line, 0.9 x HBM), and
    // the one below it is not.
    const CountedModel dense = bareModel(70e9, 80, 8192, 64);
    const CountedModel moe = moeModel();
    struct Case {
        const CountedModel* model;
        int zero, tp, pp, ep;
        double fixed, frag;
    };
    const Case cases[] = { { &dense, 3, 1, 1, 1, 0, 0 }, { &dense, 3, 8, 1, 1, 2.5e9, 0.1 },
        { &dense, 2, 4, 2, 1, 2.5e9, 0.1 }, { &dense, 1, 8, 4, 1, 1e9, 0.05 },
        { &moe, 3, 1, 1, 4, 0, 0 }, { &moe, 2, 2, 2, 2, 2.5e9, 0.1 } };
    for (const Case& k : cases) {
        SCOPED_TRACE(::testing::Message()
            << "zero " << k.zero << " tp " << k.tp << " pp " << k.pp << " ep " << k.ep);
        TrainingConfig c = seedConfig();
        c.zeroStage = k.zero;
        c.tp = k.tp;
        c.pp = k.pp;
        c.ep = k.ep;
        c.gradAccum = 8;
        c.seqLen = 2048;
        c.overhead = { k.fixed, k.frag };
        c.usableFraction = 0.9;
        const int mp = k.tp * k.pp;
        const int minGpus = estimateFor(*k.model, c, mp * k.ep, kH100Bytes).minGpus;
        int brute = 0;
        for (int dp = k.ep; dp <= 4096 && brute == 0; dp += k.ep)
            if (estimateFor(*k.model, c, dp * mp, kH100Bytes).verdict == Verdict::Fits)
                brute = dp * mp;
        EXPECT_GT(brute, 0);
        EXPECT_EQ(minGpus, brute);
    }
}

TEST(TrainingParallel, MinGpusIsZeroWhenReplicatedStatesNeverFit)
{
    // ZeRO-0: 16 x 7e9 = 112 GB on every GPU whatever the count.
    EXPECT_EQ(estimateFor(bareModel(7e9, 32, 4096), staticOnly(), 64, kH100Bytes).minGpus, 0);
    // ZeRO-0 that fits needs just the model-parallel group: tp = 2 -> 56 GB per GPU.
    TrainingConfig c = staticOnly();
    c.tp = 2;
    EXPECT_EQ(estimateFor(bareModel(7e9, 32, 4096), c, 8, kH100Bytes).minGpus, 2);
}

TEST(TrainingParallel, FitsIsTotalAtMostTheUsableMemory)
{
    // 16 x 5e9 = 80e9 exactly: fits an 80e9 GPU, not one a byte smaller.
    const CountedModel m = bareModel(5e9, 32, 4096);
    EXPECT_TRUE(estimateFor(m, staticOnly(), 1, 80e9).fits);
    EXPECT_FALSE(estimateFor(m, staticOnly(), 1, 80e9 - 1).fits);
    EXPECT_DOUBLE_EQ(estimateFor(m, staticOnly(), 1, 80e9).gpuMemoryBytes, 80e9);
}

TEST(TrainingParallel, OverheadIsFixedPlusAFractionOfEverythingElse)
{
    const CountedModel m = bareModel(7e9, 32, 4096);
    TrainingConfig c = seedConfig();
    c.zeroStage = 3;
    c.overhead = { 2.5e9, 0.10 };
    const TrainingMemory r = estimateFor(m, c, 8, kH100Bytes);
    const double rest = 16 * 7e9 / 8 + 12.0 * 32 * 4096 * 4096 * 2;
    EXPECT_DOUBLE_EQ(r.perGpu.overhead, 2.5e9 + 0.10 * rest);
    EXPECT_DOUBLE_EQ(r.perGpu.total(), 2.5e9 + 1.10 * rest);
}

TEST(TrainingParallel, OptimizerKindChangesTheMomentCount)
{
    // bf16 mixed 16 B with SGD + momentum: 2 + 2 + 4 + 1 x 4 = 12 B; plain SGD: 8 B; a custom
    // recipe states its optimizer bytes outright (3 B here).
    const CountedModel m = bareModel(1e9, 8, 1024);
    TrainingConfig c = staticOnly();
    c.optimizer = OptimizerKind::SgdMomentum;
    EXPECT_DOUBLE_EQ(estimateFor(m, c, 1, kH100Bytes).perGpu.total(), 12e9);
    c.optimizer = OptimizerKind::Sgd;
    EXPECT_DOUBLE_EQ(estimateFor(m, c, 1, kH100Bytes).perGpu.total(), 8e9);
    c.recipe.recipe.optimizerBytes = 3;
    EXPECT_DOUBLE_EQ(estimateFor(m, c, 1, kH100Bytes).perGpu.optimizer, 7e9); // master 4 + 3
}

TEST(TrainingParallel, OddButValidInputGivesFiniteFigures)
{
    // No layers, no hidden size, no heads, an empty micro-batch, pp larger than the layer count,
    // recompute every 0 layers, no GPUs and no memory: nothing divides by zero.
    CountedModel m = bareModel(1e9, 0, 0, 0, 0);
    m.arch.headDim = 0;
    TrainingConfig c = seedConfig();
    c.activationModel.kind = ActivationModel::Kind::Tensors;
    c.microBatch = 0;
    c.pp = 3;
    c.recompute = Recompute::EveryK;
    c.recomputeEvery = 0;
    c.gradAccum = 0;
    c.virtualStages = 0;
    const TrainingMemory r = estimateFor(m, c, 0, 0);
    EXPECT_TRUE(std::isfinite(r.perGpu.total()));
    EXPECT_FALSE(r.fits);
    EXPECT_EQ(r.minGpus, 0);
    EXPECT_EQ(r.dataParallel, 1);
}

// TrainingPeakProbe (the RL split search's shortcut) is estimateTrainingMemory's per-GPU total
// at each cluster size, bit for bit: ZeRO stages, pipelines with uneven stages, offload.
TEST(TrainingPeakProbe, EqualsTheFullEstimateAtEveryClusterSize)
{
    const ModelArch arch = llama3_70b();
    const ParamCounts counts = countParameters(arch);
    const Gpu gpu = h100();
    for (int zero : { 0, 1, 2, 3 })
        for (int pp : { 1, 3 })
            for (bool offload : { false, true }) {
                TrainingConfig config = computeConfig();
                config.zeroStage = zero;
                config.pp = pp;
                config.offloadOptimizer = offload && zero >= 1;
                const TrainingPeakProbe probe(arch, counts, config, gpu);
                for (int gpus : { 1, 3, 6, 24, 96, 1024 }) {
                    const Cluster cluster { gpus, 8 };
                    EXPECT_EQ(probe.perGpuTotal(cluster),
                        estimateTrainingMemory(arch, counts, config, cluster, gpu).perGpu.total())
                        << "zero " << zero << " pp " << pp << " offload " << offload << " gpus "
                        << gpus;
                }
            }
}

} // namespace
} // namespace envelope
