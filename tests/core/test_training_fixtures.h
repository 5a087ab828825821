// Hand-built inputs for the training-memory tests: bare parameter counts, the seeds' recipe and
// activation model, GPUs with stated memory. Independent of countParameters() on purpose.
#pragma once

#include <cstdint>

#include "training/memory.h"

namespace envelope::testing {

inline constexpr double kH100Bytes = 81559.0 * 1024 * 1024; // what the driver reports
inline constexpr double k80GB = 80e9; // the seeds' "80 GB"
inline constexpr double k80GiB = 80.0 * 1024 * 1024 * 1024; // seed 003's script (GB = 2^30)

// A model known only by its parameter count and the shape the activation formulas need. All
// parameters sit in the layers (as tensor-parallel matrices), as in the seeds' arithmetic.
struct BareModel {
    ModelArch arch;
    ParamCounts counts;
};

inline BareModel bareModel(
    double params, int layers, std::int64_t hidden, int heads = 32, std::int64_t vocab = 32000)
{
    BareModel m;
    m.arch.name = "bare";
    m.arch.layers = layers;
    m.arch.hidden = hidden;
    m.arch.ffnHidden = 4 * hidden;
    m.arch.ffn = FfnKind::Plain;
    m.arch.heads = heads;
    m.arch.kvHeads = heads;
    m.arch.headDim = static_cast<int>(hidden / heads);
    m.arch.vocab = vocab;
    m.arch.declaredParams = params;
    m.counts.total = params;
    m.counts.active = params;
    return m;
}

inline Gpu gpuWithMemory(double bytes)
{
    Gpu g;
    g.name = "test GPU";
    g.memoryBytes = bytes;
    g.bf16Flops = 989e12;
    return g;
}

// The seeds' setting: bf16 mixed 16 B/param (2 + 2 + 4 + 2x4), AdamW, ZeRO-0, batch 1 at 4k,
// the simple k x L x B x S x h x bytes activation model with k x bytes = 24, no overhead.
inline TrainingConfig seedConfig()
{
    TrainingConfig c;
    c.recipe.presetId = "bf16-mixed-16";
    c.recipe.recipe.name = "bf16 mixed, fp32 master (16 B/param)";
    c.recipe.recipe.weightBytes = 2;
    c.recipe.recipe.gradientBytes = 2;
    c.recipe.recipe.masterBytes = 4;
    c.recipe.recipe.momentBytes = 4;
    c.recipe.recipe.activationBytes = 2;
    c.optimizer = OptimizerKind::AdamW;
    c.zeroStage = 0;
    c.microBatch = 1;
    c.gradAccum = 1;
    c.seqLen = 4096;
    c.recompute = Recompute::None;
    c.flashAttention = false;
    c.activationModel.kind = ActivationModel::Kind::SimpleSbh;
    c.activationModel.bytesPerSbhPerLayer = 24;
    c.overhead = { 0, 0 };
    return c;
}

inline TrainingMemory estimateFor(
    const BareModel& m, const TrainingConfig& c, int gpus, double gpuBytes, Explainer* ex = nullptr)
{
    return estimateTrainingMemory(
        m.arch, m.counts, c, Cluster { gpus, 8 }, gpuWithMemory(gpuBytes), ex);
}

} // namespace envelope::testing
