// The small readers behind import and --set: the TOML subset, argument lists, applySets; the
// importers' messages for bad engine files; and the comparison rows' contract with the result
// JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "export/args.h"
#include "export/toml.h"
#include "export_fixtures.h"
#include "report/compare.h"

namespace envelope::testing {
namespace {

using exportdetail::parseArguments;
using exportdetail::parseToml;
using exportdetail::splitWords;

TEST(TomlReader, TablesKeysAndValues)
{
    const char* text = R"(# a torchtitan-like job
title = "top"   # trailing comment
[job]
description = "say \"hi\"\tthere"
[parallelism]
tensor_parallel_degree = 8
big = 1_000_000
ratio = 0.5
exp = 2e3
neg = -1
flag = true
list = ["float8", 'raw\n', 3]
[a.b]
c.d = false
)";
    Expected<nlohmann::json> t = parseToml(text);
    ASSERT_TRUE(t.ok()) << t.error().toString();
    EXPECT_EQ(t.value(),
        nlohmann::json::parse(R"({"title": "top", "job": {"description": "say \"hi\"\tthere"},
            "parallelism": {"tensor_parallel_degree": 8, "big": 1000000, "ratio": 0.5,
            "exp": 2000.0, "neg": -1, "flag": true, "list": ["float8", "raw\\n", 3]},
            "a": {"b": {"c": {"d": false}}}})"));
    EXPECT_TRUE(t.value()["parallelism"]["tensor_parallel_degree"].is_number_integer());
}

// TOML 1.0 arrays may span lines, with comments and a trailing comma between their values;
// torchtitan's own configs write module_fqns_per_model_part one stage per line.
TEST(TomlReader, ArraysSpanLines)
{
    const char* text = R"([parallelism]
pipeline_parallel_degree = 2
module_fqns_per_model_part = [
    ["tok_embeddings", "layers.0"],  # the first stage
    # the last stage, with the head
    [
        "layers.1",
        "norm", "output",
    ],
]
degrees = [1,
  2, 3]
after = "x" # the line count carries on
)";
    Expected<nlohmann::json> t = parseToml(text);
    ASSERT_TRUE(t.ok()) << t.error().toString();
    EXPECT_EQ(t.value()["parallelism"]["module_fqns_per_model_part"],
        nlohmann::json::parse(
            R"([["tok_embeddings", "layers.0"], ["layers.1", "norm", "output"]])"));
    EXPECT_EQ(t.value()["parallelism"]["degrees"], nlohmann::json::parse("[1, 2, 3]"));
    EXPECT_EQ(t.value()["parallelism"]["after"], "x");
    // Errors after a multi-line array name their own line.
    Expected<nlohmann::json> late = parseToml(std::string(text) + "after = 2\n");
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.error().toString(), "line 14: parallelism.after is set twice");
}

TEST(TomlReader, ErrorsNameTheLine)
{
    const std::pair<const char*, const char*> bad[] = {
        { "[job]\nx = {a = 1}\n", "line 2: inline tables are not supported" },
        { "x = 1\nx = 2\n", "line 2: x is set twice" },
        { "x = \"open\n", "line 1: unterminated string" },
        { "[job\n", "line 1: expected ] after the table name" },
        { "x = nope\n", "line 1: \"nope\" is not a string, number, boolean or array" },
        { "x = [1,\n2\n", "line 1: the array opened here is not closed" },
        { "a = 1\nx = [[1, 2],\n  # a comment\n  [3 4]]\n", "line 4: expected , or ] in an array" },
        { "x = [1,\n2]\ny = \"open\n", "line 3: unterminated string" },
        { "x = [\"a\n\"]\n", "line 1: unterminated string" },
        { "[[steps]]\n", "line 1: arrays of tables ([[...]]) are not supported" },
    };
    for (const auto& [text, message] : bad) {
        Expected<nlohmann::json> t = parseToml(text);
        ASSERT_FALSE(t.ok()) << text;
        EXPECT_EQ(t.error().toString(), message);
    }
}

