// Hugging Face config.json -> ModelArch for the 2025 text families: Qwen3 (dense, MoE, Next),
// Gemma 2 and 3, gpt-oss, Llama 4, GLM-4.5 (glm4_moe) and MiniMax-M2. Keys and defaults follow
// the transformers configuration classes (Qwen3Config, Qwen3MoeConfig, Qwen3NextConfig,
// Gemma2Config, Gemma3TextConfig, GptOssConfig, Llama4TextConfig, Glm4MoeConfig) and MiniMax's
// configuration_minimax_m2.py; the weights counted are those the matching modeling_*.py
// creates (model.cpp). Published totals these reproduce: tests/core/test_hf_families.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "model/detail.h"

namespace envelope::hf {
namespace {

// "layer_types" (transformers >= 4.53): one entry per layer. Kept as its shortest repeating
// period, so 48 Llama 4 layers read back as [chunked, chunked, chunked, full]. False when the
// config has none.
// The shortest prefix whose repetition gives every layer's kind (model.attention_pattern).
std::vector<LayerAttention> shortestPeriod(const std::vector<LayerAttention>& types)
{
    for (std::size_t period = 1; period <= types.size(); ++period) {
        bool repeats = true;
        for (std::size_t i = period; i < types.size() && repeats; ++i)
            repeats = types[i] == types[i % period];
        if (repeats)
            return { types.begin(), types.begin() + static_cast<std::ptrdiff_t>(period) };
    }
    return types;
}

bool readLayerTypes(ConfigReader& r, int layers, std::vector<LayerAttention>& pattern)
{
    if (!r.has("layer_types"))
        return false;
    const json& v = r.raw().at("layer_types");
    if (!v.is_array() || static_cast<int>(v.size()) != layers) {
        r.fail("layer_types",
            fmt::format("must list one attention type per layer (num_hidden_layers = {}), got {}",
                layers, shortJson(v)));
        return false;
    }
    std::vector<LayerAttention> types;
    for (const json& item : v) {
        const std::string name = item.is_string() ? item.get<std::string>() : std::string();
        if (name == "full_attention")
            types.push_back(LayerAttention::Full);
        else if (name == "sliding_attention")
            types.push_back(LayerAttention::Sliding);
        else if (name == "chunked_attention")
            types.push_back(LayerAttention::Chunked);
        else if (name == "linear_attention")
            types.push_back(LayerAttention::Linear);
        else {
            r.fail("layer_types",
                fmt::format("entries must be \"full_attention\", \"sliding_attention\", "
                            "\"chunked_attention\" or \"linear_attention\", got {}",
                    shortJson(item)));
            return false;
        }
    }
    pattern = shortestPeriod(types);
    return true;
}

// `period - 1` local layers then one global layer, repeated (Gemma 3 sliding_window_pattern,
// Llama 4 no_rope_layer_interval). A period below 1 is a key the reader has already refused
// (it reads as 0): every layer global then, never a vector of 2^64 - 1 entries.
std::vector<LayerAttention> localThenGlobal(int period, LayerAttention local)
{
    std::vector<LayerAttention> pattern(static_cast<std::size_t>(std::max(period, 1) - 1), local);
    pattern.push_back(LayerAttention::Full);
    return pattern;
}

// A leading run of dense layers given as a list of layer indices (Qwen3-MoE mlp_only_layers):
// [0, 1, ..., k-1] -> k. Any other list is refused, naming the key.
int leadingDenseLayers(ConfigReader& r, const char* key)
{
    if (!r.has(key))
        return 0;
    const json& v = r.raw().at(key);
    bool leading = v.is_array();
    for (std::size_t i = 0; leading && i < v.size(); ++i)
        leading = v[i].is_number_integer() && v[i].get<std::int64_t>() == static_cast<std::int64_t>(i);
    if (!leading) {
        r.fail(key,
            fmt::format("must be empty or the leading layers [0, 1, ..., k-1], got {}",
                shortJson(v)));
        return 0;
    }
    return static_cast<int>(v.size());
}

} // namespace

// Mixtral-style routed experts (Mixtral, MiniMax): num_local_experts of `expertFfn`,
// num_experts_per_tok active, a bias-free router.
MoeConfig localExperts(ConfigReader& r, std::int64_t expertFfn)
{
    MoeConfig moe;
    moe.experts = r.small("num_local_experts", 1, kHeads);
    moe.topK = r.small("num_experts_per_tok", 1, kHeads);
    moe.expertFfnHidden = expertFfn;
    return moe;
}

ModelArch fromQwen3(ConfigReader& r)
{
    // Qwen3 (Qwen3 technical report, arXiv 2505.09388; modeling_qwen3.py): the Llama block
    // with q_norm and k_norm (RMSNorm of head_dim) and no q/k/v bias.
    ModelArch a = llamaShape(r, false);
    a.qkNorm = QkNorm::PerHead;
    const bool listed = readLayerTypes(r, a.layers, a.attentionPattern);
    bool sliding = !listed && r.boolean("use_sliding_window", false);
    for (LayerAttention kind : a.attentionPattern)
        sliding = sliding || kind == LayerAttention::Sliding;
    if (sliding)
        a.slidingWindow = r.small("sliding_window", 1, kPositions);
    return a;
}

ModelArch fromQwen3Moe(ConfigReader& r)
{
    // Qwen3-MoE: layer i is MoE unless listed in mlp_only_layers and when
    // (i + 1) % decoder_sparse_step == 0; num_experts of moe_intermediate_size, no shared
    // expert, a bias-free router (modeling_qwen3_moe.py). intermediate_size is the dense FFN.
    ModelArch a = fromQwen3(r);
    MoeConfig moe;
    moe.experts = r.small("num_experts", 1, kHeads);
    moe.topK = r.small("num_experts_per_tok", 1, kHeads);
    moe.expertFfnHidden = r.integer("moe_intermediate_size", 1, kFfn);
    moe.layerStep = r.small("decoder_sparse_step", 1, kLayers, 1);
    moe.denseLayers = leadingDenseLayers(r, "mlp_only_layers");
    a.moe = moe;
    return a;
}

namespace {

// The hybrid layout Qwen3-Next and Qwen3.5 share: Gated DeltaNet layers with one gated
// full-attention layer every full_attention_interval (4) unless layer_types lists them, and
// a gated shared expert of shared_expert_intermediate_size on the MoE layers. The recurrent
// state's dtype is the config's mamba_ssm_dtype (Qwen3.5's "float32"; vLLM's
// Qwen3_5ForConditionalGenerationConfig.update makes it the cache's mamba_ssm_cache_dtype).
void readGatedDeltaNet(ConfigReader& r, ModelArch& a)
{
    if (!readLayerTypes(r, a.layers, a.attentionPattern))
        a.attentionPattern
            = localThenGlobal(r.small("full_attention_interval", 1, kLayers, 4), LayerAttention::Linear);
    LinearAttentionConfig l;
    l.keyHeads = r.small("linear_num_key_heads", 1, kHeads);
    l.valueHeads = r.small("linear_num_value_heads", 1, kHeads);
    l.keyHeadDim = r.small("linear_key_head_dim", 1, kHeads);
    l.valueHeadDim = r.small("linear_value_head_dim", 1, kHeads);
    l.convKernel = r.small("linear_conv_kernel_dim", 0, kHeads, 4);
    const std::string stateDtype = r.text("mamba_ssm_dtype", "");
    if (!stateDtype.empty() && stateDtype != "float32" && stateDtype != "bfloat16"
        && stateDtype != "float16" && stateDtype != "auto")
        r.fail("mamba_ssm_dtype",
            fmt::format("must be \"float32\", \"bfloat16\", \"float16\" or \"auto\", got \"{}\"",
                stateDtype));
    l.float32State = stateDtype == "float32";
    a.linearAttention = l;
    if (a.moe) {
        a.moe->sharedExperts = 1;
        a.moe->sharedExpertFfnHidden = r.integer("shared_expert_intermediate_size", 1, kFfn);
        a.moe->sharedExpertGate = true;
    }
}

} // namespace

ModelArch fromQwen3Next(ConfigReader& r)
{
    // Qwen3-Next (modeling_qwen3_next.py): the hybrid layout above on Qwen3-MoE, the attention
    // output gate always on.
    ModelArch a = fromQwen3Moe(r);
    a.attentionOutputGate = true;
    readGatedDeltaNet(r, a);
    return a;
}

json qwen35TextDefaults(bool moe)
{
    json d { { "vocab_size", 248320 }, { "num_attention_heads", 16 }, { "head_dim", 256 },
        { "max_position_embeddings", 32768 }, { "tie_word_embeddings", false },
        { "partial_rotary_factor", 0.25 }, { "linear_conv_kernel_dim", 4 },
        { "linear_key_head_dim", 128 }, { "linear_value_head_dim", 128 },
        { "linear_num_key_heads", 16 }, { "linear_num_value_heads", 32 },
        { "full_attention_interval", 4 } };
    if (moe) {
        d.update(json { { "model_type", "qwen3_5_moe_text" }, { "hidden_size", 2048 },
            { "num_hidden_layers", 40 }, { "num_key_value_heads", 2 },
            { "moe_intermediate_size", 512 }, { "shared_expert_intermediate_size", 512 },
            { "num_experts_per_tok", 8 }, { "num_experts", 256 } });
    } else {
        d.update(json { { "model_type", "qwen3_5_text" }, { "hidden_size", 4096 },
            { "intermediate_size", 12288 }, { "num_hidden_layers", 32 },
            { "num_key_value_heads", 4 } });
    }
    return d;
}

ModelArch fromQwen35Text(ConfigReader& r, bool moe)
{
    // Qwen3.5 (modeling_qwen3_5.py, modeling_qwen3_5_moe.py): Qwen3-Next's hybrid layout, dense
    // (qwen3_5_text, a gated FFN of intermediate_size) or MoE (qwen3_5_moe_text: every layer
    // num_experts of moe_intermediate_size, no intermediate_size at all: the importer fills
    // the unused dense width with the experts'); the attention output
    // gate by attn_output_gate; in_proj_qkv + in_proj_z + in_proj_b + in_proj_a hold the same
    // weights as Qwen3-Next's in_proj_qkvz + in_proj_ba. The mtp_num_hidden_layers MTP
    // modules ship beside the model (not in its parameters, like DeepSeek-V3's).
    ModelArch a = moe ? fromQwen3Moe(r) : fromQwen3(r);
    a.attentionOutputGate = r.boolean("attn_output_gate", true);
    readGatedDeltaNet(r, a);
    a.mtpLayers = r.small("mtp_num_hidden_layers", 0, 16, 0);
    return a;
}

ModelArch fromGemma2(ConfigReader& r)
{
    // Gemma 2 (arXiv 2408.00118): GeGLU, tied embeddings, pre- and post-norms around both
    // sublayers, local sliding-window layers (sliding_window 4096) alternating with global ones,
    // even layers local (modeling_gemma2.py). Logit soft-capping adds no weights.
    ModelArch a = llamaShape(r, true);
    a.sandwichNorms = true;
    a.slidingWindow = r.small("sliding_window", 1, kPositions, 4096);
    if (!readLayerTypes(r, a.layers, a.attentionPattern))
        a.attentionPattern = { LayerAttention::Sliding, LayerAttention::Full };
    return a;
}

json gemma3TextDefaults()
{
    // Gemma3TextConfig's defaults (transformers 4.50, configuration_gemma3.py); PretrainedConfig
    // ties the embeddings by default.
    return json { { "model_type", "gemma3_text" }, { "vocab_size", 262208 },
        { "hidden_size", 2304 }, { "intermediate_size", 9216 }, { "num_hidden_layers", 26 },
        { "num_attention_heads", 8 }, { "num_key_value_heads", 4 }, { "head_dim", 256 },
        { "max_position_embeddings", 131072 }, { "sliding_window", 4096 },
        { "sliding_window_pattern", 6 }, { "tie_word_embeddings", true } };
}

ModelArch fromGemma3Text(ConfigReader& r)
{
    // Gemma 3 (Gemma 3 technical report, 2025): Gemma 2's block with q/k norms instead of
    // soft-capping, five local layers (sliding_window 1024 in the released checkpoints) per
    // global one: layer i is local unless (i + 1) % sliding_window_pattern == 0.
    ModelArch a = llamaShape(r, true);
    a.sandwichNorms = true;
    a.qkNorm = QkNorm::PerHead;
    a.slidingWindow = r.small("sliding_window", 1, kPositions, 4096);
    if (!readLayerTypes(r, a.layers, a.attentionPattern))
        a.attentionPattern = localThenGlobal(
            r.small("sliding_window_pattern", 1, kLayers, 6), LayerAttention::Sliding);
    return a;
}

ModelArch fromGptOss(ConfigReader& r)
{
    // gpt-oss (OpenAI 2025 model card; modeling_gpt_oss.py): every layer is MoE
    // (num_local_experts of intermediate_size, experts and router with biases), q/k/v/o biases
    // (attention_bias), one learned sink logit per head, alternating sliding (128) and full
    // layers (layer_types).
    ModelArch a = llamaShape(r, false);
    a.qkvBias = r.boolean("attention_bias", true);
    a.linearBias = true; // GptOssExperts always carry gate_up_proj_bias and down_proj_bias
    a.attentionSinks = true;
    a.slidingWindow = r.small("sliding_window", 1, kPositions, 128);
    if (!readLayerTypes(r, a.layers, a.attentionPattern))
        a.attentionPattern = { LayerAttention::Sliding, LayerAttention::Full };
    MoeConfig moe;
    moe.experts = r.small("num_local_experts", 1, kHeads);
    moe.topK = r.has("num_experts_per_tok") ? r.small("num_experts_per_tok", 1, kHeads)
                                            : r.small("experts_per_token", 1, kHeads);
    moe.expertFfnHidden = a.ffnHidden;
    moe.routerBias = true;
    a.moe = moe;
    return a;
}

ModelArch fromLlama4Text(ConfigReader& r)
{
    // Llama 4 (Llama4TextConfig, modeling_llama4.py): MoE layers every
    // interleave_moe_layer_step (num_local_experts routed experts of intermediate_size plus one
    // shared expert of the same width, bias-free router); the other layers are dense FFNs of
    // intermediate_size_mlp. RoPE layers attend within chunks of attention_chunk_size; every
    // no_rope_layer_interval-th layer (4) is a global NoPE layer. The qk L2 norm has no weights.
    ModelArch a = llamaShape(r, false);
    const std::int64_t expertWidth = a.ffnHidden;
    a.ffnHidden = r.integer("intermediate_size_mlp", 1, kFfn, 16384);
    MoeConfig moe;
    moe.experts = r.small("num_local_experts", 1, kHeads);
    moe.topK = r.small("num_experts_per_tok", 1, kHeads);
    moe.sharedExperts = 1;
    moe.expertFfnHidden = expertWidth;
    moe.layerStep = r.small("interleave_moe_layer_step", 1, kLayers, 1);
    a.moe = moe;
    a.attentionChunk = r.small("attention_chunk_size", 0, kPositions, 0);
    if (!readLayerTypes(r, a.layers, a.attentionPattern) && a.attentionChunk > 0) {
        // no_rope_layers[i] = 1: a RoPE (chunked) layer; 0: a global NoPE layer. Empty: the
        // default interval.
        const json* listed = r.has("no_rope_layers") ? &r.raw().at("no_rope_layers") : nullptr;
        if (listed && listed->is_array() && !listed->empty()) {
            std::vector<LayerAttention> types;
            for (const json& flag : *listed)
                types.push_back(flag.is_number() && flag.get<double>() == 0
                        ? LayerAttention::Full
                        : LayerAttention::Chunked);
            a.attentionPattern = types;
        } else {
            a.attentionPattern = localThenGlobal(
                r.small("no_rope_layer_interval", 1, kLayers, 4), LayerAttention::Chunked);
        }
    }
    return a;
}

ModelArch fromGlm4Moe(ConfigReader& r)
{
    // GLM-4.5 (Glm4MoeConfig, modeling_glm4_moe.py): biases on q/k/v only (attention_bias),
    // optional q/k norms (use_qk_norm), first_k_dense_replace dense layers, then
    // n_routed_experts + n_shared_experts of moe_intermediate_size with a sigmoid router and its
    // e_score_correction_bias. The MTP layers (num_nextn_predict_layers) are not the main model.
    ModelArch a = llamaShape(r, false);
    a.qkvBias = r.boolean("attention_bias", false);
    a.linearBias = false;
    a.qkNorm = r.boolean("use_qk_norm", false) ? QkNorm::PerHead : QkNorm::None;
    MoeConfig moe;
    moe.experts = r.small("n_routed_experts", 1, kHeads);
    moe.topK = r.small("num_experts_per_tok", 1, kHeads);
    moe.sharedExperts = r.small("n_shared_experts", 0, kHeads, 0);
    moe.expertFfnHidden = r.integer("moe_intermediate_size", 1, kFfn);
    moe.denseLayers = r.small("first_k_dense_replace", 0, kLayers, 0);
    moe.routerBias = true;
    a.moe = moe;
    return a;
}

ModelArch fromMiniMaxM2(ConfigReader& r)
{
    // MiniMax-M2 (configuration_minimax_m2.py, modeling_minimax_m2.py): full softmax attention
    // in every layer (attn_type_list all 1), q/k RMSNorms over all heads of the layer
    // (qk_norm_type "per_layer"), every layer MoE: num_local_experts of intermediate_size with
    // a sigmoid router and routing bias. The MTP modules are not the main model.
    ModelArch a = llamaShape(r, false);
    if (r.boolean("use_qk_norm", false))
        a.qkNorm = r.text("qk_norm_type", "per_layer") == "per_layer" ? QkNorm::PerLayer
                                                                     : QkNorm::PerHead;
    if (r.has("attn_type_list")) {
        const json& types = r.raw().at("attn_type_list");
        bool softmaxOnly = types.is_array();
        for (const json& t : types.is_array() ? types : json::array())
            softmaxOnly = softmaxOnly && t.is_number_integer() && t.get<std::int64_t>() == 1;
        if (!softmaxOnly)
            r.fail("attn_type_list",
                fmt::format("must list 1 (softmax attention) for every layer in a minimax_m2 "
                            "config; lightning-attention layers (0) are MiniMax-Text-01's "
                            "(model_type minimax or minimax_text_01), got {}",
                    shortJson(types)));
    }
    MoeConfig moe = localExperts(r, a.ffnHidden);
    moe.routerBias = r.boolean("use_routing_bias", true);
    const std::int64_t shared = r.integer("shared_intermediate_size", 0, kFfn, 0);
    if (shared > 0) {
        moe.sharedExperts = 1;
        moe.sharedExpertFfnHidden = shared;
    }
    a.moe = moe;
    return a;
}

ModelArch fromMiniMaxText01(ConfigReader& r)
{
    // MiniMax-Text-01 (MiniMax-01 report; transformers configuration_minimax.py and
    // modular_minimax.py, remote-code model_type "minimax_text_01"): lightning-attention layers
    // with a softmax layer after every seven (layer_types, or the remote code's attn_type_list of
    // 0 = lightning and 1 = softmax), the softmax layers' rotary on rotary_dim of head_dim, every
    // layer MoE: num_local_experts of intermediate_size, top num_experts_per_tok, a bias-free
    // router. The lightning layers run every head's q, k and v of head_dim (no KV grouping).
    ModelArch a = llamaShape(r, false);
    if (!readLayerTypes(r, a.layers, a.attentionPattern)) {
        if (!r.has("attn_type_list")) {
            r.fail("layer_types", "is required (or attn_type_list): which layers are lightning "
                                  "attention and which softmax");
            return a;
        }
        const json& types = r.raw().at("attn_type_list");
        std::vector<LayerAttention> kinds;
        for (const json& t : types.is_array() ? types : json::array())
            if (t.is_number_integer() && (t.get<std::int64_t>() == 0 || t.get<std::int64_t>() == 1))
                kinds.push_back(t.get<std::int64_t>() == 1 ? LayerAttention::Full : LayerAttention::Linear);
        if (!types.is_array() || static_cast<int>(kinds.size()) != a.layers
            || kinds.size() != types.size()) {
            r.fail("attn_type_list",
                fmt::format("must list 0 (lightning) or 1 (softmax) for each of the {} layers, got {}",
                    a.layers, shortJson(types)));
            return a;
        }
        a.attentionPattern = shortestPeriod(kinds);
    }
    LinearAttentionConfig l;
    l.kind = LinearAttentionConfig::Kind::Lightning;
    l.keyHeads = l.valueHeads = a.heads;
    l.keyHeadDim = l.valueHeadDim = static_cast<int>(a.headDimOrDefault());
    l.convKernel = 0;
    a.linearAttention = l;
    a.moe = localExperts(r, a.ffnHidden);
    if (r.integer("shared_intermediate_size", 0, kFfn, 0) > 0)
        r.fail("shared_intermediate_size", "must be 0 (MiniMax-Text-01 has no shared expert; a "
                                           "sigmoid-gated shared expert is not counted)");
    return a;
}

} // namespace envelope::hf
