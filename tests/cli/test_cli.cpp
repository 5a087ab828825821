// envelope-cli as scripts use it: the real binary, its exit statuses (0 ok, 2 bad plan, 1 anything
// else), golden text/markdown/json reports of the default plan, and a complete result for every
// model preset on every GPU preset.
//
// Golden files: tests/cli/golden/. After an intended change to the figures or the layout,
// regenerate them with ENVELOPE_UPDATE_GOLDEN=1 ./build/tests/envelope_cli_tests and review the
// diff (git diff tests/cli/golden) before committing.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_testing.h"

namespace {

namespace fs = std::filesystem;

using envelope::clitest::CliRun;
using envelope::clitest::readFile;
using envelope::clitest::writeFile;
const auto& quote = envelope::clitest::shellQuote;

class CliTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = fs::temp_directory_path()
            / (std::string("envelope-cli-") + info->name() + "-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "config");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    // Runs envelope-cli with `args` (already quoted where needed). User presets come from an
    // empty XDG_CONFIG_HOME unless a test puts files there.
    // `input`: the file on its standard input (default /dev/null).
    CliRun cli(const std::string& args, const std::string& input = "/dev/null") const
    {
        return envelope::clitest::runCli(
            m_dir, "XDG_CONFIG_HOME=" + quote((m_dir / "config").string()), args, input);
    }

    fs::path m_dir;
};

const std::string kPlans = std::string(ENVELOPE_TEST_DATA_DIR) + "/plans/";
const std::string kDefaultPlan = std::string(ENVELOPE_SOURCE_DIR) + "/presets/default-plan.json";

// design.md's result keys, as JSON pointers.
const char* const kResultKeys[]
    = { "/model/params", "/model/active_params", "/training/per_gpu_bytes/weights",
          "/training/per_gpu_bytes/gradients", "/training/per_gpu_bytes/optimizer",
          "/training/per_gpu_bytes/activations", "/training/per_gpu_bytes/overhead",
          "/training/per_gpu_bytes/total", "/training/gpu_memory_bytes", "/training/fits",
          "/training/min_gpus", "/training/host_bytes_per_node", "/training/flops_per_token",
          "/training/hardware_flops_per_token", "/training/step_time_s", "/training/tokens_per_s",
          "/training/train_time_s", "/training/gpu_hours", "/training/cost",
          "/training/communication/dp_s", "/training/communication/tp_s",
          "/training/communication/pp_bubble_fraction", "/training/bottleneck",
          "/serving/kv_bytes_per_token", "/serving/weights_bytes_per_gpu",
          "/serving/kv_budget_bytes", "/serving/max_tokens", "/serving/max_sequences",
          "/serving/decode_tokens_per_s", "/rl/per_role", "/rl/rollout_s", "/rl/train_s",
          "/rl/step_s", "/rl/steps_per_hour", "/rl/bottleneck", "/explain" };

void expectCompleteResult(const std::string& text)
{
    const nlohmann::json r = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(r.is_discarded()) << text;
    EXPECT_EQ(r.value("format", ""), "envelope.result");
    for (const char* key : kResultKeys)
        EXPECT_TRUE(r.contains(nlohmann::json::json_pointer(key))) << key;
    for (const char* key : { "weights", "total" })
        EXPECT_TRUE(r["training"]["per_gpu_bytes"][key].is_number_integer()) << key;
}

std::vector<std::string> ids(const std::string& listing)
{
    std::vector<std::string> out;
    std::istringstream lines(listing);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty())
            out.push_back(line.substr(0, line.find(' ')));
    return out;
}

TEST_F(CliTest, NoCommandIsAUsageErrorWithStatus1)
{
    const CliRun r = cli("");
    EXPECT_EQ(r.status, 1);
    EXPECT_FALSE(r.err.empty());
}

TEST_F(CliTest, HelpSucceeds)
{
    const CliRun r = cli("--help");
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("estimate"), std::string::npos);
}

TEST_F(CliTest, UnknownCommandAndBadOptionsExit1)
{
    EXPECT_EQ(cli("frobnicate").status, 1);
    EXPECT_EQ(cli("estimate " + quote(kDefaultPlan) + " --format yaml").status, 1);
    const CliRun units = cli("estimate " + quote(kDefaultPlan) + " --units tb");
    EXPECT_EQ(units.status, 1);
    EXPECT_NE(units.err.find("--units: must be gb or gib"), std::string::npos) << units.err;
    EXPECT_EQ(cli("presets planets").status, 1);
}

