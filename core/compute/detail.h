// Internals of estimateCompute shared by compute.cpp (FLOPs, time, cost, budget),
// compute_comm.cpp (communication per step, pipeline bubble) and compute_explain.cpp (the
// explanations). Not part of the public core API. Formulas: docs/formulas-compute.md.
#pragma once

#include <string_view>
#include <vector>

#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

// What the FLOP and time figures are built from, after guarding the inputs.
struct ComputeSetup {
    int tp = 1, pp = 1, cp = 1, ep = 1;
    int dp = 1; // max(1, floor(gpus / (tp x pp x cp))), as training memory uses
    int virtualStages = 1; // v, only meaningful with pp > 1
    int microBatches = 1; // m = grad_accum (micro-batches per pipeline per step)
    int gpusPerNode = 1;
    double gpus = 1; // GPUs the job uses: dp x tp x pp x cp
    double microBatch = 0; // b (sequences per micro-batch)
    double seqLen = 0; // s
    double layers = 0; // l
    double hidden = 0; // h
    // Parameters that are matrix multiplies, for 6 x P. Token and position embeddings are
    // lookups and left out; the LM head (tied or not) is a matmul and kept.
    double matmulParams = 0;
    double headParams = 0; // the LM head's share of matmulParams (never recomputed)
    double layerMatmulParams = 0; // matmulParams - headParams: what a full recompute repeats
    // Attention core (QK^T and AV), forward, per token over all layers:
    // 2 x l x s_att x heads x (d_qk + d_v); 4 x l x s x heads x head_dim for plain attention.
    double attendedLen = 0; // s, or the sliding window when shorter
    double attentionWidth = 0; // heads x (d_qk + d_v) / 2 (= heads x head_dim when equal)
    double attentionForwardPerToken = 0;
    double peakFlops = 0; // per GPU at the recipe's compute dtype
    // FP8 recipes run the layers' linears at the FP8 peak; the attention core, the LM head
    // (kept in bf16 by torchtitan's Float8 converter and Transformer Engine recipes) and the
    // rest at the BF16 peak. Equal to peakFlops for bf16 / tf32 recipes.
    double otherPeakFlops = 0;
    // torchtitan's per-op SAC re-runs every second matmul of a layer in forward order
    // (q k v o gate up down -> k, o, up): their weights, summed over the layers. 0 when the
    // layer's matmuls cannot be listed (MoE, MLA): half the layer matmuls are used instead.
    double sacRecomputeParams = 0;
};

// The forward FLOPs per token a recompute re-runs in the backward, split into the layers'
// linears and the attention core.
struct RecomputeFlops {
    double linear = 0;
    double attention = 0;
    double total() const { return linear + attention; }
};
RecomputeFlops recomputeFlops(const ComputeSetup& s, const TrainingConfig& config);

// The hardware FLOPs per token behind `hfu` and `observed_hfu`: hardwareFlopsPerToken, plus
// twice the attention core's forward under `hfu_convention: korthikanti` with attention-core
// selective recompute (Korthikanti et al. 2022 Table 5 count the term as s/(3h), not s/(6h)).
double hfuFlopsPerToken(
    const ComputeSetup& s, const TrainingConfig& config, double hardwareFlopsPerToken);

ComputeSetup computeSetup(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const Cluster& cluster, const Gpu& gpu);

// Op-timed seconds of one micro-batch on one pipeline stage, by op class (steptime.cpp).
struct StageOpTimes {
    double gemmS = 0, attentionS = 0, elementwiseS = 0;
    double measuredS = 0; // the part of all of the above timed from measured tables
    double tpS = 0, cpS = 0, epS = 0; // collectives inside the layers
    // Of the compute above: the backward's (recompute included: it runs in the backward), and
    // of that the weight-gradient GEMMs (the W of zero-bubble and DualPipe schedules).
    double backwardS = 0, weightGradS = 0;
    double computeS() const { return gemmS + attentionS + elementwiseS; }
    double commS() const { return tpS + cpS + epS; }
    StageOpTimes& operator+=(const StageOpTimes& o);
    StageOpTimes operator*(double k) const;
};

// The training ops of one micro-batch, timed: the layers of the slowest pipeline rank (forward,
// backward, recompute), the LM head and loss and the embedding (forward and backward each) with
// the share of each that rank runs (1 on the last / first stage, 0.5 each under DualPipe's
// paired stages), and the optimizer step once per step.
struct OpStep {
    StageOpTimes forward, backward, recompute, head, embedding;
    double headShare = 0, embeddingShare = 0;
    int slowestStageIndex = 0; // the pipeline rank whose micro-batch takes longest
    double optimizerS = 0;
    // One micro-batch on the slowest rank: its layers, and its shares of the embedding and head.
    StageOpTimes slowestStage(int pp) const;
};
OpStep opStep(const ModelArch& arch, const ParamCounts& counts, const TrainingConfig& config,
    const ComputeSetup& setup, const Gpu& gpu);

