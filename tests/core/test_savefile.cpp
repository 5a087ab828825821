// io::saveFiles, the CLI's output writer (issue 26, items 6-8): what it refuses, what it keeps,
// and that a set of files is written whole or not at all. Each case ran against the old
// `T.envelope-tmp` + rename writer and lost or replaced something.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "io/savefile.h"

namespace envelope::testing {
namespace {

namespace fs = std::filesystem;

class SaveFile : public ::testing::Test {
protected:
    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = fs::temp_directory_path()
            / (std::string("envelope-save-") + info->name() + "-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    std::string path(const std::string& name) const { return (m_dir / name).string(); }
    static std::string slurp(const std::string& p)
    {
        std::ifstream in(p, std::ios::binary);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    static void put(const std::string& p, const std::string& text)
    {
        std::ofstream(p, std::ios::binary) << text;
    }
    std::set<std::string> names() const
    {
        std::set<std::string> out;
        for (const fs::directory_entry& e : fs::directory_iterator(m_dir))
            out.insert(e.path().filename().string());
        return out;
    }
    static mode_t modeOf(const std::string& p)
    {
        struct stat info { };
        ::lstat(p.c_str(), &info);
        return info.st_mode;
    }

    fs::path m_dir;
};

TEST_F(SaveFile, NewAndReplacedFilesKeepTheirMode)
{
    ASSERT_EQ(io::saveFile(path("new.json"), "one\n"), std::nullopt);
    EXPECT_EQ(slurp(path("new.json")), "one\n");
    const mode_t mask = ::umask(0);
    ::umask(mask);
    EXPECT_EQ(modeOf(path("new.json")) & 0777, 0666 & ~mask);

    put(path("old.json"), "old");
    ::chmod(path("old.json").c_str(), 0640);
    ASSERT_EQ(io::saveFile(path("old.json"), "new"), std::nullopt);
    EXPECT_EQ(slurp(path("old.json")), "new");
    EXPECT_EQ(modeOf(path("old.json")) & 0777, 0640u);
    EXPECT_EQ(names(), (std::set<std::string> { "new.json", "old.json" })); // no temporaries
}

TEST_F(SaveFile, WritesThroughASymlinkToItsTarget)
{
    fs::create_directories(m_dir / "real");
    put(path("real/plan.json"), "old");
    fs::create_symlink("real/plan.json", m_dir / "link.json");
    fs::create_symlink("link.json", m_dir / "link2.json"); // a chain of two
    ASSERT_EQ(io::saveFile(path("link2.json"), "new"), std::nullopt);
    EXPECT_TRUE(S_ISLNK(modeOf(path("link.json"))));
    EXPECT_TRUE(S_ISLNK(modeOf(path("link2.json"))));
    EXPECT_EQ(slurp(path("real/plan.json")), "new");
    EXPECT_EQ(names(), (std::set<std::string> { "real", "link.json", "link2.json" }));
    EXPECT_EQ(fs::directory_iterator(m_dir / "real")->path().filename(), "plan.json");
}

TEST_F(SaveFile, RefusesWhatIsNotARegularWritableFile)
{
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
    fs::create_directories(m_dir / "folder");
    put(path("readonly.json"), "keep");
    ::chmod(path("readonly.json").c_str(), 0444);
    fs::create_symlink("fifo", m_dir / "to-fifo");
    const std::pair<std::string, std::string> refused[] = {
        { path("fifo"), ": is not a regular file (a device, pipe or socket): not written" },
        { path("to-fifo"), ": is not a regular file (a device, pipe or socket): not written" },
        { path("folder"), ": is a folder, not a file" },
        { path("readonly.json"), ": is read-only: not replaced" },
        { path("missing/x.json"), ": cannot write: the folder " + path("missing") + " does not exist" },
    };
    for (const auto& [target, message] : refused) {
        const std::optional<Error> e = io::saveFile(target, "x");
        ASSERT_TRUE(e.has_value()) << target;
        EXPECT_EQ(e->toString(), target + message);
    }
    EXPECT_TRUE(S_ISFIFO(modeOf(path("fifo"))));
    EXPECT_TRUE(fs::is_directory(m_dir / "folder"));
    EXPECT_EQ(slurp(path("readonly.json")), "keep");
    EXPECT_EQ(names(), (std::set<std::string> { "fifo", "folder", "readonly.json", "to-fifo" }));
}

TEST_F(SaveFile, RefusesACharacterDevice)
{
    // /dev/null's numbers (1, 3), made here: as root, `-o /dev/full` once replaced the system's.
    if (::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
        GTEST_SKIP() << "cannot make a device node here (not root, or a container forbids it)";
    const std::optional<Error> e = io::saveFile(path("null"), "x");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->toString(),
        path("null") + ": is not a regular file (a device, pipe or socket): not written");
    EXPECT_TRUE(S_ISCHR(modeOf(path("null"))));
}

// The old writer used T.envelope-tmp: a symlink placed there redirected the write.
TEST_F(SaveFile, APrePlacedTemporaryNameRedirectsNothing)
{
    put(path("victim"), "untouched");
    fs::create_symlink("victim", m_dir / "out.json.envelope-tmp");
    ASSERT_EQ(io::saveFile(path("out.json"), "data"), std::nullopt);
    EXPECT_EQ(slurp(path("victim")), "untouched");
    EXPECT_EQ(slurp(path("out.json")), "data");
}

// A set fails as a whole: with the file size limited to 4 KiB (a full disk, reproducibly), the
// second file cannot be written and the first keeps its old text. Runs in a child process so the
// limit stays there.
TEST_F(SaveFile, ASetIsWrittenWholeOrNotAtAll)
{
    put(path("training_args.json"), "old args");
    put(path("adapter_config.json"), "old adapter");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::signal(SIGXFSZ, SIG_IGN); // write() then fails with EFBIG instead of killing
        const rlimit limit { 4096, 4096 };
        ::setrlimit(RLIMIT_FSIZE, &limit);
        const std::optional<Error> e = io::saveFiles({ { path("training_args.json"), "new args" },
            { path("adapter_config.json"), std::string(10'000, 'a') } });
        if (!e)
            ::_exit(10);
        // The message names the user's file and the reason, not a temporary file.
        ::_exit(e->toString() == path("adapter_config.json") + ": cannot write: File too large"
                ? 0
                : 11);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(slurp(path("training_args.json")), "old args");
    EXPECT_EQ(slurp(path("adapter_config.json")), "old adapter");
    EXPECT_EQ(names(), (std::set<std::string> { "training_args.json", "adapter_config.json" }));

    // A refused member (a fifo) stops the set before anything is written.
    ASSERT_EQ(::mkfifo(path("bnb_config.json").c_str(), 0600), 0);
    const std::optional<Error> e = io::saveFiles({ { path("training_args.json"), "new" },
        { path("bnb_config.json"), "x" } });
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(slurp(path("training_args.json")), "old args");

    // And a good set replaces every file.
    ASSERT_EQ(io::saveFiles({ { path("training_args.json"), "new args" },
                  { path("adapter_config.json"), "new adapter" } }),
        std::nullopt);
    EXPECT_EQ(slurp(path("training_args.json")), "new args");
    EXPECT_EQ(slurp(path("adapter_config.json")), "new adapter");
    EXPECT_EQ(names(),
        (std::set<std::string> { "training_args.json", "adapter_config.json", "bnb_config.json" }));
}

} // namespace
} // namespace envelope::testing