// An unknown command says so and names the nearest (issue 25), with the usage status.
TEST_F(CliTest, AnUnknownCommandNamesTheNearest)
{
    const CliRun typo = cli("estmate " + quote(kDefaultPlan));
    EXPECT_EQ(typo.status, 1);
    EXPECT_NE(typo.err.find("unknown command \"estmate\"; did you mean \"estimate\"?"), std::string::npos)
        << typo.err;
    const CliRun prefix = cli("calib " + quote(kDefaultPlan));
    EXPECT_NE(prefix.err.find("did you mean \"calibrate\"?"), std::string::npos) << prefix.err;
    const CliRun far = cli("frobnicate");
    EXPECT_EQ(far.status, 1);
    EXPECT_NE(far.err.find("unknown command \"frobnicate\""), std::string::npos) << far.err;
    EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

// "-" is standard input for a plan (and any file read), "-o -" standard output (issue 25).
TEST_F(CliTest, DashIsStandardInputAndOutput)
{
    const CliRun file = cli("estimate " + quote(kDefaultPlan));
    const CliRun piped = cli("estimate -", kDefaultPlan);
    ASSERT_EQ(piped.status, 0) << piped.err;
    EXPECT_EQ(piped.out, file.out);
    const CliRun set = cli("estimate - --format text --set training.tp=2", kDefaultPlan);
    ASSERT_EQ(set.status, 0) << set.err;
    EXPECT_NE(set.out.find("TP 2"), std::string::npos) << set.out;
    const CliRun exported = cli("export - --to vllm -o -", kDefaultPlan);
    ASSERT_EQ(exported.status, 0) << exported.err;
    EXPECT_NE(exported.out.find("vllm serve"), std::string::npos) << exported.out;
    EXPECT_FALSE(fs::exists(m_dir / "-"));
    // An empty standard input is an empty plan: bad input, named.
    const CliRun empty = cli("estimate -");
    EXPECT_EQ(empty.status, 2) << empty.err;
    EXPECT_NE(empty.err.find("-:"), std::string::npos) << empty.err;
    const CliRun hf = cli("import-hf - --model-only", std::string(ENVELOPE_TEST_DATA_DIR) + "/hf/llama-2-7b.json");
    ASSERT_EQ(hf.status, 0) << hf.err;
    EXPECT_NE(hf.out.find("\"layers\": 32"), std::string::npos) << hf.out;
}

// One exit-status table: --help, docs/cli.md and the man page give the same four statuses with
// the same meanings (issue 25).
TEST_F(CliTest, TheExitStatusTableIsTheSameEverywhere)
{
    const std::string help = cli("--help").out;
    const std::string doc = readFile(fs::path(ENVELOPE_SOURCE_DIR) / "docs/cli.md");
    const std::string man = readFile(fs::path(ENVELOPE_SOURCE_DIR) / "packaging/envelope-cli.1");
    const std::pair<const char*, const char*> statuses[]
        = { { "0", "success" }, { "1", "error" }, { "2", "bad input" }, { "3", "no feasible plan" } };
    for (const auto& [code, meaning] : statuses) {
        EXPECT_NE(help.find(std::string(code) + " " + meaning), std::string::npos) << code << "\n" << help;
        EXPECT_NE(doc.find(std::string("| ") + code + " | " + meaning), std::string::npos) << code;
        std::string capital = meaning;
        capital[0] = char(std::toupper(static_cast<unsigned char>(capital[0])));
        EXPECT_NE(man.find(std::string(".B ") + code + "\n" + capital), std::string::npos) << code;
    }
}

// The completion scripts are written from the command line's own definition: every command of
// --help, every option of each command's --help and every choice it lists are in the bash
// script, and bash itself completes with it (issue 25).
TEST_F(CliTest, ShellCompletionsCoverWhatHelpLists)
{
    const CliRun bash = cli("completion bash");
    ASSERT_EQ(bash.status, 0) << bash.err;
    const std::string script = bash.out;
    std::vector<std::string> commands;
    {
        std::istringstream lines(cli("--help").out);
        bool inCommands = false;
        for (std::string line; std::getline(lines, line);) {
            if (line.starts_with("Subcommands:")) {
                inCommands = true;
                continue;
            }
            if (inCommands && line.size() > 2 && line[2] != ' ')
                commands.push_back(line.substr(2, line.find(' ', 2) - 2));
        }
    }
    ASSERT_GE(commands.size(), 10u);
    for (const std::string& command : commands) {
        EXPECT_NE(script.find("    " + command + ")\n"), std::string::npos) << command;
        const std::string help = cli(command + " --help").out;
        std::istringstream words(help);
        for (std::string word; words >> word;) {
            // "-o,--output" and "--format" name options; "TEXT:{json,text}" lists choices.
            const std::size_t brace = word.find(":{");
            if (brace != std::string::npos) {
                std::string choice;
                for (char c : word.substr(brace + 2)) {
                    if (c == ',' || c == '}') {
                        EXPECT_NE(script.find(choice), std::string::npos) << command << " " << choice;
                        choice.clear();
                    } else {
                        choice += c;
                    }
                }
                continue;
            }
            if (!word.starts_with("--"))
                continue;
            std::string name = word.substr(0, word.find_first_of(",=[ "));
            if (name == "--help")
                continue;
            EXPECT_NE(script.find(" " + name), std::string::npos) << command << " " << name;
        }
    }
    // Bash completes a command, a goal and an engine with it.
    const fs::path file = m_dir / "completion.bash";
    writeFile(file, script);
    const fs::path out = m_dir / "replies";
    const std::string probe = "source " + quote(file.string()) + "; "
        + "COMP_WORDS=(envelope-cli est); COMP_CWORD=1; _envelope_cli; echo \"${COMPREPLY[*]}\"; "
        + "COMP_WORDS=(envelope-cli solve p.json --goal serving-m); COMP_CWORD=4; _envelope_cli; echo \"${COMPREPLY[*]}\"; "
        + "COMP_WORDS=(envelope-cli import meg); COMP_CWORD=2; _envelope_cli; echo \"${COMPREPLY[*]}\"";
    ASSERT_EQ(std::system(("bash -c " + quote(probe) + " >" + quote(out.string())).c_str()), 0);
    EXPECT_EQ(readFile(out),
        "estimate\nserving-max-throughput serving-min-gpus serving-max-goodput\nmegatron\n");
    // zsh takes the same function through bashcompinit; fish gets its own lines.
    EXPECT_NE(cli("completion zsh").out.find("bashcompinit"), std::string::npos);
    const std::string fish = cli("completion fish").out;
    EXPECT_NE(fish.find("__fish_seen_subcommand_from solve' -l goal -x -a"), std::string::npos) << fish;
    EXPECT_EQ(cli("completion tcsh").status, 1);
}

TEST_F(CliTest, MissingOrUnreadablePlanFileExits1AndNamesIt)
{
    const CliRun missing = cli("estimate /nonexistent/plan.json");
    EXPECT_EQ(missing.status, 1);
    EXPECT_NE(missing.err.find("/nonexistent/plan.json: no such file"), std::string::npos)
        << missing.err;
    const CliRun folder = cli("estimate " + quote(m_dir.string()));
    EXPECT_EQ(folder.status, 1);
    EXPECT_NE(folder.err.find("is a folder"), std::string::npos) << folder.err;
}

TEST_F(CliTest, EndlessInputIsCutOffNotReadForever)
{
    // /dev/zero never ends: it is not a regular file, so the reader refuses it before opening.
    const CliRun r = cli("estimate /dev/zero");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("/dev/zero: is not a regular file"), std::string::npos) << r.err;
}

