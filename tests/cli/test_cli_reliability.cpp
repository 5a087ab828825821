// envelope-cli under hostile inputs and outputs (issue 13): a named pipe, a full disk, deeply
// nested JSON. Each ran forever, exited 0 with nothing written, or crashed before its fix.
// Every command runs under `timeout`, so a regression fails the test instead of hanging CI.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct CliResult {
    int status = -1;
    std::string err;
};

class CliReliability : public ::testing::Test {
protected:
    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = fs::temp_directory_path()
            / (std::string("envelope-clirel-") + info->name() + "-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "config");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    // `args` and `stdoutTo` are trusted test text (no quoting needed: temp paths have no spaces).
    CliResult cli(const std::string& args, const std::string& stdoutTo = "/dev/null") const
    {
        const fs::path err = m_dir / "stderr";
        const std::string command = "XDG_CONFIG_HOME=" + (m_dir / "config").string()
            + " timeout 20 " + ENVELOPE_CLI_PATH + " " + args + " >" + stdoutTo + " 2>"
            + err.string() + " </dev/null";
        const int raw = std::system(command.c_str());
        CliResult r;
        r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        std::ifstream in(err);
        std::stringstream text;
        text << in.rdbuf();
        r.err = text.str();
        return r;
    }

    fs::path m_dir;
};

std::string plan()
{
    return std::string(ENVELOPE_SOURCE_DIR) + "/presets/default-plan.json";
}

TEST_F(CliReliability, NamedPipeIsRefusedNotWaitedOn)
{
    const std::string fifo = (m_dir / "plan.json").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const CliResult estimate = cli("estimate " + fifo);
    EXPECT_EQ(estimate.status, 1) << estimate.err; // 124 would be the timeout
    EXPECT_NE(estimate.err.find("is not a regular file"), std::string::npos) << estimate.err;
    const CliResult import = cli("import-hf " + fifo);
    EXPECT_EQ(import.status, 1) << import.err;

    // The same fifo as the plan's hf_config, and as a user preset file.
    std::ofstream(m_dir / "hf-plan.json")
        << R"({"model": {"hf_config": "plan.json"}, "gpu": "h100-sxm"})";
    const CliResult hf = cli("estimate " + (m_dir / "hf-plan.json").string());
    EXPECT_EQ(hf.status, 2) << hf.err;
    EXPECT_NE(hf.err.find("model.hf_config"), std::string::npos) << hf.err;
    fs::create_directories(m_dir / "config/envelope/presets");
    ASSERT_EQ(::mkfifo((m_dir / "config/envelope/presets/mine.json").c_str(), 0600), 0);
    const CliResult presets = cli("presets");
    EXPECT_EQ(presets.status, 1) << presets.err;
    EXPECT_NE(presets.err.find("is not a regular file"), std::string::npos) << presets.err;
}

TEST_F(CliReliability, WriteFailureExitsOneWithAMessage)
{
    if (!fs::exists("/dev/full"))
        GTEST_SKIP() << "no /dev/full here";
    for (const std::string& args : { "estimate " + plan(), "estimate --format text " + plan(),
             "explain " + plan(), std::string("presets"),
             "import-hf " + std::string(ENVELOPE_TEST_DATA_DIR) + "/hf/gpt2.json" }) {
        const CliResult r = cli(args, "/dev/full");
        EXPECT_EQ(r.status, 1) << args << ": " << r.err;
        EXPECT_NE(r.err.find("cannot write the output"), std::string::npos)
            << args << ": " << r.err;
    }
}

TEST_F(CliReliability, DeepNestingIsABadPlanNotACrash)
{
    const std::string path = (m_dir / "deep.json").string();
    std::ofstream(path) << std::string(100'000, '[') << std::string(100'000, ']');
    const CliResult r = cli("estimate " + path);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("nested more than 64 levels"), std::string::npos) << r.err;
}

} // namespace
