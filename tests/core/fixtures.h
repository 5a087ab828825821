// Hand-built inputs for the core tests: model shapes from published configs, models known only
// by their parameter counts, GPUs with stated figures, the seeds' configs and plans, and a preset
// library with a hand-built model. Independent of countParameters() and of presets/ on purpose,
// so a test pins the core to figures written out here, not to the core's own tables.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "compute/compute.h"
#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/serving.h"
#include "training/memory.h"

namespace envelope::testing {

// ---- Serving workloads ---------------------------------------------------------------------

// Every request `in` prompt and `out` output tokens; the caller sets its concurrency or rate.
inline ServingWorkload fixedWorkload(double in, double out)
{
    ServingWorkload w;
    w.input.form = LengthDistribution::Form::Fixed;
    w.input.fixed = in;
    w.output.form = LengthDistribution::Form::Fixed;
    w.output.fixed = out;
    return w;
}

// ---- Memory sizes -------------------------------------------------------------------------

// A test data file's text (tests/data), empty when it cannot be read.
inline std::string readText(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

inline constexpr double kH100Bytes = 81559.0 * 1024 * 1024; // what the driver reports
inline constexpr double k80GB = 80e9; // the seeds' "80 GB"
inline constexpr double k80GiB = 80.0 * 1024 * 1024 * 1024; // seed 003's script (GB = 2^30)

// ---- Model shapes -------------------------------------------------------------------------

// A plain-MLP (4h) multi-head decoder of `layers` x `hidden`; the head dimension is hidden /
// heads (0 for a shape without heads, which the parameter-count-only models use).
inline ModelArch denseShape(
    std::string_view name, int layers, std::int64_t hidden, int heads, std::int64_t vocab)
{
    ModelArch a;
    a.name = std::string(name);
    a.layers = layers;
    a.hidden = hidden;
    a.ffnHidden = 4 * hidden;
    a.ffn = FfnKind::Plain;
    a.heads = heads;
    a.kvHeads = heads;
    a.headDim = heads > 0 ? static_cast<int>(hidden / heads) : 0;
    a.vocab = vocab;
    return a;
}

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

// Llama-2 7B as the plan tests' preset "test-7b" (Touvron et al. 2023, table 1, and the released
// config.json), with its 4096-token context.
inline ModelArch llama2_7bShape()
{
    ModelArch a = llama2_7b();
    a.name = "Test 7B";
    a.maxPositions = 4096;
    return a;
}

// ---- Models known by their parameter counts -------------------------------------------------

// A shape with its counts written out beside it.
struct CountedModel {
    ModelArch arch;
    ParamCounts counts;
};

// Only a total: every parameter counts as a linear-layer weight (the seeds' "P x bytes").
inline ParamCounts bareCounts(double params)
{
    ParamCounts c;
    c.total = params;
    c.active = params;
    return c;
}

// The seeds' arithmetic: FLOPs per token = 6 x P, no attention term. A model without layers
// has no attention core to count, so 6 x P is all that remains.
inline CountedModel sixPsiModel(double params)
{
    CountedModel m;
    m.arch.name = "6P";
    m.arch.layers = 0;
    m.counts = bareCounts(params);
    return m;
}

// A GPT-style shape as Narayanan et al. 2021 count it: 12 l h^2 layer parameters (QKV + output
// 4h^2, MLP 8h^2; biases and norms left out as in their eq. 3) and a V x h embedding tied to
// the LM head.
inline CountedModel gptModel(int layers, std::int64_t hidden, int heads, std::int64_t vocab)
{
    CountedModel m { denseShape("gpt", layers, hidden, heads, vocab), {} };
    m.arch.tiedEmbeddings = true;
    const double l = layers, h = double(hidden), v = double(vocab);
    m.counts.embedding = v * h;
    m.counts.lmHead = 0;
    m.counts.total = 12 * l * h * h + v * h;
    m.counts.active = m.counts.total;
    return m;
}

// A model known only by its parameter count and the shape the activation formulas need. All
// parameters sit in the layers (as tensor-parallel matrices), as in the seeds' arithmetic.
inline CountedModel bareModel(
    double params, int layers, std::int64_t hidden, int heads = 32, std::int64_t vocab = 32000)
{
    CountedModel m { denseShape("bare", layers, hidden, heads, vocab), bareCounts(params) };
    m.arch.declaredParams = params;
    return m;
}

// ---- GPUs ---------------------------------------------------------------------------------

// H100 SXM5 80GB as the NVIDIA datasheet states it: 81,559 MiB reported by the driver, 989
// TFLOP/s dense BF16, 1979 FP8, 3.35 TB/s HBM3, NVLink 4 at 450 GB/s per direction; 50 GB/s
// across nodes (400 Gb/s ConnectX-7 per GPU). No price: a datasheet has none.
inline Gpu h100()
{
    Gpu g;
    g.name = "H100 SXM5";
    g.memoryBytes = kH100Bytes;
    g.bf16Flops = 989e12;
    g.fp8Flops = 1979e12;
    g.hbmBytesPerS = 3.35e12;
    g.intraNodeBytesPerS = 450e9;
    g.interNodeBytesPerS = 50e9;
    return g;
}

// The H100 as seed 001's arithmetic states it: "80 GB", 989 TFLOP/s ("H100s (989 TFLOP/s)"),
// NVLink 900 GB/s (its TP example counts both directions), 50 GB/s across nodes (its DP
// example), USD 4/h (its ex. 3). The compute tests reproduce the seed with these figures.
inline Gpu seed001H100()
{
    Gpu g = h100();
    g.name = "H100 (seed 001)";
    g.memoryBytes = k80GB;
    g.intraNodeBytesPerS = 900e9;
    g.pricePerHour = 4;
    return g;
}

inline Gpu gpuWithMemory(double bytes)
{
    Gpu g;
    g.name = "test GPU";
    g.memoryBytes = bytes;
    g.bf16Flops = 989e12;
    return g;
}

// ---- Training configs ---------------------------------------------------------------------

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
    c.mfuOverride = true; // these tests check the constant-efficiency formulas
    c.trainTokens = 2e12;
    c.commOverlap = 0;
    return c;
}

// A recipe by its bytes per parameter: weights, gradients, fp32 master, optimizer moments
// (both), activations.
inline RecipeChoice recipeOfBytes(std::string presetId, std::string name, double weights,
    double gradients, double master, double moments, double activations)
{
    RecipeChoice r;
    r.presetId = std::move(presetId);
    r.recipe.name = std::move(name);
    r.recipe.weightBytes = weights;
    r.recipe.gradientBytes = gradients;
    r.recipe.masterBytes = master;
    r.recipe.momentBytes = moments;
    r.recipe.activationBytes = activations;
    return r;
}

// The seeds' setting: bf16 mixed 16 B/param (2 + 2 + 4 + 2x4), AdamW, ZeRO-0, batch 1 at 4k,
// the simple k x L x B x S x h x bytes activation model with k x bytes = 24, no overhead, and
// a fit up to the whole HBM (the seeds' GPU counts divide by HBM; usable_fraction 1).
inline TrainingConfig seedConfig()
{
    TrainingConfig c;
    c.recipe
        = recipeOfBytes("bf16-mixed-16", "bf16 mixed, fp32 master (16 B/param)", 2, 2, 4, 4, 2);
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
    c.usableFraction = 1.0;
    return c;
}

inline TrainingCompute computeFor(const CountedModel& m, const TrainingConfig& c, int gpus,
    const Gpu& gpu = seed001H100(), int gpusPerNode = 8, Explainer* ex = nullptr)
{
    return estimateCompute(m.arch, m.counts, c, Cluster { gpus, gpusPerNode }, gpu, ex);
}

inline TrainingMemory estimateFor(const CountedModel& m, const TrainingConfig& c, int gpus,
    double gpuBytes, Explainer* ex = nullptr)
{
    return estimateTrainingMemory(
        m.arch, m.counts, c, Cluster { gpus, 8 }, gpuWithMemory(gpuBytes), ex);
}

// ---- Plans and presets --------------------------------------------------------------------

// Seed 000's worked example ("a 7B GRPO run on 8x H100"): 7B parameters in a Llama-3-8B shape
// (the seed's "131 KB per token, Llama-3-8B-style GQA"), H100s, the 18 B/param recipe
// (2 + 4 + 4 + 2 x 4) under FSDP (ZeRO-3), full recompute, one 4096-token micro-batch, no
// overhead allowance (the seed counts none), MFU 0.45; GRPO with 4 trainer + 1 reference + 3
// rollout GPUs, 32 prompts x 8 completions of 512 + 3584 tokens, and the seed's measured rates
// (35k tok/s rollout, 200k tok/s training).
inline Plan seedGrpoPlan()
{
    Plan p;
    p.model.arch = llama3_8b();
    p.gpu.gpu = h100();
    p.cluster = Cluster { 8, 8 };
    TrainingConfig& t = p.training;
    t.recipe = recipeOfBytes("bf16-mixed-18", "", 2, 4, 4, 4, 2);
    t.optimizer = OptimizerKind::AdamW;
    t.zeroStage = 3;
    t.microBatch = 1;
    t.seqLen = 4096;
    t.recompute = Recompute::Full;
    t.overhead = { 0, 0 };
    t.mfu = 0.45;
    RlConfig& rl = p.rl;
    rl.algorithm = RlAlgorithm::Grpo;
    rl.placement = RlPlacement::Disjoint;
    rl.trainerGpus = 4;
    rl.referenceGpus = 1;
    rl.rolloutGpus = 3;
    rl.prompts = 32;
    rl.groupSize = 8;
    rl.promptLen = 512;
    rl.responseLen = 3584;
    rl.rolloutTokensPerS = 35000;
    rl.trainTokensPerS = 200000;
    return p;
}

inline const RoleEstimate* findRole(const RlEstimate& r, std::string_view role)
{
    for (const RoleEstimate& e : r.perRole)
        if (e.role == role)
            return &e;
    return nullptr;
}

// The built-in GPUs and recipes plus the hand-built "test-7b" (llama2_7bShape), so that the plan
// tests do not depend on presets/models.json.
inline PresetLibrary testPresets()
{
    Expected<PresetLibrary> lib = builtinPresets();
    EXPECT_TRUE(lib.ok()) << lib.error().toString();
    PresetLibrary library = lib.ok() ? lib.value() : PresetLibrary {};
    ModelPreset model;
    model.id = "test-7b";
    model.source = "hand-built for tests";
    model.arch = llama2_7bShape();
    library.models.push_back(model);
    return library;
}

// presets/default-plan.json read with the built-in presets (a valid plan to vary field by field).
inline Plan defaultPlan()
{
    const Expected<PresetLibrary> lib = builtinPresets();
    EXPECT_TRUE(lib.ok());
    if (!lib.ok())
        return {};
    const Expected<Plan> plan = readPlan(lib->defaultPlanJson, *lib);
    EXPECT_TRUE(plan.ok()) << plan.error().toString();
    return plan.ok() ? *plan : Plan {};
}

inline constexpr const char* kMinimalPlan = R"({"model": "test-7b", "gpu": "h100-sxm"})";

} // namespace envelope::testing
