// envelope-cli import-hf CONFIG.json|OWNER/NAME[@REVISION] [--model-only] [--offline]
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace envelope::cli {

struct ImportHfCommand {
    CLI::App* command = nullptr;
    std::string source; // a config.json path, "-", or a Hugging Face Hub id
    bool modelOnly = false;
    bool offline = false;
};

void registerImportHf(CLI::App& app, ImportHfCommand& c);
int runImportHf(const ImportHfCommand& c);

} // namespace envelope::cli
