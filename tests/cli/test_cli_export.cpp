// envelope-cli export, import, compare and --set as scripts use them: the real binary, its
// files, its messages and exit statuses (0 ok, 2 bad plan or bad engine file, 1 anything else).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_testing.h"

namespace {

namespace fs = std::filesystem;

using CliResult = envelope::clitest::CliRun;
const auto& slurp = envelope::clitest::readFile;
const auto& q = envelope::clitest::shellQuote;

const std::string kDefaultPlan = std::string(ENVELOPE_SOURCE_DIR) + "/presets/default-plan.json";
const std::string kHfConfig = std::string(ENVELOPE_TEST_DATA_DIR) + "/plans/llama-2-7b-config.json";

class ExportCli : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_dir = fs::temp_directory_path()
            / ("envelope-export-cli-"
                + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-"
                + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "config");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    CliResult cli(const std::string& args) const
    {
        return envelope::clitest::runCli(m_dir, "XDG_CONFIG_HOME=" + q((m_dir / "config").string()), args);
    }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }
    void write(const std::string& name, const std::string& text) const
    {
        std::ofstream(m_dir / name, std::ios::binary) << text;
    }

    fs::path m_dir;
};

TEST_F(ExportCli, ExportToStdoutKeepsTheFileValid)
{
    const CliResult r = cli("export " + q(kDefaultPlan) + " --to deepspeed");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out); // nothing but the JSON on stdout
    EXPECT_EQ(j["train_batch_size"], 64);
    EXPECT_NE(r.err.find("launch: deepspeed --num_gpus 8 train.py --deepspeed ds_config.json"),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("warning: training.recompute = \"selective\""), std::string::npos);
    EXPECT_NE(r.err.find("# Envelope: training memory per GPU"), std::string::npos);
}

TEST_F(ExportCli, ExportToFileWithSetAndEveryEngine)
{
    for (const char* engine : { "deepspeed", "torchtitan", "megatron", "hf", "vllm" }) {
        SCOPED_TRACE(engine);
        const CliResult r = cli("export " + q(kDefaultPlan) + " --to " + engine + " -o "
            + q(path(std::string("out.") + engine)) + " --set training.micro_batch=2");
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_TRUE(r.out.empty());
        EXPECT_FALSE(slurp(path(std::string("out.") + engine)).empty());
        EXPECT_FALSE(fs::exists(path(std::string("out.") + engine) + ".envelope-tmp"));
    }
    // micro 2 x accum 8 x 8 GPUs
    EXPECT_EQ(nlohmann::json::parse(slurp(path("out.deepspeed")))["train_batch_size"], 128);
    EXPECT_NE(slurp(path("out.megatron")).find("--global-batch-size 128\n"), std::string::npos);
}

TEST_F(ExportCli, BadInputExitStatuses)
{
    CliResult r = cli("export " + q(kDefaultPlan) + " --to jax");
    EXPECT_EQ(r.status, 1);
    r = cli("export " + q(kDefaultPlan) + " --to deepspeed --set training.zero_stage=7");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("training.zero_stage: must be 0..3, got 7"), std::string::npos) << r.err;
    r = cli("export " + q(kDefaultPlan) + " --to deepspeed -o /nonexistent/dir/x.json");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
}

TEST_F(ExportCli, SetOnEstimateAndExplain)
{
    CliResult r = cli("estimate " + q(kDefaultPlan) + " --set training.tp=8 --set gpu=h200");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    // H200: 141 GB of HBM3e per the datasheet; the driver reports 143,771 MiB = 150.76e9 bytes.
    EXPECT_GT(j["training"]["gpu_memory_bytes"].get<double>(), 141e9);
    r = cli("estimate " + q(kDefaultPlan) + " --set training.tpp=2");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("training.tpp: unknown key"), std::string::npos) << r.err;
    r = cli("explain " + q(kDefaultPlan) + " --set training.mfu=2");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("training.mfu"), std::string::npos) << r.err;
    r = cli("estimate " + q(kDefaultPlan) + " --set nonsense");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--set: expected PATH=VALUE"), std::string::npos) << r.err;
}

