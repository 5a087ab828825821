#include "base/json_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/text.h"

namespace envelope {
namespace {

std::string typeName(const nlohmann::json& v)
{
    switch (v.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::boolean:
        return "a boolean";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::object:
        return "an object";
    default:
        return "a number";
    }
}

} // namespace

bool Range::contains(double v) const
{
    if (!std::isfinite(v))
        return false;
    if (minExclusive ? v <= min : v < min)
        return false;
    return v <= max;
}

std::string Range::describe() const
{
    if (minExclusive)
        return fmt::format("> {} and <= {}", formatNumber(min), formatNumber(max));
    return fmt::format("{}..{}", formatNumber(min), formatNumber(max));
}

std::string formatNumber(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "infinity" : "-infinity";
    if (v == std::floor(v) && std::fabs(v) < 1e7)
        return fmt::format("{:.0f}", v);
    // The shortest %g text that reads back as v: 85520809984, 2.5e+09, 0.45.
    std::string text;
    for (int precision = 1; precision <= 17; ++precision) {
        text = fmt::format("{:.{}g}", v, precision);
        if (std::strtod(text.c_str(), nullptr) == v)
            break;
    }
    // 2.5e+09 -> 2.5e9, 1e-05 -> 1e-5: the way people write them in JSON.
    const auto e = text.find('e');
    if (e != std::string::npos) {
        std::string mantissa = text.substr(0, e);
        std::string exponent = text.substr(e + 1);
        bool negative = false;
        if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) {
            negative = exponent[0] == '-';
            exponent.erase(0, 1);
        }
        exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
        text = mantissa + "e" + (negative ? "-" : "") + exponent;
    }
    return text;
}

namespace {

// Appends a compact JSON text of `value` to `out`, stopping once `out` passes `maxBytes` (the
// caller cuts it): a value may be megabytes long, and only its first few dozen bytes are shown.
void appendBounded(const nlohmann::json& value, std::string& out, std::size_t maxBytes)
{
    if (out.size() > maxBytes)
        return;
    switch (value.type()) {
    case nlohmann::json::value_t::array: {
        out += '[';
        bool first = true;
        for (const nlohmann::json& item : value) {
            if (out.size() > maxBytes)
                return;
            out += first ? "" : ",";
            first = false;
            appendBounded(item, out, maxBytes);
        }
        out += ']';
        return;
    }
    case nlohmann::json::value_t::object: {
        out += '{';
        bool first = true;
        for (const auto& [key, item] : value.items()) {
            if (out.size() > maxBytes)
                return;
            out += first ? "" : ",";
            first = false;
            out += nlohmann::json(std::string(utf8Prefix(key, maxBytes)))
                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            out += ':';
            appendBounded(item, out, maxBytes);
        }
        out += '}';
        return;
    }
    case nlohmann::json::value_t::string:
        // Only the shown prefix is copied and escaped, never the whole string.
        out += nlohmann::json(
            std::string(utf8Prefix(value.get_ref<const std::string&>(), maxBytes)))
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
    default:
        out += value.dump(); // numbers as written: 4000000000000000000, 1e12 as 1000000000000.0
        return;
    }
}

} // namespace

std::string shortJson(const nlohmann::json& value, std::size_t maxBytes)
{
    std::string text;
    appendBounded(value, text, maxBytes + 4);
    if (text.size() <= maxBytes)
        return printable(text);
    return std::string(utf8Prefix(text, maxBytes - 3)) + "...";
}

std::string describeJson(const nlohmann::json& value)
{
    if (value.is_number())
        return formatNumber(value.get<double>());
    if (value.is_array() || value.is_object())
        return typeName(value);
    const std::string text = shortJson(value, 40);
    if (value.is_string())
        return text + " (a string)";
    return text;
}

std::string childPath(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

namespace {

// Where the parser is, for messages: one frame per open object or array. The parser callback
// sees keys and values in order, so the innermost frame's key (or element index) names the
// value being read when an error strikes.
struct ParseFrame {
    bool object = false;
    std::vector<std::string> keys; // keys seen so far, to refuse duplicates
    std::string key; // current key (objects)
    long index = -1; // current element (arrays)
};

struct ParseStop {
    Error error;
};

std::string framePath(const std::vector<ParseFrame>& frames, const std::string& base, bool next)
{
    std::string path = base;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const ParseFrame& f = frames[i];
        if (f.object) {
            if (f.key.empty() && i + 1 == frames.size())
                break;
            path = childPath(path, f.key);
        } else {
            // An error inside an array is at the element after the last complete one.
            const long index = f.index + (next && i + 1 == frames.size() ? 1 : 0);
            if (index >= 0)
                path += fmt::format("[{}]", index);
        }
    }
    return path;
}

} // namespace

