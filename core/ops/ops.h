// What runs: a model and a parallel layout become a list of operations on one GPU, each a
// plain record of its shape (GEMM m x n x k, attention batch and lengths, bytes an elementwise
// kernel streams, a collective's buffer and group). No time is in here: kernels/timing.h times
// an op from the GPU's measured tables or its specs, and the step schedules (compute/,
// serving/) add the times up. The split follows Calculon (layers.py: per-layer records of
// FLOPs, bytes and communication) and aiconfigurator (sdk/operations: ops carry shapes, a
// per-GPU perf database times them). docs/formulas-compute.md, "Step time from ops" lists every op.
#pragma once

#include <optional>
#include <vector>

#include "kernels/kerneltable.h"
#include "model/model.h"

namespace envelope {

// What an op is timed as, and the class the time breakdowns group it under.
enum class OpClass {
    Gemm,        // a matmul: table lookup by (m, n, k, dtype) or peak x efficiency
    Attention,   // the attention core: flash forward / backward, or one decode step's
    Elementwise, // norms, activations, RoPE, residuals, softmax, loss: bytes at HBM bandwidth
    Collective,  // all-reduce, all-gather, reduce-scatter, all-to-all, send/recv
};

enum class AttentionKind {
    FlashForward,  // causal flash attention forward (training forward, prefill)
    FlashBackward, // its backward (dQ, dK, dV): 5 matmuls to the forward's 2
    Decode,        // one new token per sequence against its KV cache
};

enum class Phase { Forward, Backward, Recompute };

// One operation on one GPU. `repeat` is how many times it runs per unit of the schedule that
// built it (per micro-batch and pipeline stage for training, per step for decode).
struct Op {
    OpClass cls = OpClass::Gemm;
    Phase phase = Phase::Forward;
    const char* name = ""; // "qkv", "mlp up", "attention", "tp all-reduce": what explain shows
    double repeat = 1;
    // Gemm: C[m x n] = A[m x k] B[k x n]; `batch` independent GEMMs of that shape.
    double m = 0, n = 0, k = 0, batch = 1;
    GemmDtype dtype = GemmDtype::Bf16;
    bool columnParallel = false; // splits its output over TP (QKV, up): Megatron overlaps its
                                 // input gradient's TP collective with its backward GEMMs
    bool grouped = false;    // a grouped GEMM (MoE experts): `batch` weight matrices in one
                             // launch, each with its own m rows
    bool weightless = false; // both operands are activations (attention scores): no weight
                             // gradient, and a batch runs as one strided launch
    bool weightGradient = false; // a backward GEMM for the weights (zero-bubble's W)
    // Attention: `sequences` sequences of `seq` queries over `kvLen` keys (decode: seq 1),
    // `heads` query and `kvHeads` key/value heads on this GPU, head widths, KV element bytes.
    AttentionKind attention = AttentionKind::FlashForward;
    double sequences = 0, seq = 0, kvLen = 0, heads = 0, kvHeads = 0;
    double headDimQk = 0, headDimV = 0, kvBytesPerElement = 2;
    // Elementwise: bytes read + written.  Collective: the buffer (nccl-tests' size).
    double bytes = 0;
    bool reduction = false; // Elementwise: a reduction over rows (norm, softmax, loss), whose
                            // launch floor is a reduction kernel's, not a pointwise one's
    CollectiveKind collective = CollectiveKind::AllReduce;
    bool sendRecv = false; // point-to-point (pipeline): bytes over the link, no collective
    int group = 1;         // ranks in the collective
    bool intraNode = true; // the group sits in one NVLink domain
    // A group spanning nodes: its ranks on one node (0: not known). An all-to-all sends
    // (ranksPerNode - 1) / group of its buffer over NVLink and the rest over the network.
    int ranksPerNode = 0;
    bool custom = false;   // an inference engine's own all-reduce (vLLM, SGLang, TRT-LLM)

