// envelope-cli export PLAN.json --to ENGINE [-o FILE] [--set PATH=VALUE ...]
#pragma once

#include <CLI/CLI.hpp>

namespace envelope::cli {

struct ExportCommand {
    CLI::App* command = nullptr;
    std::string planPath, engine, output, engineVersion;
    std::string launcher; // "" (the engine's own launch line), torchrun, slurm or k8s
    std::string report = "text"; // the stderr report: text lines, or one JSON document
    std::vector<std::string> sets;
};

void registerExport(CLI::App& app, ExportCommand& c);
int runExport(const ExportCommand& c);

} // namespace envelope::cli