TEST_F(CliTest, FilesThatAreNotPlansExit2WithoutACrash)
{
    const std::pair<const char*, std::string> files[] = {
        { "empty.json", "" },
        { "truncated.json", "{\"model\": " },
        { "junk.bin",
            std::string("\x7f"
                        "ELF\x02\x01\x01\0\0\xff\xfe",
                12) },
        { "array.json", "[1, 2, 3]" },
    };
    for (const auto& [name, text] : files) {
        SCOPED_TRACE(name);
        writeFile(m_dir / name, text);
        const CliRun r = cli("estimate " + quote((m_dir / name).string()));
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
}

TEST_F(CliTest, BadPlanExits2AndNamesTheJsonPath)
{
    const CliRun r = cli("estimate " + quote(kPlans + "bad-zero-stage.json"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("training.zero_stage: must be 0..3, got 5"), std::string::npos) << r.err;
    const CliRun newer = cli("estimate " + quote(kPlans + "newer-version.json"));
    EXPECT_EQ(newer.status, 2);
    EXPECT_NE(newer.err.find("version: this plan is envelope.plan version 2; this Envelope reads "
                             "version 1 — update Envelope"),
        std::string::npos)
        << newer.err;
    EXPECT_EQ(cli("explain " + quote(kPlans + "bad-zero-stage.json")).status, 2);
}

TEST_F(CliTest, EstimatePrintsACompleteResultJson)
{
    const CliRun r = cli("estimate " + quote(kPlans + "inline-architecture.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    expectCompleteResult(r.out);
    const nlohmann::json result = nlohmann::json::parse(r.out);
    // Llama-2 7B: 32000 x 4096 x 2 embeddings + 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096)
    // + 4096 final norm = 6,738,415,616 parameters (Touvron et al. 2023: "7B").
    EXPECT_EQ(result["model"]["params"], 6738415616);
    EXPECT_EQ(result["training"]["gpu_memory_bytes"], 81559LL * 1024 * 1024);
}

TEST_F(CliTest, TextReportLabelsTheChosenByteUnit)
{
    const std::string plan = quote(kPlans + "inline-architecture.json");
    const CliRun gb = cli("estimate " + plan + " --format text");
    ASSERT_EQ(gb.status, 0) << gb.err;
    EXPECT_NE(gb.out.find("85.5 GB"), std::string::npos) << gb.out; // 85,520,809,984 B
    EXPECT_EQ(gb.out.find("GiB"), std::string::npos);
    const CliRun gib = cli("estimate " + plan + " --format text --units gib");
    ASSERT_EQ(gib.status, 0) << gib.err;
    EXPECT_NE(gib.out.find("79.6 GiB"), std::string::npos) << gib.out; // 81,559 MiB / 1024
    EXPECT_EQ(gib.out.find(" GB"), std::string::npos);
    const CliRun md = cli("estimate " + plan + " --format markdown");
    ASSERT_EQ(md.status, 0) << md.err;
    EXPECT_NE(md.out.find("| weights |"), std::string::npos) << md.out;
}

TEST_F(CliTest, ExplainListsFiguresWithFormulas)
{
    const CliRun r = cli("explain " + quote(kPlans + "inline-architecture.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("model.params = "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  formula: "), std::string::npos);
}

TEST_F(CliTest, ExplainFilterKeepsOnlyFiguresWithThePrefix)
{
    const std::string plan = quote(kPlans + "inline-architecture.json");
    const CliRun r = cli("explain " + plan + " --filter training.communication");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("training.communication.dp_s = "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("model.params = "), std::string::npos) << r.out;
    const CliRun none = cli("explain " + plan + " --filter nothing.");
    EXPECT_EQ(none.status, 1);
    EXPECT_NE(none.err.find("--filter: no figure starts with \"nothing.\""), std::string::npos)
        << none.err;
}

TEST_F(CliTest, ImportHfSummaryNamesExpertsAndTopK)
{
    // Mixtral-8x7B config.json: num_local_experts 8, num_experts_per_tok 2, 32 layers.
    const CliRun r
        = cli("import-hf " + quote(std::string(ENVELOPE_TEST_DATA_DIR) + "/hf/mixtral-8x7b.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string summary = nlohmann::json::parse(r.out).at("summary");
    EXPECT_EQ(
        summary.rfind("32 layers, hidden 4096, 32 heads (8 KV), MoE 8 experts, top-2, ", 0), 0u)
        << summary;
}

TEST_F(CliTest, ImportHfSummaryNamesTheMlaLatentNotKvHeads)
{
    // DeepSeek-V3 config.json: MLA caches kv_lora_rank 512 + qk_rope_head_dim 64 per token, so
    // "128 heads (128 KV)" would misread its cache (issue 23).
    const CliRun r
        = cli("import-hf " + quote(std::string(ENVELOPE_TEST_DATA_DIR) + "/hf/deepseek-v3.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string summary = nlohmann::json::parse(r.out).at("summary");
    EXPECT_EQ(summary.rfind("61 layers, hidden 7168, 128 heads (MLA: KV latent 512 + RoPE 64), "
                            "MoE 256 experts, top-8 + 1 shared, ",
                  0),
        0u)
        << summary;
}

TEST_F(CliTest, VersionPrintsTheProjectVersion)
{
    const CliRun r = cli("--version");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "envelope-cli " ENVELOPE_TEST_VERSION "\n");
}

// ---- Reports a planning doc can paste (issue 11) ----------------------------------------

// Training only, on 4 GPUs against the default RL pools of 8: the RL pools warning exists but
// belongs to a section this plan is not about.
constexpr const char* kTrainingOnlyPlan = R"({"name": "train only", "model": "llama-2-7b",
    "gpu": "h100-sxm", "cluster": {"gpus": 4, "gpus_per_node": 8},
    "training": {"zero_stage": 3, "tp": 2, "micro_batch": 2, "grad_accum": 4}})";

TEST_F(CliTest, MarkdownOpensWithTheConfigurationAndOnlyThePlansSections)
{
    writeFile(m_dir / "train.json", kTrainingOnlyPlan);
    const CliRun r
        = cli("estimate " + quote((m_dir / "train.json").string()) + " --format markdown");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("# train only\n\n## Configuration\n\n| Setting | Value |\n", 0), 0u)
        << r.out;
    EXPECT_NE(r.out.find("| ZeRO stage | ZeRO-3 |"), std::string::npos) << r.out;
    // DP = 4 / 2 = 2: micro-batch 2 x accumulation 4 x DP 2 = 16 sequences of 4096 = 65,536.
    EXPECT_NE(r.out.find("= global batch 16 sequences (65.5K tokens)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("## Training compute"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("## Serving"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("## RL"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("RL pools"), std::string::npos) << r.out;
    // A plan with training and serving keys (no rl) gets those two.
    const CliRun both
        = cli("estimate " + quote(kPlans + "inline-architecture.json") + " --format text");
    ASSERT_EQ(both.status, 0) << both.err;
    EXPECT_NE(both.out.find("\nServing ("), std::string::npos) << both.out;
    EXPECT_EQ(both.out.find("\nRL step"), std::string::npos) << both.out;
}

TEST_F(CliTest, SectionsOptionChoosesAndRefusesUnknownNames)
{
    writeFile(m_dir / "train.json", kTrainingOnlyPlan);
    const std::string plan = quote((m_dir / "train.json").string());
    const CliRun rl = cli("estimate " + plan + " --format text --sections rl,serving");
    ASSERT_EQ(rl.status, 0) << rl.err;
    EXPECT_NE(rl.out.find("\nRL step\n"), std::string::npos) << rl.out;
    EXPECT_NE(rl.out.find("the RL pools use 8 GPUs, more than the cluster's 4"), std::string::npos)
        << rl.out;
    EXPECT_NE(rl.out.find("\nServing ("), std::string::npos) << rl.out;
    EXPECT_EQ(rl.out.find("Training memory"), std::string::npos) << rl.out;
    const CliRun bad = cli("estimate " + plan + " --format text --sections training,memory");
    EXPECT_EQ(bad.status, 2);
    EXPECT_TRUE(bad.out.empty());
    EXPECT_NE(bad.err.find("unknown section \"memory\"; allowed: training, compute, serving, rl"),
        std::string::npos)
        << bad.err;
    const CliRun json = cli("estimate " + plan + " --sections training");
    EXPECT_EQ(json.status, 2);
    EXPECT_NE(json.err.find("--sections"), std::string::npos) << json.err;
}

TEST_F(CliTest, HelpPrintsTheTopOrACommandsHelp)
{
    const CliRun top = cli("help");
    ASSERT_EQ(top.status, 0) << top.err;
    EXPECT_NE(top.out.find("Usage: envelope-cli [OPTIONS] SUBCOMMAND"), std::string::npos)
        << top.out;
    EXPECT_NE(top.out.find("  estimate "), std::string::npos) << top.out;
    const CliRun estimate = cli("help estimate");
    ASSERT_EQ(estimate.status, 0) << estimate.err;
    EXPECT_NE(estimate.out.find("Usage: envelope-cli estimate"), std::string::npos) << estimate.out;
    EXPECT_NE(estimate.out.find("--sections"), std::string::npos) << estimate.out;
    const CliRun unknown = cli("help frobnicate");
    EXPECT_EQ(unknown.status, 2);
    EXPECT_NE(unknown.err.find("unknown command \"frobnicate\"; commands: estimate, explain, "),
        std::string::npos)
        << unknown.err;
}

void compareWithGolden(const std::string& actual, const std::string& name)
{
    const fs::path golden = fs::path(ENVELOPE_GOLDEN_DIR) / name;
    if (std::getenv("ENVELOPE_UPDATE_GOLDEN")) {
        writeFile(golden, actual);
        return;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: run with ENVELOPE_UPDATE_GOLDEN=1";
    if (actual != readFile(golden)) {
        const fs::path actualPath = fs::path(golden).concat(".actual");
        writeFile(actualPath, actual);
        ADD_FAILURE() << "output differs from " << golden << "; actual output written to "
                      << actualPath << " (diff them; ENVELOPE_UPDATE_GOLDEN=1 accepts it)";
    }
}

TEST_F(CliTest, DefaultPlanMatchesGoldenReports)
{
    const std::pair<const char*, const char*> formats[] = { { "text", "default-plan.txt" },
        { "markdown", "default-plan.md" }, { "json", "default-plan.json" } };
    for (const auto& [format, golden] : formats) {
        SCOPED_TRACE(format);
        const CliRun r = cli("estimate " + quote(kDefaultPlan) + " --format " + format);
        ASSERT_EQ(r.status, 0) << r.err;
        compareWithGolden(r.out, golden);
    }
    const CliRun gib = cli("estimate " + quote(kDefaultPlan) + " --format text --units gib");
    ASSERT_EQ(gib.status, 0) << gib.err;
    compareWithGolden(gib.out, "default-plan-gib.txt");
}

TEST_F(CliTest, PresetsListsIdsWithDescriptions)
{
    const CliRun gpus = cli("presets gpus");
    ASSERT_EQ(gpus.status, 0) << gpus.err;
    const std::vector<std::string> gpuIds = ids(gpus.out);
    for (const char* id : { "h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200",
             "l40s", "mi300x", "rtx-4090" })
        EXPECT_NE(std::find(gpuIds.begin(), gpuIds.end(), id), gpuIds.end()) << id;
    EXPECT_NE(gpus.out.find("h100-sxm         NVIDIA H100 SXM5 80GB"), std::string::npos);
    const CliRun recipes = cli("presets recipes");
    ASSERT_EQ(recipes.status, 0);
    EXPECT_NE(recipes.out.find("bf16-mixed-16"), std::string::npos);
    const CliRun all = cli("presets");
    ASSERT_EQ(all.status, 0);
    for (const char* header : { "models:", "gpus:", "recipes:", "frameworks:", "engines:" })
        EXPECT_NE(all.out.find(header), std::string::npos) << header;
    // The serving engines' rows (presets/engines.json): SGLang's three versions, vLLM's V0 and V1.
    const CliRun engines = cli("presets engines");
    ASSERT_EQ(engines.status, 0) << engines.err;
    EXPECT_NE(engines.out.find("sglang               SGLang (versions 0.3, 0.4, 0.5; default 0.5)"),
        std::string::npos)
        << engines.out;
    EXPECT_NE(engines.out.find("vllm                 vLLM (versions 0.6, 0.19; default 0.19)"),
        std::string::npos)
        << engines.out;
    EXPECT_NE(engines.out.find("trtllm"), std::string::npos) << engines.out;
}

TEST_F(CliTest, UserPresetsAreMergedOverTheBuiltinsById)
{
    writeFile(m_dir / "config/envelope/presets/mine.json", R"({"gpus": [
        {"id": "my-gpu", "name": "My GPU", "memory_bytes": 1e10, "bf16_tflops": 100,
         "hbm_gbps": 500, "intra_node_gbps": 32, "inter_node_gbps": 12.5},
        {"id": "h100-sxm", "name": "H100 at our price", "memory_bytes": 85520809984,
         "bf16_tflops": 989.4, "hbm_gbps": 3350, "intra_node_gbps": 450, "inter_node_gbps": 50,
         "price_per_hour": 1.1}]})");
    const CliRun r = cli("presets gpus");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("my-gpu           My GPU"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("H100 at our price"), std::string::npos) << r.out;

    writeFile(m_dir / "config/envelope/presets/zz-broken.json",
        R"({"gpus": [{"id": "x", "memory_bytes": 0, "bf16_tflops": 1, "hbm_gbps": 1,
                            "intra_node_gbps": 1, "inter_node_gbps": 1}]})");
    const CliRun broken = cli("presets gpus");
    EXPECT_EQ(broken.status, 1);
    EXPECT_NE(broken.err.find("zz-broken.json: gpus[0].memory_bytes: must be 1e8..1e13, got 0"),
        std::string::npos)
        << broken.err;
}

// Issue 10's bug: a GPU preset in $XDG_CONFIG_HOME/envelope/presets is a GPU a plan can name
// (tests/ui/test_userpresets.cpp checks the app finds the same file).
TEST_F(CliTest, PlanCanNameAUserGpuPresetFromXdgConfigHome)
{
    writeFile(m_dir / "config/envelope/presets/mine.json", R"({"gpus": [
        {"id": "my-gpu", "name": "My GPU", "memory_bytes": 1e10, "bf16_tflops": 100,
         "hbm_gbps": 500, "intra_node_gbps": 32, "inter_node_gbps": 12.5}]})");
    writeFile(m_dir / "plan.json", R"({"model": "llama-2-7b", "gpu": "my-gpu"})");
    const CliRun r = cli("estimate " + quote((m_dir / "plan.json").string()));
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["gpu"]["preset"], "my-gpu");
    EXPECT_EQ(j["gpu"]["name"], "My GPU");
    EXPECT_EQ(j["gpu"]["memory_bytes"], 10000000000);
}

