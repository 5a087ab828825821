// Internal to core/model: the config.json reader shared by the Hugging Face importers
// (hf_import.cpp: the dispatch and the older families; hf_families.cpp: the 2025 families;
// hf_vision.cpp: vision towers of multimodal checkpoints). Include only from core/model .cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "model/model.h"

namespace envelope::hf {

using nlohmann::json;

// Allowed ranges, the same as validateArch's for the field each key fills (model.cpp), checked
// on the 64-bit value before it is narrowed, so 4294967328 layers is refused rather than read as
// 32, and no product below can overflow.
inline constexpr std::int64_t kLayers = 1000;
inline constexpr std::int64_t kHidden = 1'000'000;
inline constexpr std::int64_t kFfn = 10'000'000;
inline constexpr std::int64_t kHeads = 100'000;
inline constexpr std::int64_t kVocab = 100'000'000;
inline constexpr std::int64_t kPositions = 100'000'000;
inline constexpr std::int64_t kRank = 1'000'000;

// Reads config fields with errors naming the config's own key and its allowed range.
class ConfigReader {
public:
    // `prefix` names where the object sits in config.json ("text_config.") for error paths.
    explicit ConfigReader(const json& config, std::string prefix = {})
        : m_config(config)
        , m_prefix(std::move(prefix))
    { }

    const json& raw() const { return m_config; }
    const std::string& prefix() const { return m_prefix; }

    // An optional string field; `fallback` when absent or null.
    std::string text(const char* key, const std::string& fallback)
    {
        if (!has(key))
            return fallback;
        const json& v = m_config.at(key);
        if (!v.is_string()) {
            fail(key, fmt::format("must be a string, got {}", shortJson(v)));
            return fallback;
        }
        return v.get<std::string>();
    }

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

    // An optional real field in [min, max]; `fallback` when absent or null.
    double number(const char* key, double min, double max, double fallback)
    {
        if (!has(key))
            return fallback;
        const json& v = m_config.at(key);
        const double x = v.is_number() ? v.get<double>() : NAN;
        if (!(x >= min && x <= max)) {
            fail(key, fmt::format("must be a number in {}..{}, got {}", min, max, shortJson(v)));
            return fallback;
        }
        return x;
    }

    bool failed() const { return m_error.has_value(); }
    void fail(const char* key, std::string message)
    {
        if (!m_error)
            m_error = Error { m_prefix + key, std::move(message) };
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
    std::string m_prefix;
    std::optional<Error> m_error;
};

// head_dim when the config does not state it: hidden / heads (0 with an error on `headsKey`
// when there are more heads than hidden units).
int derivedHeadDim(ConfigReader& r, std::int64_t hidden, int heads, const char* headsKey);

// The Llama family block (RMSNorm, gated FFN, GQA; untied head unless tie_word_embeddings).
ModelArch llamaShape(ConfigReader& r, bool tiedByDefault);

// DeepSeek-V2/V3 and Kimi K2: MLA + MoE with leading dense layers. `correctionBias`: the
// router's per-expert bias (V3's noaux_tc).
ModelArch deepseekShape(ConfigReader& r, bool correctionBias);

// The text families added for issue 23 (hf_families.cpp). Each reads the text config.
ModelArch fromQwen3(ConfigReader& r);
ModelArch fromQwen3Moe(ConfigReader& r);
ModelArch fromQwen3Next(ConfigReader& r);
ModelArch fromQwen35Text(ConfigReader& r, bool moe);
ModelArch fromGemma2(ConfigReader& r);
ModelArch fromGemma3Text(ConfigReader& r);
ModelArch fromGptOss(ConfigReader& r);
ModelArch fromLlama4Text(ConfigReader& r);
ModelArch fromGlm4Moe(ConfigReader& r);
MoeConfig localExperts(ConfigReader& r, std::int64_t expertFfn);
ModelArch fromMiniMaxM2(ConfigReader& r);
ModelArch fromMiniMaxText01(ConfigReader& r);

// Gemma3TextConfig's defaults (transformers configuration_gemma3.py), which a gemma3
// checkpoint's text_config leaves out.
json gemma3TextDefaults();
// Qwen3_5TextConfig / Qwen3_5MoeTextConfig's defaults (transformers configuration_qwen3_5.py,
// configuration_qwen3_5_moe.py).
json qwen35TextDefaults(bool moe);

// Params of the vision tower and projector of a multimodal config (hf_vision.cpp): Mistral 3
// (pixtral tower + patch merger), Gemma 3 (SigLIP + soft-embedding projection), Llama 4
// (its vision encoder, pixel-shuffle adapter and projector). `textHidden` is the text model's
// hidden size. Errors name config.json keys.
Expected<double> visionParams(const std::string& modelType, const json& config, std::int64_t textHidden);

} // namespace envelope::hf
