// Reading a plan file for a subcommand, with its `--set PATH=VALUE` overrides applied before
// validation (so they get the file's messages), and estimating it with the plan's warnings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "estimate/estimate.h"
#include "plan/presets.h"
#include "report/textreport.h"

namespace envelope::cli {

// One exit-status table for every command, as --help, docs/cli.md and envelope-cli(1) give it.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // error: a file not read or written, a bad command line
inline constexpr int kExitBadPlan = 2;    // bad input: a plan, --set or engine file not valid
inline constexpr int kExitNoSolution = 3; // solve: no layout is feasible
inline constexpr const char* kExitStatusHelp
    = "Exit status: 0 success; 1 error (a file that cannot be read or written, a bad command "
      "line); 2 bad input (a plan, --set value or engine file that is not valid: the message "
      "names its path); 3 no feasible plan (solve).";

struct PlanFile {
    PresetLibrary presets;
    Plan plan;
    // The sections the plan is about, from its keys after --set (report::planSections).
    report::ReportSections sections;
};

// Prints the error (naming the file and the JSON path) and sets `status` on failure: 2 for a bad
// plan or --set, 1 when the file cannot be read.
std::optional<PlanFile> readPlanFile(
    const std::string& path, const std::vector<std::string>& sets, int& status);

// Adds the repeatable `--set PATH=VALUE` option to `command`.
void addSetOption(CLI::App* command, std::vector<std::string>& sets);

// The estimate, with planWarnings() merged into its warnings.
Estimate estimatePlan(const Plan& plan, bool explain);

} // namespace envelope::cli
