// envelope-cli solve: the planner (core/search) from the command line. design.md, "CLI".
#pragma once

#include <memory>

namespace CLI {
class App;
}

namespace envelope::cli {

struct SolveArgs;

// Registers `solve` on `app`; the returned arguments are filled when it parses.
std::shared_ptr<SolveArgs> addSolveCommand(CLI::App& app);

// True when `solve` was the subcommand given.
bool solveChosen(const SolveArgs& args);

// Runs it: exit 0 a feasible plan, 3 none (stderr names the nearest miss), 2 a bad plan or
// --fix, 1 anything else.
int runSolve(const SolveArgs& args);

} // namespace envelope::cli
