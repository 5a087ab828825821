// What the envelope-cli tests share: running the built CLI through the shell with its output
// captured, quoting for that shell, and reading and writing test files. Each test fixture keeps
// its own folder and environment; this runs one command line in it.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace envelope::clitest {

namespace fs = std::filesystem;

// One run of envelope-cli: its exit status (128 + the signal when killed) and its output.
struct CliRun {
    int status = -1;
    std::string out;
    std::string err;
};

inline std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

inline void writeFile(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

// One word for /bin/sh, whatever `s` holds: '...' with each ' written '\''.
inline std::string shellQuote(const std::string& s)
{
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs `prefix` (environment words, e.g. "XDG_CONFIG_HOME='...'"), the CLI and `args` (quoted
// where needed) in the shell, stdout and stderr into `dir`, standard input from `input`.
inline CliRun runCli(const fs::path& dir, const std::string& prefix, const std::string& args,
    const std::string& input = "/dev/null")
{
    const fs::path out = dir / "stdout", err = dir / "stderr";
    const std::string command = prefix + " " + shellQuote(ENVELOPE_CLI_PATH) + " " + args + " >"
        + shellQuote(out.string()) + " 2>" + shellQuote(err.string()) + " <" + shellQuote(input);
    const int raw = std::system(command.c_str());
    CliRun r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    r.out = readFile(out);
    r.err = readFile(err);
    return r;
}

} // namespace envelope::clitest
