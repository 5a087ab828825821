// Reading JSON objects field by field with errors that name the JSON path and the allowed range
// ("training.zero_stage: must be 0..3, got 5"). Internal to the core (exposes nlohmann::json):
// used by planio_read.cpp and presets.cpp.
//
//   FieldReader f(object, "training");
//   f.integer("zero_stage", config.zeroStage, 0, 3);
//   f.number("mfu", config.mfu, Range::above(0, 1));
//   if (auto error = f.finish()) return *error;   // first error, or an unknown key
//
// Absent keys leave the target unchanged (its default). After the first error every further
// call is a no-op, so the first problem in reading order is the one reported.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/expected.h"

namespace envelope {

// An allowed interval for a number. `minExclusive` makes the lower bound strict (> 0).
struct Range {
    double min = 0;
    double max = 0;
    bool minExclusive = false;

    static Range closed(double lo, double hi) { return { lo, hi, false }; }
    static Range above(double lo, double hi) { return { lo, hi, true }; }
    bool contains(double v) const;
    std::string describe() const; // "> 0 and <= 1", "0..3"
};

// Deepest nesting of objects and arrays parseJsonText accepts. Envelope's own files nest 4
// levels (plan > training > overhead > key), HF configs a few more (rope_scaling,
// quantization_config); 64 refuses only hostile files, and keeps every recursive walk of a
// parsed value (dump, FieldReader, the fuzzers' writers) far from the end of the stack.
constexpr int kMaxJsonDepth = 64;

// "5", "0.45", "\"3\" (a string)", "an object": how a JSON value is quoted in messages.
// Reads at most a few dozen bytes of the value, whatever its size.
std::string describeJson(const nlohmann::json& value);
// Compact JSON text of `value`, at most `maxBytes` bytes (cut at a UTF-8 boundary, ending in
// "..."), control characters escaped. Walks only as much of the value as it shows.
std::string shortJson(const nlohmann::json& value, std::size_t maxBytes = 40);
// Shortest text of a number for messages: 2.5e+09 -> "2.5e9", 8 -> "8".
std::string formatNumber(double v);
// `path` + "." + key, or key when path is empty.
std::string childPath(const std::string& path, const std::string& key);
// Parses JSON text: the one parser for plans, HF configs and preset files. Refuses nesting
// deeper than kMaxJsonDepth and a key given twice in one object ("cluster.gpus: is given twice
// ..."), and names the field whose value is not valid JSON (NaN, Infinity, 1e400) as well as the
// line and column. `path` prefixes every path.
Expected<nlohmann::json> parseJsonText(std::string_view text, const std::string& path = {});
// parseJsonText, refusing anything but an object: "<what> must be a JSON object".
Expected<nlohmann::json> parseJsonObject(std::string_view text, std::string_view what);

class FieldReader {
public:
    // Fails at once (finish() reports it) when `object` is not a JSON object.
    FieldReader(const nlohmann::json& object, std::string path);

    bool failed() const { return m_error.has_value(); }
    const std::string& path() const { return m_path; }
    std::string pathOf(const std::string& key) const { return childPath(m_path, key); }

    // Marks `key` as known and returns it, or nullptr when absent (or after an error).
    const nlohmann::json* get(const std::string& key);
    // Like get(), but an absent key is an error ("missing").
    const nlohmann::json* require(const std::string& key);
    // Records an error unless one is already recorded. Returns false for chaining.
    bool fail(std::string path, std::string message);
    void fail(const Error& error) { fail(error.path, error.message); }

    bool integer(const std::string& key, int& out, int min, int max);
    bool number(const std::string& key, double& out, Range range);
    // null or absent leaves std::nullopt.
    bool optionalNumber(const std::string& key, std::optional<double>& out, Range range);
    bool boolean(const std::string& key, bool& out);
    bool string(const std::string& key, std::string& out, bool allowEmpty = true);

    // The first error, or an error naming the first key no call asked for.
    std::optional<Error> finish();

private:
    const nlohmann::json& m_object;
    std::string m_path;
    std::vector<std::string> m_known;
    std::optional<Error> m_error;
};

// Checks an already-extracted value; used by FieldReader and for array elements.
std::optional<Error> readInteger(
    const nlohmann::json& v, const std::string& path, int min, int max, int& out);
std::optional<Error> readNumber(
    const nlohmann::json& v, const std::string& path, Range range, double& out);

} // namespace envelope
