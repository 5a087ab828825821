// Implementation profiles (plan key `training.framework`): what a training framework keeps
// around the sharded state. The profiles are data (presets/frameworks.json, each with its
// source); docs/formulas-training.md, "Implementation profiles", has what each field changes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace envelope {

// The loss implementation (plan key `training.loss`; Default = the framework's).
enum class LossKind {
    Default,
    Eager, // bf16 logits, fp32 upcast, fp32 log-softmax: 12 B per logit at the loss backward
    Chunked, // bf16 logits kept, the fp32 work done one chunk at a time (torchtune: 8 chunks)
    Fused, // bf16 logits + one fp32 softmax (vocab-parallel / fused CE): 6 B per logit
    // torch.compile'd cross-entropy (torchtitan since 2025-04 with training.compile): the
    // upcast and log-softmax are fused into the kernels and recomputed in the backward from the
    // saved logits, so the peak holds the logits and their gradient in the activation dtype.
    Compiled
};

// What `recompute: "selective"` keeps under a framework.
enum class SelectivePolicy {
    AttentionCore, // Korthikanti et al. 2022: only the attention core is recomputed
    PerOpSac, // torchtitan op-level SAC: layer input, every other matmul output, SDPA output
    Full // the framework only checkpoints whole layers: selective means full
};

// How the data-parallel collectives overlap the compute under a framework (docs/formulas-compute.md
// sec. 4, "Overlap per framework").
enum class DpOverlap {
    None, // the reduction runs after the backward (Megatron-LM without --overlap-grad-reduce)
    Buckets, // below ZeRO-3: bucketed gradient reduction during the backward, the last bucket
             // exposed (DDP bucket_cap_mb)
    Prefetch, // ZeRO-3 / FSDP: each layer's all-gather prefetched behind the previous layer's
              // compute; the first all-gather and the last reduce-scatter exposed
    BucketsAndPrefetch // both, by ZeRO stage
};

