// envelope-cli: the estimator for scripts (design.md, "CLI"). Links the core only.
//
//   envelope-cli estimate PLAN.json [--format json|text|markdown] [--units gb|gib]
//                [--sections training,compute,serving,rl]
//   envelope-cli explain PLAN.json [--units gb|gib] [--filter PREFIX]
//   envelope-cli import-hf CONFIG.json|OWNER/NAME[@REVISION] [--model-only] [--offline]
//   envelope-cli presets [models|gpus|recipes|frameworks|engines]
//   envelope-cli calibrate PLAN.json --peak-gib X ...   (cmd_calibrate.cpp)
//   envelope-cli export|import|import-hf|compare ...   (cmd_export.cpp, cmd_import.cpp,
//                cmd_importhf.cpp, cmd_compare.cpp)
//   envelope-cli help [COMMAND]   envelope-cli --version
// estimate, explain, export and compare take --set PATH=VALUE (repeatable).
//
// Exit status: kExitStatusHelp (planload.h): 0 success, 1 error, 2 bad input, 3 no feasible plan.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd_solve.h"
#include "cmd_calibrate.h"
#include "base/text.h"
#include "estimate/estimate.h"
#include "io/files.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "report/textreport.h"
#include "serving/load.h"
#include "whatif/whatif.h"

#include "cmd_compare.h"
#include "cmd_completion.h"
#include "cmd_export.h"
#include "cmd_import.h"
#include "cmd_importhf.h"
#include "planload.h"