TEST_F(ExportCli, ImportRoundTripsAnExportAndEstimatesIt)
{
    ASSERT_EQ(
        cli("export " + q(kDefaultPlan) + " --to torchtitan -o " + q(path("job.toml"))).status, 0);
    CliResult r
        = cli("import torchtitan " + q(path("job.toml")) + " --model llama-2-7b --format plan");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json plan = nlohmann::json::parse(r.out);
    const nlohmann::json original = nlohmann::json::parse(slurp(kDefaultPlan));
    for (const char* key :
        { "tp", "pp", "zero_stage", "micro_batch", "grad_accum", "seq_len", "recompute", "recipe" })
        EXPECT_EQ(plan["training"][key], original["training"][key]) << key;
    EXPECT_EQ(plan["name"], original["name"]);

    r = cli("import torchtitan " + q(path("job.toml")) + " --model llama-2-7b");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("as a torchtitan job (TOML)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Training memory per GPU"), std::string::npos);
    // A training job's config: its report has the training sections only.
    EXPECT_EQ(r.out.find("RL step"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\nServing ("), std::string::npos) << r.out;

    r = cli("import torchtitan " + q(path("job.toml")) + " --model llama-2-7b --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["format"], "envelope.import");
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["source"]["engine"], "torchtitan");
    EXPECT_EQ(j["result"]["format"], "envelope.result");
}

// --report json: the launch line, figures and warnings as one tagged JSON document on stderr,
// the configuration still alone on stdout (issue 25).
TEST_F(ExportCli, TheExportReportCanBeJson)
{
    CliResult r = cli("export " + q(kDefaultPlan) + " --to deepspeed --report json");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json config = nlohmann::json::parse(r.out); // stdout: ds_config.json
    EXPECT_TRUE(config.contains("zero_optimization"));
    const nlohmann::json report = nlohmann::json::parse(r.err);
    EXPECT_EQ(report["format"], "envelope.export-report");
    EXPECT_EQ(report["version"], 1);
    EXPECT_EQ(report["engine"], "deepspeed");
    EXPECT_EQ(report["engine_version"], "v0.19.5");
    EXPECT_EQ(report["output"], "-");
    EXPECT_NE(report["launch"].get<std::string>().find("--deepspeed ds_config.json"), std::string::npos);
    // The default plan's selective recompute is one DeepSpeed cannot express.
    bool recompute = false;
    for (const auto& w : report["warnings"])
        recompute = recompute || w.get<std::string>().find("training.recompute") != std::string::npos;
    EXPECT_TRUE(recompute) << report.dump(2);
    r = cli("export " + q(kDefaultPlan) + " --to torchtitan -o " + q(path("job.toml")) + " --report json");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json toFile = nlohmann::json::parse(r.err);
    EXPECT_EQ(toFile["files"][0], path("job.toml"));
    EXPECT_EQ(cli("export " + q(kDefaultPlan) + " --to deepspeed --report yaml").status, 1);
}

TEST_F(ExportCli, ImportMegatronCommandLineOnANewCluster)
{
    // "Will my existing config fit on the new cluster?": a launch line moved to 32 GPUs.
    write("run.sh",
        "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
        "  --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 \\\n"
        "  --sequence-parallel --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 \\\n"
        "  --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 \\\n"
        "  --use-distributed-optimizer --bf16 --lr 3e-4\n");
    const CliResult r = cli("import megatron " + q(path("run.sh")) + " --model " + q(kHfConfig)
        + " --gpus 32 --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json& t = j["plan"]["training"];
    EXPECT_EQ(t["tp"], 4);
    EXPECT_EQ(t["pp"], 2);
    EXPECT_EQ(t["sequence_parallel"], true);
    EXPECT_EQ(t["grad_accum"], 16); // 64 / (1 x 32 / (4 x 2))
    EXPECT_EQ(t["recompute"], "full");
    EXPECT_EQ(t["zero_stage"], 1);
    EXPECT_EQ(t["recipe"], "bf16-mixed-18");
    EXPECT_EQ(j["plan"]["cluster"]["gpus"], 32);
    EXPECT_TRUE(j["plan"]["model"].contains("hf_config"));
    EXPECT_NE(r.err.find("not read: --lr"), std::string::npos) << r.err;
}

// Issue 25: each export names the release it is written for; --engine-version accepts that one
// and refuses another with exit 2.
TEST_F(ExportCli, EngineVersionIsNamedAndChecked)
{
    CliResult r = cli("export " + q(kDefaultPlan) + " --to torchtitan --engine-version v0.2.2");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("# Envelope export for torchtitan v0.2.2", 0), 0u) << r.out;
    r = cli("export " + q(kDefaultPlan) + " --to megatron");
    EXPECT_EQ(r.out.rfind("# Envelope export for Megatron-LM core_v0.19.0", 0), 0u) << r.out;
    r = cli("export " + q(kDefaultPlan) + " --to deepspeed");
    EXPECT_NE(r.err.find("# Envelope export for DeepSpeed v0.19.5"), std::string::npos) << r.err;
    r = cli("export " + q(kDefaultPlan) + " --to torchtitan --engine-version main");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--engine-version: torchtitan exports are written for v0.2.2"),
        std::string::npos)
        << r.err;
}

TEST_F(ExportCli, ImportBadFilesExit2NamingTheKey)
{
    write("ds.json", R"({"zero_optimization": {"stage": 4}})");
    CliResult r = cli("import deepspeed " + q(path("ds.json")) + " --model llama-2-7b");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(
        r.err.find("(a DeepSpeed config (JSON)): zero_optimization.stage: must be 0..3, got 4"),
        std::string::npos)
        << r.err;
    write("ds2.json", R"({"train_micro_batch_size_per_gpu": 1})");
    r = cli("import deepspeed " + q(path("ds2.json")) + " --model no-such-model");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("model"), std::string::npos) << r.err;
    write("job.toml", "[training]\nseq_len = {}\n");
    r = cli("import torchtitan " + q(path("job.toml")) + " --model llama-2-7b");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("line 2: inline tables are not supported"), std::string::npos) << r.err;
    EXPECT_EQ(cli("import hf " + q(path("ds.json")) + " --model llama-2-7b").status, 1);
    EXPECT_EQ(cli("import deepspeed /nonexistent.json --model llama-2-7b").status, 1);
}

