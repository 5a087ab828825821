// Exact parameter counts of a decoder-only transformer, the standard shape for a bare parameter
// count, and the range checks on an architecture.
//
// The counts follow the weight tensors the reference implementations create (Hugging Face
// transformers modeling_llama / modeling_gpt2 / modeling_gpt_neox / modeling_mixtral /
// modeling_deepseek_v3), so that the published totals come out to the parameter:
//   GPT-2 124,439,808 (Radford et al. 2019, the HF `gpt2` checkpoint), Llama-2-7B 6,738,415,616,
//   Mixtral-8x7B 46,702,792,704 total / 12,879,925,248 active (tests/core/test_model_params.cpp).
#include "model/model.h"

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
    return query + keyValue + output;
}

// q and o are heads x head_dim wide, k and v kv_heads x head_dim (GQA, Ainslie et al. 2023;
// MQA when kv_heads = 1). Biases: q/k/v with qkvBias (Qwen2) or with linearBias (GPT-2 and
// GPT-NeoX have biases on every projection), the output projection with linearBias only.
double attentionParams(const ModelArch& a)
{
    if (a.mla)
        return mlaParams(a, *a.mla);
    const double h = static_cast<double>(a.hidden);
    const double q = static_cast<double>(a.heads) * a.headDim;
    const double kv = static_cast<double>(a.kvHeads) * a.headDim;
    double params = h * q + 2 * h * kv + q * h;
    if (a.qkvBias || a.linearBias)
        params += q + 2 * kv;
    if (a.linearBias)
        params += h;
    return params;
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
    c.normsPerLayer = 2 * normParams(a.norm, h);
    c.denseFfnPerLayer = ffnParams(a, static_cast<double>(a.ffnHidden));
    if (a.moe) {
        const MoeConfig& m = *a.moe;
        // Mixtral (Jiang et al. 2024) and DeepSeek-V3 (arXiv 2412.19437 sec. 2.1.2): each MoE
        // layer has `experts` routed FFNs, `sharedExperts` always-on FFNs of the same width and
        // a linear router (hidden x experts, plus DeepSeek-V3's per-expert correction bias).
        const double expert = ffnParams(a, static_cast<double>(m.expertFfnHidden));
        const double router = h * m.experts + (m.routerBias ? m.experts : 0.0);
        c.expertParamsPerLayer = m.experts * expert;
        c.moeFfnPerLayer = c.expertParamsPerLayer + m.sharedExperts * expert + router;
        c.moeActiveFfnPerLayer = (m.topK + m.sharedExperts) * expert + router;
        c.denseLayers = std::clamp(m.denseLayers, 0, layers);
        c.moeLayers = layers - c.denseLayers;
    } else {
        c.denseLayers = layers;
    }
    const double outside = c.embedding + c.positions + c.lmHead + c.finalNorm;
    const double perLayerShared = c.attentionPerLayer + c.normsPerLayer;
    c.total = outside + c.layerTotal();
    c.active = outside + c.denseLayers * (perLayerShared + c.denseFfnPerLayer)
        + c.moeLayers * (perLayerShared + c.moeActiveFfnPerLayer);
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
    return denseLayers * (shared + denseFfnPerLayer) + moeLayers * (shared + moeFfnPerLayer);
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
             &c.expertParamsPerLayer })
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
    if (a.declaredParams && !(*a.declaredParams > 0 && *a.declaredParams <= 1e15))
        return bad("params", fmt::format("must be in (0, 1e15], got {}", *a.declaredParams));
    return std::nullopt;
}

} // namespace envelope
