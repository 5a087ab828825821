// Export then import gives back the same plan for every field the engine expresses (issue 15),
// over presets/default-plan.json, the plans in tests/data/plans and variants of the default
// plan that exercise each engine's vocabulary. Fields an engine cannot express are excluded
// only where its exporter warns about them (test_export.cpp checks the warnings).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <tuple>

#include <nlohmann/json.hpp>

#include "export/common.h"
#include "export_fixtures.h"

namespace envelope::testing {
namespace {

struct Case {
    std::string label;
    Plan plan;
    std::string modelJson; // the plan's "model" value
};

std::vector<Case> cases()
{
    std::vector<Case> out;
    const std::vector<std::vector<std::string>> variants {
        {},
        { "training.zero_stage=0" },
        { "training.zero_stage=2", "training.recompute=\"full\"", "training.micro_batch=4",
            "training.grad_accum=2" },
        { "training.offload_optimizer=true", "training.offload_params=true" },
        { "training.recipe=\"fp16-mixed\"", "training.recompute=\"none\"" },
        { "training.recipe=\"bf16-mixed-18\"", "cluster.gpus=16" },
        { "training.recipe=\"fp32\"", "training.flash_attention=false" },
        { "training.recipe=\"fp8-te\"" },
        { "training.tp=2", "training.sequence_parallel=true", "training.pp=2",
            "training.virtual_stages=2", "training.recompute=\"every-k\"",
            "training.recompute_every=2" },
        { "training.cp=2", "cluster.gpus=32", "training.seq_len=16384", "training.grad_accum=4" },
        { "model=\"mixtral-8x7b\"", "training.ep=8", "cluster.gpus=64", "training.tp=2",
            "training.sequence_parallel=true" },
    };
    for (const auto& sets : variants) {
        std::string label = "default";
        std::string model = "\"llama-2-7b\"";
        for (const std::string& s : sets) {
            label += " " + s;
            if (s.starts_with("model="))
                model = s.substr(6);
        }
        out.push_back({ label, defaultPlanWith(sets), model });
    }
    for (const char* file : { "inline-architecture.json", "hf-config-plan.json" }) {
        const std::string dir = ENVELOPE_TEST_DATA_DIR "/plans";
        const std::string text = readTestFile(dir + "/" + file);
        ReadOptions options;
        options.baseDir = dir;
        options.readFile
            = [](const std::string& path) -> Expected<std::string> { return readTestFile(path); };
        Expected<Plan> plan = readPlan(text, exportPresets(), options);
        EXPECT_TRUE(plan.ok()) << file << ": " << plan.error().toString();
        nlohmann::json model = nlohmann::json::parse(text)["model"];
        if (model.contains("hf_config"))
            model["hf_config"] = dir + "/" + model["hf_config"].get<std::string>();
        out.push_back({ file, plan.value(), model.dump() });
    }
    return out;
}

Plan roundTrip(const Case& c, Engine engine, std::optional<int> gpus)
{
    const EngineConfig exported = exportOf(c.plan, engine);
    ImportOptions options;
    options.modelJson = c.modelJson;
    options.gpus = gpus;
    options.sourceName = "exported";
    Expected<ImportedPlan> imported
        = importEngineConfig(engine, exported.text, exportPresets(), options);
    EXPECT_TRUE(imported.ok()) << c.label << ": " << imported.error().toString() << "\n"
                               << exported.text;
    if (!imported.ok())
        return {};
    ReadOptions readOptions;
    readOptions.readFile
        = [](const std::string& path) -> Expected<std::string> { return readTestFile(path); };
    Expected<Plan> plan = readPlan(imported->planJson, exportPresets(), readOptions);
    EXPECT_TRUE(plan.ok()) << c.label << ": " << plan.error().toString();
    return plan.ok() ? plan.value() : Plan {};
}

bool recipeIs(const Plan& p, std::initializer_list<const char*> ids)
{
    for (const char* id : ids)
        if (p.training.recipe.presetId == id)
            return true;
    return false;
}

void expectDeepSpeedRoundTrip(const Case& c)
{
    {
        const TrainingConfig& a = c.plan.training;
        const Plan back = roundTrip(c, Engine::DeepSpeed, std::nullopt);
        const TrainingConfig& b = back.training;
        EXPECT_EQ(back.model.arch, c.plan.model.arch);
        EXPECT_EQ(b.microBatch, a.microBatch);
        EXPECT_EQ(b.gradAccum, a.gradAccum);
        EXPECT_EQ(b.zeroStage, a.zeroStage);
        EXPECT_EQ(b.offloadOptimizer, a.offloadOptimizer);
        EXPECT_EQ(b.offloadParams, a.offloadParams);
        // train_batch_size counts data-parallel ranks, which are all the GPUs without TP/PP/CP.
        EXPECT_EQ(back.cluster.gpus * a.tp * a.pp * a.cp, c.plan.cluster.gpus);
        if (recipeIs(c.plan, { "bf16-mixed-16", "bf16-mixed-18", "fp16-mixed", "fp32" }))
            EXPECT_EQ(b.recipe.presetId, a.recipe.presetId);
        if (a.recompute == Recompute::None || a.recompute == Recompute::Full)
            EXPECT_EQ(b.recompute, a.recompute);
    }
}

void expectTorchTitanRoundTrip(const Case& c)
{
    {
        const TrainingConfig& a = c.plan.training;
        const Plan back = roundTrip(c, Engine::TorchTitan, std::nullopt);
        const TrainingConfig& b = back.training;
        EXPECT_EQ(back.name, c.plan.name);
        EXPECT_EQ(back.model.arch, c.plan.model.arch);
        EXPECT_EQ(back.cluster.gpus, c.plan.cluster.gpus);
        EXPECT_EQ(b.tp, a.tp);
        EXPECT_EQ(b.pp, a.pp);
        EXPECT_EQ(b.cp, a.cp);
        EXPECT_EQ(b.ep, a.ep);
        EXPECT_EQ(b.virtualStages, a.virtualStages);
        EXPECT_EQ(b.microBatch, a.microBatch);
        EXPECT_EQ(b.gradAccum, a.gradAccum);
        EXPECT_EQ(b.seqLen, a.seqLen);
        EXPECT_EQ(b.recompute, a.recompute);
        EXPECT_EQ(b.recomputeEvery, a.recomputeEvery);
        // torchtitan's TP always shards along the sequence: sequence_parallel = false is warned.
        if (a.tp > 1 && a.sequenceParallel)
            EXPECT_EQ(b.sequenceParallel, a.sequenceParallel);
        if (a.zeroStage != 1 && exportdetail::dataParallel(c.plan) > 1)
            EXPECT_EQ(b.zeroStage, a.zeroStage);
        if (a.offloadOptimizer == a.offloadParams)
            EXPECT_EQ(b.offloadOptimizer, a.offloadOptimizer);
        if (recipeIs(c.plan, { "bf16-mixed-16", "fp32", "fp8-te" }))
            EXPECT_EQ(b.recipe.presetId, a.recipe.presetId);
        // Steps round up: the tokens come back within one step's worth.
        const double stepTokens = static_cast<double>(exportdetail::globalBatch(c.plan)) * a.seqLen;
        EXPECT_GE(b.trainTokens, a.trainTokens);
        EXPECT_LT(b.trainTokens - a.trainTokens, stepTokens);
    }
}

void expectMegatronRoundTrip(const Case& c)
{
    {
        const TrainingConfig& a = c.plan.training;
        const Plan back = roundTrip(c, Engine::Megatron, c.plan.cluster.gpus);
        const TrainingConfig& b = back.training;
        EXPECT_EQ(back.model.arch, c.plan.model.arch);
        EXPECT_EQ(back.cluster.gpus, c.plan.cluster.gpus);
        EXPECT_EQ(b.tp, a.tp);
        EXPECT_EQ(b.pp, a.pp);
        EXPECT_EQ(b.cp, a.cp);
        EXPECT_EQ(b.ep, a.ep);
        EXPECT_EQ(b.sequenceParallel, a.sequenceParallel);
        EXPECT_EQ(b.virtualStages, a.virtualStages);
        EXPECT_EQ(b.microBatch, a.microBatch);
        EXPECT_EQ(b.gradAccum, a.gradAccum);
        EXPECT_EQ(b.seqLen, a.seqLen);
        EXPECT_EQ(b.recompute, a.recompute);
        EXPECT_EQ(b.recomputeEvery, a.recomputeEvery);
        // ZeRO-1 is the distributed optimizer, 2 and 3 Megatron-FSDP's sharding strategies.
        EXPECT_EQ(b.zeroStage, a.zeroStage);
        EXPECT_EQ(b.offloadOptimizer, a.offloadOptimizer);
        EXPECT_EQ(b.flashAttention, a.flashAttention);
        if (recipeIs(c.plan, { "bf16-mixed-16", "bf16-mixed-18", "fp16-mixed", "fp32", "fp8-te" }))
            EXPECT_EQ(b.recipe.presetId, a.recipe.presetId);
        EXPECT_NEAR(b.trainTokens, a.trainTokens, a.seqLen); // --train-samples rounds up
    }
}

TEST(ExportRoundTrip, DeepSpeed)
{
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.label);
        expectDeepSpeedRoundTrip(c);
    }
}

