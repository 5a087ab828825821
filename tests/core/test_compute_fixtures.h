// Hand-built inputs for the compute tests: models known by their parameter counts (the seeds'
// 6 x P convention) or by a GPT shape whose counts are written out (12 l h^2 + V h), GPUs with
// stated peaks and links. Independent of countParameters() and of the presets on purpose.
#pragma once

#include <cstdint>

#include "compute/compute.h"

namespace envelope::testing {

struct ComputeModel {
    ModelArch arch;
    ParamCounts counts;
};

// The seeds' arithmetic: FLOPs per token = 6 x P, no attention term. A model without layers
// has no attention core to count, so 6 x P is all that remains.
inline ComputeModel sixPsiModel(double params)
{
    ComputeModel m;
    m.arch.name = "6P";
    m.arch.layers = 0;
    m.counts.total = params;
    m.counts.active = params;
    return m;
}

// A GPT-style shape as Narayanan et al. 2021 count it: 12 l h^2 layer parameters (QKV + output
// 4h^2, MLP 8h^2; biases and norms left out as in their eq. 3) and a V x h embedding tied to
// the LM head.
inline ComputeModel gptModel(int layers, std::int64_t hidden, int heads, std::int64_t vocab)
{
    ComputeModel m;
    m.arch.name = "gpt";
    m.arch.layers = layers;
    m.arch.hidden = hidden;
    m.arch.ffnHidden = 4 * hidden;
    m.arch.ffn = FfnKind::Plain;
    m.arch.heads = heads;
    m.arch.kvHeads = heads;
    m.arch.headDim = static_cast<int>(hidden / heads);
    m.arch.vocab = vocab;
    m.arch.tiedEmbeddings = true;
    const double l = layers, h = double(hidden), v = double(vocab);
    m.counts.embedding = v * h;
    m.counts.lmHead = 0;
    m.counts.total = 12 * l * h * h + v * h;
    m.counts.active = m.counts.total;
    return m;
}

// H100 SXM: 989 TFLOP/s dense BF16 (seed 001 "H100s (989 TFLOP/s)"), 1979 FP8, NVLink 900 GB/s
// (seed 001's TP example), 50 GB/s across nodes (seed 001's DP example), USD 4/h (seed 001 ex. 3).
inline Gpu h100()
{
    Gpu g;
    g.name = "H100 (test)";
    g.memoryBytes = 80e9;
    g.bf16Flops = 989e12;
    g.fp8Flops = 1979e12;
    g.intraNodeBytesPerS = 900e9;
    g.interNodeBytesPerS = 50e9;
    g.pricePerHour = 4;
    return g;
}

// bf16 mixed (2 B weights, gradients and activations), no recompute, no overlap, pp = tp = 1.
inline TrainingConfig computeConfig()
{
    TrainingConfig c;
    c.recipe.recipe.name = "bf16 mixed";
    c.recipe.recipe.weightBytes = 2;
    c.recipe.recipe.gradientBytes = 2;
    c.recipe.recipe.activationBytes = 2;
    c.recipe.recipe.compute = ComputeDtype::Bf16;
    c.zeroStage = 0;
    c.microBatch = 1;
    c.gradAccum = 1;
    c.seqLen = 4096;
    c.recompute = Recompute::None;
    c.mfu = 0.45;
    c.trainTokens = 2e12;
    c.commOverlap = 0;
    return c;
}

inline TrainingCompute computeFor(const ComputeModel& m, const TrainingConfig& c, int gpus,
    const Gpu& gpu = h100(), int gpusPerNode = 8, Explainer* ex = nullptr)
{
    return estimateCompute(m.arch, m.counts, c, Cluster { gpus, gpusPerNode }, gpu, ex);
}

} // namespace envelope::testing
