// The op lists of docs/formulas-compute.md, "Step time from ops". Shapes per GPU after tensor (tp), context
// (cp) and expert (ep) parallelism, as Megatron-Core lays a layer out (Shoeybi et al. 2019
// sec. 3; Korthikanti et al. 2022 sec. 4.2.2 for sequence parallelism; DeepSeek-V3 sec. 3.2
// and Megatron-Core's MoE for experts).
#include "ops/ops.h"

#include <algorithm>
#include <cmath>

#include "model/attention.h"

namespace envelope {
namespace {

double atLeast1(double x)
{
    return x > 1 ? x : 1.0;
}

Op gemm(const char* name, double m, double n, double k, GemmDtype dtype, double batch = 1)
{
    Op op;
    op.cls = OpClass::Gemm;
    op.name = name;
    op.m = m;
    op.n = n;
    op.k = k;
    op.batch = batch;
    op.dtype = dtype;
    return op;
}

Op elementwise(const char* name, double bytes)
{
    Op op;
    op.cls = OpClass::Elementwise;
    op.name = name;
    op.bytes = bytes;
    return op;
}

// A norm, softmax or loss: an elementwise pass that reduces over each row.
Op rowReduction(const char* name, double bytes)
{
    Op op = elementwise(name, bytes);
    op.reduction = true;
    return op;
}

Op collective(const char* name, CollectiveKind kind, double bytes, int group, bool intraNode)
{
    Op op;
    op.cls = OpClass::Collective;
    op.name = name;
    op.collective = kind;
    op.bytes = bytes;
    op.group = group;
    op.intraNode = intraNode;
    return op;
}

// The layer's linears with LoRA adapters beside them when the base is frozen: x A (r columns)
// then (x A) B, each trainable (Hu et al. 2021).
void addLinear(std::vector<Op>& ops, const TrainingLayout& l, const char* name, double m, double n,
    double k, GemmDtype dtype, double batch = 1)
{
    Op linear = gemm(name, m, n, k, dtype, batch);
    const std::string_view id(name);
    linear.columnParallel = id == "qkv" || id == "q" || id == "q up" || id == "kv up"
        || id == "mlp up" || id == "shared up" || id == "experts up";
    ops.push_back(linear);
    if (l.frozenBase && l.loraRank > 0) {
        ops.push_back(gemm("lora A", m, l.loraRank, k, GemmDtype::Bf16, batch));
        ops.push_back(gemm("lora B", m, n, l.loraRank, GemmDtype::Bf16, batch));
    }
}

struct Widths {
    double heads = 0, kvHeads = 0, dQk = 0, dV = 0;
};

Widths attentionWidths(const ModelArch& arch, int tp)
{
    Widths w;
    w.heads = atLeast1(double(std::max(arch.heads, 1)) / tp);
    if (arch.mla) {
        w.kvHeads = w.heads; // the up-projected K and V are per head in training and prefill
        w.dQk = std::max(arch.mla->qkNopeHeadDim, 0) + std::max(arch.mla->qkRopeHeadDim, 0);
        w.dV = std::max(arch.mla->vHeadDim, 0);
    } else {
        // A KV head smaller than the TP group is replicated (Megatron-Core GQA).
        w.kvHeads = atLeast1(double(arch.kvHeadsOrDefault()) / tp);
        w.dQk = w.dV = arch.headDimOrDefault();
    }
    return w;
}

// Keys each query sees on average: half the sequence under a causal mask, the window when
// shorter (a query near the start of a window-bounded sequence sees fewer; ignored), half a
// chunk in chunked layers; averaged over the layers' kinds (model/attention.h).
double attendedKeys(const ModelArch& arch, double seq)
{
    const double causal = seq / 2;
    const int layers = cacheLayers(arch);
    if (layers <= 0)
        return 0;
    // DeepSeek Sparse Attention: a query attends to at most index_topk keys.
    const double full = countLayers(arch, LayerAttention::Full)
        * (arch.mla && arch.mla->sparse() ? std::min(causal, double(arch.mla->indexTopK)) : causal);
    const double sliding = countLayers(arch, LayerAttention::Sliding)
        * (arch.slidingWindow > 0 ? std::min(causal, double(arch.slidingWindow)) : causal);
    const double chunked = countLayers(arch, LayerAttention::Chunked)
        * (arch.attentionChunk > 0 ? std::min(seq, double(arch.attentionChunk)) / 2 : causal);
    return (full + sliding + chunked) / layers;
}

// A causal flash-attention forward core: `sequences` of `seq` queries over `kvLen` keys on
// average, `heads` query and `kvHeads` key heads of dQk (and dV value) dimensions.
Op flashAttention(const char* name, double sequences, double seq, double kvLen, double heads,
    double kvHeads, double dQk, double dV)
{
    Op a;
    a.cls = OpClass::Attention;
    a.attention = AttentionKind::FlashForward;
    a.name = name;
    a.sequences = sequences;
    a.seq = seq;
    a.kvLen = kvLen;
    a.heads = heads;
    a.kvHeads = kvHeads;
    a.headDimQk = dQk;
    a.headDimV = dV;
    return a;
}

// Q, K, V (and MLA's down / up projections), RoPE, the attention core and the output
// projection for `tokens` tokens of `sequences` sequences of `seq` (after CP) on one GPU.
void addAttention(std::vector<Op>& ops, const ModelArch& arch, const TrainingLayout& l,
    double sequences, double seqLocal, double seqFull)
{
    const double tokens = sequences * seqLocal;
    const double h = double(arch.hidden);
    const Widths w = attentionWidths(arch, l.tp);
    const GemmDtype dt = l.attentionDtype.value_or(l.linearDtype);
    const double act = l.activationBytes;
    if (arch.mla) {
        const MlaConfig& mla = *arch.mla;
        const double rope = std::max(mla.qkRopeHeadDim, 0);
        // The down projections are replicated across TP (Megatron-Core MLA), the up
        // projections split by heads.
        if (mla.qLoraRank > 0) {
            addLinear(ops, l, "q down", tokens, mla.qLoraRank, h, dt);
            ops.push_back(rowReduction("q norm", 2 * tokens * mla.qLoraRank * act));
            addLinear(ops, l, "q up", tokens, w.heads * w.dQk, mla.qLoraRank, dt);
        } else {
            addLinear(ops, l, "q", tokens, w.heads * w.dQk, h, dt);
        }
        addLinear(ops, l, "kv down", tokens, mla.kvLoraRank + rope, h, dt);
        ops.push_back(rowReduction("kv norm", 2 * tokens * mla.kvLoraRank * act));
        addLinear(ops, l, "kv up", tokens, w.heads * (w.dQk - rope + w.dV), mla.kvLoraRank, dt);
        if (mla.sparse()) {
            // DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2 sec. 2.1): queries
            // from the q latent, one shared key and per-head weights from the hidden state
            // (replicated across TP, as SGLang's and vLLM's ReplicatedLinear), then the logits
            // of every indexer head against each earlier key, summed over the heads in one fused
            // kernel (DeepGEMM fp8_mqa_logits): an attention core of indexHeads query heads over
            // one key head of indexHeadDim and no values, every earlier key (no top-k). Timed
            // on the bf16 flash table: the FP8 kernel's own rate is not measured (conservative).
            const double in = mla.qLoraRank > 0 ? double(mla.qLoraRank) : h;
            const double heads = mla.indexHeads, dim = mla.indexHeadDim;
            addLinear(ops, l, "indexer q", tokens, heads * dim, in, dt);
            addLinear(ops, l, "indexer k", tokens, dim, h, dt);
            ops.push_back(rowReduction("indexer k norm", 2 * tokens * dim * act));
            addLinear(ops, l, "indexer weights", tokens, heads, h, GemmDtype::Bf16);
            Op logits = flashAttention("indexer logits", sequences, seqLocal,
                std::max(seqFull / 2, 1.0), heads, 1, dim, 0);
            // FP8 keys with an fp32 scale per 128 (the indexer cache).
            logits.kvBytesPerElement = 1 + 4.0 / 128;
            ops.push_back(logits);
        }
    } else {
        addLinear(ops, l, "qkv", tokens, (w.heads + 2 * w.kvHeads) * w.dQk, h, dt);
    }
    ops.push_back(elementwise("rope", 2 * tokens * (w.heads + w.kvHeads) * w.dQk * act));

    const double keys = attendedKeys(arch, seqFull);
    if (l.flashAttention) {
        ops.push_back(flashAttention("attention", sequences, seqLocal, keys, w.heads, w.kvHeads, w.dQk, w.dV));
    } else {
        // Unfused core as Megatron-LM ran it before flash attention: QK^T as a batched GEMM
        // over the full s x s square, a fused scale-mask-softmax kernel (read the scores,
        // write the probabilities), dropout (probabilities in, dropped probabilities and a
        // 1-byte mask out) and AV as a batched GEMM (Korthikanti et al. 2022 sec. 4.1).
        const double scores = sequences * w.heads * seqLocal * seqFull;
        Op qk = gemm("attention QK^T", seqLocal, seqFull, w.dQk, GemmDtype::Bf16, sequences * w.heads);
        Op softmax = rowReduction("attention softmax", 2 * scores * act);
        Op av = gemm("attention AV", seqLocal, w.dV, seqFull, GemmDtype::Bf16, sequences * w.heads);
        qk.weightless = av.weightless = true;
        ops.push_back(qk);
        ops.push_back(softmax);
        if (arch.dropout > 0)
            ops.push_back(elementwise("attention dropout", scores * (2 * act + 1)));
        ops.push_back(av);
    }
    addLinear(ops, l, "o", tokens, h, w.heads * w.dV, dt);
}

// The FFN of a dense layer: gate + up fused into one GEMM (SwiGLU) or up alone (GELU), the
// activation, down.
void addDenseFfn(std::vector<Op>& ops, const TrainingLayout& l, double tokens, double h,
    double ffnLocal, bool gated, const char* upName, const char* downName, double batch = 1,
    std::optional<GemmDtype> dtype = std::nullopt)
{
    const double act = l.activationBytes;
    const GemmDtype dt = dtype.value_or(l.linearDtype);
    addLinear(ops, l, upName, tokens, (gated ? 2 : 1) * ffnLocal, h, dt, batch);
    // SwiGLU reads gate and up, writes their product; GELU reads and writes one tensor.
    ops.push_back(elementwise("activation", (gated ? 3 : 2) * tokens * ffnLocal * act * batch));
    addLinear(ops, l, downName, tokens, h, ffnLocal, dt, batch);
}

} // namespace

double Op::flops() const
{
    switch (cls) {
    case OpClass::Gemm:
        return 2 * m * n * k * batch;
    case OpClass::Attention: {
        // QK^T and AV: 2 x d per (query, key) pair and head each way.
        const double forward = 2 * sequences * seq * kvLen * heads * (headDimQk + headDimV);
        return attention == AttentionKind::FlashBackward ? 2.5 * forward : forward;
    }
    default:
        return 0;
    }
}

std::vector<Op> layerForwardOps(const ModelArch& arch, const TrainingLayout& l, bool moeLayer)
{
    std::vector<Op> ops;
    ops.reserve(24);
    const double h = double(arch.hidden);
    const double act = l.activationBytes;
    const double cp = std::max(l.cp, 1), tp = std::max(l.tp, 1);
    const double seqLocal = l.seqLen / cp;
    const double tokens = l.microBatch * seqLocal;
    // Under sequence parallelism norms, dropout and residuals run on 1/tp of the tokens.
    const double spTokens = l.sequenceParallel && tp > 1 ? tokens / tp : tokens;
    const double activationBuffer = tokens * h * act; // b s h, what a TP collective moves
    const bool sp = l.sequenceParallel && tp > 1;

    ops.push_back(rowReduction("norm", 2 * spTokens * h * act));
    if (sp)
        ops.push_back(collective("tp all-gather", CollectiveKind::AllGather, activationBuffer, l.tp, l.tpIntraNode));
    if (l.cp > 1) {
        // Ring attention (Liu et al. 2023; Megatron-Core CP): the local K and V chunk travels
        // cp - 1 hops (send/recv overlapped with the chunk's attention in Megatron-Core; kept
        // as its own op so its time is visible).
        const Widths w = attentionWidths(arch, l.tp);
        Op ring = collective("cp ring", CollectiveKind::AllGather,
            (l.cp - 1) * tokens * w.kvHeads * (w.dQk + w.dV) * act, l.cp, l.cpIntraNode);
        ring.sendRecv = true;
        ops.push_back(ring);
    }
    addAttention(ops, arch, l, l.microBatch, seqLocal, l.seqLen);
    if (tp > 1)
        ops.push_back(sp ? collective("tp reduce-scatter", CollectiveKind::ReduceScatter, activationBuffer, l.tp, l.tpIntraNode)
                         : collective("tp all-reduce", CollectiveKind::AllReduce, activationBuffer, l.tp, l.tpIntraNode));
    // Bias-dropout-add (or the residual add alone): read x and the residual, write the sum.
    ops.push_back(elementwise("residual", 3 * spTokens * h * act + (arch.dropout > 0 ? spTokens * h : 0)));
    ops.push_back(rowReduction("norm", 2 * spTokens * h * act));
    if (sp)
        ops.push_back(collective("tp all-gather", CollectiveKind::AllGather, activationBuffer, l.tp, l.tpIntraNode));

    const bool gated = arch.ffn == FfnKind::Gated;
    if (moeLayer && arch.moe && arch.moe->experts > 0 && arch.moe->topK > 0) {
        const MoeConfig& moe = *arch.moe;
        const double experts = moe.experts, topK = moe.topK, ep = std::max(l.ep, 1);
        const double ffnLocal = double(moe.expertFfnHidden) / (l.expertTp > 0 ? l.expertTp : tp);
        // Token sets across the EP group: each rank's own (training), the attention ranks'
        // (data-parallel attention), or one shared by the whole TP group.
        const double groups = l.epTokenGroups > 0 ? std::min<double>(l.epTokenGroups, ep) : ep;
        const bool exchange = ep > 1 && groups > 1;
        ops.push_back(gemm("router", tokens, experts, h, GemmDtype::Bf16));
        // Each token goes to top-k experts; the ep ranks exchange them (dispatch) and back
        // (combine). Balanced routing: every GPU ends with tokens x top-k assignments.
        const double assignments = tokens * topK;
        // Block-scaled FP8 linears (DeepSeek-V3's 128 x 128 weights, 1 x 128 activation groups)
        // quantize the tokens before the dispatch and send them in FP8 with one fp32 scale per
        // 128 values; the combine returns BF16 (DeepSeek-V3 report sec. 3.3.3; DeepEP's FP8
        // dispatch).
        const GemmDtype expertDtype = l.expertDtype.value_or(l.linearDtype);
        const double dispatchBytes = expertDtype == GemmDtype::Fp8Block ? 1 + 4.0 / 128 : act;
        if (exchange) {
            ops.push_back(collective("ep dispatch", CollectiveKind::AllToAll, assignments * h * dispatchBytes, l.ep, l.epIntraNode));
            ops.back().ranksPerNode = l.epRanksPerNode;
        }
        else
            ops.push_back(elementwise("expert permute", 2 * assignments * h * act));
        // Expected experts that receive a token at all: 1 - (1 - 1/E)^(draws) of them, each
        // with draws / (E x that share) tokens (small batches touch few experts: decode).
        const double draws = assignments * groups;
        const double hit = 1 - std::pow(1 - 1 / experts, draws);
        const double localExperts = experts / ep * hit;
        const double perExpert = hit > 0 ? draws / (experts * hit) : 0;
        if (localExperts > 0 && perExpert > 0) {
            const std::size_t first = ops.size();
            addDenseFfn(ops, l, perExpert, h, ffnLocal, gated, "experts up", "experts down",
                localExperts, expertDtype);
            for (std::size_t i = first; i < ops.size(); ++i)
                ops[i].grouped = ops[i].cls == OpClass::Gemm;
        }
        if (exchange) {
            ops.push_back(collective("ep combine", CollectiveKind::AllToAll, assignments * h * act, l.ep, l.epIntraNode));
            ops.back().ranksPerNode = l.epRanksPerNode;
        }
        else
            ops.push_back(elementwise("expert unpermute", 2 * assignments * h * act));
        if (moe.sharedExperts > 0)
            addDenseFfn(ops, l, tokens, h, moe.sharedExperts * ffnLocal, gated, "shared up", "shared down");
    } else {
        addDenseFfn(ops, l, tokens, h, double(arch.ffnHidden) / tp, gated, "mlp up", "mlp down");
    }
    if (tp > 1)
        ops.push_back(sp ? collective("tp reduce-scatter", CollectiveKind::ReduceScatter, activationBuffer, l.tp, l.tpIntraNode)
                         : collective("tp all-reduce", CollectiveKind::AllReduce, activationBuffer, l.tp, l.tpIntraNode));
    ops.push_back(elementwise("residual", 3 * spTokens * h * act + (arch.dropout > 0 ? spTokens * h : 0)));
    return ops;
}

std::vector<Op> backwardOps(const std::vector<Op>& forward, const TrainingLayout& l)
{
    std::vector<Op> ops;
    ops.reserve(forward.size() * 2);
    for (const Op& f : forward) {
        Op b = f;
        b.phase = Phase::Backward;
        switch (f.cls) {
        case OpClass::Gemm: {
            // dX[m x k] = dY[m x n] W^T; dW[k x n] = X^T dY (contracting over m).
            const bool frozen = l.frozenBase && std::string_view(f.name).rfind("lora", 0) != 0;
            b.name = f.name;
            b.n = f.k;
            b.k = f.n;
            ops.push_back(b);
            // The attention core's batched GEMMs have two input gradients and no weight.
            if (f.weightless) {
                Op other = f;
                other.phase = Phase::Backward;
                other.m = f.k;
                other.n = f.n;
                other.k = f.m;
                ops.push_back(other);
            } else if (!frozen && std::string_view(f.name) != "router") {
                Op wgrad = f;
                wgrad.phase = Phase::Backward;
                wgrad.weightGradient = true;
                wgrad.m = f.k;
                wgrad.n = f.n;
                wgrad.k = f.m;
                ops.push_back(wgrad);
            }
            break;
        }
        case OpClass::Attention:
            b.attention = AttentionKind::FlashBackward;
            ops.push_back(b);
            break;
        case OpClass::Elementwise:
            b.bytes = 2 * f.bytes;
            ops.push_back(b);
            break;
        case OpClass::Collective:
            if (f.collective == CollectiveKind::AllGather && !f.sendRecv)
                b.collective = CollectiveKind::ReduceScatter;
            else if (f.collective == CollectiveKind::ReduceScatter)
                b.collective = CollectiveKind::AllGather;
            // Ring attention's backward moves K, V and their gradients: twice the forward.
            if (f.sendRecv)
                b.bytes = 2 * f.bytes;
            ops.push_back(b);
            break;
        }
    }
    return ops;
}

std::vector<Op> headOps(const ModelArch& arch, const TrainingLayout& l, double lossBytesPerLogit)
{
    std::vector<Op> ops;
    const double tp = std::max(l.tp, 1);
    const double tokens = l.microBatch * l.seqLen / std::max(l.cp, 1);
    const double h = double(arch.hidden);
    const double vocabLocal = double(arch.vocab) / tp;
    ops.push_back(rowReduction("final norm", 2 * tokens * h * l.activationBytes / (l.sequenceParallel ? tp : 1)));
    // The LM head stays bf16 under FP8 recipes (torchtitan's Float8 converter skips `output`,
    // Transformer Engine recipes keep it in higher precision).
    Op head = gemm("lm head", tokens, vocabLocal, h, GemmDtype::Bf16);
    ops.push_back(head);
    ops.push_back(rowReduction("loss", tokens * vocabLocal * lossBytesPerLogit));
    std::vector<Op> back = backwardOps(ops, l);
    // Under LoRA the head is frozen like the rest of the base (PEFT): no weight gradient.
    ops.insert(ops.end(), back.begin(), back.end());
    return ops;
}

std::vector<Op> embeddingOps(const ModelArch& arch, const TrainingLayout& l)
{
    const double tokens = l.microBatch * l.seqLen / std::max(l.cp, 1);
    const double h = double(arch.hidden);
    Op lookup = elementwise("embedding", 2 * tokens * h * l.activationBytes);
    Op grad = elementwise("embedding", 3 * tokens * h * 4); // fp32 scatter-add of the gradient
    grad.phase = Phase::Backward;
    return { lookup, grad };
}

std::vector<Op> mtpOps(const ModelArch& arch, const TrainingLayout& l)
{
    std::vector<Op> ops;
    const double tp = std::max(l.tp, 1);
    const double tokens = l.microBatch * l.seqLen / std::max(l.cp, 1);
    const double h = double(arch.hidden);
    const double sp = l.sequenceParallel ? tp : 1;
    ops.push_back(elementwise("mtp embedding", 2 * tokens * h * l.activationBytes));
    ops.push_back(rowReduction("mtp hidden norm", 2 * tokens * h * l.activationBytes / sp));
    ops.push_back(rowReduction("mtp embedding norm", 2 * tokens * h * l.activationBytes / sp));
    ops.push_back(gemm("mtp projection", tokens, h / tp, 2 * h, l.linearDtype));
    std::vector<Op> back = backwardOps(ops, l);
    ops.insert(ops.end(), back.begin(), back.end());
    return ops;
}

namespace {

TrainingLayout inferenceAsTraining(const InferenceLayout& l, double sequences, double seq)
{
    TrainingLayout t;
    t.tp = l.tp;
    t.ep = l.ep;
    t.microBatch = sequences;
    t.seqLen = seq;
    t.linearDtype = l.weightDtype;
    t.attentionDtype = l.attentionDtype;
    t.expertDtype = l.expertDtype;
    t.activationBytes = l.activationBytes;
    t.tpIntraNode = l.tpIntraNode;
    t.epIntraNode = l.epIntraNode;
    t.epRanksPerNode = l.epRanksPerNode;
    // Inference EP: under data-parallel attention the attention ranks each bring their own
    // sequences and every expert sits whole on one GPU; without it the experts split inside
    // the TP group, tp / ep ranks to an expert, and every rank holds the group's tokens.
    const int ep = std::max(l.ep, 1), tp = std::max(l.tp, 1);
    if (l.dp > 1) {
        t.epTokenGroups = l.dp;
        t.expertTp = 1;
    } else if (ep > 1) {
        t.epTokenGroups = 1;
        t.expertTp = std::max(tp / ep, 1);
    }
    return t;
}

void markCustomAllReduce(std::vector<Op>& ops)
{
    for (Op& op : ops)
        if (op.cls == OpClass::Collective && op.collective == CollectiveKind::AllReduce)
            op.custom = true;
}

} // namespace

std::vector<Op> decodeStepOps(
    const ModelArch& arch, const InferenceLayout& l, double batch, double kvLen, double queryTokens)
{
    // A decode step is a forward of `batch` one-token sequences: the layer ops with m = batch,
    // whose attention is the decode kernel over each sequence's KV cache.
    const double q = std::max(queryTokens, 1.0);
    const TrainingLayout t = inferenceAsTraining(l, batch, q);
    const int moeLayers = arch.moe ? std::max(arch.layers - std::max(arch.moe->denseLayers, 0), 0) : 0;
    const int denseLayers = std::max(arch.layers - moeLayers, 0);
    std::vector<Op> ops;
    const auto addLayers = [&](bool moe, double count) {
        if (count <= 0)
            return;
        for (Op op : layerForwardOps(arch, t, moe)) {
            // The sparse indexer scores every cached token in its own FP8 cache (its op keeps
            // its shape); the attention reads the top-k of the latent cache.
            if (op.cls == OpClass::Attention) {
                op.attention = AttentionKind::Decode;
                op.seq = q;
                op.kvLen = kvLen;
            }
            if (op.cls == OpClass::Attention && std::string_view(op.name) != "indexer logits") {
                if (arch.mla && arch.mla->sparse())
                    op.kvLen = std::min(kvLen, double(arch.mla->indexTopK));
                op.kvBytesPerElement = l.kvBytesPerElement;
                if (arch.mla) {
                    // MLA decode reads the compressed latent + RoPE key once per token
                    // (weights absorbed: DeepSeek-V2 sec. 2.1.2): one "KV head" of that width.
                    op.kvHeads = 1;
                    op.headDimQk = arch.mla->kvLoraRank + arch.mla->qkRopeHeadDim;
                    op.headDimV = 0;
                }
            }
            op.repeat *= count;
            ops.push_back(op);
        }
    };
    addLayers(false, denseLayers);
    addLayers(true, moeLayers);
    const double tp = std::max(l.tp, 1);
    ops.push_back(gemm("lm head", batch * q, double(arch.vocab) / tp, double(arch.hidden), GemmDtype::Bf16));
    markCustomAllReduce(ops);
    return ops;
}

std::vector<Op> draftPassOps(const ModelArch& draft, const InferenceLayout& l, double batch,
    double kvLen, bool fuseHidden)
{
    std::vector<Op> ops = decodeStepOps(draft, l, batch, kvLen, 1);
    if (fuseHidden)
        ops.push_back(gemm("draft fc", batch, double(draft.hidden), 2.0 * double(draft.hidden), l.weightDtype));
    return ops;
}

std::vector<Op> prefillOps(const ModelArch& arch, const InferenceLayout& l, double sequences, double tokens)
{
    TrainingLayout t = inferenceAsTraining(l, sequences, tokens);
    const int moeLayers = arch.moe ? std::max(arch.layers - std::max(arch.moe->denseLayers, 0), 0) : 0;
    const int denseLayers = std::max(arch.layers - moeLayers, 0);
    std::vector<Op> ops;
    const auto addLayers = [&](bool moe, double count) {
        if (count <= 0)
            return;
        for (Op op : layerForwardOps(arch, t, moe)) {
            op.repeat *= count;
            ops.push_back(op);
        }
    };
    addLayers(false, denseLayers);
    addLayers(true, moeLayers);
    // Only the last token of each prompt needs logits.
    ops.push_back(gemm("lm head", sequences, double(arch.vocab) / std::max(l.tp, 1), double(arch.hidden), GemmDtype::Bf16));
    markCustomAllReduce(ops);
    return ops;
}

} // namespace envelope
