// Shared by the three importers (internal to core/export).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/export.h"

namespace envelope::exportdetail {

// The plan being built: presets/default-plan.json with the model, name and cluster set.
struct PlanDraft {
    nlohmann::json plan;
    std::vector<std::string> warnings;
    nlohmann::json& training() { return plan["training"]; }
};
Expected<PlanDraft> startDraft(
    Engine engine, const PresetLibrary& presets, const ImportOptions& options);

// The layer count of the draft's model when it is a preset id (for per-stage layer counts).
std::optional<int> presetLayers(const PlanDraft& draft, const PresetLibrary& presets);

// A positive integer from a JSON value (an integer, or a float with no fraction).
std::optional<long long> asCount(const nlohmann::json& v);

Expected<ImportedPlan> importDeepSpeed(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options);
Expected<ImportedPlan> importTorchTitan(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options);
Expected<ImportedPlan> importMegatron(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options);

} // namespace envelope::exportdetail
