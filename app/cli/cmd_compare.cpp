// Plans side by side: one column per plan, a row per figure, deltas against the first plan.
// --set applies to every plan (compare one change across several plans).
#include "cmd_compare.h"

#include <filesystem>
#include <iostream>

#include "planload.h"
#include "report/compare.h"

namespace envelope::cli {

void registerCompare(CLI::App& app, CompareCommand& c)
{
    c.command = app.add_subcommand(
        "compare", "Plans side by side: a column per plan, deltas against the first");
    c.command->add_option("PLANS", c.plans, "two or more plan JSON files")
        ->required()
        ->expected(2, -1);
    c.command->add_option("--format", c.format, "text, markdown or json")
        ->check(CLI::IsMember({ "text", "markdown", "json" }));
    c.command->add_option("--units", c.units, "byte units of text output: gb or gib");
    addSetOption(c.command, c.sets);
}

int runCompare(const CompareCommand& c)
{
    ByteUnits units = ByteUnits::GB;
    if (!parseByteUnits(c.units, units)) {
        std::cerr << "envelope-cli: --units: must be gb or gib, got \"" << c.units << "\"\n";
        return kExitFailure;
    }
    std::vector<PlanFile> files;
    std::vector<Estimate> estimates;
    for (const std::string& path : c.plans) {
        int status = kExitOk;
        std::optional<PlanFile> loaded = readPlanFile(path, c.sets, status);
        if (!loaded)
            return status;
        files.push_back(std::move(*loaded));
    }
    for (const PlanFile& f : files)
        estimates.push_back(estimatePlan(f.plan, false));
    std::vector<report::ComparedPlan> compared;
    for (std::size_t i = 0; i < files.size(); ++i) {
        // Two files may hold plans with the same name; the file name tells columns apart.
        std::string label = files[i].plan.name;
        for (std::size_t j = 0; j < files.size(); ++j)
            if (j != i && files[j].plan.name == label)
                label = std::filesystem::path(c.plans[i]).filename().string();
        compared.push_back({ label, &files[i].plan, &estimates[i], files[i].sections });
    }
    const report::CompareFormat format = c.format == "json" ? report::CompareFormat::Json
        : c.format == "markdown"                            ? report::CompareFormat::Markdown
                                                            : report::CompareFormat::Text;
    std::cout << report::formatComparison(compared, format, units);
    return kExitOk;
}

} // namespace envelope::cli
