// envelope-cli solve PLAN.json --goal GOAL [--top K] [--fix PATH=VALUE]... [--max-gpus N]
//                   [--gpus-per-node N] [--max-ttft-s S] [--max-itl-s S]
//                   [--max-estimates N] [--timeout S]
//                   [--format json|text|markdown|csv] [--units gb|gib]
#include "cmd_solve.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plan/fields.h"
#include "plan/planio.h"
#include "planload.h"
#include "search/search.h"
#include "search/solution.h"

namespace envelope::cli {

struct SolveArgs {
    CLI::App* command = nullptr;
    std::string planPath;
    std::string goal;
    int top = 10;
    std::vector<std::string> fixes;
    int maxGpus = 0;
    int gpusPerNode = 0;
    double maxTtftS = 0, maxItlS = 0; // 0: the plan's serving.max_ttft_s / max_itl_s
    std::string format = "json";
    std::string units = "gb";
    std::vector<std::string> sets; // --set PATH=VALUE overrides of the plan file
    // Budgets (issue 26): generous enough that every preset's search finishes well inside them
    // (docs/reliability.md); a hostile plan (1,000 layers x accumulation 720,720) stops instead
    // of running for minutes, with the best layout found so far.
    long long maxEstimates = 20'000'000;
    double timeoutS = 600;
};

namespace {

constexpr int kOk = 0;
constexpr int kBadPlan = 2;
constexpr int kNoSolution = kExitNoSolution;

// CLI::Range lets NaN through (every comparison with it is false), and NaN read as "no limit".
const CLI::Validator kFinite(
    [](std::string& text) {
        const double v = std::strtod(text.c_str(), nullptr);
        return std::isfinite(v) ? std::string() : "must be a finite number, got " + text;
    },
    "FINITE");

// Why the search stopped early, or "" when it searched everything.
struct StopReason {
    std::atomic<bool> timedOut { false };
    std::string text(const SearchTally& r, const SolveArgs& args) const
    {
        if (timedOut && r.cancelled) // cancelled only by the timeout; finished in time otherwise
            return fmt::format("the search stopped at --timeout {} s", args.timeoutS);
        if (r.capped)
            return fmt::format("the search stopped after {} estimates (--max-estimates {})",
                r.estimates, args.maxEstimates);
        return {};
    }
};

} // namespace

std::shared_ptr<SolveArgs> addSolveCommand(CLI::App& app)
{
    auto args = std::make_shared<SolveArgs>();
    CLI::App* cmd = app.add_subcommand("solve",
        "Search every training, serving or RL layout for a goal (envelope.solution JSON by "
        "default)");
    args->command = cmd;
    cmd->add_option("PLAN", args->planPath, "plan JSON file")->required();
    cmd->add_option("--goal", args->goal,
           "training: min-gpus, max-throughput, min-cost, min-time, max-seq-len, "
           "max-micro-batch; serving: serving-max-throughput, serving-min-gpus, "
           "serving-max-goodput (needs serving.workload and serving.slo); RL: "
           "rl-max-steps-per-hour")
        ->required()
        ->check(CLI::IsMember({ "min-gpus", "max-throughput", "min-cost", "min-time", "max-seq-len",
            "max-micro-batch", "serving-max-throughput", "serving-min-gpus",
            "serving-max-goodput", "rl-max-steps-per-hour" }));
    cmd->add_option("--top", args->top, "candidates to list (default 10)")
        ->check(CLI::Range(1, 10000));
    cmd->add_option("--fix", args->fixes, "hold a field, e.g. training.tp=8 (repeatable)");
    cmd->add_option("--max-gpus", args->maxGpus, "largest GPU count to consider")
        ->check(CLI::Range(1, planfields::kMaxGpus)); // a plan's cluster.gpus bound
    cmd->add_option("--gpus-per-node", args->gpusPerNode, "GPUs per node")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--max-ttft-s", args->maxTtftS,
           "serving goals: time-to-first-token limit in seconds (default serving.max_ttft_s)")
        ->check(kFinite)
        ->check(CLI::Range(1e-6, 1e6));
    cmd->add_option("--max-itl-s", args->maxItlS,
           "serving goals: inter-token-latency limit in seconds (default serving.max_itl_s)")
        ->check(kFinite)
        ->check(CLI::Range(1e-6, 1e6));
    cmd->add_option("--max-estimates", args->maxEstimates,
           "stop after N estimates and show the best layout so far, exit 3 (default 20000000)")
        ->check(CLI::Range(1LL, 1'000'000'000'000LL));
    cmd->add_option("--timeout", args->timeoutS,
           "stop after S seconds and show the best layout so far, exit 3 (default 600)")
        ->check(kFinite)
        ->check(CLI::Range(0.001, 1e7));
    cmd->add_option("--format", args->format, "json, text, markdown or csv")
        ->check(CLI::IsMember({ "json", "text", "markdown", "csv" }));
    cmd->add_option("--units", args->units, "byte units of text output: gb or gib")
        ->check(CLI::IsMember({ "gb", "gib" }));
    addSetOption(cmd, args->sets);
    return args;
}

