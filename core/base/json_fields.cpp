#include "base/json_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace envelope {
namespace {

// Edit distance, for "did you mean" on unknown keys (typos are the usual cause).
std::size_t editDistance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({ row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]) });
            diagonal = above;
        }
    }
    return row[b.size()];
}

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

std::string describeJson(const nlohmann::json& value)
{
    if (value.is_number())
        return formatNumber(value.get<double>());
    std::string text = value.dump();
    if (text.size() > 40)
        text = text.substr(0, 37) + "...";
    if (value.is_string())
        return text + " (a string)";
    if (value.is_boolean() || value.is_null())
        return text;
    return typeName(value);
}

std::string childPath(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

Expected<nlohmann::json> parseJsonText(std::string_view text, const std::string& path)
{
    try {
        return nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();
        // "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at ..."
        const auto bracket = what.find("] ");
        if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos)
            what.erase(0, bracket + 2);
        if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
            what = "the text is empty";
        return Error { path, "not valid JSON: " + what };
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
        std::string best;
        std::size_t bestDistance = std::numeric_limits<std::size_t>::max();
        for (const std::string& known : m_known) {
            const std::size_t d = editDistance(key, known);
            if (d < bestDistance) {
                bestDistance = d;
                best = known;
            }
        }
        if (!best.empty() && bestDistance <= std::max<std::size_t>(2, key.size() / 3))
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

} // namespace envelope
