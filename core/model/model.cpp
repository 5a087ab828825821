// Exact parameter counts of a decoder-only transformer, the standard shape for a bare parameter
// count, and the range checks on an architecture.
//
// The counts follow the weight tensors the reference implementations create (Hugging Face
// transformers modeling_llama / modeling_gpt2 / modeling_gpt_neox / modeling_mixtral /
// modeling_deepseek_v3), so that the published totals come out to the parameter:
//   GPT-2 124,439,808 (Radford et al. 2019, the HF `gpt2` checkpoint), Llama-2-7B 6,738,415,616,
//   Mixtral-8x7B 46,702,792,704 total / 12,879,925,248 active (tests/core/test_model_params.cpp).
#include "model/model.h"
#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <fmt/format.h>

namespace envelope {
namespace {

double normParams(NormKind norm, double width)
{
    // LayerNorm: weight + bias; RMSNorm: weight only (Zhang & Sennrich 2019).
    return norm == NormKind::LayerNorm ? 2 * width : width;
}

// One FFN of intermediate width `inner`: up + down (plain) or gate + up + down (gated, Shazeer
// 2020 "GLU Variants Improve Transformer"). With linear biases every projection has one.
double ffnParams(const ModelArch& a, double inner)
{
    const double h = static_cast<double>(a.hidden);
    if (a.ffn == FfnKind::Gated)
        return 3 * h * inner + (a.linearBias ? 2 * inner + h : 0.0);
    return 2 * h * inner + (a.linearBias ? inner + h : 0.0);
}

// Multi-head latent attention, DeepSeek-V2 (arXiv 2405.04434) sec. 2.1.2 and the DeepSeek-V3
// reference model (modeling_deepseek.py: q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
// kv_a_layernorm, kv_b_proj, o_proj; the two latent norms are RMSNorms with weight only).
double mlaParams(const ModelArch& a, const MlaConfig& m)
{
    const double h = static_cast<double>(a.hidden);
    const double heads = a.heads;
    const double qHead = static_cast<double>(m.qkNopeHeadDim) + m.qkRopeHeadDim;
    const double query = m.qLoraRank > 0
        ? h * m.qLoraRank + m.qLoraRank + static_cast<double>(m.qLoraRank) * heads * qHead
        : h * heads * qHead;
    const double keyValue = h * (static_cast<double>(m.kvLoraRank) + m.qkRopeHeadDim) + m.kvLoraRank
        + static_cast<double>(m.kvLoraRank) * heads
            * (static_cast<double>(m.qkNopeHeadDim) + m.vHeadDim);
    const double output = heads * m.vHeadDim * h;
    // DSA's lightning indexer (DeepSeek-V3.2-Exp inference/model.py Indexer).
    const double indexer = m.sparse()
        ? (m.qLoraRank > 0 ? double(m.qLoraRank) : h) * m.indexHeads * m.indexHeadDim
            + h * m.indexHeadDim + 2.0 * m.indexHeadDim + h * m.indexHeads
        : 0.0;
    return query + keyValue + output + indexer;
}

// q and o are heads x head_dim wide, k and v kv_heads x head_dim (GQA, Ainslie et al. 2023;
// MQA when kv_heads = 1). Biases: q/k/v with qkvBias (Qwen2) or with linearBias (GPT-2 and
// GPT-NeoX have biases on every projection), the output projection with linearBias only.
// Extras per layer: q/k norms (Qwen3 q_norm/k_norm of head_dim; MiniMax-M2 per-layer norms
// over all heads), gpt-oss's `sinks` (one logit per head), Qwen3-Next's output gate (q_proj
// twice as wide, modeling_qwen3_next.py).
double attentionParams(const ModelArch& a)
{
    if (a.mla)
        return mlaParams(a, *a.mla);
    const double h = static_cast<double>(a.hidden);
    const double q = static_cast<double>(a.heads) * a.headDim;
    const double kv = static_cast<double>(a.kvHeads) * a.headDim;
    double params = h * q + 2 * h * kv + q * h;
    if (a.attentionOutputGate)
        params += h * q;
    if (a.qkvBias || a.linearBias)
        params += q + 2 * kv;
    if (a.linearBias)
        params += h;
    if (a.qkNorm == QkNorm::PerHead)
        params += 2.0 * a.headDim;
    else if (a.qkNorm == QkNorm::PerLayer)
        params += q + kv;
    if (a.attentionSinks)
        params += a.heads;
    return params;
}

// A Gated DeltaNet layer (Yang et al. 2024; Qwen3-Next modeling_qwen3_next.py): in_proj_qkvz
// (q, k of key_dim, v and the output gate z of value_dim), in_proj_ba (beta and alpha per value
// head), a depthwise conv1d over q, k, v without bias, dt_bias and A_log per value head, a
// gated RMSNorm of head_v_dim and out_proj.
// A lightning-attention layer (MiniMax-Text-01; transformers modular_minimax.py
// MiniMaxLightningAttention): qkv_proj (q and k of key_dim, v of value_dim), output_gate
// (hidden -> value_dim), an RMSNorm of value_dim and out_proj, none biased.
double linearAttentionParams(const ModelArch& a)
{
    if (!a.linearAttention)
        return 0;
    const LinearAttentionConfig& l = *a.linearAttention;
    const double h = static_cast<double>(a.hidden);
    const double keyDim = static_cast<double>(l.keyHeads) * l.keyHeadDim;
    const double valueDim = static_cast<double>(l.valueHeads) * l.valueHeadDim;
    if (l.kind == LinearAttentionConfig::Kind::Lightning)
        return h * (2 * keyDim + valueDim) + h * valueDim + valueDim + valueDim * h;
    return h * (2 * keyDim + 2 * valueDim) + h * 2.0 * l.valueHeads
        + (2 * keyDim + valueDim) * l.convKernel + 2.0 * l.valueHeads + l.valueHeadDim
        + valueDim * h;
}

ParamCounts exactCounts(const ModelArch& a)
{
    ParamCounts c;
    const double h = static_cast<double>(a.hidden);
    const int layers = std::max(a.layers, 0);
    c.embedding = static_cast<double>(a.vocab) * h;
    c.positions = a.learnedPositions ? static_cast<double>(a.maxPositions) * h : 0.0;
    c.lmHead = a.tiedEmbeddings ? 0.0 : static_cast<double>(a.vocab) * h;
    c.finalNorm = normParams(a.norm, h);
    c.attentionPerLayer = attentionParams(a);
    // Gemma 2/3 norm the input and the output of both sublayers: 4 norms per layer.
    c.normsPerLayer = (a.sandwichNorms ? 4 : 2) * normParams(a.norm, h);
    c.denseFfnPerLayer = ffnParams(a, static_cast<double>(a.ffnHidden));
    if (a.moe) {
        const MoeConfig& m = *a.moe;
        // Mixtral (Jiang et al. 2024) and DeepSeek-V3 (arXiv 2412.19437 sec. 2.1.2): each MoE
        // layer has `experts` routed FFNs, `sharedExperts` always-on FFNs of the same width and
        // a linear router (hidden x experts, plus DeepSeek-V3's per-expert correction bias).
        const double expert = ffnParams(a, static_cast<double>(m.expertFfnHidden));
        const double shared = m.sharedExperts
                * ffnParams(a,
                    static_cast<double>(
                        m.sharedExpertFfnHidden > 0 ? m.sharedExpertFfnHidden : m.expertFfnHidden))
            + (m.sharedExpertGate ? h : 0.0);
        const double router = h * m.experts + (m.routerBias ? m.experts : 0.0);
        c.expertParamsPerLayer = m.experts * expert;
        c.moeFfnPerLayer = c.expertParamsPerLayer + shared + router;
        c.moeActiveFfnPerLayer = m.topK * expert + shared + router;
        c.moeLayers = 0;
        for (int i = 0; i < layers; ++i)
            c.moeLayers += isMoeLayer(a, i) ? 1 : 0;
        c.denseLayers = layers - c.moeLayers;
    } else {
        c.denseLayers = layers;
    }
    c.linearLayers = countLayers(a, LayerAttention::Linear);
    c.linearAttentionPerLayer = linearAttentionParams(a);
    const double linearSaving = c.linearLayers * (c.attentionPerLayer - c.linearAttentionPerLayer);
    const double outside = c.embedding + c.positions + c.lmHead + c.finalNorm;
    const double perLayerShared = c.attentionPerLayer + c.normsPerLayer;
    c.vision = std::max(a.visionParams, 0.0);
    c.total = outside + c.layerTotal() + c.vision;
    c.active = outside + c.denseLayers * (perLayerShared + c.denseFfnPerLayer)
        + c.moeLayers * (perLayerShared + c.moeActiveFfnPerLayer) - linearSaving;
    return c;
}

// Llama-like FFN width: 8/3 h (SwiGLU keeps the FFN's parameters at 8h^2, Shazeer 2020),
// rounded to a multiple of 256 as Llama's `multiple_of` does (Touvron et al. 2023).
std::int64_t standardFfnHidden(std::int64_t hidden)
{
    const double raw = 8.0 * static_cast<double>(hidden) / 3.0;
    return std::max<std::int64_t>(256, std::llround(raw / 256.0) * 256);
}

constexpr std::int64_t kStandardVocab = 32000; // Llama / Llama-2 tokenizer
constexpr int kStandardHeadDim = 128;

ModelArch standardArch(int layers, std::int64_t hidden, int heads, std::int64_t vocab)
{
    ModelArch a;
    a.layers = layers;
    a.hidden = hidden;
    a.ffnHidden = standardFfnHidden(hidden);
    a.ffn = FfnKind::Gated;
    if (heads > 0)
        a.heads = heads;
    else if (hidden % kStandardHeadDim == 0)
        a.heads = static_cast<int>(std::max<std::int64_t>(1, hidden / kStandardHeadDim));
    else
        a.heads = hidden % 64 == 0 ? static_cast<int>(hidden / 64) : 1;
    a.kvHeads = a.heads;
    a.headDim = static_cast<int>(hidden / a.heads);
    a.vocab = vocab;
    a.norm = NormKind::RmsNorm;
    a.maxPositions = 4096;
    return a;
}

// Layers that bring the standard shape of width `hidden` closest to `params` (at least one).
int layersFor(double params, std::int64_t hidden, int heads, std::int64_t vocab)
{
    const ParamCounts one = exactCounts(standardArch(1, hidden, heads, vocab));
    const double perLayer = one.layerTotal();
    const double outside = one.total - perLayer;
    const double layers = std::round((params - outside) / perLayer);
    if (!std::isfinite(layers))
        return 1;
    return static_cast<int>(std::clamp(layers, 1.0, 1000.0));
}

} // namespace

double ParamCounts::layerTotal() const
{
    const double shared = attentionPerLayer + normsPerLayer;
    return denseLayers * (shared + denseFfnPerLayer) + moeLayers * (shared + moeFfnPerLayer)
        - linearLayers * (attentionPerLayer - linearAttentionPerLayer);
}

LayerAttention layerAttention(const ModelArch& arch, int layer)
{
    if (!arch.attentionPattern.empty())
        return arch.attentionPattern[static_cast<std::size_t>(std::max(layer, 0))
            % arch.attentionPattern.size()];
    return arch.slidingWindow > 0 ? LayerAttention::Sliding : LayerAttention::Full;
}

int countLayers(const ModelArch& arch, LayerAttention kind)
{
    const int layers = std::max(arch.layers, 0);
    if (arch.attentionPattern.empty())
        return layerAttention(arch, 0) == kind ? layers : 0;
    // The pattern repeats: its whole cycles, then the first `rest` entries of one more (a count
    // per pattern entry, not per layer: the estimate asks for it on every step shape).
    const int period = static_cast<int>(arch.attentionPattern.size());
    const auto inFirst = [&](int n) {
        return static_cast<int>(std::count(arch.attentionPattern.begin(),
            arch.attentionPattern.begin() + n, kind));
    };
    return layers / period * inFirst(period) + inFirst(layers % period);
}

bool isMoeLayer(const ModelArch& arch, int layer)
{
    if (!arch.moe)
        return false;
    const int step = std::max(arch.moe->layerStep, 1);
    return layer >= arch.moe->denseLayers && (layer + 1) % step == 0;
}

double keptTokens(const ModelArch& arch, LayerAttention kind, double tokens)
{
    const double n = std::max(tokens, 0.0);
    switch (kind) {
    case LayerAttention::Sliding:
        return arch.slidingWindow > 0 ? std::min(n, static_cast<double>(arch.slidingWindow)) : n;
    case LayerAttention::Chunked:
        return arch.attentionChunk > 0 ? std::min(n, static_cast<double>(arch.attentionChunk)) : n;
    case LayerAttention::Linear:
        return 0;
    case LayerAttention::Full:
        break;
    }
    return n;
}

int cacheLayers(const ModelArch& arch)
{
    return std::max(arch.layers, 0) - countLayers(arch, LayerAttention::Linear);
}

double meanKeptTokens(const ModelArch& arch, double tokens)
{
    // Every layer alike (no pattern): that one kind's kept tokens, without counting layers
    // (asked for on every decode step shape an RL rollout or the serving tab times).
    if (arch.attentionPattern.empty())
        return arch.layers > 0 ? keptTokens(arch, layerAttention(arch, 0), tokens) : 0.0;
    const int layers = cacheLayers(arch);
    if (layers <= 0)
        return 0;
    double kept = 0;
    for (const LayerAttention kind :
        { LayerAttention::Full, LayerAttention::Sliding, LayerAttention::Chunked })
        kept += countLayers(arch, kind) * keptTokens(arch, kind, tokens);
    return kept / layers;
}

double meanCausalPairs(const ModelArch& arch, double tokens)
{
    const double n = std::max(tokens, 0.0);
    const int layers = cacheLayers(arch);
    if (layers <= 0)
        return 0;
    // A causal prompt of n tokens scores n^2 / 2 query-key pairs; with a window (or a chunk) W
    // each query sees at most W keys: n W - W^2 / 2 once n > W. Chunks reset at each boundary:
    // floor(n / C) full chunks of C^2 / 2 and the rest r^2 / 2.
    const auto pairs = [&](LayerAttention kind) {
        if (kind == LayerAttention::Sliding && arch.slidingWindow > 0 && n > arch.slidingWindow) {
            const double w = arch.slidingWindow;
            return n * w - w * w / 2;
        }
        if (kind == LayerAttention::Chunked && arch.attentionChunk > 0 && n > arch.attentionChunk) {
            const double c = arch.attentionChunk;
            const double full = std::floor(n / c);
            const double rest = n - full * c;
            return full * c * c / 2 + rest * rest / 2;
        }
        // DeepSeek Sparse Attention: each query attends to its top-k earlier tokens, the
        // count of a window of k (the indexer's own scoring is not in these pairs).
        if (kind == LayerAttention::Full && arch.mla && arch.mla->sparse() && n > arch.mla->indexTopK) {
            const double k = arch.mla->indexTopK;
            return n * k - k * k / 2;
        }
        return n * n / 2;
    };
    double total = 0;
    for (const LayerAttention kind :
        { LayerAttention::Full, LayerAttention::Sliding, LayerAttention::Chunked })
        total += countLayers(arch, kind) * pairs(kind);
    return total / layers;
}

ParamCounts countParameters(const ModelArch& arch)
{
    ParamCounts c = exactCounts(arch);
    if (!arch.declaredParams)
        return c;
    // A bare count: the shape only distributes the stated number over the parts (pipeline
    // stages, tensor-parallel matrices), scaled so the parts still sum to it.
    const double declared = *arch.declaredParams;
    const double scale = c.total > 0 ? declared / c.total : 0.0;
    for (double* part : { &c.embedding, &c.positions, &c.lmHead, &c.finalNorm, &c.attentionPerLayer,
             &c.normsPerLayer, &c.denseFfnPerLayer, &c.moeFfnPerLayer, &c.moeActiveFfnPerLayer,
             &c.expertParamsPerLayer, &c.linearAttentionPerLayer, &c.vision })
        *part *= scale;
    c.total = declared;
    c.active = declared;
    return c;
}

ModelArch standardShapeForParams(
    double params, int layers, std::int64_t hidden, int heads, std::int64_t vocab)
{
    const std::int64_t v = vocab > 0 ? vocab : kStandardVocab;
    if (hidden <= 0) {
        // Widths that divide into the heads: multiples of 256 (and of `heads` when given). The
        // depth follows the Llama aspect ratio layers ~ hidden / 128 (7B: 32 x 4096, 13B:
        // 40 x 5120) unless the layers are stated; the closest count then wins.
        const std::int64_t step = heads > 0 ? std::lcm<std::int64_t>(256, heads) : 256;
        double best = INFINITY;
        for (std::int64_t h = step; h <= 65536; h += step) {
            const int l = layers > 0 ? layers : layersFor(params, h, heads, v);
            const double count = exactCounts(standardArch(l, h, heads, v)).total;
            double score = std::fabs(std::log(count / params));
            if (layers <= 0)
                score += std::fabs(std::log(l / (static_cast<double>(h) / kStandardHeadDim)));
            if (score < best) {
                best = score;
                hidden = h;
            }
        }
    }
    if (hidden <= 0) // a count that is not a positive number: validateArch reports it
        hidden = 4096;
    if (layers <= 0)
        layers = layersFor(params, hidden, heads, v);
    ModelArch a = standardArch(layers, hidden, heads, v);
    a.name = fmt::format("{:.3g}B-parameter model", params / 1e9);
    a.declaredParams = params;
    return a;
}

std::optional<Error> validateArch(const ModelArch& a)
{
    auto bad = [](const char* path, std::string message) {
        return std::optional<Error>(Error { path, std::move(message) });
    };
    if (a.layers < 1 || a.layers > 1000)
        return bad("layers", fmt::format("must be 1..1000, got {}", a.layers));
    if (a.hidden < 1 || a.hidden > 1'000'000)
        return bad("hidden", fmt::format("must be 1..1000000, got {}", a.hidden));
    if (a.ffnHidden < 1 || a.ffnHidden > 10'000'000)
        return bad("ffn_hidden", fmt::format("must be 1..10000000, got {}", a.ffnHidden));
    if (a.heads < 1 || a.heads > 100'000)
        return bad("heads", fmt::format("must be 1..100000, got {}", a.heads));
    if (a.kvHeads < 1 || a.kvHeads > a.heads)
        return bad("kv_heads", fmt::format("must be 1..heads ({}), got {}", a.heads, a.kvHeads));
    if (a.heads % a.kvHeads != 0)
        return bad("kv_heads", fmt::format("must divide heads ({}), got {}", a.heads, a.kvHeads));
    if (a.headDim < 1 || a.headDim > 100'000)
        return bad("head_dim", fmt::format("must be 1..100000, got {}", a.headDim));
    if (a.vocab < 1 || a.vocab > 100'000'000)
        return bad("vocab", fmt::format("must be 1..100000000, got {}", a.vocab));
    if (a.maxPositions < 0 || a.maxPositions > 100'000'000)
        return bad("max_positions", fmt::format("must be 0..100000000, got {}", a.maxPositions));
    if (a.learnedPositions && a.maxPositions < 1)
        return bad("max_positions", "must be at least 1 with learned_positions");
    if (!(a.dropout >= 0 && a.dropout < 1))
        return bad("dropout", fmt::format("must be in [0, 1), got {}", a.dropout));
    if (a.slidingWindow < 0)
        return bad(
            "sliding_window", fmt::format("must be 0 (full) or more, got {}", a.slidingWindow));
    if (a.moe) {
        const MoeConfig& m = *a.moe;
        if (m.experts < 1 || m.experts > 100'000)
            return bad("moe.experts", fmt::format("must be 1..100000, got {}", m.experts));
        if (m.topK < 1 || m.topK > m.experts)
            return bad(
                "moe.top_k", fmt::format("must be 1..experts ({}), got {}", m.experts, m.topK));
        if (m.sharedExperts < 0 || m.sharedExperts > 100'000)
            return bad(
                "moe.shared_experts", fmt::format("must be 0..100000, got {}", m.sharedExperts));
        if (m.expertFfnHidden < 1 || m.expertFfnHidden > 10'000'000)
            return bad("moe.expert_ffn_hidden",
                fmt::format("must be 1..10000000, got {}", m.expertFfnHidden));
        if (m.denseLayers < 0 || m.denseLayers > a.layers)
            return bad("moe.dense_layers",
                fmt::format("must be 0..layers ({}), got {}", a.layers, m.denseLayers));
    }
    if (a.mla) {
        const MlaConfig& m = *a.mla;
        const struct {
            const char* path;
            int value;
        } ranks[] = { { "mla.q_lora_rank", m.qLoraRank }, { "mla.kv_lora_rank", m.kvLoraRank },
            { "mla.qk_rope_head_dim", m.qkRopeHeadDim },
            { "mla.qk_nope_head_dim", m.qkNopeHeadDim }, { "mla.v_head_dim", m.vHeadDim } };
        for (const auto& r : ranks)
            if (r.value < 0 || r.value > 1'000'000)
                return bad(r.path, fmt::format("must be 0..1000000, got {}", r.value));
        if (m.kvLoraRank < 1)
            return bad("mla.kv_lora_rank", fmt::format("must be at least 1, got {}", m.kvLoraRank));
        if (m.qkNopeHeadDim + m.qkRopeHeadDim < 1)
            return bad(
                "mla.qk_nope_head_dim", "qk_nope_head_dim + qk_rope_head_dim must be at least 1");
        if (m.vHeadDim < 1)
            return bad("mla.v_head_dim", fmt::format("must be at least 1, got {}", m.vHeadDim));
    }
    if (a.moe && (a.moe->layerStep < 1 || a.moe->layerStep > 1000))
        return bad("moe.layer_step", fmt::format("must be 1..1000, got {}", a.moe->layerStep));
    if (a.moe && (a.moe->sharedExpertFfnHidden < 0 || a.moe->sharedExpertFfnHidden > 10'000'000))
        return bad("moe.shared_expert_ffn_hidden",
            fmt::format("must be 0..10000000, got {}", a.moe->sharedExpertFfnHidden));
    if (a.attentionPattern.size() > 1000)
        return bad("attention_pattern",
            fmt::format("must list 1..1000 layer kinds, got {}", a.attentionPattern.size()));
    if (a.attentionChunk < 0 || a.attentionChunk > 100'000'000)
        return bad("attention_chunk", fmt::format("must be 0..100000000, got {}", a.attentionChunk));
    for (LayerAttention kind : a.attentionPattern) {
        if (kind == LayerAttention::Sliding && a.slidingWindow < 1)
            return bad("sliding_window", "must be at least 1 when attention_pattern has \"sliding\" layers");
        if (kind == LayerAttention::Chunked && a.attentionChunk < 1)
            return bad("attention_chunk", "must be at least 1 when attention_pattern has \"chunked\" layers");
        if (kind == LayerAttention::Linear && !a.linearAttention)
            return bad("linear_attention", "is required when attention_pattern has \"linear\" layers");
    }
    if (a.linearAttention) {
        const LinearAttentionConfig& l = *a.linearAttention;
        const struct {
            const char* path;
            int value;
            int min;
        } dims[] = { { "linear_attention.key_heads", l.keyHeads, 1 },
            { "linear_attention.value_heads", l.valueHeads, 1 },
            { "linear_attention.key_head_dim", l.keyHeadDim, 1 },
            { "linear_attention.value_head_dim", l.valueHeadDim, 1 },
            { "linear_attention.conv_kernel", l.convKernel, 0 } };
        for (const auto& d : dims)
            if (d.value < d.min || d.value > 100'000)
                return bad(d.path, fmt::format("must be {}..100000, got {}", d.min, d.value));
    }
    if (!(a.visionParams >= 0 && a.visionParams <= 1e15))
        return bad("vision_params", fmt::format("must be 0..1e15, got {}", a.visionParams));
    if (a.declaredParams && !(*a.declaredParams > 0 && *a.declaredParams <= 1e15))
        return bad("params", fmt::format("must be in (0, 1e15], got {}", *a.declaredParams));
    return std::nullopt;
}

} // namespace envelope
