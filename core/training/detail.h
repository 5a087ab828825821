// Internals of estimateTrainingMemory shared by training_memory.cpp (the arithmetic) and
// training_explain.cpp (the explanations). Not part of the public core API.
#pragma once

#include <vector>

#include "plan/plan.h"
#include "result/result.h"
#include "training/activations.h"

namespace envelope {

// What does not change from stage to stage or with the data-parallel size.
struct TrainingSetup {
    int tp = 1, pp = 1, cp = 1, ep = 1;
    int zeroStage = 0;
    bool dualPipe = false; // training.pp_schedule "dualpipe": rank s also holds stage p - 1 - s
    int layers = 0;
    // Stage k holds layers [stageStart[k], stageStart[k + 1]) under the plan's own split
    // (training.stage_layers; pp + 1 entries), else ceil(L / pp) consecutive layers each with
    // the last taking the rest (stageStart empty: no allocation on the live path).
    int layersPerStage = 0;
    std::vector<int> stageStart;
    int leadingDense = 0; // layers [0, leadingDense) have a dense FFN, the rest MoE
    // Parameters held by one GPU (after tp, and ep for routed experts).
    double denseLayerParams = 0; // one dense-FFN layer
    double moeLayerParams = 0; // one MoE layer without its routed experts
    double moeLayerExpertParams = 0; // one MoE layer's routed experts
    double firstStageParams = 0; // token embedding / tp + learned positions
    double lastStageParams = 0; // LM head / tp (a tied head's copy when pp > 1) + final norm
    // training.mtp_layers on the last stage: each module a block of the model's last kind
    // (mtpMoe: an MoE layer) plus its own projection (2h x h / tp) and two norms; with pp > 1
    // the stage also keeps a copy of the shared embedding (Megatron builds it where MTP runs).
    int mtpLayers = 0;
    bool mtpMoe = false;
    double mtpModuleParams = 0;
    double mtpEmbeddingParams = 0;
    // Bytes per parameter (recipe + optimizer kind).
    double weightBytes = 0;
    double gradientBytes = 0;
    double masterBytes = 0;
    double momentBytes = 0; // all optimizer moments together (moments x bytes, or custom)
    bool offloadOptimizer = false;
    bool offloadParams = false;
    // Optimizer offload takes the gradients off the GPU only when they are partitioned.
    bool gradientsOffloaded() const { return offloadOptimizer && zeroStage >= 2; }
    double fixedBytes = 0;
    double fragmentation = 0;
    double gpuMemoryBytes = 0;
    double layerParamsMax = 0; // the largest layer on one GPU (for FSDP prefetch)
    double computeBytes = 2;   // bytes per parameter all-gathered for compute (recipe activation dtype)
    bool fp8Compute = false;   // the recipe computes in FP8 (Float8 linears)
    // training.lora: adapters per layer on one GPU (/ tp) and the frozen base's bytes/param.
    bool lora = false;
    double loraDenseLayerParams = 0;
    double loraMoeLayerParams = 0;
    double loraBaseBytes = 2;
    // The largest single parameter tensor on one GPU (embedding, LM head, an FFN or attention
    // matrix, / tp): what training.optimizer_in_backward keeps a gradient of at once.
    double largestTensorParams = 0;
    bool optimizerInBackward = false;
    bool pagedOptimizer = false; // bitsandbytes paged state: outside torch's allocator
    ActivationCosts activations;
};

// fp32 gradients the CPU optimizer updates under optimizer offload (ZeRO-Offload, Ren et al.
// 2021 sec. 4.1: gradients move to the host and the update runs in fp32 there).
inline constexpr double kHostGradientBytes = 4.0;

struct StageParams {
    int firstLayer = 0;
    int endLayer = 0; // one past the last
    int denseLayers = 0;
    int moeLayers = 0;
    double dense = 0; // non-expert parameters on one GPU, embedding / head included
    double expert = 0; // routed-expert parameters on one GPU
    double embedding = 0; // the part of `dense` that is embedding (first stage)
    double head = 0; // the part of `dense` that is LM head + final norm (last stage)
    double total() const { return dense + expert; }
};

// ZeRO divisors: how many ways each state is sharded (1 = replicated).
struct Shards {
    double weights = 1, gradients = 1, optimizer = 1; // non-expert parameters
    double expertWeights = 1, expertGradients = 1, expertOptimizer = 1;
};

struct StageMemory {
    int stage = 0;
    int dataParallel = 1;
    StageParams params;
    StageActivation activation;
    Shards shards;
    MemoryBreakdown perGpu;
    double hostBytes = 0; // offloaded to CPU RAM per GPU
    double loraParams = 0; // adapter parameters on this GPU (before ZeRO)
    // Framework buffers (plan/framework.h), inside perGpu.overhead.
    double prefetchBytes = 0;     // unsharded layers all-gathered by ZeRO-3 / FSDP
    double ppUnshardedBytes = 0;  // FSDP + PP: unsharded params and fp32 gradient accumulation
    double bucketBytes = 0;       // gradient-reduction bucket below ZeRO-3
    double fp8CastBytes = 0;      // FP8 copies of the all-gathered weights (Float8 linears)
    double shardGroup = 1;        // ranks the ZeRO states are sharded over (dp, dp x cp, HSDP)
    double optimizerTempBytes = 0; // the optimizer step's temporaries (a later phase)
    double allocatedBytes = 0;    // peak of live tensors
    double reservedBytes = 0;     // the caching allocator's peak: allocated + fragmentation share
    double fragmentedBytes = 0;   // what the fragmentation share applies to
    // One GPU, one accumulation step, set_to_none: gradients fill as activations free.
    bool gradientsFillAsActivationsFree = false;
    double firstGradientBytes = 0; // the output layer's gradient, alive at the activation peak
    // bitsandbytes paged optimizer state (in perGpu.optimizer / lora): on the device, outside
    // torch's caching allocator (not in allocatedBytes / reservedBytes).
    double pagedBytes = 0;
    // training.optimizer_in_backward: the one gradient alive at a time (in perGpu.gradients, or
    // in perGpu.lora under LoRA).
    double inBackwardGradientBytes = 0;
    double buffers() const { return prefetchBytes + ppUnshardedBytes + bucketBytes + fp8CastBytes; }
    // total <= fixed + unsharded + sharded / dp: the parts (each with its fragmentation share)
    // that do not and do shrink with the DP size (dp a multiple of ep).
    double unshardedBytes = 0;
    double shardedBytesAtDp1 = 0;
};

TrainingSetup trainingSetup(
    const ModelArch& arch, const ParamCounts& counts, const TrainingConfig& config, const Gpu& gpu);
StageMemory stageMemory(
    const TrainingSetup& setup, const TrainingConfig& config, int stage, int dataParallel);

// The stages the result's figures come from.
struct KeyStages {
    StageMemory worst; // the most-loaded GPU: per_gpu_bytes
    StageMemory binding; // decides min_gpus (or rules every dp out)
    StageMemory host; // the most host memory under offload
};

// Explanations of every training-memory figure (training_explain.cpp).
void explainTrainingMemory(const ModelArch& arch, const TrainingSetup& setup,
    const TrainingConfig& config, const Cluster& cluster, const KeyStages& stages,
    const TrainingMemory& result, Explainer& ex);

} // namespace envelope
