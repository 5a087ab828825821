// Hostile engine files and plans at the importers' and exporters' integer products (issue 26,
// items 1-3, 5, 11 and 15): every product of user numbers is range-checked (base/checked.h), and
// what a warning echoes is bounded. Each expectation is written out by hand; before the fix the
// first three cases died of SIGFPE and the vLLM one printed --max-num-seqs 470021803.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/checked.h"
#include "estimate/estimate.h"
#include "export/toml.h"
#include "export_fixtures.h"
#include "report/textreport.h"

namespace envelope::testing {
namespace {

Expected<ImportedPlan> importText(
    Engine engine, const std::string& text, std::optional<int> gpus = std::nullopt)
{
    ImportOptions options;
    options.modelJson = "\"llama-2-7b\"";
    options.gpus = gpus;
    return importEngineConfig(engine, text, exportPresets(), options);
}

std::string joinedWarnings(const Expected<ImportedPlan>& r)
{
    return r.ok() ? nlohmann::json(r->warnings).dump() : std::string();
}

TEST(CheckedArithmetic, ProductsThatWrapAreErrors)
{
    EXPECT_EQ(checkedMul(4294967296LL, 4294967296LL), std::nullopt);
    EXPECT_EQ(checkedMul(-3, 4), -12);
    EXPECT_EQ(checkedAdd(9'223'372'036'854'775'807LL, 1), std::nullopt);
    EXPECT_EQ(wideProduct(10'000'000, 1000), 10'000'000'000LL);
    const Expected<long long> ok = checkedProduct({ 2, 3, 4 }, 24, "a", "a x b x c");
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, 24);
    const Expected<long long> big = checkedProduct({ 5, 5 }, 24, "a", "a x b");
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().toString(), "a: a x b must be 1..24, got 5 x 5");
    const Expected<long long> wraps
        = checkedProduct({ 4294967296LL, 4294967296LL }, 1'000'000, "a", "a x b");
    ASSERT_FALSE(wraps.ok());
    EXPECT_EQ(wraps.error().toString(), "a: a x b must be 1..1000000, got 4294967296 x 4294967296");
}

// Item 1: Megatron's parallel sizes multiplied to 2^64 = 0, then divided by.
TEST(ImportOverflow, MegatronParallelSizes)
{
    const std::pair<Expected<ImportedPlan>, const char*> bad[] = {
        { importText(Engine::Megatron,
              "--tensor-model-parallel-size 4294967296 --pipeline-model-parallel-size "
              "4294967296\n"),
            "--tensor-model-parallel-size: must be an integer 1..65536, got \"4294967296\"" },
        { importText(Engine::Megatron,
              "--tensor-model-parallel-size 65536 --pipeline-model-parallel-size 65536\n"),
            "--tensor-model-parallel-size: --tensor-model-parallel-size x "
            "--pipeline-model-parallel-size x --context-parallel-size must be 1..1000000, got "
            "65536 x 65536 x 1" },
        { importText(Engine::Megatron, "--micro-batch-size 4294967296\n", 8),
            "--micro-batch-size: must be an integer 1..1000000, got \"4294967296\"" },
        // 1 x 8 micro-batches per step would need 10^12 / 8 accumulation steps.
        { importText(Engine::Megatron, "--micro-batch-size 1 --global-batch-size 1000000000000\n",
              8),
            "--global-batch-size: must be at most --micro-batch-size x data-parallel size x "
            "1000000 (training.grad_accum's bound) = 1 x 8 x 1000000 on 8 GPUs, got "
            "1000000000000" },
        { importText(Engine::Megatron, "--bf16\n", 2'000'000),
            "--gpus: must be 1..1000000 (cluster.gpus), got 2000000" },
    };
    for (const auto& [result, message] : bad) {
        ASSERT_FALSE(result.ok()) << message;
        EXPECT_EQ(result.error().toString(), message);
    }
}

// Item 2: DeepSpeed's micro batch x accumulation wrapped; a train_batch_size below
// accumulation x GPUs derived micro batch 0 and divided by it.
TEST(ImportOverflow, DeepSpeedBatchProducts)
{
    const std::pair<Expected<ImportedPlan>, const char*> bad[] = {
        { importText(Engine::DeepSpeed,
              R"({"train_micro_batch_size_per_gpu": 4294967296,
                  "gradient_accumulation_steps": 4294967296, "train_batch_size": 8})"),
            "train_micro_batch_size_per_gpu: must be an integer 1..1000000, got 4294967296" },
        { importText(Engine::DeepSpeed,
              R"({"train_batch_size": 8, "gradient_accumulation_steps": 8})", 8),
            "train_batch_size: must be a multiple of gradient_accumulation_steps x GPUs = 64 "
            "(DeepSpeed derives the missing value from it), got 8" },
        { importText(Engine::DeepSpeed,
              R"({"train_batch_size": 2000000, "train_micro_batch_size_per_gpu": 1,
                  "gradient_accumulation_steps": 1})"),
            "train_batch_size: means 2000000 / (1 x 1) = 2000000 data-parallel GPUs; "
            "cluster.gpus must be 1..1000000" },
    };
    for (const auto& [result, message] : bad) {
        ASSERT_FALSE(result.ok()) << message;
        EXPECT_EQ(result.error().toString(), message);
    }
    // The largest accepted factors: 10^6 x 10^6 per GPU, two data-parallel GPUs.
    Expected<ImportedPlan> big = importText(Engine::DeepSpeed,
        R"({"train_micro_batch_size_per_gpu": 1000000, "gradient_accumulation_steps": 1000000,
            "train_batch_size": 2000000000000})");
    ASSERT_TRUE(big.ok()) << big.error().toString();
    EXPECT_EQ(nlohmann::json::parse(big->planJson)["cluster"]["gpus"], 2);
}

