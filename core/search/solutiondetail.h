// Internals of the solution writers shared by solution.cpp (training) and solutionkinds.cpp
// (serving, RL): number formatting, the counts every solution starts with, `best`, and the
// text tables. Not part of the public core API.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/search.h"

namespace envelope::solutiondetail {

using ordered_json = nlohmann::ordered_json;

ordered_json integer(double v); // null when not finite
ordered_json real(double v); // null when not finite
ordered_json changesJson(const std::vector<FieldChange>& changes);

// format, version, goal, searched, evaluated, feasible, rejected, elapsed_s.
ordered_json tallyJson(const SearchTally& r);
// Appended last: "capped" and "cancelled" when true.
void stopFlags(ordered_json& j, const SearchTally& r);
std::string dump(const ordered_json& j);

// "Planner: GOAL" and "Searched N layouts in T s: F fit; rejected: ...".
std::string tallyText(const SearchTally& r, bool markdown);

// A table of rows under `header`, Markdown or aligned text.
std::string table(const std::vector<std::string>& header,
    const std::vector<std::vector<std::string>>& rows, bool markdown);

} // namespace envelope::solutiondetail
