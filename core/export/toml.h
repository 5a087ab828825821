// A TOML subset reader for torchtitan job files (internal to core/export; exposes nlohmann).
//
// Reads what job configs use: comments, [table] and [dotted.table] headers, bare or quoted keys
// (dotted keys too), and values that are basic or literal strings, integers (with _), floats,
// booleans and one-line arrays of those. Anything else (inline tables, dates, multi-line
// strings) is an error naming the line, never a silent skip.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "base/expected.h"

namespace envelope::exportdetail {

Expected<nlohmann::json> parseToml(std::string_view text);

} // namespace envelope::exportdetail