TEST_F(CliTest, ImportHfPrintsTheModelObjectAndItsParams)
{
    const CliRun r = cli("import-hf " + quote(kPlans + "llama-2-7b-config.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["model"]["layers"], 32);
    EXPECT_EQ(j["model"]["hidden"], 4096);
    EXPECT_EQ(j["params"], 6738415616); // as worked out in EstimatePrintsACompleteResultJson
    const CliRun only
        = cli("import-hf " + quote(kPlans + "llama-2-7b-config.json") + " --model-only");
    ASSERT_EQ(only.status, 0);
    EXPECT_EQ(nlohmann::json::parse(only.out), j["model"]);

    EXPECT_EQ(cli("import-hf /nonexistent/config.json").status, 1);
    writeFile(m_dir / "junk.json", "not json at all");
    EXPECT_EQ(cli("import-hf " + quote((m_dir / "junk.json").string())).status, 1);
}

TEST_F(CliTest, PlanWithHfConfigResolvesItBesideThePlan)
{
    const CliRun r = cli("estimate " + quote(kPlans + "hf-config-plan.json"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["model"]["params"], 6738415616);
}

TEST_F(CliTest, EveryModelPresetOnEveryGpuPresetGivesACompleteResult)
{
    const CliRun models = cli("presets models");
    const CliRun gpus = cli("presets gpus");
    ASSERT_EQ(models.status, 0);
    ASSERT_EQ(gpus.status, 0);
    const std::vector<std::string> modelIds = ids(models.out);
    const std::vector<std::string> gpuIds = ids(gpus.out);
    EXPECT_GE(modelIds.size(), 12u);
    EXPECT_GE(gpuIds.size(), 9u);
    for (const std::string& model : modelIds)
        for (const std::string& gpu : gpuIds) {
            SCOPED_TRACE(model + " on " + gpu);
            const fs::path plan = m_dir / "plan.json";
            writeFile(plan, nlohmann::json { { "model", model }, { "gpu", gpu } }.dump());
            const CliRun r = cli("estimate " + quote(plan.string()));
            ASSERT_EQ(r.status, 0) << r.err;
            expectCompleteResult(r.out);
        }
}

} // namespace
