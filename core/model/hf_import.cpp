// Hugging Face config.json -> ModelArch. Field names per model_type follow the transformers
// configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, GemmaConfig,
// GPT2Config, GPTNeoXConfig, Phi3Config, DeepseekV2Config, DeepseekV3Config); the weights each
// model creates are those of the matching modeling_*.py, which is what countParameters()
// counts. The 2025 families are in hf_families.cpp, vision towers in hf_vision.cpp.
#include <cstdint>
#include <span>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "model/detail.h"
#include "model/model.h"

namespace envelope {
namespace hf {

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

ModelArch deepseekShape(ConfigReader& r, bool correctionBias)
{
    // DeepSeek-V2 (arXiv 2405.04434) and V3 (arXiv 2412.19437): MLA attention,
    // first_k_dense_replace dense layers, then MoE layers with n_routed_experts routed +
    // n_shared_experts shared experts of moe_intermediate_size. V3's sigmoid router carries a
    // per-expert correction bias (e_score_correction_bias, with topk_method "noaux_tc"); V2's
    // softmax router has none. The multi-token prediction module (num_nextn_predict_layers) is
    // not part of the main model.
    ModelArch a = llamaShape(r, false);
    MoeConfig moe;
    moe.experts = r.small("n_routed_experts", 1, kHeads);
    moe.topK = r.small("num_experts_per_tok", 1, kHeads);
    moe.sharedExperts = r.small("n_shared_experts", 0, kHeads, 0);
    moe.expertFfnHidden = r.integer("moe_intermediate_size", 1, kFfn);
    moe.denseLayers = r.small("first_k_dense_replace", 0, kLayers, 0);
    moe.routerBias = correctionBias;
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

} // namespace hf

namespace {

using namespace hf;

constexpr const char* kSupported
    = "llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, qwen3_next, gemma, gemma2, gemma3, "
      "gemma3_text, gpt2, gpt_neox, phi3, gpt_oss, llama4, llama4_text, glm4_moe, deepseek_v2, "
      "deepseek_v3, deepseek_v32, kimi_k2, minimax_m2, minimax (and minimax_text_01), mistral3, "
      "llava (a pixtral vision tower), qwen3_5, qwen3_5_moe (and their _text configs)";

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

// The RoPE base a config class uses when the config leaves rope_theta out (transformers'
// configuration_*.py defaults). 0: learned positions (GPT-2), nothing to launch.
double defaultRopeTheta(const std::string& type)
{
    static const std::pair<const char*, double> defaults[] = { { "gpt2", 0 },
        { "gemma3_text", 1000000 }, { "gpt_oss", 150000 }, { "llama4_text", 500000 },
        { "minimax_m2", 5000000 } };
    for (const auto& [name, theta] : defaults)
        if (type == name)
            return theta;
    return 10000;  // LlamaConfig and every class here derived from its defaults
}

// One rope_scaling object (transformers 4.x "type"/"rope_type"; 5.x rope_parameters). Types
// other than llama3, yarn and linear (dynamic NTK, Phi-3's longrope) leave the scaling unstated:
// they change no size, and no engine export here can pass them on.
std::optional<RopeScaling> ropeScalingFrom(const json& object, const std::string& path, ConfigReader& r)
{
    ConfigReader s(object, path);
    std::string type = s.text("rope_type", s.text("type", "default"));
    static const std::pair<const char*, RopeScalingKind> kinds[] = { { "llama3",
                                                                         RopeScalingKind::Llama3 },
        { "yarn", RopeScalingKind::Yarn }, { "linear", RopeScalingKind::Linear } };
    std::optional<RopeScaling> out;
    for (const auto& [name, kind] : kinds) {
        if (type != name)
            continue;
        RopeScaling scaling;
        scaling.kind = kind;
        scaling.factor = s.number("factor", 1, 1e6, 1);
        scaling.originalPositions = s.integer("original_max_position_embeddings", 1, kPositions, 0);
        const std::pair<const char*, std::optional<double>*> optional[] = {
            { "low_freq_factor", &scaling.lowFreqFactor },
            { "high_freq_factor", &scaling.highFreqFactor }, { "beta_fast", &scaling.betaFast },
            { "beta_slow", &scaling.betaSlow }, { "mscale", &scaling.mscale },
            { "mscale_all_dim", &scaling.mscaleAllDim } };
        for (const auto& [key, field] : optional)
            if (s.has(key))
                *field = s.number(key, 0, 1e6, 0);
        out = scaling;
    }
    if (auto e = s.error())
        r.fail(e->path.c_str() + r.prefix().size(), e->message);
    return out;
}

// Rotary positions as the checkpoint defines them (issue 25: Megatron launched without
// --rotary-base runs another model). transformers 4.x: rope_theta and rope_scaling; 5.x:
// rope_parameters holding both, per layer type for Gemma 3 (the full-attention layers' is read).
// GPT-NeoX: rotary_emb_base and rotary_pct; MiniMax-M2: rotary_dim of head_dim.
void readRope(ConfigReader& r, ModelArch& a, const std::string& type)
{
    if (a.learnedPositions || r.failed())
        return;
    const json* parameters = nullptr;
    std::string parametersPath;
    if (r.has("rope_parameters") && r.raw().at("rope_parameters").is_object()) {
        parameters = &r.raw().at("rope_parameters");
        parametersPath = r.prefix() + "rope_parameters.";
        if (parameters->contains("full_attention") && parameters->at("full_attention").is_object()) {
            parameters = &parameters->at("full_attention");
            parametersPath += "full_attention.";
        }
    }
    const double fallback = defaultRopeTheta(type);
    if (type == "gpt_neox") {
        a.ropeTheta = r.number("rotary_emb_base", 1, 1e12, fallback);
        a.ropeFraction = r.number("rotary_pct", 1e-6, 1, 0.25);
    } else if (parameters) {
        ConfigReader p(*parameters, parametersPath);
        a.ropeTheta = p.number("rope_theta", 1, 1e12, fallback);
        if (auto e = p.error())
            r.fail(e->path.c_str() + r.prefix().size(), e->message);
    } else {
        a.ropeTheta = r.number("rope_theta", 1, 1e12, fallback);
    }
    if (r.has("partial_rotary_factor"))
        a.ropeFraction = r.number("partial_rotary_factor", 1e-6, 1, 1);
    else if (type == "glm4_moe")
        a.ropeFraction = 0.5;  // Glm4MoeConfig's default
    if ((type == "minimax_m2" || type == "minimax" || type == "minimax_text_01")
        && r.has("rotary_dim") && a.headDimOrDefault() > 0)
        a.ropeFraction = static_cast<double>(r.small("rotary_dim", 1, a.headDimOrDefault()))
            / a.headDimOrDefault();
    if (parameters)
        a.ropeScaling = ropeScalingFrom(*parameters, parametersPath, r);
    else if (r.has("rope_scaling") && r.raw().at("rope_scaling").is_object())
        a.ropeScaling = ropeScalingFrom(r.raw().at("rope_scaling"), r.prefix() + "rope_scaling.", r);
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
    Expected<json> parsed = parseJsonObject(configJson, "config.json");
    if (!parsed)
        return parsed.error();
    const json& config = *parsed;
    if (!config.contains("model_type") || !config.at("model_type").is_string())
        return Error { "model_type", fmt::format("is required (one of {})", kSupported) };
    const std::string type = config.at("model_type").get<std::string>();

    // Multimodal checkpoints nest the language model under text_config (its own model_type,
    // with the text class's defaults for keys left out) beside a vision_config.
    const bool qwen35 = type == "qwen3_5" || type == "qwen3_5_moe";
    const bool multimodal = type == "mistral3" || type == "gemma3" || type == "llama4"
        || type == "llava" || qwen35;
    // Qwen3.5's text classes fill the keys a config leaves out, whether the text model is
    // nested (Qwen3_5ForConditionalGeneration) or alone (Qwen3_5ForCausalLM's qwen3_5_text).
    const bool qwen35Text = type == "qwen3_5_text" || type == "qwen3_5_moe_text";
    json textConfig;
    std::string textType = type;
    std::string prefix;
    if (multimodal) {
        if (!config.contains("text_config") || !config.at("text_config").is_object())
            return Error { "text_config",
                fmt::format("is required for model_type \"{}\" (an object)", type) };
        textConfig = type == "gemma3" ? gemma3TextDefaults()
            : qwen35                  ? qwen35TextDefaults(type == "qwen3_5_moe")
                                      : json::object();
        // Qwen3_5Config ties the embeddings at the top level.
        if (qwen35 && config.contains("tie_word_embeddings"))
            textConfig["tie_word_embeddings"] = config.at("tie_word_embeddings");
        textConfig.update(config.at("text_config"));
        // LlavaConfig's default text model is Llama's.
        const std::string fallback = type == "mistral3" ? "mistral"
            : type == "gemma3"                          ? "gemma3_text"
            : type == "llava"                           ? "llama"
            : type == "qwen3_5"                         ? "qwen3_5_text"
            : type == "qwen3_5_moe"                     ? "qwen3_5_moe_text"
                                                        : "llama4_text";
        const auto stated = textConfig.find("model_type");
        textType = stated != textConfig.end() && stated->is_string() ? stated->get<std::string>()
                                                                      : fallback;
        prefix = "text_config.";
    } else if (qwen35Text) {
        textConfig = qwen35TextDefaults(type == "qwen3_5_moe_text");
        textConfig.update(config);
    }
    // Qwen3_5MoeTextConfig has no intermediate_size: every layer is MoE, so the dense width is
    // never used; the experts' stands in for it.
    if ((multimodal || qwen35Text) && textType == "qwen3_5_moe_text"
        && !textConfig.contains("intermediate_size") && textConfig.contains("moe_intermediate_size"))
        textConfig["intermediate_size"] = textConfig.at("moe_intermediate_size");
    const json& text = multimodal || qwen35Text ? textConfig : config;
    ConfigReader r(text, prefix);
    ModelArch a;
    if (textType == "llama" || textType == "phi3") {
        // Phi-3 fuses qkv_proj and gate_up_proj; the counts are the Llama shape's.
        a = llamaShape(r, false);
    } else if (textType == "mistral") {
        a = llamaShape(r, false);
        a.slidingWindow = r.small("sliding_window", 0, kPositions, 0);
    } else if (textType == "mixtral") {
        // Mixtral (Jiang et al. 2024): every layer's FFN is num_local_experts experts of
        // intermediate_size, num_experts_per_tok active, a bias-free router.
        a = llamaShape(r, false);
        a.slidingWindow = r.small("sliding_window", 0, kPositions, 0);
        a.moe = localExperts(r, a.ffnHidden);
    } else if (textType == "qwen2") {
        // Qwen2: biases on q/k/v only (Qwen2 technical report, modeling_qwen2.py).
        a = llamaShape(r, false);
        a.qkvBias = true;
        a.linearBias = false;
        if (r.boolean("use_sliding_window", false))
            a.slidingWindow = r.small("sliding_window", 0, kPositions, 0);
    } else if (textType == "gemma") {
        // Gemma (Gemma Team 2024): GeGLU (gated, 3 matrices), head_dim 256, tied embeddings.
        a = llamaShape(r, true);
    } else if (textType == "gpt2") {
        a = fromGpt2(r);
    } else if (textType == "gpt_neox") {
        a = fromGptNeox(r);
    } else if (textType == "deepseek_v3" || textType == "kimi_k2") {
        // Kimi K2 is the DeepSeek-V3 architecture (its config names DeepseekV3ForCausalLM).
        a = deepseekShape(r, true);
    } else if (textType == "deepseek_v32") {
        // DeepSeek-V3.2: V3's shape with the sparse attention's lightning indexer
        // (index_n_heads, index_head_dim, index_topk; DeepSeek-V3.2-Exp config.json: 64, 128,
        // 2048).
        a = deepseekShape(r, true);
        if (a.mla) {
            a.mla->indexHeads = r.small("index_n_heads", 1, 1000000, 64);
            a.mla->indexHeadDim = r.small("index_head_dim", 1, 1000000, 128);
            a.mla->indexTopK = r.small("index_topk", 1, 1000000, 2048);
        }
    } else if (textType == "deepseek_v2") {
        a = deepseekShape(r, r.text("topk_method", "greedy") == "noaux_tc");
    } else if (textType == "qwen3") {
        a = fromQwen3(r);
    } else if (textType == "qwen3_moe") {
        a = fromQwen3Moe(r);
    } else if (textType == "qwen3_next") {
        a = fromQwen3Next(r);
    } else if (textType == "qwen3_5_text" || textType == "qwen3_5_moe_text") {
        a = fromQwen35Text(r, textType == "qwen3_5_moe_text");
    } else if (textType == "gemma2") {
        a = fromGemma2(r);
    } else if (textType == "gemma3_text") {
        a = fromGemma3Text(r);
    } else if (textType == "gpt_oss") {
        a = fromGptOss(r);
    } else if (textType == "llama4_text") {
        a = fromLlama4Text(r);
    } else if (textType == "glm4_moe") {
        a = fromGlm4Moe(r);
    } else if (textType == "minimax_m2") {
        a = fromMiniMaxM2(r);
    } else if (textType == "minimax" || textType == "minimax_text_01") {
        a = fromMiniMaxText01(r);
    } else {
        return Error { multimodal ? "text_config.model_type" : "model_type",
            fmt::format("\"{}\" is not supported; supported: {}", textType, kSupported) };
    }
    // The multi-token-prediction modules shipped beside the main model (DeepSeek-V3, Kimi K2
    // with 0, GLM-4.5): not in its parameters, a draft for speculative decoding.
    if (textType == "deepseek_v3" || textType == "deepseek_v32" || textType == "kimi_k2"
        || textType == "glm4_moe")
        a.mtpLayers = r.small("num_nextn_predict_layers", 0, 16, 0);
    readRope(r, a, textType);
    if (auto e = r.error())
        return *e;
    if (multimodal) {
        Expected<double> vision = visionParams(type, config, a.hidden);
        if (!vision)
            return vision.error();
        a.visionParams = *vision;
    }
    if (config.contains("_name_or_path") && config.at("_name_or_path").is_string())
        a.name = config.at("_name_or_path").get<std::string>();
    if (a.name.empty())
        a.name = fmt::format("{} (config.json)", type);
    if (auto e = validateArch(a)) {
        Error mapped = inConfigKeys(textType, *e);
        mapped.path = prefix + mapped.path;
        return mapped;
    }
    return a;
}

} // namespace envelope
