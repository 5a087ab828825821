#include "serving/checkpoint.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/json_fields.h"

namespace envelope {
namespace {

using json = nlohmann::json;

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// The module groups a list of unquantized module names (or regexes, "re:.*self_attn.*") leaves
// in 16 bit.
struct Kept {
    bool attention = false, ffn = false, experts = false;
    std::vector<std::string> examples; // one name per group, for the reason text
};

void classify(const json& list, Kept& kept)
{
    if (!list.is_array())
        return;
    for (const json& entry : list) {
        if (!entry.is_string())
            continue;
        const std::string name = lower(entry.get<std::string>());
        // Kept 16-bit by Envelope anyway, or not part of the language model.
        if (has(name, "vision") || has(name, "visual") || has(name, "multi_modal")
            || has(name, "mm_projector") || has(name, "lm_head") || has(name, "embed")
            || has(name, "router") || has(name, "norm") || has(name, "e_score_correction")
            || name == "gate" || name.ends_with(".gate") || name.ends_with("gate$")
            || has(name, "\\.gate(") || has(name, ".gate("))
            continue;
        const auto note = [&](bool& group) {
            if (!group)
                kept.examples.push_back(entry.get<std::string>());
            group = true;
        };
        if (has(name, "self_attn") || has(name, "attention") || has(name, ".attn") || has(name, "attn."))
            note(kept.attention);
        else if (has(name, "shared_expert"))
            note(kept.ffn);
        else if (has(name, "experts"))
            note(kept.experts);
        else if (has(name, "mlp") || has(name, "feed_forward") || has(name, "ffn"))
            note(kept.ffn);
    }
}

// A string key of `object`, or `fallback` when absent or not a string.
std::string stringOr(const json& object, const char* key, std::string fallback)
{
    return object.contains(key) && object.at(key).is_string() ? object.at(key).get<std::string>()
                                                              : std::move(fallback);
}

// An integer key of `object`, clamped to 0..1e6 (a group size, a bit width); 0 when absent or
// not an integer.
int smallInt(const json& object, const char* key)
{
    if (!object.is_object() || !object.contains(key))
        return 0;
    const json& v = object.at(key);
    if (v.is_number_unsigned())
        return int(std::min<std::uint64_t>(v.get<std::uint64_t>(), 1000000));
    if (v.is_number_integer())
        return int(std::clamp<std::int64_t>(v.get<std::int64_t>(), -1, 1000000));
    return 0;
}

// compressed-tensors: the first config group's weights scheme.
Expected<CheckpointFormats> compressedTensors(const json& q)
{
    CheckpointFormats f;
    const json* groups = q.contains("config_groups") ? &q.at("config_groups") : nullptr;
    if (!groups || !groups->is_object() || groups->empty())
        return Error { "quantization_config.config_groups", "is required for compressed-tensors (an object of schemes)" };
    const json& group = groups->begin().value();
    if (!group.is_object() || !group.contains("weights") || !group.at("weights").is_object())
        return Error { fmt::format("quantization_config.config_groups.{}.weights", groups->begin().key()),
            "is required (an object: num_bits, type, strategy)" };
    const json& w = group.at("weights");
    const int bits = smallInt(w, "num_bits");
    const std::string type = stringOr(w, "type", "int");
    const std::string strategy = stringOr(w, "strategy", "");
    const int groupSize = std::max(smallInt(w, "group_size"), 0);
    if (bits == 8 && type == "float")
        f.weightFormat = strategy == "block" ? WeightFormat::Fp8Block : WeightFormat::Fp8;
    else if (bits == 8 && type == "int")
        f.weightFormat = WeightFormat::Int8;
    else if (bits == 4 && type == "int") {
        f.weightFormat = WeightFormat::Int4;
        f.quantGroupSize = groupSize;
    } else if (bits == 4 && type == "float" && groupSize == 16)
        f.weightFormat = WeightFormat::Nvfp4;
    else if (bits == 4 && type == "float" && groupSize == 32)
        f.weightFormat = WeightFormat::Mxfp4;
    else
        return Error { fmt::format("quantization_config.config_groups.{}.weights", groups->begin().key()),
            fmt::format("num_bits {} of type \"{}\" (group_size {}): Envelope maps float 8 (fp8, "
                        "fp8-block), int 8, int 4 and float 4 in groups of 16 (nvfp4) or 32 (mxfp4)",
                bits, type, groupSize) };
    return f;
}

} // namespace

Expected<std::optional<CheckpointFormats>> checkpointFormats(std::string_view configJson)
{
    Expected<json> parsed = parseJsonObject(configJson, "config.json");
    if (!parsed)
        return parsed.error();
    const json& config = *parsed;
    const json* q = nullptr;
    std::string path = "quantization_config";
    if (config.contains("quantization_config"))
        q = &config.at("quantization_config");
    else if (config.contains("text_config") && config.at("text_config").is_object()
        && config.at("text_config").contains("quantization_config")) {
        q = &config.at("text_config").at("quantization_config");
        path = "text_config.quantization_config";
    }
    if (!q || q->is_null())
        return std::optional<CheckpointFormats> {};
    if (!q->is_object())
        return Error { path, "must be an object" };
    const std::string method = lower(stringOr(*q, "quant_method", ""));

    CheckpointFormats f;
    Kept kept;
    bool expertsOnly = false;
    if (method == "mxfp4") {
        // transformers' Mxfp4HfQuantizer swaps in MXFP4 only for the MoE experts (gpt-oss);
        // modules_to_not_convert lists the rest for other loaders.
        f.weightFormat = WeightFormat::Mxfp4;
        expertsOnly = true;
        classify(q->value("modules_to_not_convert", json::array()), kept);
    } else if (method == "fp8" || method == "fbgemm_fp8") {
        f.weightFormat = q->contains("weight_block_size") && !q->at("weight_block_size").is_null()
            ? WeightFormat::Fp8Block
            : WeightFormat::Fp8;
        classify(q->value("modules_to_not_convert", json::array()), kept);
    } else if (method == "compressed-tensors") {
        Expected<CheckpointFormats> ct = compressedTensors(*q);
        if (!ct)
            return ct.error();
        f = *ct;
        classify(q->value("ignore", json::array()), kept);
    } else if (method == "modelopt") {
        const std::string algo = lower(stringOr(*q, "quant_algo", ""));
        if (algo == "fp8")
            f.weightFormat = WeightFormat::Fp8;
        else if (algo == "nvfp4")
            f.weightFormat = WeightFormat::Nvfp4;
        else
            return Error { path + ".quant_algo",
                fmt::format("\"{}\": Envelope maps ModelOpt's FP8 and NVFP4", algo) };
        classify(q->value("exclude_modules", json::array()), kept);
    } else if (method == "awq" || method == "gptq") {
        const int bits = smallInt(*q, "bits");
        if (bits != 4 && bits != 8)
            return Error { path + ".bits", fmt::format("must be 4 or 8 for {}", method) };
        f.weightFormat = WeightFormat::Auto;
        f.weightBits = bits;
        f.quantGroupSize = std::max(smallInt(*q, "group_size"), 0); // -1: per channel
        classify(q->value("modules_to_not_convert", json::array()), kept);
    } else {
        return Error { path + ".quant_method",
            fmt::format("\"{}\" is not mapped (Envelope reads mxfp4, fp8, fbgemm_fp8, "
                        "compressed-tensors, modelopt, awq and gptq)",
                method) };
    }
    if (f.weightFormat != WeightFormat::Auto)
        f.weightBits = weightFormatBits(f.weightFormat);

    const WeightFormat stored = f.weightFormat;
    const std::string storedName = stored == WeightFormat::Auto
        ? fmt::format("{}-bit groups", f.weightBits)
        : std::string(weightFormatId(stored));
    const std::string examples = kept.examples.empty()
        ? std::string()
        : fmt::format(" (kept 16-bit: {})", fmt::join(kept.examples, ", "));
    if (stored == WeightFormat::Auto && (expertsOnly || kept.ffn || kept.experts))
        // A module group needs a format id: int4 is the 4-bit group layout; 8-bit groups are
        // counted as int8 (their fp16 scale and zero per group, 3 / g B a weight, left out).
        f.weightFormat = f.weightBits == 4 ? WeightFormat::Int4 : WeightFormat::Int8;
    const WeightFormat groupFormat = f.weightFormat;
    if (expertsOnly || (kept.ffn && !kept.experts)) {
        // Only the routed experts quantized: the rest in bf16.
        f.expertWeightFormat = groupFormat;
        f.weightFormat = WeightFormat::Bf16;
        f.weightBits = 16;
        if (!expertsOnly && !kept.attention)
            f.attentionWeightFormat = groupFormat;
        f.reason = fmt::format("{}: routed experts in {}, the rest in bf16{}", path, storedName, examples);
    } else if (kept.experts) {
        f.expertWeightFormat = WeightFormat::Bf16;
        if (kept.attention)
            f.attentionWeightFormat = WeightFormat::Bf16;
        f.reason = fmt::format("{}: {} but the routed experts{}{}", path, storedName,
            kept.attention ? " and attention" : "", examples);
    } else if (kept.attention) {
        f.attentionWeightFormat = WeightFormat::Bf16;
        f.reason = fmt::format("{}: {} but attention in bf16{}", path, storedName, examples);
    } else {
        f.reason = fmt::format("{}: every linear layer in {}{}", path, storedName, examples);
    }
    return std::optional<CheckpointFormats>(std::move(f));
}

void applyCheckpointFormats(ServingConfig& serving, const CheckpointFormats& f)
{
    serving.weightFormat = f.weightFormat;
    serving.weightBits = f.weightBits;
    if (f.quantGroupSize > 0)
        serving.quantGroupSize = f.quantGroupSize;
    serving.attentionWeightFormat = f.attentionWeightFormat;
    serving.expertWeightFormat = f.expertWeightFormat;
}

std::string servingFormatsText(const CheckpointFormats& f)
{
    ServingConfig serving;
    applyCheckpointFormats(serving, f);
    return servingWeightFormatText(serving);
}

nlohmann::ordered_json checkpointServingKeys(const CheckpointFormats& f)
{
    nlohmann::ordered_json out;
    out["weight_format"] = std::string(weightFormatId(f.weightFormat));
    out["weight_bits"] = f.weightBits;
    if (f.quantGroupSize > 0)
        out["quant_group_size"] = f.quantGroupSize;
    if (f.attentionWeightFormat)
        out["attention_weight_format"] = std::string(weightFormatId(*f.attentionWeightFormat));
    if (f.expertWeightFormat)
        out["expert_weight_format"] = std::string(weightFormatId(*f.expertWeightFormat));
    return out;
}

} // namespace envelope
