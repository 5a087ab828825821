// envelope-cli solve PLAN.json --goal GOAL [--top K] [--fix PATH=VALUE]... [--max-gpus N]
//                   [--gpus-per-node N] [--max-ttft-s S] [--max-itl-s S]
//                   [--format json|text|markdown|csv] [--units gb|gib]
#include "cmd_solve.h"

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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
};

namespace {

constexpr int kOk = 0;
constexpr int kBadPlan = 2;
constexpr int kNoSolution = 3;

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
           "max-micro-batch; serving: serving-max-throughput, serving-min-gpus; RL: "
           "rl-max-steps-per-hour")
        ->required()
        ->check(CLI::IsMember({ "min-gpus", "max-throughput", "min-cost", "min-time", "max-seq-len",
            "max-micro-batch", "serving-max-throughput", "serving-min-gpus",
            "rl-max-steps-per-hour" }));
    cmd->add_option("--top", args->top, "candidates to list (default 10)")
        ->check(CLI::Range(1, 10000));
    cmd->add_option("--fix", args->fixes, "hold a field, e.g. training.tp=8 (repeatable)");
    cmd->add_option("--max-gpus", args->maxGpus, "largest GPU count to consider")
        ->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--gpus-per-node", args->gpusPerNode, "GPUs per node")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--max-ttft-s", args->maxTtftS,
           "serving goals: time-to-first-token limit in seconds (default serving.max_ttft_s)")
        ->check(CLI::Range(1e-6, 1e6));
    cmd->add_option("--max-itl-s", args->maxItlS,
           "serving goals: inter-token-latency limit in seconds (default serving.max_itl_s)")
        ->check(CLI::Range(1e-6, 1e6));
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

// Prints the result in the chosen format; exit 0 when something is feasible, 3 when not.
template <class Result>
int report(const SolveArgs& args, const Plan& plan, const Result& result, ByteUnits units,
    const report::ReportSections& sections)
{
    if (args.format == "json")
        std::cout << keepInputSections(writeSolutionJson(plan, result), sections);
    else if (args.format == "csv")
        std::cout << writeSolutionCsv(result);
    else
        std::cout << writeSolutionText(plan, result, units, args.format == "markdown");
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
    if (args.maxTtftS > 0)
        options.maxTtftS = args.maxTtftS;
    if (args.maxItlS > 0)
        options.maxItlS = args.maxItlS;
    for (const std::string& fix : args.fixes) {
        Expected<FixedField> f = parseFixedField(fix);
        if (!f) {
            std::cerr << "envelope-cli: --fix " << f.error().toString() << "\n";
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
        return report(args, *plan, searchServing(*plan, options), units, file->sections);
    case SearchKind::Rl:
        return report(args, *plan, searchRl(*plan, options), units, file->sections);
    case SearchKind::Training:
        break;
    }
    return report(args, *plan, search(*plan, options), units, file->sections);
}

} // namespace envelope::cli