TEST(ExportRoundTrip, TorchTitan)
{
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.label);
        expectTorchTitanRoundTrip(c);
    }
}

TEST(ExportRoundTrip, Megatron)
{
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.label);
        expectMegatronRoundTrip(c);
    }
}

// Issue 25: every preset plan -- the default plan with each model preset, and the hard plans in
// tests/data/plans/hard -- for every engine that reads its files back.
std::vector<Case> presetCases()
{
    std::vector<Case> out;
    for (const ModelPreset& m : exportPresets().models)
        out.push_back({ "default plan, model " + m.id,
            defaultPlanWith({ "model=\"" + m.id + "\"" }), "\"" + m.id + "\"" });
    const std::string dir = ENVELOPE_TEST_DATA_DIR "/plans/hard";
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const std::filesystem::path& file : files) {
        // Built while the tests register (no EXPECT here): a plan that does not read is a case
        // with no model, which its test fails naming the error.
        const std::string text = readTestFile(file.string());
        Expected<Plan> plan = readPlan(text, exportPresets());
        out.push_back({ file.stem().string() + (plan.ok() ? "" : ": " + plan.error().toString()),
            plan.ok() ? plan.value() : Plan {},
            plan.ok() ? nlohmann::json::parse(text)["model"].dump() : std::string() });
    }
    return out;
}

