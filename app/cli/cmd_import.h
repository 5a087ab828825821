// envelope-cli import deepspeed|torchtitan|megatron FILE --model ID|CONFIG.json [--gpus N]
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

namespace envelope::cli {

struct ImportCommand {
    CLI::App* command = nullptr;
    std::string engine, file, model, format = "text", units = "gb";
    std::optional<int> gpus;
};

void registerImport(CLI::App& app, ImportCommand& c);
int runImport(const ImportCommand& c);

} // namespace envelope::cli