bool solveChosen(const SolveArgs& args)
{
    return args.command && args.command->parsed();
}

namespace {

// best.plan keeps the sections the input plan has, plus any the search changed: a training
// search of a training-only plan returns a training-only plan, not one whose default serving
// and RL sections then print figures nobody asked for (a 405B's "weights per GPU 1342 GB").
std::string keepInputSections(const std::string& solution, const report::ReportSections& input)
{
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(solution, nullptr, false);
    if (!j.is_object() || !j.contains("best") || !j["best"].is_object()
        || !j["best"].contains("plan") || !j["best"]["plan"].is_object())
        return solution;
    nlohmann::ordered_json& best = j["best"];
    const std::pair<const char*, bool> sections[]
        = { { "training", input.training || input.compute }, { "serving", input.serving },
              { "rl", input.rl } };
    for (const auto& [name, present] : sections) {
        if (present)
            continue;
        bool changed = false;
        if (best.contains("changes") && best["changes"].is_object())
            for (const auto& [path, value] : best["changes"].items())
                changed = changed || path.rfind(std::string(name) + ".", 0) == 0;
        if (!changed)
            best["plan"].erase(name);
    }
    return j.dump(2) + "\n";
}

// Prints the result in the chosen format; exit 0 when something is feasible and the search
// finished, 3 when nothing is feasible or a budget stopped it (the best so far is printed).
template <class Result>
int report(const SolveArgs& args, const Plan& plan, const Result& result, ByteUnits units,
    const report::ReportSections& sections, const StopReason& stop)
{
    if (args.format == "json")
        std::cout << keepInputSections(writeSolutionJson(plan, result), sections);
    else if (args.format == "csv")
        std::cout << writeSolutionCsv(result);
    else
        std::cout << writeSolutionText(plan, result, units, args.format == "markdown");
    const std::string stopped = stop.text(result, args);
    if (!stopped.empty()) {
        std::cerr << "envelope-cli: " << stopped << ": layouts were left unsearched; "
                  << (result.candidates.empty() ? "none of those searched fits"
                                                : "the best of those searched is shown")
                  << "\n";
        return kNoSolution;
    }
    if (result.candidates.empty()) {
        std::cerr << "envelope-cli: " << noSolutionMessage(plan, result, units) << "\n";
        return kNoSolution;
    }
    return kOk;
}

} // namespace

int runSolve(const SolveArgs& args)
{
    SearchOptions options;
    parseSearchGoal(args.goal, options.goal);
    options.top = args.top;
    options.maxGpus = args.maxGpus;
    options.gpusPerNode = args.gpusPerNode;
    options.keepAllFeasible = args.format == "csv";
    options.maxEstimates = args.maxEstimates;
    // The timeout and the progress line (searches over 1 s) ride on the search's progress
    // callback, called between layout groups.
    StopReason stop;
    std::atomic<bool> cancel { false };
    const auto start = std::chrono::steady_clock::now();
    std::atomic<long long> lastShownS { 0 };
    options.cancel = &cancel;
    options.progress = [&](double done) {
        const double s
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (s > args.timeoutS) {
            stop.timedOut = true;
            cancel = true;
        }
        if (s >= 1.0 && static_cast<long long>(s) > lastShownS) {
            lastShownS = static_cast<long long>(s);
            std::cerr << fmt::format("solve: {:.0f}% searched, {:.0f} s\n", 100 * done, s);
        }
    };
    if (args.maxTtftS > 0)
        options.maxTtftS = args.maxTtftS;
    if (args.maxItlS > 0)
        options.maxItlS = args.maxItlS;
    for (const std::string& fix : args.fixes) {
        Expected<FixedField> f = parseFixedField(fix);
        if (!f) {
            // A field's error gets "--fix" before its path; a malformed one names --fix itself.
            std::cerr << "envelope-cli: " << (f.error().path.empty() ? "" : "--fix ")
                      << f.error().toString() << "\n";
            return kBadPlan;
        }
        options.fixed.push_back(*f);
    }
    ByteUnits units = ByteUnits::GB;
    parseByteUnits(args.units, units);

    // The plan file with its --set overrides, read and validated as every command reads it.
    int status = kOk;
    std::optional<PlanFile> file = readPlanFile(args.planPath, args.sets, status);
    if (!file)
        return status;
    const Plan* plan = &file->plan;

    switch (searchKind(options.goal)) {
    case SearchKind::Serving:
        return report(
            args, *plan, searchServing(*plan, options), units, file->sections, stop);
    case SearchKind::Rl:
        return report(args, *plan, searchRl(*plan, options), units, file->sections, stop);
    case SearchKind::Training:
        break;
    }
    return report(args, *plan, search(*plan, options), units, file->sections, stop);
}

} // namespace envelope::cli
