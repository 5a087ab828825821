#include "plan/setpath.h"

#include <fmt/format.h>

#include "base/json_fields.h"
#include "base/text.h"
#include "base/utf8.h"

namespace envelope {

std::optional<Error> applySets(nlohmann::json& plan, const std::vector<std::string>& sets)
{
    if (!plan.is_object())
        return Error { "", "the plan must be a JSON object" };
    for (const std::string& set : sets) {
        const std::size_t eq = set.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error { "--set", fmt::format("expected PATH=VALUE, got \"{}\"", set) };
        // A JSON document holds only UTF-8; writing the plan would throw on anything else.
        if (!isValidUtf8(set))
            return Error { "--set", fmt::format("is not valid UTF-8: \"{}\"", printable(set, 200)) };
        const std::string path = set.substr(0, eq);
        const std::string valueText = set.substr(eq + 1);
        nlohmann::json value = nlohmann::json::parse(valueText, nullptr, false);
        if (value.is_discarded())
            value = valueText; // a bare word: a preset id, an enum value
        std::vector<std::string> parts;
        std::size_t start = 0;
        while (true) {
            const std::size_t dot = path.find('.', start);
            parts.push_back(path.substr(start, dot - start));
            if (dot == std::string::npos)
                break;
            start = dot + 1;
        }
        nlohmann::json* node = &plan;
        std::string walked;
        for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
            if (parts[i].empty())
                return Error { "--set " + path, "empty key in the path" };
            walked = childPath(walked, parts[i]);
            nlohmann::json& next = (*node)[parts[i]];
            if (next.is_null())
                next = nlohmann::json::object();
            else if (next.is_string() && walked == "model")
                next = nlohmann::json { { "preset", next.get<std::string>() } };
            if (!next.is_object())
                return Error { walked,
                    fmt::format("is {}, not an object, so --set {} cannot reach into it",
                        describeJson(next), path) };
            node = &next;
        }
        if (parts.back().empty())
            return Error { "--set " + path, "empty key in the path" };
        (*node)[parts.back()] = std::move(value);
    }
    return std::nullopt;
}

Expected<std::string> applySetsToText(
    std::string_view planText, const std::vector<std::string>& sets)
{
    Expected<nlohmann::json> plan = parseJsonText(planText);
    if (!plan)
        return plan.error();
    if (std::optional<Error> error = applySets(plan.value(), sets))
        return *error;
    return plan->dump(2) + "\n";
}

} // namespace envelope
