// envelope-cli compare A.json B.json [...] [--format text|markdown|json] [--set PATH=VALUE ...]
#pragma once

#include <CLI/CLI.hpp>

namespace envelope::cli {

struct CompareCommand {
    CLI::App* command = nullptr;
    std::vector<std::string> plans, sets;
    std::string format = "text", units = "gb";
};

void registerCompare(CLI::App& app, CompareCommand& c);
int runCompare(const CompareCommand& c);

} // namespace envelope::cli