const std::vector<Case>& allPresetCases()
{
    static const std::vector<Case> all = presetCases();
    return all;
}

std::vector<std::size_t> presetIndices()
{
    std::vector<std::size_t> out(allPresetCases().size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = i;
    return out;
}

class PresetRoundTrip : public ::testing::TestWithParam<std::tuple<Engine, std::size_t>> { };

TEST_P(PresetRoundTrip, IsTheIdentityOnWhatTheEngineExpresses)
{
    const auto [engine, index] = GetParam();
    const Case& c = allPresetCases().at(index);
    ASSERT_FALSE(c.modelJson.empty()) << c.label;
    SCOPED_TRACE(c.label);
    switch (engine) {
    case Engine::DeepSpeed:
        expectDeepSpeedRoundTrip(c);
        break;
    case Engine::TorchTitan:
        expectTorchTitanRoundTrip(c);
        break;
    case Engine::Megatron:
        expectMegatronRoundTrip(c);
        break;
    default:
        FAIL() << "no importer";
    }
}

// Named engine_plan: deepspeed_llama_3_8b, megatron_deepseek_v3_671b, ...
INSTANTIATE_TEST_SUITE_P(EveryEngine, PresetRoundTrip,
    ::testing::Combine(::testing::Values(Engine::DeepSpeed, Engine::TorchTitan, Engine::Megatron),
        ::testing::ValuesIn(presetIndices())),
    [](const ::testing::TestParamInfo<PresetRoundTrip::ParamType>& info) {
        std::string label = allPresetCases().at(std::get<1>(info.param)).label;
        if (label.starts_with("default plan, model "))
            label = label.substr(20);
        std::string name = std::string(engineId(std::get<0>(info.param))) + "_";
        for (char ch : label.substr(0, label.find(':')))
            name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
        return name;
    });

} // namespace
} // namespace envelope::testing