// Item 3: torchtitan degrees of 2^32 with the shard degree -1 divided by 0; without the -1 the
// product wrapped into "cluster.gpus ... got -2".
TEST(ImportOverflow, TorchTitanDegrees)
{
    const std::pair<Expected<ImportedPlan>, const char*> bad[] = {
        { importText(Engine::TorchTitan,
              "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = "
              "4294967296\npipeline_parallel_degree = 4294967296\n",
              8),
            "parallelism.tensor_parallel_degree: must be an integer 1..65536, got 4294967296" },
        { importText(Engine::TorchTitan,
              "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = "
              "65536\npipeline_parallel_degree = 65536\n",
              8),
            "parallelism.tensor_parallel_degree: tensor_parallel_degree x "
            "pipeline_parallel_degree x context_parallel_degree must be 1..1000000, got 65536 x "
            "65536 x 1" },
        { importText(Engine::TorchTitan,
              "[parallelism]\ndata_parallel_replicate_degree = 1000000\n"
              "data_parallel_shard_degree = 1000000\n"),
            "parallelism.data_parallel_shard_degree: data_parallel_replicate_degree x "
            "data_parallel_shard_degree must be 1..1000000, got 1000000 x 1000000" },
        { importText(Engine::TorchTitan,
              "[parallelism]\ndata_parallel_shard_degree = 1000\ntensor_parallel_degree = 2000\n"),
            "parallelism.data_parallel_shard_degree: the product of the parallelism degrees "
            "(cluster.gpus) must be 1..1000000, got 1000 x 2000" },
    };
    for (const auto& [result, message] : bad) {
        ASSERT_FALSE(result.ok()) << message;
        EXPECT_EQ(result.error().toString(), message);
    }
}

// Item 5: 10^7 prompts x 1000 completions is 10^10 sequences, over three rollout replicas.
TEST(ExportOverflow, VllmRolloutSequencesAre64Bit)
{
    const Plan plan = defaultPlanWith({ "rl.prompts_per_step=10000000", "rl.group_size=1000" });
    const EngineConfig c = exportOf(plan, Engine::Vllm);
    EXPECT_NE(c.text.find("--max-num-seqs 3333333334"), std::string::npos) << c.text;
    EXPECT_NE(c.text.find("10000000000 sequences"), std::string::npos) << c.text;
    EXPECT_EQ(c.text.find("470021803"), std::string::npos) << c.text;
}

