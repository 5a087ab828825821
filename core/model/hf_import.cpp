// Hugging Face config.json -> ModelArch. Field names per model_type follow the transformers
// configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, GemmaConfig,
// GPT2Config, GPTNeoXConfig, Phi3Config, DeepseekV3Config); the weights each model creates are
// those of the matching modeling_*.py, which is what countParameters() counts.
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/model.h"

namespace envelope {
namespace {

using nlohmann::json;

constexpr const char* kSupported
    = "llama, mistral, mixtral, qwen2, gemma, gpt2, gpt_neox, phi3, deepseek_v3";

// Reads config fields with errors naming the field.
class ConfigReader {
public:
    explicit ConfigReader(const json& config)
        : m_config(config)
    { }

    bool has(const char* key) const
    {
        return m_config.contains(key) && !m_config.at(key).is_null();
    }

    // A required positive integer field.
    std::int64_t integer(const char* key)
    {
        if (!has(key)) {
            fail(key, "is required for this model_type");
            return 0;
        }
        return integerValue(key);
    }

    // An optional integer field; `fallback` when absent or null.
    std::int64_t integer(const char* key, std::int64_t fallback)
    {
        return has(key) ? integerValue(key) : fallback;
    }

    bool boolean(const char* key, bool fallback)
    {
        if (!has(key))
            return fallback;
        const json& v = m_config.at(key);
        if (!v.is_boolean()) {
            fail(key, fmt::format("must be true or false, got {}", v.dump()));
            return fallback;
        }
        return v.get<bool>();
    }

    std::optional<Error> error() const { return m_error; }

private:
    std::int64_t integerValue(const char* key)
    {
        const json& v = m_config.at(key);
        if (v.is_number_integer() || v.is_number_unsigned()) {
            const std::int64_t x = v.get<std::int64_t>();
            if (x >= 0)
                return x;
        }
        fail(key, fmt::format("must be a non-negative integer, got {}", v.dump()));
        return 0;
    }

    void fail(const char* key, std::string message)
    {
        if (!m_error)
            m_error = Error { key, std::move(message) };
    }

