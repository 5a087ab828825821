// `--set PATH=VALUE`: override one field of a plan document by its JSON path before the plan is
// read, so an override passes the same validation, with the same messages, as the file itself
// (`--set training.tp=8 --set gpu=h200`).
//
// VALUE is JSON when it parses as JSON (8, 0.45, true, null, "x", {"params": 7e9}), otherwise a
// string (h200). Missing objects on the path are created; a path through a preset id written as
// a string ("model": "llama-2-7b" with --set model.layers=16) turns it into
// {"preset": "llama-2-7b", "layers": 16}. An unknown key is left for readPlan to name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/expected.h"

namespace envelope {

// Applies each "PATH=VALUE" in order. Errors name the --set argument.
std::optional<Error> applySets(nlohmann::json& plan, const std::vector<std::string>& sets);

// The same on plan text; returns the edited document's text.
Expected<std::string> applySetsToText(
    std::string_view planText, const std::vector<std::string>& sets);

} // namespace envelope
