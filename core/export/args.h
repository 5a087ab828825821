// A reader for command-line argument lists (Megatron-LM files: one argument per line, or a
// whole `torchrun ... pretrain_gpt.py --flag value ...` command line). Internal to core/export.
//
// Words split like a POSIX shell for what such files hold: whitespace, '...' and "..." quotes,
// backslash-newline continuations, '#' comments at the start of a word. Everything up to and
// including the first word ending in ".py" (the launcher and its own flags) is dropped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"

namespace envelope::exportdetail {

struct Argument {
    std::string flag; // "--tensor-model-parallel-size"
    std::optional<std::string> value; // "8"; absent for a switch ("--bf16")
    // Every value word up to the next flag: argparse's nargs ("--recompute-modules core_attn
    // mlp"); `value` is the first of them.
    std::vector<std::string> values;
};

struct Command {
    std::vector<std::string> launcher; // the words up to and including the *.py script
    std::vector<Argument> args;
};

std::vector<std::string> splitWords(std::string_view text);
Expected<std::vector<Argument>> parseArguments(std::string_view text);
Expected<Command> parseCommand(std::string_view text);

// A bash launch script (Megatron-LM's examples/*.sh) as its one command line: NAME=value and
// NAME=( ... ) arrays are collected, the line that runs a *.py script is taken and its $NAME,
// ${NAME} and ${NAME[@]} are expanded. Text that assigns nothing is returned as it is.
std::string expandLaunchScript(std::string_view text);

} // namespace envelope::exportdetail
