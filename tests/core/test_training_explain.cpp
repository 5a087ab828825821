// Every training-memory figure explains itself: formula with the values substituted, the same
// value as the result, and a source. Explaining changes no figure.
#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

struct Case {
    const char* name;
    TrainingConfig config;
    int gpus;
};

std::vector<Case> cases()
{
    TrainingConfig seeds = seedConfig();
    seeds.zeroStage = 3;
    seeds.recompute = Recompute::Full;

    TrainingConfig tensors = seedConfig();
    tensors.activationModel.kind = ActivationModel::Kind::Tensors;
    tensors.tp = 2;
    tensors.pp = 2;
    tensors.sequenceParallel = true;
    tensors.zeroStage = 1;
    tensors.gradAccum = 8;
    tensors.flashAttention = true;
    tensors.overhead = { 2.5e9, 0.1 };
    tensors.offloadOptimizer = true;

    TrainingConfig everyK = tensors;
    everyK.recompute = Recompute::EveryK;
    everyK.recomputeEvery = 4;
    everyK.virtualStages = 2;
    everyK.offloadOptimizer = false;
    everyK.offloadParams = true;
    everyK.zeroStage = 3;
    return { { "seeds", seeds, 8 }, { "tensors", tensors, 16 }, { "every-k", everyK, 16 } };
}

TEST(TrainingExplain, EveryFigureHasAFormulaItsValueAndASource)
{
    const CountedModel m = bareModel(7e9, 32, 4096, 32, 32000);
    for (const Case& k : cases()) {
        SCOPED_TRACE(k.name);
        Explainer ex;
        const TrainingMemory r = estimateFor(m, k.config, k.gpus, kH100Bytes, &ex);
        const std::pair<const char*, double> figures[] = {
            { "training.per_gpu_bytes.weights", r.perGpu.weights },
            { "training.per_gpu_bytes.gradients", r.perGpu.gradients },
            { "training.per_gpu_bytes.optimizer", r.perGpu.optimizer },
            { "training.per_gpu_bytes.activations", r.perGpu.activations },
            { "training.per_gpu_bytes.overhead", r.perGpu.overhead },
            { "training.per_gpu_bytes.total", r.perGpu.total() },
            { "training.gpu_memory_bytes", r.gpuMemoryBytes },
            { "training.fits", r.fits ? 1.0 : 0.0 },
            { "training.min_gpus", double(r.minGpus) },
            { "training.host_bytes_per_node", r.hostBytesPerNode },
            { "training.data_parallel", double(r.dataParallel) },
            { "training.worst_stage", double(r.worstStage) },
            { "training.params_on_worst_gpu", r.paramsOnWorstGpu },
            { "training.activation_bytes_per_layer", r.activationBytesPerLayer },
            { "training.embedding_activation_bytes", r.embeddingActivationBytes },
            { "training.logits_bytes", r.logitsBytes },
            { "training.micro_batches_in_flight", double(r.microBatchesInFlight) },
        };
        for (const auto& [figure, value] : figures) {
            SCOPED_TRACE(figure);
            const Explanation* e = ex.find(figure);
            ASSERT_NE(e, nullptr);
            EXPECT_DOUBLE_EQ(e->value, value);
            EXPECT_FALSE(e->formula.empty());
            EXPECT_FALSE(e->source.empty());
        }
        // Explaining does not change the arithmetic.
        const TrainingMemory plain = estimateFor(m, k.config, k.gpus, kH100Bytes);
        EXPECT_DOUBLE_EQ(plain.perGpu.total(), r.perGpu.total());
        EXPECT_EQ(plain.minGpus, r.minGpus);
    }
}

// A Megatron FP8 plan says its linears keep their inputs in FP8 (Transformer Engine); a bf16 one
// does not.
TEST(TrainingExplain, TheActivationFormulaNamesTheFp8LinearInputs)
{
    const CountedModel m = bareModel(7e9, 32, 4096, 32, 32000);
    TrainingConfig c = seedConfig();
    c.activationModel.kind = ActivationModel::Kind::Tensors;
    c.framework.fp8SavesLinearInputs = true;
    c.recipe.recipe.activationBytes = 2;
    c.recipe.recipe.compute = ComputeDtype::Fp8;
    Explainer fp8;
    estimateFor(m, c, 8, kH100Bytes, &fp8);
    EXPECT_NE(fp8.find("training.activation_bytes_per_layer")->formula.find("fp8_saves_linear_inputs"),
        std::string::npos);
    c.recipe.recipe.compute = ComputeDtype::Bf16;
    Explainer bf16;
    estimateFor(m, c, 8, kH100Bytes, &bf16);
    EXPECT_EQ(bf16.find("training.activation_bytes_per_layer")->formula.find("fp8_saves_linear_inputs"),
        std::string::npos);
}

TEST(TrainingExplain, FormulasShowTheSubstitutedValues)
{
    // Seed 002's ZeRO-3 on 8 GPUs: weights 2 x 7e9 / 8 = 1.75 GB, optimizer (4 + 8) x 7e9 / 8 =
    // 10.5 GB; min_gpus: 112e9 / dp + 4.03e9 <= 85.52e9 -> dp >= 1.37 -> 2.
    const CountedModel m = bareModel(7e9, 32, 4096);
    TrainingConfig c = seedConfig();
    c.zeroStage = 3;
    c.seqLen = 2048;
    c.microBatch = 4;
    c.recompute = Recompute::Full;
    Explainer ex;
    const TrainingMemory r = estimateFor(m, c, 8, kH100Bytes, &ex);
    const std::string weights = ex.find("training.per_gpu_bytes.weights")->formula;
    EXPECT_NE(weights.find("2 x 7e+09 / 8 = 1.75 GB"), std::string::npos) << weights;
    const std::string optimizer = ex.find("training.per_gpu_bytes.optimizer")->formula;
    EXPECT_NE(optimizer.find("2 moments (adamw) x 4 B"), std::string::npos) << optimizer;
    EXPECT_NE(optimizer.find("= 10.50 GB"), std::string::npos) << optimizer;
    EXPECT_EQ(r.minGpus, 2);
    const std::string minGpus = ex.find("training.min_gpus")->formula;
    EXPECT_NE(minGpus.find("= 2"), std::string::npos) << minGpus;
    EXPECT_NE(
        ex.find("training.per_gpu_bytes.activations")->source.find("seed"), std::string::npos);
}

TEST(TrainingExplain, NoDataParallelSizeFitsSaysWhy)
{
    // ZeRO-0 replicates 112 GB on every GPU: the explanation names what cannot be sharded.
    const CountedModel m = bareModel(7e9, 32, 4096);
    Explainer ex;
    const TrainingMemory r = estimateFor(m, seedConfig(), 8, kH100Bytes, &ex);
    EXPECT_EQ(r.minGpus, 0);
    const std::string text = ex.find("training.min_gpus")->formula;
    EXPECT_NE(text.find("ZeRO stage 0"), std::string::npos) << text;
    EXPECT_NE(text.find("124.88 GB"), std::string::npos) << text; // 112 + 12.88 unsharded
}

} // namespace
} // namespace envelope
