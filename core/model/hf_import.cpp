// Hugging Face config.json -> ModelArch. Field names per model_type follow the transformers
// configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, GemmaConfig,
// GPT2Config, GPTNeoXConfig, Phi3Config, DeepseekV3Config); the weights each model creates are
// those of the matching modeling_*.py, which is what countParameters() counts.
#include <cstdint>
#include <span>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "model/model.h"

namespace envelope {
namespace {

using nlohmann::json;

constexpr const char* kSupported
    = "llama, mistral, mixtral, qwen2, gemma, gpt2, gpt_neox, phi3, deepseek_v3";

// Allowed ranges, the same as validateArch's for the field each key fills (model.cpp), checked
// on the 64-bit value before it is narrowed, so 4294967328 layers is refused rather than read as
// 32, and no product below can overflow.
constexpr std::int64_t kLayers = 1000;
constexpr std::int64_t kHidden = 1'000'000;
constexpr std::int64_t kFfn = 10'000'000;
constexpr std::int64_t kHeads = 100'000;
constexpr std::int64_t kVocab = 100'000'000;
constexpr std::int64_t kPositions = 100'000'000;
constexpr std::int64_t kRank = 1'000'000;

// Reads config fields with errors naming the config's own key and its allowed range.
class ConfigReader {
public:
    explicit ConfigReader(const json& config)
        : m_config(config)
    { }

    bool has(const char* key) const
    {
        return m_config.contains(key) && !m_config.at(key).is_null();
    }

    // A required integer field in min..max.
    std::int64_t integer(const char* key, std::int64_t min, std::int64_t max)
    {
        if (!has(key)) {
            fail(key, "is required for this model_type");
            return 0;
        }
        return integerValue(key, min, max);
    }

    // An optional integer field in min..max; `fallback` when absent or null.
    std::int64_t integer(const char* key, std::int64_t min, std::int64_t max, std::int64_t fallback)
    {
        return has(key) ? integerValue(key, min, max) : fallback;
    }

    // The same, narrowed to int (every range above fits in one).
    int small(const char* key, std::int64_t min, std::int64_t max)
    {
        return static_cast<int>(integer(key, min, max));
    }
    int small(const char* key, std::int64_t min, std::int64_t max, int fallback)
    {
        return static_cast<int>(integer(key, min, max, fallback));
    }

    bool boolean(const char* key, bool fallback)
    {
        if (!has(key))
            return fallback;
        const json& v = m_config.at(key);
        if (!v.is_boolean()) {
            fail(key, fmt::format("must be true or false, got {}", shortJson(v)));
            return fallback;
        }
        return v.get<bool>();
    }

    bool failed() const { return m_error.has_value(); }
    void fail(const char* key, std::string message)
    {
        if (!m_error)
            m_error = Error { key, std::move(message) };
    }
    std::optional<Error> error() const { return m_error; }

private:
    std::int64_t integerValue(const char* key, std::int64_t min, std::int64_t max)
    {
        const json& v = m_config.at(key);
        // Compared as the type nlohmann stored, never cast first: 2^64-1 stays 2^64-1.
        bool inRange = false;
        std::int64_t x = 0;
        if (v.is_number_unsigned()) {
            const std::uint64_t u = v.get<std::uint64_t>();
            inRange = u <= static_cast<std::uint64_t>(max) && static_cast<std::int64_t>(u) >= min;
            x = inRange ? static_cast<std::int64_t>(u) : 0;
        } else if (v.is_number_integer()) {
            x = v.get<std::int64_t>();
            inRange = x >= min && x <= max;
        }
        if (inRange)
            return x;
        fail(key, fmt::format("must be an integer in {}..{}, got {}", min, max, shortJson(v)));
        return 0;
    }

