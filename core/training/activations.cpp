#include "training/activations.h"
#include "base/numeric.h"
#include "training/lora.h"

#include <algorithm>
#include <cmath>

namespace envelope {
namespace {

// Guards for odd-but-valid input: never divide by zero, never let a NaN through.
int atLeastOne(int x)
{
    return x < 1 ? 1 : x;
}

// The FFN's intermediate width per token: ffn_hidden, or a MoE layer's expert width times the
// experts each token runs (top-k routed + shared).
double ffnWidth(const ModelArch& arch, bool moeLayer)
{
    if (moeLayer && arch.moe)
        return positiveOrZero(static_cast<double>(arch.moe->expertFfnHidden))
            * (positiveOrZero(arch.moe->topK) + positiveOrZero(arch.moe->sharedExperts));
    return positiveOrZero(static_cast<double>(arch.ffnHidden));
}

// training.recompute_ops and training.fp8_activations: DeepSeek-AI 2024 (DeepSeek-V3 technical
// report) sec. 3.2.3 recomputes every RMSNorm and the MLA up-projections in the backward, and
// sec. 3.3.3 caches the inputs of the MoE up-projections and of SwiGLU in FP8, recomputing the
// SwiGLU output, and the input of the linear after attention in an 8-bit format. Each flag
// removes (recompute) or narrows to 1 B (fp8) the tensors it names in the per-token terms.
void applyRecomputeOpsAndFp8(
    const ModelArch& arch, const TrainingConfig& config, double ab, bool moeLayer, LayerTerms& t)
{
    const unsigned ops = config.recomputeOps;
    // FP8 linear inputs (fp8KeepsLinearInputs): the norm outputs (the QKV, FFN and MLA
    // up-projection inputs), the output-projection input, the down-projection input and the
    // dispatched expert inputs are kept at 1 B. Q, K, V (flash attention's inputs), SwiGLU's
    // gate and up outputs and the expert outputs stay at the recipe's width.
    const bool linearsFp8 = fp8KeepsLinearInputs(config, ab);
    const unsigned fp8
        = config.fp8Activations | (linearsFp8 ? (Fp8AttentionOutput | Fp8MoeInputs) : 0u);
    if (ops == 0 && fp8 == 0)
        return;
    const double narrow = std::max(0.0, ab - 1.0); // bytes saved per element cached in FP8
    const double h = positiveOrZero(static_cast<double>(arch.hidden));
    const double heads = positiveOrZero(arch.heads);
    const double oInput
        = arch.mla ? heads * positiveOrZero(arch.mla->vHeadDim) : heads * arch.headDimOrDefault();
    if (ops & RecomputeNorm) {
        // The norms' outputs (the QKV and FFN inputs; MLA's normalised latents) are rebuilt from
        // the kept norm inputs; an eager norm's fp32 copies go with them.
        t.normOutputs = 0;
        t.latents /= 2;
        t.eagerNorms = 0;
    }
    if (linearsFp8 && !(ops & RecomputeNorm)) {
        t.normOutputs = std::max(0.0, t.normOutputs - narrow * 2 * h);
        if (arch.mla)
            t.latents = std::max(0.0, t.latents
                    - narrow * (positiveOrZero(arch.mla->qLoraRank) + positiveOrZero(arch.mla->kvLoraRank)));
    }
    if ((ops & RecomputeMlaUp) && arch.mla)
        // Q, K and V are rebuilt from the kept latents; the output-projection input stays.
        t.attention = ab * oInput;
    if (fp8 & Fp8AttentionOutput)
        t.attention = std::max(0.0, t.attention - narrow * oInput);
    const double width = ffnWidth(arch, moeLayer);
    if (arch.ffn == FfnKind::Gated) {
        // Gate and up outputs (SwiGLU's input), and their product (the down-projection input).
        const double gateUp = 2 * width * ((fp8 & Fp8SwigluInputs) ? std::min(ab, 1.0) : ab);
        const double product
            = (ops & RecomputeSwiglu) ? 0.0 : (linearsFp8 ? std::min(ab, 1.0) : ab) * width;
        t.ffn = gateUp + product;
        if ((ops & RecomputeSwiglu) && config.eagerKernels())
            t.eagerSplit = std::max(0.0, t.eagerSplit - ab * width); // act(gate) rebuilt too
    } else if (linearsFp8) {
        // A plain FFN keeps the activation's input and output; the output is the second linear's.
        t.ffn = std::max(0.0, t.ffn - narrow * width);
    }
    if ((fp8 & Fp8MoeInputs) && moeLayer && arch.moe)
        // The dispatched copy of each token's input, one per routed expert.
        t.moeTokens = std::max(0.0, t.moeTokens - narrow * h * positiveOrZero(arch.moe->topK));
}

} // namespace

bool fp8KeepsLinearInputs(const TrainingConfig& config, double activationBytes)
{
    return config.framework.fp8SavesLinearInputs
        && config.recipe.recipe.compute == ComputeDtype::Fp8 && activationBytes > 1.0;
}

LayerTerms layerTerms(
    const ModelArch& arch, const TrainingConfig& config, double activationBytes, bool moeLayer)
{
    const double ab = positiveOrZero(activationBytes);
    const double h = positiveOrZero(static_cast<double>(arch.hidden));
    const double heads = positiveOrZero(arch.heads);
    const double headDim = arch.headDimOrDefault();
    const double kvHeads = arch.kvHeadsOrDefault();
    const double seq = positiveOrZero(config.seqLen);
    const bool dropout = arch.dropout > 0;
    const bool flash = config.flashAttention;

    LayerTerms t;
    // Korthikanti et al. 2022 sec. 4.1: each block norm keeps its input (2sbh each, "4sbh"), and
    // its output is the input the next linear keeps: the QKV input and the FFN input (2sbh each).
    t.normInputs = 2 * ab * h;
    t.normOutputs = 2 * ab * h;
    // The attention-output and FFN-output dropout masks (sbh each, 1 byte); none at dropout 0.
    t.dropoutMasks = dropout ? 2 * h : 0.0;

    if (arch.mla) {
        // MLA (DeepSeek-V2/V3): the q and kv latents pass through a norm before their
        // up-projections, which keep the norm's input and output; per head the attention core
        // sees Q and K of width nope + rope and V of width v_head_dim.
        const MlaConfig& m = *arch.mla;
        const double qk = positiveOrZero(m.qkNopeHeadDim) + positiveOrZero(m.qkRopeHeadDim);
        const double v = positiveOrZero(m.vHeadDim);
        t.latents = ab * (2 * positiveOrZero(m.qLoraRank) + 2 * positiveOrZero(m.kvLoraRank));
        t.attention = ab * heads * (2 * qk + 2 * v); // Q, K, V, output-projection input
    } else {
        // Q and K for QK^T, V for the product with the probabilities, the output-projection
        // input (Korthikanti sec. 4.1: 4sbh + 2sbh + 2sbh). Flash attention reads K and V at
        // kv_heads width (GQA); the eager path repeats them to all heads before the matmuls, so
        // that is what it keeps.
        const double kvSaved = flash ? kvHeads * headDim : heads * headDim;
        t.attention = ab * (2 * heads * headDim + 2 * kvSaved);
    }

    if (flash) {
        // Flash attention (Dao et al. 2022) never stores the s x s matrix; it keeps one fp32
        // log-sum-exp per head and query row for the backward pass.
        t.flashStats = 4 * heads;
    } else {
        // Korthikanti sec. 4.1: softmax output 2as^2b, dropout mask as^2b, dropout output
        // 2as^2b = 5as^2b. Without dropout the softmax output is also the matmul input: kept once.
        t.scores = heads * seq * (dropout ? 2 * ab + 1 : ab);
    }

    // FFN intermediates: plain (GELU) keeps the activation's input and output (Korthikanti:
    // 8sbh + 8sbh at 4h); gated (SwiGLU/GeGLU) keeps the gate and up outputs and their product
    // (the down-projection input), as a fused kernel does: 3 x ffn_hidden.
    const double tensorsPerFfn = arch.ffn == FfnKind::Gated ? 3.0 : 2.0;
    t.ffn = ab * tensorsPerFfn * ffnWidth(arch, moeLayer);
    if (moeLayer && arch.moe) {
        const MoeConfig& m = *arch.moe;
        const double topK = positiveOrZero(m.topK);
        // Each token is dispatched to top-k experts (a permuted copy of its input per expert)
        // and their outputs are kept for the weighted combine; the router keeps fp32
        // probabilities over all experts.
        t.moeTokens = 2 * ab * h * topK + 4 * positiveOrZero(m.experts);
    }

    t.lora = loraActivationBytesPerToken(config.lora, ab);
    applyRecomputeOpsAndFp8(arch, config, ab, moeLayer, t);

    if (config.eagerKernels()) {
        // Eager PyTorch (transformers LlamaRMSNorm, torchtune RMSNorm): per block norm the fp32
        // upcast x.float() (4h, saved by pow and the multiply by rsqrt) and the normalised x
        // cast back (2h, saved by the multiply with the weight), where a fused kernel keeps the
        // 2h input: 4h more per norm. RoPE computed in fp32 keeps fp32 q and k; SwiGLU as
        // silu(gate) * up keeps silu(gate) as its own tensor (a fused kernel recomputes it).
        t.eagerNorms = 2 * (4.0 + 2.0 - 2.0) * h;
        t.eagerSplit = (arch.mla ? 0.0 : 4.0 * (heads + kvHeads) * headDim)
            + (arch.ffn == FfnKind::Gated ? ab * ffnWidth(arch, moeLayer) : 0.0);
        // Eager attention (transformers' eager_attention_forward) takes the softmax in fp32 and
        // casts it back: softmax's backward keeps the fp32 output (4 B per score) beside the
        // 16-bit copy the AV matmul reads (counted above). In fp32 the cast is the same tensor.
        // Measured with tools/measure_saved_activations.py (docs/validation-activations.md).
        if (!flash && ab < 4)
            t.scores += 4.0 * heads * seq;
    }
    return t;
}

ActivationCosts activationCosts(
    const ModelArch& arch, const TrainingConfig& config, double activationBytes)
{
    const double ab = positiveOrZero(activationBytes);
    const double h = positiveOrZero(static_cast<double>(arch.hidden));
    const double tp = atLeastOne(config.tp);
    const double cp = atLeastOne(config.cp);
    // Sequence parallelism splits the otherwise replicated tensors (norms, dropout) over tp.
    const double tSp = config.sequenceParallel ? tp : 1.0;

    ActivationCosts c;
    c.tokens = positiveOrZero(config.microBatch) * positiveOrZero(config.seqLen) / cp;

    if (config.activationModel.kind == ActivationModel::Kind::SimpleSbh) {
        // Seeds 002/003: k x B x S x h x bytes per layer with k x bytes = bytes_per_sbh_per_layer
        // stated for 2-byte activations (24 = 12 x 2), scaled to the recipe's activation width;
        // seed 001 divides it by TP ("activations are distributed, ~4x with TP=4").
        const double per = positiveOrZero(config.activationModel.bytesPerSbhPerLayer) * (ab / 2.0)
            * c.tokens * h / tp;
        c.simple = true;
        c.dense = { per, per, per };
        c.moe = c.dense;
        return c;
    }

    const auto layer = [&](bool moe) {
        const LayerTerms t = layerTerms(arch, config, ab, moe);
        LayerActivation a;
        a.full = (t.replicated() / tSp + t.split() / tp) * c.tokens;
        if (config.framework.spGatheredInputs && config.sequenceParallel)
            // The norm outputs (QKV and FFN inputs) are saved all-gathered: full size.
            a.full += t.normOutputs * (1.0 - 1.0 / tSp) * c.tokens;
        a.selective = a.full - t.scores / tp * c.tokens;
        // Full recompute keeps each layer's input (Korthikanti Table 2: 2sbh per layer), split
        // along the sequence when sequence parallelism is on.
        a.checkpoint = ab * h / tSp * c.tokens;
        // torchtitan op-level SAC (_save_list / _custom_policy, Dec 2024): saved are the block
        // input, the outputs of matmuls 1, 3, 5, 7 of q k v o gate up down (q, v, gate, down),
        // SDPA's output and log-sum-exp; the rest is recomputed in backward.
        if (!arch.mla) {
            const double heads = positiveOrZero(arch.heads);
            const double headDim = arch.headDimOrDefault();
            const double ffnWidth = moe && arch.moe
                ? positiveOrZero(static_cast<double>(arch.moe->expertFfnHidden))
                    * positiveOrZero(arch.moe->topK)
                : positiveOrZero(static_cast<double>(arch.ffnHidden));
            const double split
                = ab * (2 * heads * headDim + arch.kvHeadsOrDefault() * headDim + ffnWidth)
                + 4 * heads;
            a.perOpSac = (ab * h / tSp + split / tp + ab * h / tSp) * c.tokens;
        } else {
            a.perOpSac = a.selective;
        }
        return a;
    };
    c.dense = layer(false);
    c.moe = arch.moe ? layer(true) : c.dense;

    // The embedding's output is the first layer's input (counted there); the embedding itself
    // keeps the int64 token ids and, with dropout, its dropout mask (Korthikanti sec. 4.3: sbh).
    c.embeddingBytes = c.tokens * (8.0 + (arch.dropout > 0 ? h / tSp : 0.0));
    // Output layer (Korthikanti sec. 4.3, 4sbh/t (1 + v/h) with SP): the final norm's input and
    // the head's input (2sbh each), the logits in the activation dtype plus the fp32 copy the
    // loss keeps (4sbv), both vocab-parallel over tp.
    // The bytes per logit depend on the loss implementation (plan/framework.h); the generic
    // profile's fused loss keeps Korthikanti's logits + fp32 copy.
    const double vocab = positiveOrZero(static_cast<double>(arch.vocab));
    c.lossBytesPerLogit = lossBytesPerLogit(config.effectiveLoss(), ab);
    c.outputBytes = c.tokens * (2 * ab * h / tSp + c.lossBytesPerLogit * vocab / tp);
    return c;
}

double microBatchesInFlight(int stage, int stages, int virtualStages, int microBatches)
{
    const int p = atLeastOne(stages);
    const int m = atLeastOne(microBatches);
    const int s = std::clamp(stage, 0, p - 1);
    if (p == 1)
        return 1.0;
    if (virtualStages <= 1) {
        // 1F1B: stage s runs p - s warm-up forwards before its first backward (at most m).
        return std::min(p - s, m);
    }
    // Interleaved 1F1B (Megatron): 2(p - s - 1) + (v - 1)p warm-up chunks plus the one in
    // progress, each chunk 1/v of the stage's layers; on stage 0 that is p + (p - 1)/v.
    const double v = virtualStages;
    const double chunks = std::min(2.0 * (p - s - 1) + (v - 1) * p + 1, double(m) * v);
    return chunks / v;
}

namespace {

// What the stage keeps on the GPU before activation offload.
StageActivation keptActivation(const ActivationCosts& costs, const TrainingConfig& config,
    int stage, int stages, int denseLayers, int moeLayers)
{
    StageActivation a;
    const double calibration = config.activationModel.calibration;
    a.calibration = std::isfinite(calibration) && calibration > 0 ? calibration : 1.0;
    a.inFlight = microBatchesInFlight(stage, stages, config.virtualStages, config.gradAccum);
    const int p = atLeastOne(stages);
    const bool dualPipe = config.ppSchedule == PpSchedule::DualPipe && p > 1;
    if (dualPipe)
        // DualPipe (DeepSeek-AI 2024 sec. 3.2.1, Table 2): each rank holds the chunks of stages
        // s and p - 1 - s and keeps PP + 1 chunk-micro-batches of activations, i.e. (p + 1) / 2
        // micro-batches through both of its chunks (the layers passed here are both chunks').
        // ZB1P keeps 1F1B's count (Table 2: PP), so it needs nothing here.
        a.inFlight = std::min((p + 1) / 2.0, double(atLeastOne(config.gradAccum)));
    const bool holdsFirst = stage == 0 || (dualPipe && stage == p - 1);
    const bool holdsLast = stage == p - 1 || (dualPipe && stage == 0);
    if (holdsFirst)
        a.embedding = a.inFlight * costs.embeddingBytes;
    if (holdsLast)
        a.output = costs.outputBytes; // the last stage runs one micro-batch's loss at a time

    const int nd = std::max(denseLayers, 0);
    const int nm = std::max(moeLayers, 0);
    const int n = nd + nm;
    if (n == 0)
        return a;

    const LayerActivation& d = costs.dense;
    const LayerActivation& e = costs.moe;
    const double sumFull = nd * d.full + nm * e.full;
    const double sumSelective = nd * d.selective + nm * e.selective;
    const double maxFull = std::max(nd > 0 ? d.full : 0.0, nm > 0 ? e.full : 0.0);
    const double maxSelective = std::max(nd > 0 ? d.selective : 0.0, nm > 0 ? e.selective : 0.0);

    // A framework whose only checkpointing is per layer runs "selective" as full recompute.
    Recompute recompute = config.recompute;
    if (recompute == Recompute::Selective && !costs.simple
        && config.framework.selective == SelectivePolicy::Full)
        recompute = Recompute::Full;
    if (recompute == Recompute::Selective && !costs.simple
        && config.framework.selective == SelectivePolicy::PerOpSac) {
        a.layers = a.inFlight * (nd * d.perOpSac + nm * e.perOpSac);
        a.workingSet = maxFull; // one layer's recomputed ops alive during its backward
        a.perLayer = std::max(nd > 0 ? d.perOpSac : 0.0, nm > 0 ? e.perOpSac : 0.0);
        return a;
    }

    switch (recompute) {
    case Recompute::None:
        a.layers = a.inFlight * sumFull;
        a.perLayer = maxFull;
        break;
    case Recompute::Selective:
        // The seeds' simple model already assumes selective recompute (seed 003: "k = 12 with
        // selective recompute"), so it keeps the same k there.
        a.layers = a.inFlight * sumSelective;
        a.perLayer = maxSelective;
        break;
    case Recompute::Full:
        if (costs.simple) {
            // Seed 002 (gradient_checkpointing=True): int(sqrt(L)) layers' activations.
            const double kept = std::max(1.0, std::floor(std::sqrt(double(n))));
            a.layers = a.inFlight * kept * d.full;
            a.perLayer = d.full;
        } else {
            // Korthikanti Table 2: 2sbh per layer, plus one layer rebuilt during backward.
            a.layers = a.inFlight * n * d.checkpoint;
            a.workingSet = maxFull;
            a.perLayer = d.checkpoint;
        }
        break;
    case Recompute::EveryK: {
        const int k = atLeastOne(config.recomputeEvery);
        const double segments = std::ceil(double(n) / k);
        const double rebuilt = std::min(k, n);
        if (costs.simple) {
            // Seed 001: (L/k + k) x per-layer (it keeps a full layer per checkpoint: "overestimates
            // the checkpoint term ... but is easier to compute").
            a.layers = a.inFlight * segments * d.full;
            a.workingSet = rebuilt * d.full;
            a.perLayer = d.full;
        } else {
            // Checkpoints (layer inputs) at each of ceil(L/k) segments, plus one segment's k
            // layers rebuilt with all their tensors during backward.
            a.layers = a.inFlight * segments * d.checkpoint;
            a.workingSet = rebuilt * maxFull;
            a.perLayer = d.checkpoint;
        }
        break;
    }
    }
    return a;
}

} // namespace

StageActivation stageActivation(const ActivationCosts& costs, const TrainingConfig& config,
    int stage, int stages, int denseLayers, int moeLayers)
{
    StageActivation a = keptActivation(costs, config, stage, stages, denseLayers, moeLayers);
    const int n = std::max(denseLayers, 0) + std::max(moeLayers, 0);
    if (!config.activationOffload || n == 0)
        return a;
    // Activation offload (torchtune OffloadActivations, Megatron --cpu-offloading via
    // Transformer Engine): the saved tensors of the offloaded layers go to pinned host memory in
    // the forward and come back in the backward, so the kept layer activations shrink by the
    // offloaded layers' share (under full recompute, only the checkpointed layer inputs: the
    // tensors the recompute rebuilds were never saved). What stays: the layers not offloaded
    // (Megatron: layers past --cpu-offloading-num-layers), the output layer (torchtune runs the
    // head under NoOpManager; Megatron offloads transformer layers only), the embedding, the
    // layer being rebuilt by recompute, and the framework's buffer of offloaded layers moving
    // to or from the host (offload_buffer_layers of one micro-batch).
    a.offloadedLayers = config.activationOffloadLayers > 0
        ? std::min(config.activationOffloadLayers, n)
        : n;
    a.offloaded = a.layers * a.offloadedLayers / n;
    a.layers -= a.offloaded;
    const double bufferLayers
        = std::min(std::max(config.framework.offloadBufferLayers, 0.0), a.offloadedLayers);
    a.offloadBuffer = bufferLayers * a.perLayer;
    return a;
}

} // namespace envelope