    const json& m_config;
    std::optional<Error> m_error;
};

// The Llama family block: RMSNorm, gated FFN, rotary, GQA (num_key_value_heads defaults to
// num_attention_heads), untied head unless tie_word_embeddings (LlamaConfig default false).
ModelArch llamaShape(ConfigReader& r, bool tiedByDefault)
{
    ModelArch a;
    a.layers = static_cast<int>(r.integer("num_hidden_layers"));
    a.hidden = r.integer("hidden_size");
    a.ffnHidden = r.integer("intermediate_size");
    a.ffn = FfnKind::Gated;
    a.heads = static_cast<int>(r.integer("num_attention_heads"));
    a.kvHeads = static_cast<int>(r.integer("num_key_value_heads", a.heads));
    a.headDim = static_cast<int>(r.integer("head_dim", a.headDimOrDefault()));
    a.vocab = r.integer("vocab_size");
    a.tiedEmbeddings = r.boolean("tie_word_embeddings", tiedByDefault);
    a.norm = NormKind::RmsNorm;
    // attention_bias (Llama) puts biases on q/k/v/o; mlp_bias on the FFN.
    const bool attentionBias = r.boolean("attention_bias", false);
    a.qkvBias = attentionBias;
    a.linearBias = attentionBias && r.boolean("mlp_bias", false);
    a.maxPositions = r.integer("max_position_embeddings", 0);
    return a;
}

ModelArch fromGpt2(ConfigReader& r)
{
    // GPT-2: Conv1D c_attn/c_proj/c_fc with biases, LayerNorm, learned positions, tied head
    // (Radford et al. 2019; modeling_gpt2.py). n_inner null means 4 x n_embd.
    ModelArch a;
    a.layers = static_cast<int>(r.integer("n_layer"));
    a.hidden = r.integer("n_embd");
    a.ffnHidden = r.integer("n_inner", 4 * a.hidden);
    a.ffn = FfnKind::Plain;
    a.heads = static_cast<int>(r.integer("n_head"));
    a.kvHeads = a.heads;
    a.headDim = a.headDimOrDefault(); // hidden / heads: the config states none
    a.vocab = r.integer("vocab_size");
    a.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
    a.norm = NormKind::LayerNorm;
    a.qkvBias = true;
    a.linearBias = true;
    a.maxPositions = r.integer("n_positions");
    a.learnedPositions = true;
    return a;
}

ModelArch fromGptNeox(ConfigReader& r)
{
    // GPT-NeoX / Pythia (Black et al. 2022; Biderman et al. 2023): separate embed_in and
    // embed_out (untied unless tie_word_embeddings), LayerNorm, biases on query_key_value,
    // dense, dense_h_to_4h and dense_4h_to_h; rotary positions. use_parallel_residual changes
    // the dataflow, not the weights.
    ModelArch a;
    a.layers = static_cast<int>(r.integer("num_hidden_layers"));
    a.hidden = r.integer("hidden_size");
    a.ffnHidden = r.integer("intermediate_size", 4 * a.hidden);
    a.ffn = FfnKind::Plain;
    a.heads = static_cast<int>(r.integer("num_attention_heads"));
    a.kvHeads = a.heads;
    a.headDim = a.headDimOrDefault(); // hidden / heads: the config states none
    a.vocab = r.integer("vocab_size");
    a.tiedEmbeddings = r.boolean("tie_word_embeddings", false);
    a.norm = NormKind::LayerNorm;
    a.qkvBias = r.boolean("attention_bias", true);
    a.linearBias = a.qkvBias;
    a.maxPositions = r.integer("max_position_embeddings", 0);
    return a;
}

ModelArch fromDeepseekV3(ConfigReader& r)
{
    // DeepSeek-V3 (arXiv 2412.19437): MLA attention, first_k_dense_replace dense layers, then
    // MoE layers with n_routed_experts routed + n_shared_experts shared experts of
    // moe_intermediate_size and a sigmoid router with a per-expert correction bias
    // (e_score_correction_bias, present when topk_method is "noaux_tc"). The multi-token
    // prediction module (num_nextn_predict_layers) is not part of the main model.
    ModelArch a = llamaShape(r, false);
    MoeConfig moe;
    moe.experts = static_cast<int>(r.integer("n_routed_experts"));
    moe.topK = static_cast<int>(r.integer("num_experts_per_tok"));
    moe.sharedExperts = static_cast<int>(r.integer("n_shared_experts", 0));
    moe.expertFfnHidden = r.integer("moe_intermediate_size");
    moe.denseLayers = static_cast<int>(r.integer("first_k_dense_replace", 0));
    moe.routerBias = true;
    a.moe = moe;
    MlaConfig mla;
    mla.qLoraRank = static_cast<int>(r.integer("q_lora_rank", 0));
    mla.kvLoraRank = static_cast<int>(r.integer("kv_lora_rank"));
    mla.qkRopeHeadDim = static_cast<int>(r.integer("qk_rope_head_dim"));
    mla.qkNopeHeadDim = static_cast<int>(r.integer("qk_nope_head_dim"));
    mla.vHeadDim = static_cast<int>(r.integer("v_head_dim"));
    a.mla = mla;
    a.headDim = mla.qkNopeHeadDim + mla.qkRopeHeadDim;
    return a;
}

} // namespace

std::string supportedHfModelTypes()
{
    return kSupported;
}

Expected<ModelArch> importHfConfig(std::string_view configJson)
{
    const json config = json::parse(configJson.begin(), configJson.end(), nullptr, false);
    if (config.is_discarded())
        return Error { "", "config.json is not valid JSON" };
    if (!config.is_object())
        return Error { "", "config.json must be a JSON object" };
    if (!config.contains("model_type") || !config.at("model_type").is_string())
        return Error { "model_type", fmt::format("is required (one of {})", kSupported) };
    const std::string type = config.at("model_type").get<std::string>();

    ConfigReader r(config);
    ModelArch a;
    if (type == "llama" || type == "phi3") {
        // Phi-3 fuses qkv_proj and gate_up_proj; the counts are the Llama shape's.
        a = llamaShape(r, false);
    } else if (type == "mistral") {
        a = llamaShape(r, false);
        a.slidingWindow = static_cast<int>(r.integer("sliding_window", 0));
    } else if (type == "mixtral") {
        // Mixtral (Jiang et al. 2024): every layer's FFN is num_local_experts experts of
        // intermediate_size, num_experts_per_tok active, a bias-free router.
        a = llamaShape(r, false);
        a.slidingWindow = static_cast<int>(r.integer("sliding_window", 0));
        MoeConfig moe;
        moe.experts = static_cast<int>(r.integer("num_local_experts"));
        moe.topK = static_cast<int>(r.integer("num_experts_per_tok"));
        moe.expertFfnHidden = a.ffnHidden;
        a.moe = moe;
    } else if (type == "qwen2") {
        // Qwen2: biases on q/k/v only (Qwen2 technical report, modeling_qwen2.py).
        a = llamaShape(r, false);
        a.qkvBias = true;
        a.linearBias = false;
        if (r.boolean("use_sliding_window", false))
            a.slidingWindow = static_cast<int>(r.integer("sliding_window", 0));
    } else if (type == "gemma") {
        // Gemma (Gemma Team 2024): GeGLU (gated, 3 matrices), head_dim 256, tied embeddings.
        a = llamaShape(r, true);
    } else if (type == "gpt2") {
        a = fromGpt2(r);
    } else if (type == "gpt_neox") {
        a = fromGptNeox(r);
    } else if (type == "deepseek_v3") {
        a = fromDeepseekV3(r);
    } else {
        return Error { "model_type",
            fmt::format("\"{}\" is not supported; supported: {}", type, kSupported) };
    }
    if (auto e = r.error())
        return *e;
    if (config.contains("_name_or_path") && config.at("_name_or_path").is_string())
        a.name = config.at("_name_or_path").get<std::string>();
    if (a.name.empty())
        a.name = fmt::format("{} (config.json)", type);
    if (auto e = validateArch(a))
        return Error { e->path, fmt::format("{} (from config.json)", e->message) };
    return a;
}

} // namespace envelope