TEST(ArgumentReader, CommandLinesAndFiles)
{
    EXPECT_EQ(splitWords("a 'b c' \"d e\" f\\\n g # comment\nh"),
        (std::vector<std::string> { "a", "b c", "d e", "f", "g", "h" }));
    Expected<std::vector<exportdetail::Argument>> args = parseArguments(
        "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n  --tensor-model-parallel-size 4 "
        "--bf16 --moe-layer-freq '([0]*1+[1]*3)' --lr=3e-4 --neg -1");
    ASSERT_TRUE(args.ok());
    ASSERT_EQ(args->size(), 5u);
    EXPECT_EQ((*args)[0].flag, "--tensor-model-parallel-size");
    EXPECT_EQ((*args)[0].value, "4");
    EXPECT_EQ((*args)[1].flag, "--bf16");
    EXPECT_FALSE((*args)[1].value.has_value());
    EXPECT_EQ((*args)[2].value, "([0]*1+[1]*3)");
    EXPECT_EQ((*args)[3].flag, "--lr");
    EXPECT_EQ((*args)[3].value, "3e-4");
    EXPECT_EQ((*args)[4].value, "-1");
    // A flag takes every word up to the next flag (argparse's nargs); what a flag accepts is the
    // importer's to check (Importers.MessagesNameTheEngineKey).
    Expected<std::vector<exportdetail::Argument>> nargs
        = parseArguments("--recompute-modules core_attn mlp --bf16");
    ASSERT_TRUE(nargs.ok());
    EXPECT_EQ((*nargs)[0].values, (std::vector<std::string> { "core_attn", "mlp" }));
    EXPECT_EQ((*nargs)[0].value, "core_attn");
    Expected<std::vector<exportdetail::Argument>> stray = parseArguments("stray --bf16");
    ASSERT_FALSE(stray.ok());
    EXPECT_EQ(
        stray.error().toString(), "stray: expected an argument starting with --, got \"stray\"");
}

TEST(ApplySets, PathsValuesAndPresetObjects)
{
    nlohmann::json plan = nlohmann::json::parse(R"({"model": "llama-2-7b", "gpu": "h100-sxm"})");
    EXPECT_FALSE(applySets(plan,
        { "training.tp=8", "gpu=h200", "model.layers=16", "training.mfu=0.5",
            "training.recompute=\"full\"", "name=My plan", "serving.kv_bits=null" }));
    EXPECT_EQ(plan, nlohmann::json::parse(R"({"model": {"preset": "llama-2-7b", "layers": 16},
            "gpu": "h200", "name": "My plan",
            "training": {"tp": 8, "mfu": 0.5, "recompute": "full"},
            "serving": {"kv_bits": null}})"));
    std::optional<Error> e = applySets(plan, { "training" });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->toString(), "--set: expected PATH=VALUE, got \"training\"");
    e = applySets(plan, { "gpu.memory_bytes=1" });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->toString(),
        "gpu: is \"h200\" (a string), not an object, so --set gpu.memory_bytes cannot reach "
        "into it");
}

TEST(ApplySets, OverridesGetTheFilesValidation)
{
    Expected<std::string> text
        = applySetsToText(exportPresets().defaultPlanJson, { "training.zero_stage=5" });
    ASSERT_TRUE(text.ok());
    Expected<Plan> plan = readPlan(text.value(), exportPresets());
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().toString(), "training.zero_stage: must be 0..3, got 5");
}

Expected<ImportedPlan> importText(
    Engine engine, const std::string& text, std::optional<int> gpus = std::nullopt)
{
    ImportOptions options;
    options.modelJson = "\"llama-2-7b\"";
    options.gpus = gpus;
    return importEngineConfig(engine, text, exportPresets(), options);
}

