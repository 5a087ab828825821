// PLACEHOLDER until its owner lands the real implementation.
#include "presets.h"

namespace envelope {
const ModelPreset* PresetLibrary::findModel(std::string_view) const { return nullptr; }
const GpuPreset* PresetLibrary::findGpu(std::string_view) const { return nullptr; }
const RecipePreset* PresetLibrary::findRecipe(std::string_view) const { return nullptr; }
Expected<PresetLibrary> builtinPresets() { return PresetLibrary{}; }
std::optional<Error> mergePresetFile(PresetLibrary&, std::string_view, std::string_view) { return std::nullopt; }
}  // namespace envelope
