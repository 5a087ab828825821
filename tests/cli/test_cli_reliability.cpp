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

#include "cli_testing.h"

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
    // `shell` runs first in the same shell (a ulimit, a trap).
    CliResult cli(const std::string& args, const std::string& stdoutTo = "/dev/null",
        const std::string& shell = "") const
    {
        const fs::path err = m_dir / "stderr";
        const std::string command = shell + "XDG_CONFIG_HOME=" + (m_dir / "config").string()
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

const auto& slurp = envelope::clitest::readFile;

// Issue 26, item 6: `export -o T` renamed its temp file over whatever T was.
TEST_F(CliReliability, ExportOutputReplacesOnlyRegularFiles)
{
    const std::string fifo = (m_dir / "fifo").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    CliResult r = cli("export " + plan() + " --to deepspeed -o " + fifo);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err,
        "envelope-cli: " + fifo + ": is not a regular file (a device, pipe or socket): not "
                                  "written\n");
    struct stat info { };
    ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
    EXPECT_TRUE(S_ISFIFO(info.st_mode));

    // Through a symlink to its target, keeping the target's mode.
    std::ofstream(m_dir / "target.json") << "old";
    ::chmod((m_dir / "target.json").c_str(), 0600);
    fs::create_symlink("target.json", m_dir / "link.json");
    r = cli("export " + plan() + " --to deepspeed -o " + (m_dir / "link.json").string());
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(m_dir / "link.json"));
    EXPECT_EQ(slurp(m_dir / "target.json").front(), '{');
    ASSERT_EQ(::stat((m_dir / "target.json").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);

    // A read-only file stays as it is.
    std::ofstream(m_dir / "ro.json") << "keep";
    ::chmod((m_dir / "ro.json").c_str(), 0444);
    r = cli("export " + plan() + " --to deepspeed -o " + (m_dir / "ro.json").string());
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("ro.json: is read-only: not replaced"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(m_dir / "ro.json"), "keep");
}

// Item 7: calibrate -o truncated the plan in place; on a full disk (here: a 1 KiB file-size
// limit; the plan read is 1.7 KB, the one written 4 KB) it left half a plan. Now the plan is
// untouched and the exit is 1.
TEST_F(CliReliability, CalibrateOnAFullDiskKeepsThePlan)
{
    const fs::path copy = m_dir / "plan.json";
    fs::copy_file(plan(), copy);
    const std::string before = slurp(copy);
    ASSERT_GT(before.size(), 1024u);
    const std::string args = "calibrate " + copy.string() + " --step-time-s 30 -o " + copy.string();
    const CliResult full = cli(args, "/dev/null", "trap '' XFSZ; ulimit -f 2; ");
    EXPECT_EQ(full.status, 1) << full.err;
    EXPECT_NE(full.err.find(copy.string() + ": cannot write: File too large"), std::string::npos)
        << full.err;
    EXPECT_EQ(slurp(copy), before);
    EXPECT_EQ(std::distance(fs::directory_iterator(m_dir), fs::directory_iterator()), 3)
        << "config, stderr and plan.json only";
    const CliResult ok = cli(args);
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_NE(slurp(copy), before);
}

// Item 8: the hf export's three files are one set; a refused member leaves the others old.
TEST_F(CliReliability, HfExportIsWrittenAsASet)
{
    std::ofstream(m_dir / "training_args.json") << "old";
    ASSERT_EQ(::mkfifo((m_dir / "adapter_config.json").c_str(), 0600), 0);
    const CliResult r = cli("export " + plan() + " --to hf --set training.lora.rank=16 -o "
        + (m_dir / "training_args.json").string());
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("adapter_config.json: is not a regular file"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("XXXX"), std::string::npos);
    EXPECT_EQ(slurp(m_dir / "training_args.json"), "old");
}

// Item 10: --max-gpus allowed 1,048,576 where plans stop at 1,000,000, and NaN latency limits
// read as "no limit".
TEST_F(CliReliability, SolveOptionsAgreeWithPlanLimits)
{
    const std::string solve = "solve " + plan() + " --goal ";
    CliResult r = cli(solve + "max-throughput --max-gpus 1000001");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("--max-gpus"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1000000"), std::string::npos) << r.err;
    for (const char* option : { "--max-ttft-s", "--max-itl-s" }) {
        r = cli(solve + "serving-max-throughput " + option + " nan");
        EXPECT_EQ(r.status, 1) << option << ": " << r.err;
        EXPECT_NE(r.err.find("must be a finite number, got nan"), std::string::npos) << r.err;
    }
    // "--fix --fix: expected PATH=VALUE" named the option twice.
    r = cli(solve + "max-throughput --fix training.tp");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err, "envelope-cli: --fix: expected PATH=VALUE, got \"training.tp\"\n");
}

// Item 14: a budget stops the search with exit 3, the reason, and the best layout so far.
TEST_F(CliReliability, SolveStopsAtItsEstimateBudget)
{
    const std::string out = (m_dir / "out.json").string();
    const CliResult r
        = cli("solve " + plan() + " --goal max-throughput --max-estimates 50", out);
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_NE(r.err.find("the search stopped after"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(--max-estimates 50): layouts were left unsearched"), std::string::npos)
        << r.err;
    const std::string json = slurp(out);
    EXPECT_NE(json.find("\"capped\": true"), std::string::npos) << json.substr(0, 400);
    // A timeout shorter than reading the presets stops the search at its first GPU count.
    const CliResult late
        = cli("solve " + plan() + " --goal max-throughput --timeout 0.001", out);
    EXPECT_EQ(late.status, 3) << late.err;
    EXPECT_NE(late.err.find("the search stopped at --timeout 0.001 s: layouts were left "
                            "unsearched"),
        std::string::npos)
        << late.err;
    // The default budget lets the default plan's search finish.
    const CliResult full = cli("solve " + plan() + " --goal max-throughput", out);
    EXPECT_EQ(full.status, 0) << full.err;
    EXPECT_EQ(slurp(out).find("\"capped\""), std::string::npos);
}

} // namespace
