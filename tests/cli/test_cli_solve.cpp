// envelope-cli solve as scripts use it: the envelope.solution JSON, best.plan as a plan file
// that `envelope-cli estimate` gives the same figures for, CSV, and the exit statuses (0 a
// feasible plan, 3 none with the nearest miss named, 2 a bad plan or --fix).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct SolveRun {
    int status = -1;
    std::string out;
    std::string err;
};

std::string slurp(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

class CliSolveTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = fs::temp_directory_path()
            / (std::string("envelope-solve-") + info->name() + "-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "config");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path write(const std::string& name, const std::string& text) const
    {
        std::ofstream(m_dir / name, std::ios::binary) << text;
        return m_dir / name;
    }

    // Arguments are plain words and paths under the temporary folder (no quoting needed).
    SolveRun cli(const std::string& args) const
    {
        const fs::path out = m_dir / "stdout", err = m_dir / "stderr";
        const std::string command = "XDG_CONFIG_HOME=" + (m_dir / "config").string() + " "
            + ENVELOPE_CLI_PATH + " " + args + " >" + out.string() + " 2>" + err.string()
            + " </dev/null";
        const int raw = std::system(command.c_str());
        SolveRun r;
        r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }

    fs::path m_dir;
};

const std::string kDefaultPlan = std::string(ENVELOPE_SOURCE_DIR) + "/presets/default-plan.json";

TEST_F(CliSolveTest, BestPlanEstimatesToTheFiguresTheSolutionStates)
{
    const SolveRun r = cli("solve " + kDefaultPlan + " --goal max-throughput --top 3");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json s = nlohmann::json::parse(r.out);
    EXPECT_EQ(s["format"], "envelope.solution");
    EXPECT_EQ(s["version"], 1);
    EXPECT_EQ(s["goal"], "max-throughput");
    EXPECT_GT(s["searched"].get<long long>(), s["feasible"].get<long long>());
    EXPECT_EQ(s["candidates"].size(), 3u);
    const fs::path best = write("best.json", s["best"]["plan"].dump(2));
    const SolveRun e = cli("estimate " + best.string());
    ASSERT_EQ(e.status, 0) << e.err;
    const nlohmann::json result = nlohmann::json::parse(e.out);
    EXPECT_EQ(
        result["training"]["per_gpu_bytes"]["total"], s["candidates"][0]["per_gpu_bytes_total"]);
    EXPECT_EQ(result["training"]["per_gpu_bytes"]["total"],
        s["best"]["summary"]["per_gpu_bytes"]["total"]);
    EXPECT_DOUBLE_EQ(result["training"]["tokens_per_s"].get<double>(),
        s["candidates"][0]["tokens_per_s"].get<double>());
    EXPECT_DOUBLE_EQ(result["training"]["step_time_s"].get<double>(),
        s["best"]["summary"]["step_time_s"].get<double>());
}

TEST_F(CliSolveTest, NothingFitsExits3AndNamesTheNearestMiss)
{
    const fs::path plan = write("huge.json",
        R"({"format": "envelope.plan", "version": 1, "model": "llama-3.1-405b",
            "gpu": "rtx-4090", "cluster": {"gpus": 8, "gpus_per_node": 8},
            "training": {"zero_stage": 3, "micro_batch": 1, "grad_accum": 1}})");
    const SolveRun r = cli(
        "solve " + plan.string() + " --goal max-throughput --fix training.offload_optimizer=false");
    EXPECT_EQ(r.status, 3);
    EXPECT_NE(r.err.find("nearest miss"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("over the usable"), std::string::npos) << r.err;
    const nlohmann::json s = nlohmann::json::parse(r.out);
    EXPECT_TRUE(s["best"].is_null());
    EXPECT_GT(s["nearest_miss"]["over_usable_bytes"].get<long long>(), 0);
}

TEST_F(CliSolveTest, BadPlanAndBadFixExit2NamingTheField)
{
    const SolveRun plan = cli("solve " + std::string(ENVELOPE_TEST_DATA_DIR)
        + "/plans/bad-zero-stage.json --goal min-gpus");
    EXPECT_EQ(plan.status, 2);
    EXPECT_NE(plan.err.find("training.zero_stage"), std::string::npos) << plan.err;
    const SolveRun fix = cli("solve " + kDefaultPlan + " --goal min-gpus --fix training.tp=0");
    EXPECT_EQ(fix.status, 2);
    EXPECT_NE(fix.err.find("training.tp: must be an integer 1..1024"), std::string::npos)
        << fix.err;
}

TEST_F(CliSolveTest, CsvListsEveryFeasibleCandidateAndTextNamesTheBest)
{
    const SolveRun json = cli("solve " + kDefaultPlan + " --goal min-gpus");
    ASSERT_EQ(json.status, 0) << json.err;
    const long long feasible = nlohmann::json::parse(json.out)["feasible"].get<long long>();
    const SolveRun csv = cli("solve " + kDefaultPlan + " --goal min-gpus --format csv");
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), feasible + 1);
    const SolveRun text = cli("solve " + kDefaultPlan + " --goal min-gpus --format text");
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("Best: "), std::string::npos) << text.out;
    const SolveRun md = cli("solve " + kDefaultPlan + " --goal min-gpus --format markdown");
    EXPECT_NE(md.out.find("| # | GPUs |"), std::string::npos) << md.out;
}

} // namespace