struct FrameworkProfile {
    std::string id = "generic";
    std::string name = "Generic";
    std::string source;
    LossKind loss = LossKind::Fused;
    SelectivePolicy selective = SelectivePolicy::AttentionCore;
    // Eager PyTorch kernels: RMSNorm keeps its fp32 upcast and normalised copies, RoPE works in
    // fp32, a gated FFN keeps act(gate) beside gate, up and their product.
    bool eagerKernels = false;
    double prefetchLayers = 0; // unsharded layers alive at once under ZeRO-3 / FSDP
    double gradBucketBytes = 0; // gradient-reduction bucket below ZeRO-3
    // The overlapped DP collectives' bucket in parameters when grad_bucket_bytes is 0:
    // max(overlap_bucket_params, overlap_bucket_params_per_dp x dp) (Megatron-LM's default
    // DistributedDataParallelConfig.bucket_size).
    double overlapBucketParams = 0;
    double overlapBucketParamsPerDp = 0;
    double optimizerTempBytes = 0; // per local optimizer parameter during the step (foreach)
    bool ppUnsharded = false; // FSDP + PP: unsharded params + fp32 grads across micro-batches
    // TP + sequence parallelism: the linears keep the all-gathered (full-sequence) input they
    // ran on (DTensor SequenceParallel), where Megatron keeps its shard and re-gathers it.
    bool spGatheredInputs = false;
    // The plan's `mfu` (kernel efficiency) when the plan does not give one.
    double kernelEfficiency = 0.45;
    DpOverlap dpOverlap = DpOverlap::None;
    // FSDP shards over the data-parallel x context-parallel ranks (torchtitan's dp_shard_cp
    // mesh), not over dp alone.
    bool shardOverCp = false;
    // FP8 training (recipe compute "fp8"): bytes per local parameter of the FP8 copy of the
    // all-gathered weights the Float8 linears cast and keep for the backward (torchtitan/torchao).
    double fp8WeightCastBytes = 0;
    // FP8 training (recipe compute "fp8"): the linears save their inputs for the backward in the
    // FP8 copy they ran on (Transformer Engine's Linear, LayerNormLinear and GroupedLinear keep
    // the quantized input), not the bf16 one (torchao's Float8Linear keeps the high-precision
    // input and re-casts it).
    bool fp8SavesLinearInputs = false;
    // Pipeline boundaries under TP without sequence parallelism are sent 1/tp per rank and
    // all-gathered (Megatron's scatter-gather, Narayanan et al. 2021 sec. 4.1).
    bool ppScatterGather = false;
    // The interleaved (virtual-stage) 1F1B schedule issues the pipeline's sends and receives
    // asynchronously and waits for them only where the next chunk needs them, so the steady
    // state's point-to-point hides behind the chunks' compute (Megatron overlap_p2p_comm).
    bool ppP2pOverlapInterleaved = false;
    // Megatron's backward issues the TP collective of a column-parallel linear's input
    // gradient (and, under sequence parallelism, the re-gather of its input) asynchronously
    // behind that linear's gradient GEMMs (LinearWithGradAccumulationAndAsyncCommunication).
    bool tpBackwardOverlap = false;
    // `training.compile` (torch.compile) also compiles the loss: an eager loss becomes Compiled.
    bool compileLoss = false;
    // optimizer.zero_grad(set_to_none=True) with gradients allocated by autograd (no contiguous
    // gradient buffer): with one accumulation step on one GPU they fill as the activations free.
    bool gradsSetToNone = false;
    // The caching allocator's reserved-over-allocated share (overhead.fragmentation when the plan
    // gives none), with the default allocator and with PYTORCH_CUDA_ALLOC_CONF
    // expandable_segments:True; `expandableSegments` is what the framework's launcher sets.
    double fragmentation = 0.10;
    double fragmentationExpandable = 0.10;
    bool expandableSegments = false;
    // Parameters and gradients live in contiguous buffers allocated once (Megatron-Core's
    // ParamAndGradBuffer): fragmentation applies to the transient allocations only.
    bool contiguousStateBuffers = false;
    // training.activation_offload: offloaded layers' activations on the GPU at once while they
    // move (torchtune OffloadActivations: the node being run in the backward, 1; Transformer
    // Engine's AsyncDoubleBufferGroupOffloadHandler under Megatron: a double buffer, 2).
    double offloadBufferLayers = 1;
    // `training.framework_version`: the version row applied ("" = the base profile), what it
    // changed and its source; `versions` lists the rows a plan may name (presets/frameworks.json).
    std::string version;
    std::string versionChanges;
    std::vector<FrameworkProfile> versions;

    bool operator==(const FrameworkProfile&) const = default;
};

std::string_view lossKindId(LossKind k); // "default" "eager" "chunked" "fused" "compiled"
bool parseLossKind(std::string_view id, LossKind& out);
std::string_view selectivePolicyId(SelectivePolicy p); // "attention-core" "per-op-sac" "full"
bool parseSelectivePolicy(std::string_view id, SelectivePolicy& out);
std::string_view dpOverlapId(DpOverlap o); // "none" "buckets" "prefetch" "buckets+prefetch"
bool parseDpOverlap(std::string_view id, DpOverlap& out);

// Bytes per logit (one token, one vocabulary entry) the loss holds at its peak, by kind, with
// logits in the activation dtype of `activationBytes` (2 for bf16).
// Eager: forward holds the logits (2) + fp32 upcast (4) + fp32 log-softmax (4) = 10; the loss
// backward holds the saved log-softmax (4), its gradient (4) and the input gradient (4) = 12.
// Chunked (torchtune CEWithChunkedOutputLoss, 8 chunks): logits (2) + 12 / 8 for the chunk
// being upcast. Fused: logits (2) + fp32 softmax (4) = 6 (Megatron vocab-parallel CE; the
// generic profile's figure). Compiled: logits (2) + their gradient (2) = 4.
double lossBytesPerLogit(LossKind k, double activationBytes);

} // namespace envelope
