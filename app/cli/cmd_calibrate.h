// envelope-cli calibrate PLAN.json --peak-gib X [--metric reserved|allocated|device]
//                        [--tokens-per-s Y | --step-time-s Z] [-o OUT.json]
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace envelope::cli {

struct CalibrateOptions {
    std::string planPath;
    std::optional<double> peakGib;
    std::string metric = "reserved";
    std::optional<double> tokensPerS;
    std::optional<double> stepTimeS;
    std::string outputPath;
};

// Adds the subcommand; the options are filled when it is parsed.
CLI::App* registerCalibrate(CLI::App& app, CalibrateOptions& options);

// Exit status: 0, 2 on a bad plan or an unreachable target, 1 on anything else.
int runCalibrate(const CalibrateOptions& options);

} // namespace envelope::cli
