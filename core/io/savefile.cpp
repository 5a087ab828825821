#include "io/savefile.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace envelope::io {
namespace {

// Linux's own limit on symlinks followed in one lookup (ELOOP).
constexpr int kMaxLinkHops = 40;

struct Target {
    std::string userPath; // for messages
    std::string path; // the file that is replaced: userPath with every symlink followed
    std::string folder;
    mode_t mode = 0;
    std::string temporary; // written, not yet renamed; "" once renamed or removed
    std::string backup; // a hard link to the old file while a set is committed
};

Error failure(const std::string& path, const std::string& what)
{
    return Error { "", path + ": " + what };
}

Error systemFailure(const std::string& path, const char* what)
{
    return failure(path, std::string(what) + ": " + std::strerror(errno));
}

std::string folderOf(const std::string& path)
{
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string nameOf(const std::string& path)
{
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

mode_t newFileMode()
{
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

// Follows `userPath` through its symlinks to the file to replace, and refuses what is not a
// regular file or may not be written.
Expected<Target> resolve(const std::string& userPath)
{
    if (userPath.empty())
        return failure("\"\"", "an empty file name");
    Target t { userPath, userPath, {}, 0, {}, {} };
    for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
        struct stat info { };
        if (::lstat(t.path.c_str(), &info) != 0) {
            if (errno != ENOENT)
                return systemFailure(userPath, "cannot write");
            t.folder = folderOf(t.path);
            struct stat folder { };
            if (::stat(t.folder.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode))
                return failure(userPath, "cannot write: the folder " + t.folder + " does not exist");
            t.mode = newFileMode();
            return t;
        }
        if (S_ISLNK(info.st_mode)) {
            std::string link(4096, '\0');
            const ssize_t n = ::readlink(t.path.c_str(), link.data(), link.size());
            if (n < 0 || static_cast<std::size_t>(n) >= link.size())
                return systemFailure(userPath, "cannot follow the symbolic link");
            link.resize(static_cast<std::size_t>(n));
            t.path = link.front() == '/' ? link : folderOf(t.path) + "/" + link;
            continue;
        }
        if (S_ISDIR(info.st_mode))
            return failure(userPath, "is a folder, not a file");
        // A device, fifo or socket is never replaced by a regular file (as root, `-o /dev/full`
        // once replaced the system's /dev/full).
        if (!S_ISREG(info.st_mode))
            return failure(userPath, "is not a regular file (a device, pipe or socket): not written");
        // Checked on the mode bits, not access(): root may write anything, and a file the user
        // marked read-only is still meant to stay as it is.
        if ((info.st_mode & 0222) == 0)
            return failure(userPath, "is read-only: not replaced");
        t.folder = folderOf(t.path);
        t.mode = info.st_mode & 0777;
        return t;
    }
    return failure(userPath, "cannot write: too many levels of symbolic links");
}

bool writeAll(int fd, const std::string& text)
{
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// The text in a new temporary file beside the target: mkstemp's random name, opened O_EXCL,
// with the target's mode, flushed to disk.
std::optional<Error> writeTemporary(Target& t, const std::string& text)
{
    std::string name = t.folder + "/." + nameOf(t.path) + ".XXXXXX";
    const int fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0)
        return systemFailure(t.userPath, "cannot write");
    t.temporary = name;
    bool ok = writeAll(fd, text) && ::fchmod(fd, t.mode) == 0 && ::fsync(fd) == 0;
    int error = ok ? 0 : errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        error = errno;
    }
    if (!ok) {
        errno = error;
        const Error e = systemFailure(t.userPath, "cannot write");
        ::unlink(t.temporary.c_str());
        t.temporary.clear();
        return e;
    }
    return std::nullopt;
}

// A hard link to the old file under an unused random name, so a set can be rolled back.
bool linkBackup(Target& t)
{
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
        const std::string name
            = t.folder + "/." + nameOf(t.path) + ".old" + std::to_string(random() % 1000000000u);
        if (::link(t.path.c_str(), name.c_str()) == 0) {
            t.backup = name;
            return true;
        }
        if (errno != EEXIST)
            return false;
    }
    return false;
}

void syncFolder(const std::string& folder)
{
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    ::fsync(fd);
    ::close(fd);
}

void removeTemporaries(std::vector<Target>& targets)
{
    for (Target& t : targets) {
        if (!t.temporary.empty())
            ::unlink(t.temporary.c_str());
        if (!t.backup.empty())
            ::unlink(t.backup.c_str());
        t.temporary.clear();
        t.backup.clear();
    }
}

} // namespace

std::optional<Error> saveFiles(const std::vector<OutputFile>& files)
{
    std::vector<Target> targets;
    for (const OutputFile& f : files) {
        Expected<Target> t = resolve(f.path);
        if (!t)
            return t.error();
        targets.push_back(std::move(t).value());
    }
    // 1. Every file's text in its temporary; nothing the user has is touched yet.
    for (std::size_t i = 0; i < targets.size(); ++i)
        if (std::optional<Error> e = writeTemporary(targets[i], files[i].text)) {
            removeTemporaries(targets);
            return e;
        }
    // 2. A set keeps its old files reachable until every rename has succeeded.
    const bool set = targets.size() > 1;
    if (set)
        for (Target& t : targets)
            if (::access(t.path.c_str(), F_OK) == 0 && !linkBackup(t)) {
                const Error e = systemFailure(t.userPath, "cannot keep the old file while writing");
                removeTemporaries(targets);
                return e;
            }
    // 3. The renames; on a failure, the ones done are undone.
    for (std::size_t i = 0; i < targets.size(); ++i) {
        if (::rename(targets[i].temporary.c_str(), targets[i].path.c_str()) == 0) {
            targets[i].temporary.clear();
            continue;
        }
        const Error e = systemFailure(targets[i].userPath, "cannot replace");
        for (std::size_t j = 0; j < i; ++j) {
            Target& done = targets[j];
            if (!done.backup.empty() && ::rename(done.backup.c_str(), done.path.c_str()) == 0)
                done.backup.clear();
            else if (done.backup.empty())
                ::unlink(done.path.c_str()); // it was new
        }
        removeTemporaries(targets);
        return e;
    }
    removeTemporaries(targets); // the backups
    std::set<std::string> folders;
    for (const Target& t : targets)
        folders.insert(t.folder);
    for (const std::string& folder : folders)
        syncFolder(folder);
    return std::nullopt;
}

} // namespace envelope::io
