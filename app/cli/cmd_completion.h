// envelope-cli completion bash|zsh|fish: a shell completion script written from the command
// line's own definition (its subcommands, their options and each option's choices as --help
// prints them), so that it can never disagree with --help.
#pragma once

#include <CLI/CLI.hpp>

namespace envelope::cli {

struct CompletionCommand {
    CLI::App* command = nullptr;
    std::string shell;
};

void registerCompletion(CLI::App& app, CompletionCommand& c);
// `app`: the whole command line, every subcommand registered.
int runCompletion(const CLI::App& app, const CompletionCommand& c);

} // namespace envelope::cli