Expected<nlohmann::json> parseJsonText(std::string_view text, const std::string& path)
{
    std::vector<ParseFrame> frames;
    using Event = nlohmann::json::parse_event_t;
    const auto elementStarts = [&frames] {
        if (!frames.empty() && !frames.back().object)
            ++frames.back().index;
    };
    const nlohmann::json::parser_callback_t callback
        = [&](int, Event event, nlohmann::json& parsed) {
              switch (event) {
              case Event::object_start:
              case Event::array_start:
                  elementStarts();
                  if (frames.size() >= static_cast<std::size_t>(kMaxJsonDepth))
                      throw ParseStop { Error { framePath(frames, path, false),
                          fmt::format("nested more than {} levels deep; plans, configs and "
                                      "presets need a handful",
                              kMaxJsonDepth) } };
                  frames.push_back(ParseFrame { event == Event::object_start, {}, {}, -1 });
                  break;
              case Event::key: {
                  ParseFrame& top = frames.back();
                  top.key = parsed.get<std::string>();
                  if (std::find(top.keys.begin(), top.keys.end(), top.key) != top.keys.end())
                      throw ParseStop { Error { framePath(frames, path, false),
                          "is given twice in the same object; give each key once" } };
                  top.keys.push_back(top.key);
                  break;
              }
              case Event::value:
                  elementStarts();
                  break;
              case Event::object_end:
              case Event::array_end:
                  frames.pop_back();
                  break;
              }
              return true;
          };
    try {
        return nlohmann::json::parse(text.begin(), text.end(), callback);
    } catch (const ParseStop& stop) {
        return stop.error;
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();
        // "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at ..."
        const auto bracket = what.find("] ");
        if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos)
            what.erase(0, bracket + 2);
        if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
            what = "the text is empty";
        // NaN, Infinity and 1e400 are errors of a value: name its field, not only the column.
        return Error { framePath(frames, path, true), "not valid JSON: " + what };
    }
}

std::optional<Error> readInteger(
    const nlohmann::json& v, const std::string& path, int min, int max, int& out)
{
    const std::string range = fmt::format("must be {}..{}", min, max);
    if (!v.is_number())
        return Error { path, fmt::format("{}, got {}", range, describeJson(v)) };
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d))
        return Error { path,
            fmt::format("must be a whole number {}..{}, got {}", min, max, describeJson(v)) };
    if (d < min || d > max)
        return Error { path, fmt::format("{}, got {}", range, describeJson(v)) };
    out = static_cast<int>(d);
    return std::nullopt;
}

std::optional<Error> readNumber(
    const nlohmann::json& v, const std::string& path, Range range, double& out)
{
    if (!v.is_number() || !range.contains(v.get<double>()))
        return Error { path, fmt::format("must be {}, got {}", range.describe(), describeJson(v)) };
    out = v.get<double>();
    return std::nullopt;
}

FieldReader::FieldReader(const nlohmann::json& object, std::string path)
    : m_object(object)
    , m_path(std::move(path))
{
    if (!m_object.is_object())
        fail(m_path, fmt::format("must be a JSON object, got {}", describeJson(m_object)));
}

const nlohmann::json* FieldReader::get(const std::string& key)
{
    m_known.push_back(key);
    if (m_error)
        return nullptr;
    const auto it = m_object.find(key);
    return it == m_object.end() ? nullptr : &*it;
}

const nlohmann::json* FieldReader::require(const std::string& key)
{
    const nlohmann::json* v = get(key);
    if (!v)
        fail(pathOf(key), "is required");
    return v;
}

bool FieldReader::fail(std::string path, std::string message)
{
    if (!m_error)
        m_error = Error { std::move(path), std::move(message) };
    return false;
}

bool FieldReader::integer(const std::string& key, int& out, int min, int max)
{
    const nlohmann::json* v = get(key);
    if (!v)
        return !m_error;
    if (auto e = readInteger(*v, pathOf(key), min, max, out))
        return fail(*e), false;
    return true;
}

bool FieldReader::number(const std::string& key, double& out, Range range)
{
    const nlohmann::json* v = get(key);
    if (!v)
        return !m_error;
    if (auto e = readNumber(*v, pathOf(key), range, out))
        return fail(*e), false;
    return true;
}

bool FieldReader::optionalNumber(const std::string& key, std::optional<double>& out, Range range)
{
    const nlohmann::json* v = get(key);
    if (!v || v->is_null())
        return !m_error;
    double value = 0;
    if (auto e = readNumber(*v, pathOf(key), range, value)) {
        fail(e->path, e->message + " (or null)");
        return false;
    }
    out = value;
    return true;
}

bool FieldReader::boolean(const std::string& key, bool& out)
{
    const nlohmann::json* v = get(key);
    if (!v)
        return !m_error;
    if (!v->is_boolean())
        return fail(pathOf(key), "must be true or false, got " + describeJson(*v));
    out = v->get<bool>();
    return true;
}

bool FieldReader::string(const std::string& key, std::string& out, bool allowEmpty)
{
    const nlohmann::json* v = get(key);
    if (!v)
        return !m_error;
    if (!v->is_string())
        return fail(pathOf(key), "must be a string, got " + describeJson(*v));
    if (!allowEmpty && v->get_ref<const std::string&>().empty())
        return fail(pathOf(key), "must not be empty");
    out = v->get<std::string>();
    return true;
}

std::optional<Error> FieldReader::finish()
{
    if (m_error)
        return m_error;
    for (const auto& [key, value] : m_object.items()) {
        if (std::find(m_known.begin(), m_known.end(), key) != m_known.end())
            continue;
        std::string message = "unknown key";
        // Unknown keys are usually typos.
        const std::string best = nearestName(key, m_known);
        if (!best.empty())
            message += " (did you mean \"" + best + "\"?)";
        else {
            std::vector<std::string> known = m_known;
            std::sort(known.begin(), known.end());
            known.erase(std::unique(known.begin(), known.end()), known.end());
            message += fmt::format(" (known keys: {})", fmt::join(known, ", "));
        }
        return Error { pathOf(key), message };
    }
    return std::nullopt;
}

Expected<nlohmann::json> parseJsonObject(std::string_view text, std::string_view what)
{
    Expected<nlohmann::json> parsed = parseJsonText(text);
    if (!parsed)
        return parsed.error();
    if (!parsed->is_object())
        return Error { "", fmt::format("{} must be a JSON object", what) };
    return parsed;
}

} // namespace envelope