    double flops() const; // 2 m n k x batch for a GEMM, the attention core's FLOPs, else 0
};

// The layout the training ops are built for.
struct TrainingLayout {
    int tp = 1, cp = 1, ep = 1;
    bool sequenceParallel = false;
    double microBatch = 1; // sequences per micro-batch
    double seqLen = 0;
    bool flashAttention = true;
    GemmDtype linearDtype = GemmDtype::Bf16; // the layers' linears (FP8 recipes: fp8)
    // A module group in its own dtype (a mixed serving checkpoint: serving.attention_weight_format,
    // serving.expert_weight_format); unset: linearDtype.
    std::optional<GemmDtype> attentionDtype, expertDtype;
    bool frozenBase = false; // LoRA / QLoRA: the base weights compute no weight gradient
    int loraRank = 0;        // adapters on q, k, v, o, gate, up, down when frozenBase
    double activationBytes = 2;
    bool tpIntraNode = true, cpIntraNode = true, epIntraNode = true;
    int epRanksPerNode = 0; // an EP group spanning nodes: its ranks on one node
    // Distinct token sets across the EP group (0: ep, each rank its own, as in training). An
    // inference engine with data-parallel attention has dp of them; EP inside one TP group has
    // 1: every rank holds every token, runs its own experts on them and the TP all-reduce
    // combines (no all-to-all).
    int epTokenGroups = 0;
    // The tensor-parallel split of each routed expert's FFN (0: tp, Megatron's default expert
    // TP). Inference: tp / ep inside a TP group, 1 under data-parallel attention.
    int expertTp = 0;
};

// The forward ops of one transformer layer for one micro-batch on one GPU: dense FFN or MoE
// (`moeLayer`), attention (MHA / GQA / MLA, causal, flash or unfused), the TP collectives
// (all-reduce, or all-gather + reduce-scatter under sequence parallelism), the CP ring and
// the EP dispatch / combine.
std::vector<Op> layerForwardOps(const ModelArch& arch, const TrainingLayout& layout, bool moeLayer);

// The backward of forward ops: each GEMM's data gradient (m x k from m x n) and weight
// gradient (k x n from m; none for frozen LoRA base weights), flash backward for the flash
// forward, elementwise work twice (read the gradient and the saved input, write the gradient),
// every collective mirrored (all-gather <-> reduce-scatter).
std::vector<Op> backwardOps(const std::vector<Op>& forward, const TrainingLayout& layout);

// The LM head (vocab / tp columns), the loss over the logits (`lossBytesPerLogit` read +
// written per logit) and the embedding lookup, forward and backward, for one micro-batch.
std::vector<Op> headOps(const ModelArch& arch, const TrainingLayout& layout, double lossBytesPerLogit);
std::vector<Op> embeddingOps(const ModelArch& arch, const TrainingLayout& layout);
// One multi-token-prediction module's own ops besides its transformer block and the shared LM
// head (DeepSeek-V3 sec. 2.2): the shifted tokens' embedding lookup, the RMSNorms of the hidden
// state and of the embedding, and the projection of their concatenation (2h -> h / tp, in the
// layers' dtype), forward and backward.
std::vector<Op> mtpOps(const ModelArch& arch, const TrainingLayout& layout);

// One decode step of `batch` sequences each attending over `kvLen` cached tokens, on one GPU
// of a `tp`-way tensor-parallel (and `ep`-way expert-parallel) engine: the layers' GEMMs at
// m = batch, decode attention, the TP all-reduces (twice per layer, the engine's custom
// all-reduce), the EP dispatch / combine and the LM head. Weight dtype per `weightDtype`.
struct InferenceLayout {
    int tp = 1, ep = 1;
    int dp = 1; // data-parallel attention ranks (each its own batch) sharing the experts
    bool tpIntraNode = true, epIntraNode = true;
    int epRanksPerNode = 0;
    GemmDtype weightDtype = GemmDtype::Bf16;
    std::optional<GemmDtype> attentionDtype, expertDtype; // unset: weightDtype
    double kvBytesPerElement = 2;
    double activationBytes = 2;
};
// `queryTokens` > 1: the verify step of speculative decoding, each sequence's drafted tokens and
// the one after them in one forward (GEMMs at m = batch x queryTokens, attention queries of that
// length over the same cache, logits at every position).
std::vector<Op> decodeStepOps(const ModelArch& arch, const InferenceLayout& layout, double batch,
    double kvLen, double queryTokens = 1);
// One pass of a speculative draft over `batch` sequences: the draft's decode step (its layers,
// attention over its own cache of `kvLen` tokens, its LM head), and with `fuseHidden` the
// 2h -> h projection that joins the model's last hidden state to the token embedding (DeepSeek
// MTP's eh_proj, EAGLE's fc; a plain linear, not split by TP).
std::vector<Op> draftPassOps(const ModelArch& draft, const InferenceLayout& layout, double batch,
    double kvLen, bool fuseHidden);
// A prefill of `sequences` prompts of `tokens` each (flash attention, causal).
std::vector<Op> prefillOps(const ModelArch& arch, const InferenceLayout& layout, double sequences, double tokens);

} // namespace envelope
