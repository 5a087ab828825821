// Fits a plan to a measured run (core: estimate/calibrate.h) and writes the calibrated plan.
#include "cmd_calibrate.h"

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "estimate/calibrate.h"
#include "io/files.h"
#include "io/savefile.h"
#include "plan/planio.h"

namespace envelope::cli {

CLI::App* registerCalibrate(CLI::App& app, CalibrateOptions& o)
{
    CLI::App* cmd = app.add_subcommand(
        "calibrate", "Fit the activation calibration (or overhead) and the MFU to a measured run");
    cmd->add_option("PLAN", o.planPath, "plan JSON file")->required();
    cmd->add_option("--peak-gib", o.peakGib, "measured peak memory per GPU, GiB");
    cmd->add_option("--metric", o.metric,
           "what the peak is: reserved (max_memory_reserved), allocated (max_memory_allocated) "
           "or device (nvidia-smi)")
        ->check(CLI::IsMember({ "reserved", "allocated", "device" }));
    CLI::Option* tokens
        = cmd->add_option("--tokens-per-s", o.tokensPerS, "measured throughput, whole job");
    CLI::Option* step = cmd->add_option("--step-time-s", o.stepTimeS, "measured step time, s");
    tokens->excludes(step);
    cmd->add_option("-o,--output", o.outputPath, "write the calibrated plan here (- or none: standard output)");
    return cmd;
}

int runCalibrate(const CalibrateOptions& o)
{
    Expected<PresetLibrary> presets = io::loadPresets();
    if (!presets) {
        std::cerr << "envelope-cli: " << presets.error().toString() << "\n";
        return 1;
    }
    Expected<std::string> text = io::readTextInput(o.planPath);
    if (!text) {
        std::cerr << "envelope-cli: " << text.error().toString() << "\n";
        return 1;
    }
    ReadOptions options;
    options.readFile = io::readTextFile;
    options.baseDir = o.planPath == "-" ? std::string() : std::filesystem::path(o.planPath).parent_path().string();
    Expected<Plan> plan = readPlan(*text, *presets, options);
    if (!plan) {
        std::cerr << o.planPath << ": " << plan.error().toString() << "\n";
        return 2;
    }
    if (!o.peakGib && !o.tokensPerS && !o.stepTimeS) {
        std::cerr << "envelope-cli calibrate: give --peak-gib and/or --tokens-per-s or "
                     "--step-time-s\n";
        return 2;
    }
    CalibrationTarget target;
    if (o.peakGib)
        target.peakBytes = *o.peakGib * 1073741824.0;
    parseMemoryMetric(o.metric, target.metric);
    target.tokensPerS = o.tokensPerS;
    target.stepTimeS = o.stepTimeS;
    Expected<Calibration> fitted = calibrate(*plan, target);
    if (!fitted) {
        std::cerr << "envelope-cli calibrate: " << fitted.error().toString() << "\n";
        return 2;
    }
    for (const CalibrationChange& c : fitted->changes) {
        const bool bytes = c.measure != "training.tokens_per_s";
        const double scale = bytes ? 1073741824.0 : 1.0;
        const char* unit = bytes ? " GiB" : " tokens/s";
        std::cerr << fmt::format("{}: {:.4g} -> {:.4g} ({:+.1f}%); {} {:.2f}{} -> {:.2f}{} "
                                 "(measured {:.2f}{})\n",
            c.field, c.before, c.after, c.before != 0 ? 100.0 * (c.after / c.before - 1) : 0.0,
            c.measure, c.estimateBefore / scale, unit, c.estimateAfter / scale, unit,
            c.measured / scale, unit);
    }
    const std::string written = writePlan(fitted->plan);
    if (o.outputPath.empty() || o.outputPath == "-") {
        std::cout << written;
        return 0;
    }
    // Often the plan it read: written beside it and renamed, never truncated in place (a full
    // disk once left 4,096 of 4,403 bytes of the user's plan).
    if (std::optional<Error> error = io::saveFile(o.outputPath, written)) {
        std::cerr << "envelope-cli: " << error->toString() << "\n";
        return 1;
    }
    return 0;
}

} // namespace envelope::cli
