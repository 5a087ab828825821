// Hand-built architectures, parameter counts and GPUs for the serving and RL tests. The shapes
// come from the models' published config.json files; counts are written out, independent of
// countParameters() on purpose.
#pragma once

#include <cstdint>

#include "serving/serving.h"

namespace envelope::testing {

// A Llama-style decoder: SwiGLU, RMSNorm, `kvHeads` of `heads` KV heads.
inline ModelArch llamaShape(int layers, std::int64_t hidden, int heads, int kvHeads, int headDim,
    std::int64_t ffn, std::int64_t vocab)
{
    ModelArch a;
    a.name = "llama-shape";
    a.layers = layers;
    a.hidden = hidden;
    a.ffnHidden = ffn;
    a.ffn = FfnKind::Gated;
    a.heads = heads;
    a.kvHeads = kvHeads;
    a.headDim = headDim;
    a.vocab = vocab;
    a.norm = NormKind::RmsNorm;
    return a;
}

// Llama-2 7B (config.json: 32 layers, hidden 4096, 32 heads, MHA, ffn 11008, vocab 32000).
inline ModelArch llama2_7b()
{
    return llamaShape(32, 4096, 32, 32, 128, 11008, 32000);
}
// Llama-3 8B (32 layers, hidden 4096, 32 heads, 8 KV heads, ffn 14336, vocab 128256).
inline ModelArch llama3_8b()
{
    return llamaShape(32, 4096, 32, 8, 128, 14336, 128256);
}
// Llama-3 70B (80 layers, hidden 8192, 64 heads, 8 KV heads, ffn 28672, vocab 128256).
inline ModelArch llama3_70b()
{
    return llamaShape(80, 8192, 64, 8, 128, 28672, 128256);
}

// Only a total: every parameter counts as a linear-layer weight (the seeds' "P x bytes").
inline ParamCounts bareCounts(double params)
{
    ParamCounts c;
    c.total = params;
    c.active = params;
    return c;
}

// H100 SXM5 80GB: 81,559 MiB reported, 989 TFLOP/s dense BF16, 1979 FP8, 3.35 TB/s HBM3
// (NVIDIA H100 datasheet).
inline Gpu h100()
{
    Gpu g;
    g.name = "H100 SXM5";
    g.memoryBytes = 81559.0 * 1024 * 1024;
    g.bf16Flops = 989e12;
    g.fp8Flops = 1979e12;
    g.hbmBytesPerS = 3.35e12;
    g.intraNodeBytesPerS = 450e9;
    g.interNodeBytesPerS = 50e9;
    return g;
}

} // namespace envelope::testing