TEST(Importers, MessagesNameTheEngineKey)
{
    const std::pair<Expected<ImportedPlan>, const char*> bad[] = {
        { importText(Engine::DeepSpeed, R"({"zero_optimization": {"stage": 5}})"),
            "zero_optimization.stage: must be 0..3, got 5" },
        { importText(Engine::DeepSpeed, R"({"train_batch_size": 10,
              "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1})"),
            "train_batch_size: must be a multiple of train_micro_batch_size_per_gpu x "
            "gradient_accumulation_steps = 4, got 10" },
        { importText(Engine::DeepSpeed, R"({"train_micro_batch_size_per_gpu": "two"})"),
            "train_micro_batch_size_per_gpu: must be an integer 1..1000000, got \"two\" (a "
            "string)" },
        { importText(Engine::TorchTitan, "[parallelism]\ndata_parallel_shard_degree = -1\n"),
            "parallelism.data_parallel_shard_degree: is -1 (the GPUs left over): pass --gpus to "
            "say how many there are" },
        { importText(Engine::TorchTitan, "[activation_checkpoint]\nmode = \"some\"\n"),
            "activation_checkpoint.mode: must be \"none\", \"selective\", \"full\" or "
            "\"memory_budget\", got \"some\"" },
        { importText(Engine::Megatron, "--micro-batch-size 2\n--global-batch-size 15\n", 8),
            "--global-batch-size: must be a multiple of --micro-batch-size x data-parallel size "
            "(2 x 8 = 16) on 8 GPUs, got 15" },
        { importText(Engine::Megatron, "--tensor-model-parallel-size x\n", 8),
            "--tensor-model-parallel-size: must be an integer 1..65536, got \"x\"" },
        { importText(Engine::Megatron, "--bf16\nstray words\n", 8),
            "--bf16: takes no value (Megatron's argparse refuses one), got \"stray words\"" },
        { importText(Engine::Megatron, "--recompute-granularity full selective\n", 8),
            "--recompute-granularity: takes one value, got \"full selective\"" },
        { importText(Engine::Vllm, "vllm serve x"),
            "importing vllm files is not supported; the importable engines are deepspeed, "
            "torchtitan or megatron" },
    };
    for (const auto& [result, message] : bad) {
        ASSERT_FALSE(result.ok()) << message;
        EXPECT_EQ(result.error().toString(), message);
    }
}

TEST(Importers, DeepSpeedAutoAndOtherClusterAreWarned)
{
    // An HF-integration config ("auto" batch sizes) of a ZeRO-2 job, asked about 16 GPUs.
    Expected<ImportedPlan> r = importText(Engine::DeepSpeed,
        R"({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2,
            "gradient_accumulation_steps": 4, "fp16": {"enabled": true},
            "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}},
            "gradient_clipping": 1.0})",
        16);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    const nlohmann::json plan = nlohmann::json::parse(r->planJson);
    EXPECT_EQ(plan["cluster"]["gpus"], 16);
    EXPECT_EQ(plan["training"]["micro_batch"], 2);
    EXPECT_EQ(plan["training"]["grad_accum"], 4);
    EXPECT_EQ(plan["training"]["recipe"], "fp16-mixed");
    EXPECT_EQ(plan["training"]["zero_stage"], 2);
    EXPECT_EQ(plan["training"]["offload_optimizer"], true);
    EXPECT_EQ(plan["training"]["offload_params"], false);
    // 64 / (2 x 4) = 8 data-parallel GPUs in the file; on 16 the global batch is 2 x 4 x 16.
    const std::string joined = nlohmann::json(r->warnings).dump();
    EXPECT_NE(joined.find("the global batch becomes 128"), std::string::npos) << joined;
    EXPECT_NE(joined.find("gradient_clipping"), std::string::npos) << joined;
}

TEST(Compare, RowsNameResultJsonKeys)
{
    const Plan a = defaultPlanWith({});
    const Plan b = defaultPlanWith({ "training.micro_batch=2" });
    const Estimate ea = estimate(a), eb = estimate(b);
    const std::vector<report::ComparedPlan> plans { { "a", &a, &ea }, { "b", &b, &eb } };
    const nlohmann::json result = nlohmann::json::parse(writeResult(a, ea));
    for (const report::CompareRow& row : report::compareRows(plans)) {
        const nlohmann::json::json_pointer pointer("/" + [&] {
            std::string p = row.key;
            std::replace(p.begin(), p.end(), '.', '/');
            return p;
        }());
        EXPECT_TRUE(result.contains(pointer)) << row.key;
        ASSERT_EQ(row.values.size(), 2u);
    }
    // The weights do not depend on the micro batch; activations grow with it.
    const auto rows = report::compareRows(plans);
    const auto find = [&](const std::string& key) {
        return *std::find_if(
            rows.begin(), rows.end(), [&](const report::CompareRow& r) { return r.key == key; });
    };
    EXPECT_EQ(
        report::formatCell(find("training.per_gpu_bytes.weights"), 1, ByteUnits::GB), "1.7 GB (=)");
    EXPECT_GT(report::rowDelta(find("training.per_gpu_bytes.activations"), 1), 0);
}

} // namespace
} // namespace envelope::testing
