// Which sections a report prints: chosen with --sections, or read from the plan's own keys.
#include <nlohmann/json.hpp>

#include "report/textreport.h"

namespace envelope::report {
namespace {

bool startsWith(std::string_view text, std::string_view prefix)
{
    return text.substr(0, prefix.size()) == prefix;
}

Error sectionsError(std::string message)
{
    return Error { "--sections",
        std::move(message) + "; allowed: " + std::string(kReportSectionNames) };
}

} // namespace

Expected<ReportSections> parseReportSections(std::string_view list)
{
    ReportSections s { false, false, false, false };
    bool any = false;
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        std::string_view name = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        while (!name.empty() && name.front() == ' ')
            name.remove_prefix(1);
        while (!name.empty() && name.back() == ' ')
            name.remove_suffix(1);
        if (name == "training")
            s.training = true;
        else if (name == "compute")
            s.compute = true;
        else if (name == "serving")
            s.serving = true;
        else if (name == "rl")
            s.rl = true;
        else
            return sectionsError("unknown section \"" + std::string(name) + "\"");
        any = true;
    }
    if (!any)
        return sectionsError("name at least one section");
    return s;
}

ReportSections planSections(std::string_view planJson)
{
    const nlohmann::json plan = nlohmann::json::parse(planJson, nullptr, false);
    if (!plan.is_object())
        return {};
    ReportSections s;
    s.training = s.compute = plan.contains("training");
    s.serving = plan.contains("serving");
    s.rl = plan.contains("rl");
    if (!s.training && !s.serving && !s.rl)
        s.training = s.compute = true;
    return s;
}

bool warningShown(std::string_view warning, const ReportSections& sections)
{
    // planWarnings() (plan/validate.cpp) opens each warning with the field it is about.
    if (startsWith(warning, "serving."))
        return sections.serving;
    if (startsWith(warning, "rl.") || startsWith(warning, "the RL pools"))
        return sections.rl;
    if (startsWith(warning, "training.") || startsWith(warning, "the model's"))
        return sections.training || sections.compute;
    return true;
}

} // namespace envelope::report
