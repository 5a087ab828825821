// Shared by the three importers (internal to core/export).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "export/export.h"

namespace envelope::exportdetail {

// What a warning may echo of the user's input: 80 bytes at most, control characters escaped
// (a 60 MB flag once made a 60 MB warning line).
inline std::string shortText(std::string_view text)
{
    return printable(text, 80);
}

// `items` joined by `separator`, each shortened, at most 20 of them and then "and N more".
inline std::string shortList(const std::vector<std::string>& items, std::string_view separator)
{
    constexpr std::size_t kShown = 20;
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < kShown; ++i)
        out += (i ? std::string(separator) : std::string()) + shortText(items[i]);
    if (items.size() > kShown)
        out += std::string(separator) + "and " + std::to_string(items.size() - kShown) + " more";
    return out;
}

// The plan being built: presets/default-plan.json with the model, name and cluster set.
struct PlanDraft {
    nlohmann::json plan;
    std::vector<std::string> warnings;
    nlohmann::json& training() { return plan["training"]; }
};
Expected<PlanDraft> startDraft(
    Engine engine, const PresetLibrary& presets, const ImportOptions& options);

// The draft as plan text. Bytes that are not UTF-8 (a file name, a TOML string) are written as
// U+FFFD: nlohmann::json throws on them otherwise.
inline std::string planText(const PlanDraft& draft)
{
    return draft.plan.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The draft's model when it resolves (a preset id, a preset with overrides, a full
// architecture), and its layer count (for per-stage layer counts).
std::optional<ModelArch> draftArch(const PlanDraft& draft, const PresetLibrary& presets);
std::optional<int> presetLayers(const PlanDraft& draft, const PresetLibrary& presets);

// A positive integer from a JSON value (an integer, or a float with no fraction).
std::optional<long long> asCount(const nlohmann::json& v);

Expected<ImportedPlan> importDeepSpeed(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options);
Expected<ImportedPlan> importTorchTitan(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options);
Expected<ImportedPlan> importMegatron(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options);

// Megatron's --pipeline-model-parallel-layout (megatron/core/transformer/
// pipeline_parallel_layer_layout.py, parse_str_to_list): commas dropped, "(...)*n" and "x*n"
// unrolled, "|" separates the pp x vpp stages in model order, each a string of E (embedding),
// t (decoder layer), m (MTP layer) and L (loss). Returns each stage's characters; an error names
// the flag and what is wrong (an unknown character, an unroll beyond kMaxLayoutChars).
inline constexpr std::size_t kMaxLayoutChars = 1'000'000;
Expected<std::vector<std::string>> parseMegatronLayout(std::string_view layout);

} // namespace envelope::exportdetail
