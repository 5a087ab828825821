// Preset library: models, GPUs and precision recipes, loaded from JSON (presets/*.json,
// embedded in the binary) and overridable by files in the user's config folder.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "hardware/hardware.h"
#include "kernels/kerneltable.h"
#include "model/model.h"
#include "plan/engine.h"
#include "plan/framework.h"
#include "plan/recipe.h"

namespace envelope {

struct ModelPreset {
    std::string id;           // "llama-2-7b"
    std::string source;       // model card / config.json it follows
    double publishedParams = 0;        // total as published (0 = unknown)
    double publishedActiveParams = 0;  // MoE active as published (0 = unknown / dense)
    ModelArch arch;
};

struct GpuPreset {
    std::string id;      // "h100-sxm"
    std::string source;  // vendor datasheet
    Gpu gpu;
};

struct RecipePreset {
    std::string id;  // "bf16-mixed-16"
    Recipe recipe;
};

struct PresetLibrary {
    std::vector<ModelPreset> models;
    std::vector<GpuPreset> gpus;
    std::vector<RecipePreset> recipes;
    std::vector<FrameworkProfile> frameworks;  // presets/frameworks.json
    std::vector<EngineProfile> engines;        // presets/engines.json
    std::string defaultPlanJson;  // presets/default-plan.json
    // Measured kernel tables by GPU id (presets/kernels/*.json); GPU presets point at theirs.
    std::vector<std::shared_ptr<const KernelTable>> kernels;

    const ModelPreset* findModel(std::string_view id) const;
    const GpuPreset* findGpu(std::string_view id) const;
    const RecipePreset* findRecipe(std::string_view id) const;
    const FrameworkProfile* findFramework(std::string_view id) const;
    const EngineProfile* findEngine(std::string_view id) const;
    std::shared_ptr<const KernelTable> findKernels(std::string_view id) const;
    std::string kernelIds() const; // "a100-80gb, h100-sxm, ..." for messages
};

// The presets compiled into the binary (presets/*.json). Errors only if the embedded data is
// malformed, which a test rules out.
Expected<PresetLibrary> builtinPresets();

// Adds or replaces (by id) entries from a user preset file: a JSON document with any of the keys
// "models", "gpus", "recipes" in the same form as the built-in files. `origin` names the file in
// errors.
std::optional<Error> mergePresetFile(PresetLibrary& library, std::string_view jsonText,
                                     std::string_view origin);

}  // namespace envelope