TEST_F(ExportCli, CompareColumnsAndDeltas)
{
    write("b.json", std::string(R"({"name": "ZeRO-1", "model": "llama-2-7b", "gpu": "h100-sxm",
        "training": {"zero_stage": 1, "micro_batch": 1, "grad_accum": 8}})"));
    CliResult r = cli("compare " + q(kDefaultPlan) + " " + q(path("b.json")) + " --format json");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["plans"].size(), 2u);
    EXPECT_EQ(j["plans"][1]["name"], "ZeRO-1");
    for (const nlohmann::json& row : j["rows"]) {
        if (row["figure"] != "training.per_gpu_bytes.weights")
            continue;
        // 6.74e9 params x 2 bytes: /8 under ZeRO-3 (1.68 GB), whole under ZeRO-1 (13.5 GB).
        EXPECT_NEAR(row["values"][0].get<double>(), 6.738e9 * 2 / 8, 0.01e9);
        EXPECT_NEAR(row["values"][1].get<double>(), 6.738e9 * 2, 0.01e9);
        EXPECT_NEAR(row["deltas"][0].get<double>(), 6.738e9 * 2 * 7 / 8, 0.01e9);
    }
    r = cli("compare " + q(kDefaultPlan) + " " + q(path("b.json")));
    ASSERT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("memory per GPU: weights"), std::string::npos);
    EXPECT_NE(r.out.find("+700%"), std::string::npos) << r.out;
    r = cli("compare " + q(kDefaultPlan) + " " + q(path("b.json")) + " --format markdown");
    EXPECT_NE(r.out.find("| figure |"), std::string::npos) << r.out;
    EXPECT_EQ(cli("compare " + q(kDefaultPlan)).status, 1); // needs two plans
    r = cli("compare " + q(kDefaultPlan) + " " + q(path("b.json")) + " --set training.ep=0");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("training.ep"), std::string::npos) << r.err;
}

} // namespace
