// A TOML subset reader for torchtitan job files (internal to core/export; exposes nlohmann).
//
// Reads what job configs use: comments, [table] and [dotted.table] headers, bare or quoted keys
// (dotted keys too), and values that are basic or literal strings, integers (with _), floats,
// booleans and arrays of those, nested or not, on one line or over several (with comments and a
// trailing comma between the values, as torchtitan's module_fqns_per_model_part is often
// written). Anything else (inline tables, dates, multi-line strings) is an error naming the
// line, never a silent skip.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "base/expected.h"

namespace envelope::exportdetail {

Expected<nlohmann::json> parseToml(std::string_view text);

} // namespace envelope::exportdetail