// torchtitan's local batch under a pipeline is micro x accumulation: 10^12 for 10^6 x 10^6.
TEST(ExportOverflow, TorchTitanLocalBatchIs64Bit)
{
    const Plan plan = defaultPlanWith({ "training.pp=2", "cluster.gpus=2",
        "training.micro_batch=1000000", "training.grad_accum=1000000" });
    const EngineConfig c = exportOf(plan, Engine::TorchTitan);
    EXPECT_NE(c.text.find("local_batch_size = 1000000000000\n"), std::string::npos) << c.text;
}

// Item 11: contradictions and what is not read are warned about.
TEST(ImportWarnings, DeepSpeedContradictionsAndNestedKeys)
{
    Expected<ImportedPlan> r = importText(Engine::DeepSpeed,
        R"({"bf16": {"enabled": true}, "fp16": {"enabled": true, "loss_scale": 0},
            "zero_optimization": {"stage": 3, "overlap_comm": true,
              "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme"}}})",
        8);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    const nlohmann::json plan = nlohmann::json::parse(r->planJson);
    EXPECT_EQ(plan["training"]["recipe"], "bf16-mixed-16");
    EXPECT_EQ(plan["training"]["offload_optimizer"], true);
    const std::string w = joinedWarnings(r);
    EXPECT_NE(w.find("bf16.enabled and fp16.enabled are both true"), std::string::npos) << w;
    EXPECT_NE(w.find("zero_optimization.offload_optimizer.device = \\\"nvme\\\""),
        std::string::npos)
        << w;
    for (const char* key : { "zero_optimization.overlap_comm",
             "zero_optimization.offload_optimizer.nvme_path", "fp16.loss_scale" })
        EXPECT_NE(w.find(key), std::string::npos) << key << " in " << w;
}

TEST(ImportWarnings, MegatronRepeatsContradictionsAndEmptyFiles)
{
    Expected<ImportedPlan> r = importText(
        Engine::Megatron, "--micro-batch-size 2 --micro-batch-size 4 --bf16 --fp16\n", 8);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_EQ(nlohmann::json::parse(r->planJson)["training"]["micro_batch"], 4);
    const std::string w = joinedWarnings(r);
    EXPECT_NE(w.find("--micro-batch-size is given more than once: the last value, \\\"4\\\", is "
                     "used"),
        std::string::npos)
        << w;
    EXPECT_NE(w.find("--bf16 and --fp16 are both given"), std::string::npos) << w;

    Expected<ImportedPlan> empty = importText(Engine::Megatron, "  \n# nothing\n", 8);
    ASSERT_TRUE(empty.ok()) << empty.error().toString();
    EXPECT_NE(joinedWarnings(empty).find("the arguments file holds no arguments"),
        std::string::npos);
}

// Item 15: a megabyte-long flag or value is echoed as at most 80 bytes.
TEST(ImportWarnings, EchoedInputIsBounded)
{
    const std::string huge(1'000'000, 'x');
    Expected<ImportedPlan> r = importText(Engine::Megatron,
        "--" + huge + " v --optimizer " + huge + " --" + huge + " w\n", 8);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_FALSE(r->warnings.empty());
    for (const std::string& w : r->warnings)
        EXPECT_LT(w.size(), 400u) << w.substr(0, 200);
    Expected<ImportedPlan> many = importText(Engine::DeepSpeed, [] {
        nlohmann::json j = nlohmann::json::object();
        for (int i = 0; i < 1000; ++i)
            j["key" + std::to_string(i)] = i;
        return j.dump();
    }());
    ASSERT_TRUE(many.ok());
    const std::string w = joinedWarnings(many);
    EXPECT_NE(w.find("and 980 more"), std::string::npos) << w;
    EXPECT_LT(w.size(), 2000u);
}

