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

#include "cli_testing.h"

namespace {

namespace fs = std::filesystem;

using SolveRun = envelope::clitest::CliRun;

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
        return envelope::clitest::runCli(m_dir,
            "XDG_CONFIG_HOME=" + envelope::clitest::shellQuote((m_dir / "config").string()), args);
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
    EXPECT_NE(fix.err.find("training.tp: must be an integer 1..65536"), std::string::npos)
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

// Serving: the fleet's best replica as a plan file; `estimate` on it gives the replica's
// figures the solution states, and fleet tokens/s = the target concurrency / ITL.
TEST_F(CliSolveTest, ServingBestPlanEstimatesToTheFiguresTheSolutionStates)
{
    const fs::path plan = write("serve.json",
        R"({"format": "envelope.plan", "version": 1, "model": "llama-3-70b", "gpu": "h100-sxm",
            "cluster": {"gpus": 8, "gpus_per_node": 8},
            "serving": {"context": 8192, "concurrency": 64, "max_ttft_s": 1.0}})");
    const SolveRun r = cli("solve " + plan.string() + " --goal serving-max-throughput --top 5");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json s = nlohmann::json::parse(r.out);
    EXPECT_EQ(s["goal"], "serving-max-throughput");
    EXPECT_EQ(s["kind"], "serving");
    EXPECT_EQ(s["candidates"].size(), 5u);
    const nlohmann::json& top = s["candidates"][0];
    EXPECT_LE(top["ttft_s"].get<double>(), 1.0);
    const fs::path best = write("best.json", s["best"]["plan"].dump(2));
    const SolveRun e = cli("estimate " + best.string());
    ASSERT_EQ(e.status, 0) << e.err;
    const nlohmann::json serving = nlohmann::json::parse(e.out)["serving"];
    EXPECT_TRUE(serving["fits"].get<bool>());
    EXPECT_DOUBLE_EQ(serving["itl_s"].get<double>(), top["itl_s"].get<double>());
    EXPECT_DOUBLE_EQ(serving["ttft_s"].get<double>(), top["ttft_s"].get<double>());
    EXPECT_EQ(serving["max_sequences"], top["max_sequences"]);
    EXPECT_DOUBLE_EQ(64.0 / serving["itl_s"].get<double>(), top["tokens_per_s"].get<double>());
    EXPECT_EQ(s["best"]["plan"]["serving"]["concurrency"], top["concurrency_per_replica"]);

    // An ITL no layout reaches: exit 3, and the message names the limit.
    const SolveRun none = cli(
        "solve " + plan.string() + " --goal serving-min-gpus --max-itl-s 0.000001 --format text");
    EXPECT_EQ(none.status, 3);
    EXPECT_NE(none.err.find("over the 1.0 µs limit"), std::string::npos) << none.err;
    const SolveRun csv
        = cli("solve " + plan.string() + " --goal serving-max-throughput --format csv");
    ASSERT_EQ(csv.status, 0);
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), s["feasible"].get<long long>() + 1);
}

// serving-max-goodput: the best layout's goodput is what `estimate` of the best plan reports
// (its own bisection of simulations), and the text says which objective bounds it.
TEST_F(CliSolveTest, GoodputBestPlanEstimatesToTheGoodputTheSolutionStates)
{
    const fs::path plan = write("goodput.json",
        R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b", "gpu": "h100-sxm",
            "cluster": {"gpus": 4, "gpus_per_node": 8},
            "serving": {"context": 8192, "workload": {"input_tokens": 2000,
                "output_tokens": 200, "request_rate": 8},
                "slo": {"ttft_p90_s": 0.4, "tpot_p90_s": 0.02}}})");
    const SolveRun r = cli("solve " + plan.string() + " --goal serving-max-goodput --top 3");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json s = nlohmann::json::parse(r.out);
    EXPECT_EQ(s["goal"], "serving-max-goodput");
    const nlohmann::json& top = s["candidates"][0];
    const double goodput = top["goodput_rps"].get<double>();
    EXPECT_GT(goodput, 0);
    EXPECT_LE(goodput, top["capacity_rps"].get<double>());
    EXPECT_DOUBLE_EQ(s["best"]["summary"]["goodput_rps"].get<double>(), goodput);
    const fs::path best = write("best-goodput.json", s["best"]["plan"].dump(2));
    const SolveRun e = cli("estimate " + best.string());
    ASSERT_EQ(e.status, 0) << e.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(e.out)["serving"]["goodput_rps"].get<double>(), goodput);
    const SolveRun text
        = cli("solve " + plan.string() + " --goal serving-max-goodput --format text");
    EXPECT_NE(text.out.find("goodput req/s"), std::string::npos) << text.out;
    // No SLO: exit 3, and the message says what the plan needs.
    const fs::path bare = write("bare.json",
        R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b", "gpu": "h100-sxm",
            "cluster": {"gpus": 4, "gpus_per_node": 8}, "serving": {"context": 8192}})");
    const SolveRun none = cli("solve " + bare.string() + " --goal serving-max-goodput");
    EXPECT_EQ(none.status, 3);
    EXPECT_NE(none.err.find("serving.workload"), std::string::npos) << none.err;
}