    const json& m_config;
    std::optional<Error> m_error;
};

// head_dim when the config does not state it: hidden / heads, which is 0 when there are more
// heads than hidden units; that is an error of num_attention_heads, the key the user wrote.
int derivedHeadDim(ConfigReader& r, std::int64_t hidden, int heads, const char* headsKey)
{
    if (r.failed() || heads < 1)
        return 0;
    if (heads > hidden) {
        r.fail(headsKey,
            fmt::format("must be at most the hidden size ({}) when head_dim is not given "
                        "(head_dim = hidden / heads), got {}",
                hidden, heads));
        return 0;
    }
    return static_cast<int>(hidden / heads);
}

// The Llama family block: RMSNorm, gated FFN, rotary, GQA (num_key_value_heads defaults to
// num_attention_heads), untied head unless tie_word_embeddings (LlamaConfig default false).
ModelArch llamaShape(ConfigReader& r, bool tiedByDefault)
{
    ModelArch a;
    a.layers = r.small("num_hidden_layers", 1, kLayers);
    a.hidden = r.integer("hidden_size", 1, kHidden);
    a.ffnHidden = r.integer("intermediate_size", 1, kFfn);
    a.ffn = FfnKind::Gated;
    a.heads = r.small("num_attention_heads", 1, kHeads);
    a.kvHeads = r.small("num_key_value_heads", 1, kHeads, a.heads);
    a.headDim = r.has("head_dim") ? r.small("head_dim", 1, kHeads)
                                  : derivedHeadDim(r, a.hidden, a.heads, "num_attention_heads");
    a.vocab = r.integer("vocab_size", 1, kVocab);
    a.tiedEmbeddings = r.boolean("tie_word_embeddings", tiedByDefault);
    a.norm = NormKind::RmsNorm;
    // attention_bias (Llama) puts biases on q/k/v/o; mlp_bias on the FFN.
    const bool attentionBias = r.boolean("attention_bias", false);
    a.qkvBias = attentionBias;
    a.linearBias = attentionBias && r.boolean("mlp_bias", false);
    a.maxPositions = r.integer("max_position_embeddings", 0, kPositions, 0);
    return a;
}

ModelArch fromGpt2(ConfigReader& r)
{
    // GPT-2: Conv1D c_attn/c_proj/c_fc with biases, LayerNorm, learned positions, tied head
    // (Radford et al. 2019; modeling_gpt2.py). n_inner null means 4 x n_embd.
    ModelArch a;
    a.layers = r.small("n_layer", 1, kLayers);
    a.hidden = r.integer("n_embd", 1, kHidden);
    // hidden is at most 1e6 here (or 0 after an error), so 4 x hidden cannot overflow.
    a.ffnHidden = r.has("n_inner") ? r.integer("n_inner", 1, kFfn) : 4 * a.hidden;
    a.ffn = FfnKind::Plain;
    a.heads = r.small("n_head", 1, kHeads);
    a.kvHeads = a.heads;
    a.headDim = derivedHeadDim(r, a.hidden, a.heads, "n_head");
    a.vocab = r.integer("vocab_size", 1, kVocab);
    a.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
    a.norm = NormKind::LayerNorm;
    a.qkvBias = true;
    a.linearBias = true;
    a.maxPositions = r.integer("n_positions", 1, kPositions);
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
    a.layers = r.small("num_hidden_layers", 1, kLayers);
    a.hidden = r.integer("hidden_size", 1, kHidden);
    a.ffnHidden
        = r.has("intermediate_size") ? r.integer("intermediate_size", 1, kFfn) : 4 * a.hidden;
    a.ffn = FfnKind::Plain;
    a.heads = r.small("num_attention_heads", 1, kHeads);
    a.kvHeads = a.heads;
    a.headDim = derivedHeadDim(r, a.hidden, a.heads, "num_attention_heads");
    a.vocab = r.integer("vocab_size", 1, kVocab);
    a.tiedEmbeddings = r.boolean("tie_word_embeddings", false);
    a.norm = NormKind::LayerNorm;
    a.qkvBias = r.boolean("attention_bias", true);
    a.linearBias = a.qkvBias;
    a.maxPositions = r.integer("max_position_embeddings", 0, kPositions, 0);
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
    moe.experts = r.small("n_routed_experts", 1, kHeads);
    moe.topK = r.small("num_experts_per_tok", 1, kHeads);
    moe.sharedExperts = r.small("n_shared_experts", 0, kHeads, 0);
    moe.expertFfnHidden = r.integer("moe_intermediate_size", 1, kFfn);
    moe.denseLayers = r.small("first_k_dense_replace", 0, kLayers, 0);
    moe.routerBias = true;
    a.moe = moe;
    MlaConfig mla;
    mla.qLoraRank = r.small("q_lora_rank", 0, kRank, 0);
    mla.kvLoraRank = r.small("kv_lora_rank", 1, kRank);
    mla.qkRopeHeadDim = r.small("qk_rope_head_dim", 0, kRank);
    mla.qkNopeHeadDim = r.small("qk_nope_head_dim", 0, kRank);
    mla.vHeadDim = r.small("v_head_dim", 1, kRank);
    a.mla = mla;
    // Each part is at most 1e6, so the sum fits; the head_dim range is validateArch's.
    a.headDim = mla.qkNopeHeadDim + mla.qkRopeHeadDim;
    if (!r.failed() && (a.headDim < 1 || a.headDim > kHeads))
        r.fail("qk_nope_head_dim",
            fmt::format(
                "qk_nope_head_dim + qk_rope_head_dim must be 1..{}, got {}", kHeads, a.headDim));
    return a;
}

// validateArch names Envelope's fields; a config's user knows its own keys (issue 26: "kv_heads:
// must divide heads" for a num_key_value_heads mistake). The key each field is read from.
std::string configKey(const std::string& type, const std::string& field)
{
    static const std::pair<const char*, const char*> gpt2[] = { { "layers", "n_layer" },
        { "hidden", "n_embd" }, { "ffn_hidden", "n_inner" }, { "heads", "n_head" },
        { "kv_heads", "n_head" }, { "vocab", "vocab_size" }, { "max_positions", "n_positions" } };
    static const std::pair<const char*, const char*> others[] = { { "layers",
                                                                      "num_hidden_layers" },
        { "hidden", "hidden_size" }, { "ffn_hidden", "intermediate_size" },
        { "heads", "num_attention_heads" }, { "kv_heads", "num_key_value_heads" },
        { "vocab", "vocab_size" }, { "max_positions", "max_position_embeddings" } };
    for (const auto& [from, to] : type == "gpt2" ? std::span(gpt2) : std::span(others))
        if (field == from)
            return to;
    return field;
}

// The error with the config's key names, in its path and where the message cites "heads (N)".
Error inConfigKeys(const std::string& type, const Error& e)
{
    std::string message = e.message;
    const std::size_t at = message.find("heads (");
    if (at != std::string::npos && (at == 0 || message[at - 1] == ' ' || message[at - 1] == '.'))
        message.replace(at, 5, configKey(type, "heads"));
    return Error { configKey(type, e.path), message + " (from config.json)" };
}

} // namespace

std::string supportedHfModelTypes()
{
    return kSupported;
}

Expected<ModelArch> importHfConfig(std::string_view configJson)
{
    // The shared parser: bounded depth, duplicate keys refused (json_fields.h).
    Expected<json> parsed = parseJsonText(configJson);
    if (!parsed)
        return parsed.error();
    const json& config = *parsed;
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
        a.slidingWindow = r.small("sliding_window", 0, kPositions, 0);
    } else if (type == "mixtral") {
        // Mixtral (Jiang et al. 2024): every layer's FFN is num_local_experts experts of
        // intermediate_size, num_experts_per_tok active, a bias-free router.
        a = llamaShape(r, false);
        a.slidingWindow = r.small("sliding_window", 0, kPositions, 0);
        MoeConfig moe;
        moe.experts = r.small("num_local_experts", 1, kHeads);
        moe.topK = r.small("num_experts_per_tok", 1, kHeads);
        moe.expertFfnHidden = a.ffnHidden;
        a.moe = moe;
    } else if (type == "qwen2") {
        // Qwen2: biases on q/k/v only (Qwen2 technical report, modeling_qwen2.py).
        a = llamaShape(r, false);
        a.qkvBias = true;
        a.linearBias = false;
        if (r.boolean("use_sliding_window", false))
            a.slidingWindow = r.small("sliding_window", 0, kPositions, 0);
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
        return inConfigKeys(type, *e);
    return a;
}

} // namespace envelope