// Item 4: TOML arrays nested 50,000 deep overflowed the stack; JSON stops at 64 levels.
TEST(TomlReader, NestingIsCappedLikeJson)
{
    using exportdetail::parseToml;
    const auto nested
        = [](int n) { return "a = " + std::string(n, '[') + std::string(n, ']') + "\n"; };
    ASSERT_TRUE(parseToml(nested(64)).ok());
    for (int depth : { 65, 50'000 }) {
        Expected<nlohmann::json> deep = parseToml(nested(depth));
        ASSERT_FALSE(deep.ok()) << depth;
        EXPECT_EQ(deep.error().toString(), "line 1: arrays nest deeper than 64 levels");
    }
    std::string dotted;
    for (int i = 0; i < 50'000; ++i)
        dotted += "t.";
    for (const std::string& text : { dotted + "k = 1\n", "[" + dotted + "k]\n" }) {
        Expected<nlohmann::json> deep = parseToml(text);
        ASSERT_FALSE(deep.ok());
        EXPECT_EQ(deep.error().toString(), "line 1: a key nests deeper than 64 tables");
    }
    // 40 tables deep plus a 40-part key: 80 levels in all.
    std::string forty;
    for (int i = 0; i < 40; ++i)
        forty += (i ? "." : "") + std::string("t");
    Expected<nlohmann::json> sum = parseToml("[" + forty + "]\n" + forty + " = 1\n");
    ASSERT_FALSE(sum.ok());
    EXPECT_EQ(sum.error().toString(), "line 2: a key nests deeper than 64 tables");
}

// A file saved with a UTF-8 byte order mark read "line 1: expected a key".
TEST(TomlReader, ByteOrderMarkIsSkipped)
{
    Expected<nlohmann::json> t
        = exportdetail::parseToml("\xEF\xBB\xBF[training]\nseq_len = 2048\n");
    ASSERT_TRUE(t.ok()) << t.error().toString();
    EXPECT_EQ((*t)["training"]["seq_len"], 2048);
}

// Messages: a newline in a plan's name broke the Markdown report's heading and tables.
TEST(MarkdownReport, NamesWithLineBreaksAndPipesStayInTheirCell)
{
    Plan plan = defaultPlanWith({});
    plan.name = "line one\nline two | three";
    const std::string md = report::formatReport(
        plan, estimate(plan), ByteUnits::GB, report::ReportFormat::Markdown);
    EXPECT_TRUE(md.starts_with("# line one line two \\| three\n")) << md.substr(0, 200);
    EXPECT_EQ(md.find("line one\n"), std::string::npos);
}

// Found by fuzz_engines (selector 6): a --set path with bytes that are not UTF-8 made
// applySetsToText throw from nlohmann::json's writer instead of returning an error. A TOML
// string or a file name with such bytes did the same in the importers.
TEST(NotUtf8, IsAnErrorOrReplacedNeverAnException)
{
    const Expected<std::string> set
        = applySetsToText(exportPresets().defaultPlanJson, { "tr\xE2-ining.zero_stage=1" });
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().toString(), "--set: is not valid UTF-8: \"tr\\xe2-ining.zero_stage=1\"");

    const Expected<nlohmann::json> toml = exportdetail::parseToml("[job]\ndescription = \"a\xFF" "b\"\n");
    ASSERT_FALSE(toml.ok());
    EXPECT_EQ(toml.error().toString(), "line 2: is not valid UTF-8 (a TOML file is UTF-8 text)");

    ImportOptions options;
    options.modelJson = "\"llama-2-7b\"";
    options.sourceName = "args\xFF.txt";
    const Expected<ImportedPlan> r
        = importEngineConfig(Engine::Megatron, "--bf16\n", exportPresets(), options);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_EQ(nlohmann::json::parse(r->planJson)["name"], "args\xEF\xBF\xBD.txt (megatron)");
}

} // namespace
} // namespace envelope::testing