TEST_F(CliSolveTest, RlBestPlanEstimatesToTheStepsPerHourTheSolutionStates)
{
    const fs::path plan = write("rl.json",
        R"({"format": "envelope.plan", "version": 1, "model": "qwen2.5-7b", "gpu": "h100-sxm",
            "cluster": {"gpus": 16, "gpus_per_node": 8}, "training": {"zero_stage": 3},
            "rl": {"algorithm": "grpo", "trainer_gpus": 8, "reference_gpus": 1,
                   "rollout_gpus": 7}})");
    const SolveRun r = cli("solve " + plan.string() + " --goal rl-max-steps-per-hour");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json s = nlohmann::json::parse(r.out);
    EXPECT_EQ(s["kind"], "rl");
    const fs::path best = write("best.json", s["best"]["plan"].dump(2));
    const SolveRun e = cli("estimate " + best.string());
    ASSERT_EQ(e.status, 0) << e.err;
    const nlohmann::json rl = nlohmann::json::parse(e.out)["rl"];
    EXPECT_DOUBLE_EQ(
        rl["steps_per_hour"].get<double>(), s["candidates"][0]["steps_per_hour"].get<double>());
    EXPECT_DOUBLE_EQ(
        rl["steps_per_hour"].get<double>(), s["best"]["summary"]["steps_per_hour"].get<double>());
    const SolveRun bad
        = cli("solve " + plan.string() + " --goal rl-max-steps-per-hour --fix rl.placement=both");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("rl.placement: must be disjoint or colocated"), std::string::npos)
        << bad.err;
}

} // namespace

namespace {

// Issue 28, the answers a script acts on: a training-only plan's best plan stays training-only,
// compare withholds rates of plans that do not fit and the sections a plan does not have, and
// an RL pool that cannot hold its layout says so in the result instead of "fits".
constexpr const char* kTrainingOnly70b = R"({"format": "envelope.plan", "version": 1,
    "model": "llama-3-70b", "gpu": "h100-sxm", "cluster": {"gpus": 64, "gpus_per_node": 8},
    "training": {"zero_stage": 3, "seq_len": 4096, "recompute": "full"}})";

TEST_F(CliSolveTest, ATrainingSearchReturnsATrainingOnlyPlan)
{
    const fs::path plan = write("train.json", kTrainingOnly70b);
    const SolveRun r = cli("solve " + plan.string() + " --goal max-throughput --top 3");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json best = nlohmann::json::parse(r.out)["best"]["plan"];
    EXPECT_TRUE(best.contains("training"));
    EXPECT_FALSE(best.contains("serving")) << best.dump();
    EXPECT_FALSE(best.contains("rl")) << best.dump();
    // ... and it still estimates: the absent sections read as their defaults.
    const fs::path saved = write("best.json", best.dump(2));
    EXPECT_EQ(cli("estimate " + saved.string()).status, 0);
}

TEST_F(CliSolveTest, CompareWithholdsRatesOfPlansThatDoNotFitAndAbsentSections)
{
    const fs::path fits = write("fits.json", kTrainingOnly70b);
    // ZeRO-0 replicates 16 B x 70.55e9 params = 1,129 GB on every GPU: over HBM.
    const fs::path over = write("over.json",
        R"({"format": "envelope.plan", "version": 1, "name": "over", "model": "llama-3-70b",
            "gpu": "h100-sxm", "cluster": {"gpus": 64, "gpus_per_node": 8},
            "training": {"zero_stage": 0, "seq_len": 4096, "recompute": "full"}})");
    const SolveRun r = cli("compare " + fits.string() + " " + over.string() + " --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json rows = nlohmann::json::parse(r.out)["rows"];
    bool sawTokens = false;
    for (const nlohmann::json& row : rows) {
        const std::string key = row["figure"];
        EXPECT_EQ(key.rfind("serving.", 0), std::string::npos) << key; // training-only plans
        EXPECT_EQ(key.rfind("rl.", 0), std::string::npos) << key;
        if (key == "training.tokens_per_s" || key == "training.cost") {
            sawTokens = true;
            EXPECT_TRUE(row["values"][0].is_number()) << row.dump();
            EXPECT_TRUE(row["values"][1].is_null()) << row.dump();
            EXPECT_EQ(row["withheld"][1], "n/a: does not fit") << row.dump();
        }
    }
    EXPECT_TRUE(sawTokens);
    const SolveRun text = cli("compare " + fits.string() + " " + over.string());
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("n/a: does not fit"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("RL steps/hour"), std::string::npos) << text.out;
}

