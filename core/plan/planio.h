// Reading and writing plan JSON (design.md, "envelope.plan" version 1) and the result JSON
// ("envelope.result" version 1). Errors name the JSON path and the allowed range.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "plan/plan.h"
#include "plan/presets.h"
#include "result/result.h"

namespace envelope {

// Reads a file named in a plan (an hf_config path, already resolved against the plan's folder).
// Returns the text or an error message. The core itself does no file I/O.
using FileReader = std::function<Expected<std::string>(const std::string& path)>;

// Returns the config.json text of a Hugging Face Hub id ("OWNER/NAME[@REVISION]") named in a
// plan, or an error message (the app's own cache and settings: the core does no network I/O).
using HubReader = std::function<Expected<std::string>(const std::string& id)>;

struct ReadOptions {
    FileReader readFile; // needed only for {"hf_config": ...}; may be empty
    std::string baseDir; // folder of the plan file, for relative hf_config paths
    HubReader readHub;   // needed only for {"hf_id": ...}; may be empty
};

// Parses, resolves against `presets` and validates. Unknown keys, wrong types, out-of-range or
// non-finite values and newer versions are errors naming the field.
Expected<Plan> readPlan(
    std::string_view jsonText, const PresetLibrary& presets, const ReadOptions& options = {});

// Validates a plan built in code (the UI's edits). Same rules and messages as readPlan,
// including the cross-field checks (gpus a multiple of tp x pp x cp, ep divides the
// data-parallel size and the experts, tp divides the heads, pp <= layers, ...).
std::optional<Error> validatePlan(const Plan& plan);

// Combinations that are legal but probably not meant (tp splits the KV heads unevenly, the
// sequence is longer than the model's positions, RL pools exceed the cluster, ...), one
// sentence each. The CLI prints them with the result; docs/plan-format.md lists them.
std::vector<std::string> planWarnings(const Plan& plan);

// Canonical JSON text (2-space indent, every section written); readPlan(writePlan(p)) == p.
// Choices are written the way they were made: a GpuChoice or RecipeChoice with a presetId is
// written as the id alone, a ModelChoice by its form (Preset: the id; PresetOverrides: the id
// plus overridesJson; HfConfig: the path; Params / Architecture: the resolved arch). So code
// that edits a resolved figure must also change the choice (clear presetId, switch the model
// form), or the edit is not saved. ActivationModel::bytesPerSbhPerLayer is written only for the
// SimpleSbh kind.
std::string writePlan(const Plan& plan);

// The model object as `envelope-cli import-hf` prints it: a full architecture object.
std::string writeArchitecture(const ModelArch& arch);

// Sets serving.engineProfile from the presets: the engine's version row nearest to
// serving.engineVersion (the highest not above it, the lowest when it is older than every row,
// the engine's default_version when it is empty). readPlan does this; an edit of the engine or
// its version calls it again.
void resolveServingEngine(const PresetLibrary& presets, ServingConfig& serving);

// Result JSON ("envelope.result" v1): every key in design.md, bytes as integers.
std::string writeResult(const Plan& plan, const Estimate& estimate);

} // namespace envelope