namespace envelope::cli {
namespace {

using io::loadPresets;
using io::readTextFile;
using report::formatExplanations;
using report::formatReport;
using report::parseReportSections;
using report::ReportFormat;
using report::ReportSections;
using report::humanBytes;

constexpr int kOk = 0;
constexpr int kFailure = 1;
constexpr int kBadPlan = 2;

int fail(const std::string& message)
{
    std::cerr << "envelope-cli: " << message << "\n";
    return kFailure;
}

// `sectionsText`: --sections as given, empty when absent (then the plan's own keys decide).
int runEstimate(const std::string& path, const std::string& format, ByteUnits units,
    const std::vector<std::string>& sets, const std::optional<std::string>& sectionsText)
{
    const bool json = format == "json";
    std::optional<ReportSections> chosen;
    if (sectionsText) {
        if (json) {
            std::cerr << "envelope-cli: --sections: the result JSON always has every section "
                         "(design.md); use it with --format text or markdown\n";
            return kBadPlan;
        }
        Expected<ReportSections> parsed = parseReportSections(*sectionsText);
        if (!parsed) {
            std::cerr << "envelope-cli: " << parsed.error().toString() << "\n";
            return kBadPlan;
        }
        chosen = *parsed;
    }
    int status = kOk;
    std::optional<PlanFile> loaded = readPlanFile(path, sets, status);
    if (!loaded)
        return status;
    Estimate e = estimatePlan(loaded->plan, json);
    // What makes it fit (training.what_makes_it_fit): a bounded planner search, milliseconds,
    // run only for the training section and only when the plan does not fit.
    if (json || chosen.value_or(loaded->sections).training)
        attachWhatMakesItFit(loaded->plan, e, units);
    // Goodput under the SLO (serving.goodput_rps): a bisection of simulations, milliseconds, run
    // only for the serving section of a plan with a workload and an SLO.
    if (json || chosen.value_or(loaded->sections).serving)
        attachServingGoodput(loaded->plan, e);
    if (json)
        std::cout << writeResult(loaded->plan, e);
    else
        std::cout << formatReport(loaded->plan, e, units,
            format == "markdown" ? ReportFormat::Markdown : ReportFormat::Text,
            chosen.value_or(loaded->sections));
    return kOk;
}

// `envelope-cli help [COMMAND]`: the top help, or that subcommand's.
int runHelp(const CLI::App& app, const std::string& command)
{
    // App::help() would descend into the parsed `help` subcommand: ask the formatter directly.
    if (command.empty()) {
        std::cout << app.get_formatter()->make_help(
            &app, app.get_name(), CLI::AppFormatMode::Normal);
        return kOk;
    }
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == command) {
            std::cout << sub->help(app.get_name()); // "Usage: envelope-cli estimate ..."
            return kOk;
        }
        names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    std::cerr << "envelope-cli: help: unknown command \"" << command << "\"; commands: " << names
              << "\n";
    return kBadPlan;
}

// `filter`: keep only the figures whose name starts with it ("training.communication").
int runExplain(const std::string& path, ByteUnits units, const std::vector<std::string>& sets,
    const std::string& filter)
{
    int status = kOk;
    std::optional<PlanFile> loaded = readPlanFile(path, sets, status);
    if (!loaded)
        return status;
    Estimate e = estimatePlan(loaded->plan, true);
    std::erase_if(e.explain,
        [&](const Explanation& x) { return x.figure.compare(0, filter.size(), filter) != 0; });
    if (e.explain.empty())
        return fail("--filter: no figure starts with \"" + filter + "\"");
    std::cout << formatExplanations(loaded->plan, e, units);
    return kOk;
}

int runPresets(const std::string& kind)
{
    Expected<PresetLibrary> presets = loadPresets();
    if (!presets)
        return fail(presets.error().toString());
    const bool all = kind.empty();
    const auto section = [&](const char* name) {
        if (all)
            std::cout << (std::string(name) == "models" ? "" : "\n") << name << ":\n";
    };
    if (all || kind == "models") {
        section("models");
        for (const ModelPreset& m : presets->models) {
            const ParamCounts counts = countParameters(m.arch);
            std::string params = formatCount(counts.total) + " params";
            if (counts.active < counts.total)
                params += ", " + formatCount(counts.active) + " active";
            std::cout << fmt::format("{:<16} {} ({})\n", m.id, m.arch.name, params);
        }
    }
    if (all || kind == "gpus") {
        section("gpus");
        for (const GpuPreset& g : presets->gpus)
            std::cout << fmt::format("{:<16} {}: {} ({}), {:.0f} TFLOPS dense BF16\n", g.id,
                g.gpu.name, humanBytes(g.gpu.memoryBytes, ByteUnits::GiB),
                humanBytes(g.gpu.memoryBytes, ByteUnits::GB), g.gpu.bf16Flops / 1e12);
    }
    if (all || kind == "recipes") {
        section("recipes");
        for (const RecipePreset& r : presets->recipes)
            std::cout << fmt::format("{:<20} {}\n", r.id, r.recipe.name);
    }
    if (all || kind == "frameworks") {
        section("frameworks");
        for (const FrameworkProfile& f : presets->frameworks)
            std::cout << fmt::format("{:<20} {} (loss {}, selective {})\n", f.id, f.name,
                lossKindId(f.loss), selectivePolicyId(f.selective));
    }
    if (all || kind == "engines") {
        section("engines");
        for (const EngineProfile& e : presets->engines) {
            std::string versions;
            for (const EngineProfile& v : e.versions)
                versions += (versions.empty() ? "" : ", ") + v.version;
            std::cout << fmt::format("{:<20} {}{}\n", e.id, e.name,
                versions.empty() ? std::string()
                                 : fmt::format(" (versions {}; default {})", versions,
                                       e.defaultVersion));
        }
    }
    return kOk;
}

// The command `word` most likely meant: one it begins (at least 2 letters), else the nearest
// typo (base/text.h); empty when none is near.
std::string nearestCommand(const std::string& word, const std::vector<std::string>& names)
{
    if (word.size() >= 2)
        for (const std::string& name : names)
            if (name.starts_with(word))
                return name;
    return nearestName(word, names);
}

int run(int argc, char** argv)
{
    CLI::App app { std::string("Envelope: memory, throughput and cost of large-model training, RL "
                               "and serving jobs.\n")
        + kExitStatusHelp };
    app.name("envelope-cli");
    app.set_version_flag("--version", "envelope-cli " ENVELOPE_VERSION);
    app.require_subcommand(1);

    std::string planPath, format = "json", unitsText = "gb", kind, filter;
    std::vector<std::string> sets;

    CLI::App* estimateCmd
        = app.add_subcommand("estimate", "Estimate a plan (result JSON by default)");
    estimateCmd->add_option("PLAN", planPath, "plan JSON file")->required();
    estimateCmd->add_option("--format", format, "json, text or markdown")
        ->check(CLI::IsMember({ "json", "text", "markdown" }));
    estimateCmd->add_option("--units", unitsText, "byte units of text output: gb or gib");
    std::optional<std::string> sectionsText;
    estimateCmd->add_option("--sections", sectionsText,
        "text and markdown: the sections to print, comma-separated from training, compute, "
        "serving, rl (default: those the plan has keys for)");
    addSetOption(estimateCmd, sets);

    CLI::App* explainCmd
        = app.add_subcommand("explain", "Every figure with its formula and source");
    explainCmd->add_option("PLAN", planPath, "plan JSON file")->required();
    explainCmd->add_option("--units", unitsText, "byte units: gb or gib");
    addSetOption(explainCmd, sets);
    explainCmd->add_option("--filter", filter, "only figures whose name starts with PREFIX");

    ImportHfCommand importHfCommand;
    registerImportHf(app, importHfCommand);

    CLI::App* presetsCmd
        = app.add_subcommand("presets", "List preset ids with one-line descriptions");
    presetsCmd->add_option("KIND", kind, "models, gpus, recipes, frameworks or engines")
        ->check(CLI::IsMember({ "models", "gpus", "recipes", "frameworks", "engines" }));

    std::string helpCommand;
    CLI::App* helpCmd = app.add_subcommand("help", "Print this help, or a command's help");
    helpCmd->add_option("COMMAND", helpCommand, "a command name");

    CalibrateOptions calibrateOptions;
    CLI::App* calibrateCmd = registerCalibrate(app, calibrateOptions);

    const auto solveArgs = addSolveCommand(app);
    ExportCommand exportCommand;
    registerExport(app, exportCommand);
    ImportCommand importCommand;
    registerImport(app, importCommand);
    CompareCommand compareCommand;
    registerCompare(app, compareCommand);
    CompletionCommand completionCommand;
    registerCompletion(app, completionCommand);

    // An unknown command says so and names the nearest one (CLI11 would only say that the
    // argument was not expected).
    if (argc >= 2 && argv[1][0] != '-') {
        const std::string word = argv[1];
        std::vector<std::string> names;
        for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
            names.push_back(command->get_name());
        if (std::find(names.begin(), names.end(), word) == names.end()) {
            const std::string nearest = nearestCommand(word, names);
            std::cerr << "envelope-cli: unknown command \"" << word << "\""
                      << (nearest.empty() ? std::string() : "; did you mean \"" + nearest + "\"?")
                      << " (envelope-cli --help lists the commands)\n";
            return kFailure;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kOk : kFailure;
    }

    ByteUnits units = ByteUnits::GB;
    if (!parseByteUnits(unitsText, units))
        return fail("--units: must be gb or gib, got \"" + unitsText + "\"");

    if (*helpCmd)
        return runHelp(app, helpCommand);
    if (solveChosen(*solveArgs))
        return runSolve(*solveArgs);
    if (*exportCommand.command)
        return runExport(exportCommand);
    if (*importCommand.command)
        return runImport(importCommand);
    if (*compareCommand.command)
        return runCompare(compareCommand);
    if (*completionCommand.command)
        return runCompletion(app, completionCommand);
    if (*calibrateCmd)
        return runCalibrate(calibrateOptions);
    if (*estimateCmd)
        return runEstimate(planPath, format, units, sets, sectionsText);
    if (*explainCmd)
        return runExplain(planPath, units, sets, filter);
    if (*importHfCommand.command)
        return runImportHf(importHfCommand);
    return runPresets(kind);
}

} // namespace
} // namespace envelope::cli

int main(int argc, char** argv)
{
    // Never a crash: anything unexpected becomes a message and exit status 1.
    try {
        const int status = envelope::cli::run(argc, argv);
        // Every subcommand writes through std::cout: one check here catches a full disk, a
        // closed pipe or /dev/full for all of them, instead of exiting 0 with nothing written.
        std::cout.flush();
        if (!std::cout) {
            std::cerr << "envelope-cli: cannot write the output: " << std::strerror(errno) << "\n";
            return 1;
        }
        return status;
    } catch (const std::exception& e) {
        std::cerr << "envelope-cli: internal error: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "envelope-cli: internal error\n";
    }
    return 1;
}