TEST_F(CliSolveTest, AnRlPoolThatCannotHoldItsLayoutIsNamedAndItsFiguresWithheld)
{
    const fs::path plan = write("l70-3d.json",
        R"({"name":"Llama-3-70B pretrain 3-D parallel on 64xH100","model":"llama-3-70b",
            "gpu":"h100-sxm","cluster":{"gpus":64,"gpus_per_node":8},
            "training":{"zero_stage":1,"tp":8,"pp":4,"virtual_stages":5,
              "sequence_parallel":true,"seq_len":8192,"micro_batch":1,"grad_accum":64,
              "recompute":"selective","framework":"megatron","train_tokens":1.5e13},
            "rl":{"algorithm":"grpo","trainer_gpus":32,"reference_gpus":8,"rollout_gpus":24}})");
    const SolveRun r = cli("estimate " + plan.string() + " --set rl.trainer_gpus=4");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json rl = nlohmann::json::parse(r.out)["rl"];
    EXPECT_FALSE(rl["fits"].get<bool>());
    EXPECT_NE(rl["problem"].get<std::string>().find("multiple of 32 GPUs, got 4"),
        std::string::npos);
    EXPECT_TRUE(rl["step_s"].is_null());
    EXPECT_EQ(rl["per_role"][0]["role"], "trainer");
    // 70.55e9 params x 16 B over 4 GPUs, whatever the layout: at least 282 GB each.
    EXPECT_GE(rl["per_role"][0]["per_gpu_bytes"]["total"].get<double>(), 282e9);
    const SolveRun text = cli("estimate " + plan.string() + " --set rl.trainer_gpus=4 "
                                                          "--format text");
    EXPECT_NE((text.out + text.err).find("rl.trainer_gpus: the trainer's layout"),
        std::string::npos)
        << text.out << text.err;
}

} // namespace

namespace {

TEST_F(CliSolveTest, EstimateSaysWhatMakesItFitAndTheChangeDoes)
{
    // 70B under ZeRO-0 holds 16 B x 70.55e9 = 1,129 GB per GPU: over. The planner's answer is
    // in the result JSON as field changes; applying them with --set gives a plan that fits.
    const fs::path over = write("over.json",
        R"({"format": "envelope.plan", "version": 1, "model": "llama-3-70b", "gpu": "h100-sxm",
            "cluster": {"gpus": 64, "gpus_per_node": 8},
            "training": {"zero_stage": 0, "seq_len": 4096, "recompute": "full"}})");
    const SolveRun r = cli("estimate " + over.string());
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json training = nlohmann::json::parse(r.out)["training"];
    ASSERT_EQ(training["verdict"], "over");
    const nlohmann::json fit = training["what_makes_it_fit"];
    ASSERT_TRUE(fit.is_object()) << training.dump();
    ASSERT_FALSE(fit["changes"].empty());
    EXPECT_GE(fit["gpus"].get<int>(), 1);
    EXPECT_FALSE(fit["description"].get<std::string>().empty());
    std::string sets;
    for (const auto& [path, value] : fit["changes"].items())
        sets += " --set " + path + "=" + value.dump();
    const SolveRun changed = cli("estimate " + over.string() + sets);
    ASSERT_EQ(changed.status, 0) << changed.err << sets;
    const nlohmann::json after = nlohmann::json::parse(changed.out)["training"];
    EXPECT_EQ(after["verdict"], "fits") << sets;
    EXPECT_TRUE(after["what_makes_it_fit"].is_null());
    EXPECT_EQ(after["data_parallel"].get<int>() > 0, true);
    // The text report carries the same answer.
    const SolveRun text = cli("estimate " + over.string() + " --format text");
    EXPECT_NE(text.out.find("what makes it fit"), std::string::npos) << text.out;
}

} // namespace
