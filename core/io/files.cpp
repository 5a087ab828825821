#include "io/files.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace envelope::io {
namespace {

// Plans, configs and preset files are kilobytes; anything this large is the wrong file.
constexpr std::uintmax_t kMaxFileBytes = 64ull * 1024 * 1024;

} // namespace

Expected<std::string> readTextInput(const std::string& path)
{
    if (path != "-")
        return readTextFile(path);
    if (::isatty(STDIN_FILENO))
        return Error { "", "-: standard input is a terminal: pipe or redirect a file into it" };
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return Error { "", std::string("-: read error on standard input: ") + std::strerror(errno) };
        if (n == 0)
            return text;
        if (text.size() + static_cast<std::size_t>(n) > kMaxFileBytes)
            return Error { "",
                "-: standard input is too large to be a plan or config (more than "
                    + std::to_string(kMaxFileBytes) + " bytes)" };
        text.append(buffer, static_cast<std::size_t>(n));
    }
}

Expected<std::string> readTextFile(const std::string& path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        return Error { "", path + ": no such file" };
    if (fs::is_directory(status))
        return Error { "", path + ": is a folder, not a file" };
    // A named pipe blocks open() until a writer comes, a device (/dev/zero, a tty) never ends:
    // only a regular file is a plan, a config or a preset file. Checked before opening.
    if (!fs::is_regular_file(status))
        return Error { "", path + ": is not a regular file (a pipe, device or socket)" };
    // O_NONBLOCK: should the path be swapped for a pipe after the check, open() still returns;
    // fstat on the open descriptor then refuses it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return Error { "", path + ": cannot open: " + std::strerror(errno) };
    struct FdCloser {
        int fd;
        ~FdCloser() { ::close(fd); }
    } closer { fd };
    struct stat info { };
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
        return Error { "", path + ": is not a regular file (a pipe, device or socket)" };
    const auto tooLarge = [&](std::uintmax_t size) {
        return Error { "",
            path + ": too large to be a plan or config (" + std::to_string(size)
                + " bytes; at most " + std::to_string(kMaxFileBytes) + ")" };
    };
    if (static_cast<std::uintmax_t>(info.st_size) > kMaxFileBytes)
        return tooLarge(static_cast<std::uintmax_t>(info.st_size));
    // Read with the cap as well: a file may grow while it is read.
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return Error { "", path + ": read error: " + std::strerror(errno) };
        if (n == 0)
            break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > kMaxFileBytes)
            return tooLarge(text.size());
    }
    return text;
}

std::string userPresetDir()
{
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
        return std::string(xdg) + "/envelope/presets";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.config/envelope/presets";
    return {};
}

namespace {

// The *.json files of the user's preset folder, in file name order (later files win).
std::vector<std::string> userPresetFiles()
{
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    const std::string dir = userPresetDir();
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec))
        return files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json")
            files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

PresetLibrary loadPresetsSkippingBad(std::vector<std::string>& warnings)
{
    Expected<PresetLibrary> builtin = builtinPresets();
    if (!builtin) {
        warnings.push_back("built-in presets: " + builtin.error().toString());
        return {};
    }
    PresetLibrary library = std::move(builtin).value();
    for (const std::string& file : userPresetFiles()) {
        Expected<std::string> text = readTextFile(file);
        if (!text) {
            warnings.push_back(text.error().toString());
            continue;
        }
        // Merge into a copy, so a file that fails half-way leaves no partial entries behind.
        PresetLibrary merged = library;
        if (auto e = mergePresetFile(merged, *text, file))
            warnings.push_back(e->toString());
        else
            library = std::move(merged);
    }
    return library;
}

Expected<PresetLibrary> loadPresets()
{
    Expected<PresetLibrary> library = builtinPresets();
    if (!library)
        return Error { "", "built-in presets: " + library.error().toString() };
    for (const std::string& file : userPresetFiles()) {
        Expected<std::string> text = readTextFile(file);
        if (!text)
            return text.error();
        if (auto e = mergePresetFile(library.value(), *text, file))
            return *e;
    }
    return library;
}

} // namespace envelope::io