// One communication kind: the group it runs over and the link it takes.
struct Link {
    int group = 1; // ranks in the collective
    bool intraNode = true; // the group fits inside one node (NVLink) or crosses nodes (NIC)
    double bytesPerS = 0; // per-GPU bandwidth of that link; 0 = not given (time 0)
};

// What the data-parallel overlap hides (docs/formulas-compute.md sec. 4).
struct DpHidden {
    bool prefetch = false; // ZeRO-3: each layer's all-gather prefetched behind the previous
    bool gradOn = false, paramOn = false; // below ZeRO-3: overlap_grad_reduce / _param_gather
    double bucketShare = 0; // one bucket's share of the rank's DP parameters (exposed)
    double backwardWindowS = 0, forwardWindowS = 0; // one micro-batch of the slowest stage
    double gradS = 0, paramS = 0; // hidden seconds (under ZeRO-3 all in gradS)
    double totalS() const { return gradS + paramS; }
};

struct CommDetail {
    Communication result;
    Link dp, expertDp, tp, pp, cp, ep;
    // Data parallel: parameters whose gradients one GPU syncs, and the bytes per parameter the
    // chosen ZeRO stage moves (all-reduce 2g; RS + AG g + w; ZeRO-3 g + 2w).
    double dpParams = 0; // non-expert parameters on one GPU (/ tp / pp)
    double expertDpParams = 0; // routed-expert parameters on one GPU (/ tp / pp / ep)
    double dpBytesPerParam = 0;
    Link hsdpShard; // HSDP: the shard group's link (group 1 when not HSDP)
    double hsdpReplicaBytes = 0; // HSDP: the gradient shard's all-reduce across the replicas
    double expertDpBytes = 0; // the expert part of result.dpBytes
    // Tensor parallel.
    double tpMessageBytes = 0; // b x s / cp x h x activation bytes, one all-reduce
    int tpAllReducesPerLayer = 0;
    double layersPerStage = 0;
    // Pipeline, context, expert parallel.
    double ppMessageBytes = 0; // one micro-batch boundary: b x s / cp x h x bytes (/ tp with SP)
    double ppBytes = 0;
    double cpChunkBytes = 0; // the local K and V chunk of one layer and micro-batch
    double cpBytes = 0;
    double epMessageBytes = 0; // one all-to-all: tokens x top-k x h x bytes x (ep-1)/ep
    double moeLayersPerStage = 0;
    double epBytes = 0;
    double totalS = 0; // dp + tp + pp + cp + ep
    double hiddenS = 0; // min(overlappable, compute time)
    double overlap = 0; // comm_overlap clamped to [0, 1]
    // Fraction of each kind that can hide behind compute: the framework's mechanism (DP:
    // FSDP prefetch or bucketed reduction; TP: async TP) combined with comm_overlap as
    // 1 - (1 - framework) x (1 - comm_overlap).
    double dpOverlap = 0, tpOverlap = 0, otherOverlap = 0;
    double epPpOverlap = 0; // EP all-to-all and PP p2p: DualPipe hides them, else as `other`
    // PP p2p in the steady state: DualPipe, or an interleaved schedule whose framework issues
    // its sends and receives asynchronously (Megatron's overlap_p2p_comm); else as `other`.
    double ppOverlap = 0;
    double bubbleMicroBatches = 0; // the schedule's idle time in micro-batches of the stage
    double dpFrameworkOverlap = 0; // the framework's share alone (explained)
    // The DP time split by window below ZeRO-3: the gradient reduction (all-reduce or
    // reduce-scatter) and the updated weights' all-gather; under ZeRO-3 all of it is dpGradS.
    double dpGradS = 0, dpParamS = 0;
    DpHidden dpHidden;
    double overlappableS = 0; // sum of each kind x its fraction
    double allGatherBytes = 0; // bytes per parameter the ZeRO-3 all-gathers move (compute dtype)
};

// Communication per step, its exposed part behind `computeTimeS`, and the pipeline bubble.
// With `ops` (op timing), the TP, CP and EP collectives are the ops' own, the data-parallel
// and pipeline traffic is timed from the kernel tables per collective, ZeRO-3 gathers run per
// micro-batch, and the bubble is (p - 1) / v micro-batches of the slowest stage.
CommDetail communication(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const ComputeSetup& setup, const Gpu& gpu, double computeTimeS,
    const StageOpTimes* ops = nullptr);

// The expected relative error of a step time timed this way (compute.cpp).
double timingUncertainty(std::string_view timingSource, const Gpu& gpu);

// Explanations of every compute figure (compute_explain.cpp).
void explainCompute(const ModelArch& arch, const TrainingConfig& config, const Gpu& gpu,
    const ComputeSetup& setup, const CommDetail& comm, const TrainingCompute& result,
    Explainer& ex);

} // namespace envelope
