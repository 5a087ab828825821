// training.stage_layers (issue 24, "Megatron's uneven pipeline layouts"): the layers each
// pipeline stage holds, one layout for memory and step time, written to Megatron and torchtitan
// and read back from Megatron's split flags and layout strings. Every expected figure is worked
// out here by hand from the model's shape and the engines' rules.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "export/importing.h"
#include "export/toml.h"
#include "export_fixtures.h"
#include "plan/planio.h"
#include "plan/setpath.h"
#include "search/search.h"

namespace envelope::testing {
namespace {

// Llama-3 70B (80 layers) TP 8 x PP 4 on 32 H100s, ZeRO-1, full recompute.
std::vector<std::string> seventyB(int pp, int gpus)
{
    return { "model=\"llama-3-70b\"", "cluster.gpus=" + std::to_string(gpus), "training.tp=8",
        "training.pp=" + std::to_string(pp), "training.zero_stage=1",
        "training.sequence_parallel=true", "training.recompute=\"full\"", "training.grad_accum=16" };
}

// The formula explain gives `figure` ("" when it is not explained).
std::string formulaOf(const Estimate& e, const std::string& figure)
{
    for (const Explanation& x : e.explain)
        if (x.figure == figure)
            return x.formula;
    return {};
}

// An engine file read back as Llama-3 70B on 32 GPUs.
Expected<ImportedPlan> importSeventyB(Engine engine, const std::string& text)
{
    ImportOptions options;
    options.modelJson = "\"llama-3-70b\"";
    options.gpus = 32;
    return importEngineConfig(engine, text, exportPresets(), options);
}

Plan seventyBWith(int pp, int gpus, const std::string& stages = "")
{
    std::vector<std::string> sets = seventyB(pp, gpus);
    if (!stages.empty())
        sets.push_back("training.stage_layers=" + stages);
    return defaultPlanWith(sets);
}

TEST(StageLayers, DefaultSplitIsCeilPerStageWithTheRestLast)
{
    TrainingConfig t;
    t.pp = 16;
    // DeepSeek-V3: 61 layers, ceil(61 / 16) = 4 on each of 15 stages, 1 on the last.
    std::vector<int> expected(15, 4);
    expected.push_back(1);
    EXPECT_EQ(pipelineStageLayers(t, 61), expected);
    t.pp = 6;
    EXPECT_EQ(pipelineStageLayers(t, 80), (std::vector<int> { 14, 14, 14, 14, 14, 10 }));
    // A split that does not fit the model is not used (the plan's validation refuses it).
    t.stageLayers = { 20, 20, 20, 20 };
    EXPECT_EQ(pipelineStageLayers(t, 80), (std::vector<int> { 14, 14, 14, 14, 14, 10 }));
    t.stageLayers = { 10, 14, 14, 14, 14, 14 };
    EXPECT_EQ(pipelineStageLayers(t, 80), t.stageLayers);
}

TEST(StageLayers, PlanKeyIsCheckedAgainstPpAndTheModel)
{
    const auto read = [](const std::string& stages, int pp) {
        Expected<std::string> text = applySetsToText(exportPresets().defaultPlanJson,
            { "model=\"llama-3-70b\"", "cluster.gpus=32", "training.tp=8",
                "training.pp=" + std::to_string(pp), "training.zero_stage=1",
                "training.stage_layers=" + stages });
        EXPECT_TRUE(text.ok());
        return readPlan(text.value(), exportPresets());
    };
    const auto error = [&](const std::string& stages, int pp) {
        Expected<Plan> p = read(stages, pp);
        EXPECT_FALSE(p.ok()) << stages;
        return p.ok() ? std::string() : p.error().toString();
    };
    EXPECT_TRUE(read("[19,21,21,19]", 4).ok());
    EXPECT_NE(error("[20,20,40]", 4).find("training.stage_layers"), std::string::npos);
    EXPECT_NE(error("[20,20,40]", 4).find("training.pp is 4, got 3 entries"), std::string::npos);
    EXPECT_NE(error("[20,20,20,21]", 4).find("must add up to the model's 80 layers, got 81"),
        std::string::npos);
    EXPECT_NE(error("[20,20,-1,41]", 4).find("0..100000"), std::string::npos);
    EXPECT_NE(error("\"20,20,20,20\"", 4).find("training.stage_layers"), std::string::npos);
    // null is the default split (what solve's --set writes when it changes pp).
    Expected<Plan> none = read("null", 4);
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->training.stageLayers.empty());

    // Written back as given, and read back equal.
    Expected<Plan> p = read("[19,21,21,19]", 4);
    ASSERT_TRUE(p.ok());
    const nlohmann::json j = nlohmann::json::parse(writePlan(*p));
    EXPECT_EQ(j["training"]["stage_layers"], nlohmann::json::parse("[19,21,21,19]"));
    Expected<Plan> again = readPlan(writePlan(*p), exportPresets());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *p);
}

// The pipeline runs at its slowest stage: every micro-batch waits for it (Narayanan et al. 2021
// sec. 2.2). Two 80-layer splits whose largest stage is a middle one (the first holds 19 layers
// and the embedding, the last 19 and the LM head: 19 + 1.2 layers' worth of head GEMM < 21)
// differ in compute time by exactly the largest stage's layers: 22 / 21.
TEST(StageLayers, TheLargestStageSetsThePace)
{
    const Estimate a = estimate(seventyBWith(4, 32, "[19,21,21,19]"));
    const Estimate b = estimate(seventyBWith(4, 32, "[19,20,22,19]"));
    ASSERT_TRUE(a.compute.computeTimeS > 0 && b.compute.computeTimeS > 0);
    EXPECT_NEAR(b.compute.computeTimeS / a.compute.computeTimeS, 22.0 / 21.0, 1e-9);
    // 80 layers on PP 6: with 14 layers on a middle stage the pace is 14 layers, not the
    // average 80 / 6 = 13.3: against 21 layers, with equal micro-batches and layer shapes,
    // 14 / 21 = 2 / 3.
    const Estimate middle = estimate(seventyBWith(6, 48, "[13,13,14,13,14,13]"));
    EXPECT_NEAR(middle.compute.computeTimeS / a.compute.computeTimeS, 14.0 / 21.0, 1e-9);
    // The default split (14, 14, 14, 14, 14, 10) puts 14 layers on the first stage too, beside
    // the embedding: that stage sets the pace, a lookup's worth (under 1%) slower.
    const Estimate six = estimate(seventyBWith(6, 48));
    EXPECT_GT(six.compute.computeTimeS, middle.compute.computeTimeS);
    EXPECT_LT(six.compute.computeTimeS, 1.01 * middle.compute.computeTimeS);
}

// explain names the stage that sets the pace and the split; the result carries both.
TEST(StageLayers, ExplainAndResultNameTheSlowestStage)
{
    const Plan plan = seventyBWith(4, 32, "[19,20,22,19]");
    const Estimate e = estimate(plan, { .explain = true });
    EXPECT_EQ(e.compute.slowestStage, 2);
    const nlohmann::json j = nlohmann::json::parse(writeResult(plan, e));
    EXPECT_EQ(j["training"]["stage_layers"], nlohmann::json::parse("[19, 20, 22, 19]"));
    EXPECT_EQ(j["training"]["slowest_stage"], 2);
    std::string formula = formulaOf(e, "training.compute_time_s");
    EXPECT_NE(formula.find("stage 2 of 4 with 22 layers; layers per stage 19, 20, 22, 19 "
                           "(training.stage_layers)"),
        std::string::npos)
        << formula;
    const Estimate d = estimate(defaultPlanWith({ "model=\"deepseek-v3\"", "cluster.gpus=128",
                                    "training.pp=16", "training.ep=8" }),
        { .explain = true });
    formula = formulaOf(d, "training.compute_time_s");
    EXPECT_NE(formula.find("layers per stage 4 x 15, 1 (ceil(L / pp), the last the rest)"),
        std::string::npos)
        << formula;
}

// Memory follows the same split: stage 0 with 26 layers holds the most (it also keeps pp
// micro-batches in flight under 1F1B). Per GPU at TP 8: a layer's q and o 8192 x 8192, k and v
// 8192 x 1024, gate, up and down 8192 x 28672, / 8, plus its two norms of 8192 (replicated);
// the embedding 128,256 x 8192 / 8.
TEST(StageLayers, MemoryHoldsTheStagesLayers)
{
    const double layer = (2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 28672) / 8 + 2 * 8192;
    const double embedding = 128256.0 * 8192 / 8;
    const Estimate e = estimate(seventyBWith(4, 32, "[26,18,18,18]"));
    EXPECT_EQ(e.training.worstStage, 0);
    EXPECT_NEAR(e.training.paramsOnWorstGpu, 26 * layer + embedding, 1e3);
    const Estimate even = estimate(seventyBWith(4, 32));
    EXPECT_EQ(even.training.worstStage, 0);
    EXPECT_NEAR(even.training.paramsOnWorstGpu, 20 * layer + embedding, 1e3);
}

// Megatron (TransformerConfig, megatron-core v0.19): equal middle stages are said with
// --decoder-first/last-pipeline-num-layers; any other split with --pipeline-model-parallel-layout,
// stage j of pp x vpp on rank j mod pp.
TEST(StageLayers, MegatronWritesTheSplit)
{
    const auto argsOf = [](const Plan& plan) {
        return argumentMap(exportOf(plan, Engine::Megatron).text);
    };
    auto a = argsOf(seventyBWith(4, 32, "[17,21,21,21]"));
    EXPECT_EQ(a.at("--decoder-first-pipeline-num-layers"), "17");
    EXPECT_EQ(a.at("--decoder-last-pipeline-num-layers"), "21");
    EXPECT_EQ(a.count("--pipeline-model-parallel-layout"), 0u);
    a = argsOf(seventyBWith(4, 32, "[19,20,22,19]"));
    EXPECT_EQ(a.count("--decoder-first-pipeline-num-layers"), 0u);
    EXPECT_EQ(a.at("--pipeline-model-parallel-layout"), "E(t)*19|(t)*20|(t)*22|(t)*19L");
    // (The file quotes the layout for the shell: '...'.) With 2 virtual stages: rank k's layers in chunks k and k + 4 (19 = 10 + 9, 21 = 11 + 10).
    Plan v = seventyBWith(4, 32, "[19,21,21,19]");
    v.training.virtualStages = 2;
    a = argsOf(v);
    EXPECT_EQ(a.at("--pipeline-model-parallel-layout"),
        "E(t)*10|(t)*11|(t)*11|(t)*10|(t)*9|(t)*10|(t)*10|(t)*9L");
    EXPECT_EQ(a.count("--num-virtual-stages-per-pipeline-rank"), 0u);
}

Expected<ImportedPlan> importMegatron(const std::string& args, const std::string& model)
{
    ImportOptions options;
    options.modelJson = "\"" + model + "\"";
    return importEngineConfig(Engine::Megatron, args, exportPresets(), options);
}

std::vector<int> stagesOf(const Expected<ImportedPlan>& r)
{
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().toString());
    if (!r.ok())
        return {};
    const nlohmann::json t = nlohmann::json::parse(r->planJson)["training"];
    return t.contains("stage_layers") ? t["stage_layers"].get<std::vector<int>>()
                                      : std::vector<int> {};
}

TEST(StageLayers, MegatronSplitFlagsAreRead)
{
    // First and last given: the two middle stages share 80 - 17 - 21 = 42.
    EXPECT_EQ(stagesOf(importMegatron("--tensor-model-parallel-size 8\n"
                                      "--pipeline-model-parallel-size 4\n"
                                      "--decoder-first-pipeline-num-layers 17\n"
                                      "--decoder-last-pipeline-num-layers 21\n",
                  "llama-3-70b")),
        (std::vector<int> { 17, 21, 21, 21 }));
    // Only the first: 80 - 14 = 66 over three stages.
    EXPECT_EQ(stagesOf(importMegatron("--pipeline-model-parallel-size 4\n"
                                      "--decoder-first-pipeline-num-layers 14\n",
                  "llama-3-70b")),
        (std::vector<int> { 14, 22, 22, 22 }));
    // An uneven rest is Megatron's assertion, and ours.
    Expected<ImportedPlan> bad = importMegatron("--pipeline-model-parallel-size 4\n"
                                                "--decoder-first-pipeline-num-layers 15\n",
        "llama-3-70b");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().toString().find("--decoder-first-pipeline-num-layers"), std::string::npos);
    // Llama 3.1 405B's 126 layers with the embedding and the loss counted as a layer each on
    // PP 8 x VP 8 (Megatron-Bridge's recipe): 128 / 64 = 2 per chunk, the first and last chunk
    // one fewer: ranks 0 and 7 hold 15, the others 16.
    EXPECT_EQ(stagesOf(importMegatron("--pipeline-model-parallel-size 8\n"
                                      "--num-virtual-stages-per-pipeline-rank 8\n"
                                      "--account-for-embedding-in-pipeline-split\n"
                                      "--account-for-loss-in-pipeline-split\n",
                  "llama-3.1-405b")),
        (std::vector<int> { 15, 16, 16, 16, 16, 16, 16, 15 }));
}

// DeepSeek-V3 on PP 16 x VPP 2 as Megatron's own documentation lays it out
// (docs: "Custom Pipeline Model Parallel Layout"): "Et*3|(tt|)*29,m|L" is 32 stages, stage j on
// rank j mod 16: rank 0 holds 3 + 2, ranks 1-13 2 + 2, rank 14 2 + the MTP layer, rank 15 2 +
// the loss. 5 + 13 x 4 + 2 + 2 = 61.
TEST(StageLayers, MegatronLayoutStringIsRead)
{
    const Expected<ImportedPlan> r = importMegatron("--pipeline-model-parallel-size 16\n"
                                                    "--expert-model-parallel-size 8\n"
                                                    "--mtp-num-layers 1\n"
                                                    "--pipeline-model-parallel-layout Et*3|(tt|)*29,m|L\n",
        "deepseek-v3");
    std::vector<int> expected { 5 };
    expected.insert(expected.end(), 13, 4);
    expected.push_back(2);
    expected.push_back(2);
    EXPECT_EQ(stagesOf(r), expected);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(nlohmann::json::parse(r->planJson)["training"]["virtual_stages"], 2);
    EXPECT_EQ(nlohmann::json::parse(r->planJson)["training"]["mtp_layers"], 1);
    // The layout puts the MTP module on rank 14; Envelope times it with the loss, and says so.
    bool said = false;
    for (const std::string& w : r->warnings)
        said = said || w.find("places the MTP module(s) before the last stage") != std::string::npos;
    EXPECT_TRUE(said);

    const auto error = [](const std::string& layout) {
        Expected<ImportedPlan> bad = importMegatron(
            "--pipeline-model-parallel-size 2\n--pipeline-model-parallel-layout " + layout + "\n",
            "llama-3-70b");
        EXPECT_FALSE(bad.ok()) << layout;
        return bad.ok() ? std::string() : bad.error().toString();
    };
    EXPECT_NE(error("E(t)*40|(t)*41L").find("places 81 decoder layers (t), the model has 80"),
        std::string::npos);
    EXPECT_NE(error("E(t)*40|(x)*40L").find("'x'"), std::string::npos);
    EXPECT_NE(error("(t)*40|E(t)*40L").find("must start with one E"), std::string::npos);
    // A repeat that would unroll to gigabytes is refused before it is built.
    EXPECT_NE(error("E(t)*999999999999|(t)*40L").find("unrolls to more than"), std::string::npos);
    EXPECT_NE(error("Et*99999999999999999999|L").find("unrolls to more than"), std::string::npos);
}

// torchtitan (parallelism.module_fqns_per_model_part, read by pipeline_llm instead of its own
// split): one list of module names per model part, the embedding first and the final norm and
// LM head last.
TEST(StageLayers, TorchTitanWritesTheModulesOfEachPart)
{
    const EngineConfig c = exportOf(seventyBWith(4, 32, "[19,21,21,19]"), Engine::TorchTitan);
    // One model part a line.
    EXPECT_NE(c.text.find("module_fqns_per_model_part = [\n    [\"tok_embeddings\", \"layers.0\","),
        std::string::npos)
        << c.text;
    EXPECT_NE(c.text.find("\"layers.18\"],\n    [\"layers.19\","), std::string::npos);
    EXPECT_NE(c.text.find("\"layers.79\", \"norm\", \"output\"],\n]\n"), std::string::npos);
    // The file parses as TOML (tomllib in the conformance tests; here the importer's reader).
    EXPECT_TRUE(exportdetail::parseToml(c.text).ok());
}

// ... and reads it back: the plan it exported, imported, has the same split.
TEST(StageLayers, TorchTitanSplitRoundTrips)
{
    const EngineConfig c = exportOf(seventyBWith(4, 32, "[19,21,21,19]"), Engine::TorchTitan);
    const Expected<ImportedPlan> r = importSeventyB(Engine::TorchTitan, c.text);
    EXPECT_EQ(stagesOf(r), (std::vector<int> { 19, 21, 21, 19 }));
    // The same list as a person writes it, one part per line with comments between: the same
    // split.
    std::string spread = c.text;
    for (std::size_t p = spread.find("],\n    ["); p != std::string::npos; p = spread.find("],\n    [", p))
        spread.replace(p, 8, "],\n  # the next stage\n  [");
    ASSERT_NE(spread, c.text);
    const Expected<ImportedPlan> multiLine
        = importSeventyB(Engine::TorchTitan, spread);
    EXPECT_EQ(stagesOf(multiLine), (std::vector<int> { 19, 21, 21, 19 }));
    // A list that misses a block is refused, naming the key.
    std::string broken = c.text;
    const std::size_t at = broken.find(", \"layers.5\"");
    ASSERT_NE(at, std::string::npos);
    broken.erase(at, std::string(", \"layers.5\"").size());
    const Expected<ImportedPlan> bad
        = importSeventyB(Engine::TorchTitan, broken);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().toString().find("parallelism.module_fqns_per_model_part"),
        std::string::npos);
    EXPECT_NE(bad.error().toString().find("names 79 transformer blocks"), std::string::npos);
}

// A torchtitan file that leaves the split to torchtitan runs torchtitan's own
// (generate_llm_fqn_per_model_part): the embedding and the head weigh a layer each, 80 + 2 = 82
// over 4 stages = 20 rem 2, the first two stages one more: 21 - 1, 21, 20, 20 - 1.
TEST(StageLayers, TorchTitanDefaultSplitIsRead)
{
    const std::string job = "[parallelism]\ntensor_parallel_degree = 8\n"
                            "pipeline_parallel_degree = 4\n";
    EXPECT_EQ(stagesOf(importSeventyB(Engine::TorchTitan, job)),
        (std::vector<int> { 20, 21, 20, 19 }));
    // With both weights 0 the 80 layers split evenly.
    EXPECT_EQ(stagesOf(importSeventyB(Engine::TorchTitan,
                  job + "pipeline_parallel_first_stage_less_layers = 0\n"
                        "pipeline_parallel_last_stage_less_layers = 0\n")),
        (std::vector<int> { 20, 20, 20, 20 }));
}

// A search that changes pp drops the plan's split (it was for its own depth), in the applied
// plan and in the --set commands that reproduce it.
TEST(StageLayers, SearchDropsTheSplitWhenPpChanges)
{
    const Plan plan = seventyBWith(4, 32, "[19,21,21,19]");
    Layout l = layoutOf(plan);
    EXPECT_EQ(applyLayout(plan, l).training.stageLayers, plan.training.stageLayers);
    l.pp = 2;
    l.gpus = 16;
    EXPECT_TRUE(applyLayout(plan, l).training.stageLayers.empty());
    bool cleared = false;
    for (const FieldChange& f : layoutChanges(plan, l))
        cleared = cleared || (f.path == "training.stage_layers" && f.json == "null");
    EXPECT_TRUE(cleared);
}


// training.mtp_layers (DeepSeek-V3 sec. 2.2; Megatron --mtp-num-layers): each module sits on the
// last stage with one transformer block, a 2h -> h projection of [norm(h); norm(embedding)] and
// the shared head again; with pp > 1 that stage keeps its own copy of the embedding. Llama-3
// 70B at TP 8, the last stage given 50 layers so it is the fullest: MTP adds one layer's
// parameters (as MemoryHoldsTheStagesLayers counts them), the projection 2 x 8192 x 8192 / 8
// and its two norms of 8192, and the embedding 128,256 x 8192 / 8.
TEST(Mtp, TheLastStageHoldsTheModuleAndAnEmbeddingCopy)
{
    const double layer = (2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 28672) / 8 + 2 * 8192;
    const double module = 2.0 * 8192 * 8192 / 8 + 2 * 8192;
    const double embedding = 128256.0 * 8192 / 8;
    Plan plan = seventyBWith(4, 32, "[10,10,10,50]");
    const Estimate without = estimate(plan);
    ASSERT_EQ(without.training.worstStage, 3);
    plan.training.mtpLayers = 1;
    const Estimate with = estimate(plan);
    ASSERT_EQ(with.training.worstStage, 3);
    EXPECT_NEAR(with.training.paramsOnWorstGpu - without.training.paramsOnWorstGpu,
        layer + module + embedding, 1e3);
    // Two modules: twice the block and projection, one embedding copy.
    plan.training.mtpLayers = 2;
    EXPECT_NEAR(estimate(plan).training.paramsOnWorstGpu - without.training.paramsOnWorstGpu,
        2 * (layer + module) + embedding, 1e3);
}

// The step: with an even 20-layer split the last stage (20 layers and the head) sets the pace.
// With d = 20 + 1 layers last (split 19, 20, 20, 21) the pace grows by exactly one layer L;
// the MTP module adds L, the head H again and its projection P. So, per the micro-batches,
//   with MTP - 21 layers last = H + P,  H = even - 20 L,
// and P, a 2h x h GEMM beside a layer's 12.4 h^2 of matmul weights (q, o h^2; k, v h^2 / 8;
// gate, up, down 3.5 h^2 each) plus its attention core, is about 2 / 12.4 = 0.16 of L or less.
TEST(Mtp, TheModuleRunsALayerTheHeadAndItsProjectionOnTheLastStage)
{
    Plan plan = seventyBWith(4, 32, "[20,20,20,20]");
    const double even = estimate(plan).compute.computeTimeS;
    EXPECT_EQ(estimate(plan).compute.slowestStage, 3);
    const double oneMore = estimate(seventyBWith(4, 32, "[19,20,20,21]")).compute.computeTimeS;
    plan.training.mtpLayers = 1;
    const Estimate withMtp = estimate(plan, { .explain = true });
    EXPECT_EQ(withMtp.compute.slowestStage, 3);
    const double L = oneMore - even;
    const double H = even - 20 * L;
    const double P = withMtp.compute.computeTimeS - oneMore - H;
    ASSERT_GT(L, 0);
    EXPECT_GT(H, 0.5 * L); // a 128,256-wide head GEMM: about 1.2 layers' FLOPs
    EXPECT_GT(P, 0.03 * L);
    EXPECT_LT(P, 0.17 * L);
    const std::string formula = formulaOf(withMtp, "training.compute_time_s");
    EXPECT_NE(formula.find("stage 3 of 4 with 20 layers, the LM head and 1 MTP module(s)"),
        std::string::npos)
        << formula;
}

// Megatron: --mtp-num-layers, and an m before the loss in a layout; read back, and a layout
// whose m count disagrees with the flag is refused as Megatron refuses it.
TEST(Mtp, MegatronWritesAndReadsTheModules)
{
    Plan plan = seventyBWith(4, 32, "[19,20,22,19]");
    plan.training.mtpLayers = 1;
    const EngineConfig c = exportOf(plan, Engine::Megatron);
    const auto a = argumentMap(c.text);
    EXPECT_EQ(a.at("--mtp-num-layers"), "1");
    EXPECT_EQ(a.at("--pipeline-model-parallel-layout"), "E(t)*19|(t)*20|(t)*22|(t)*19mL");
    const Expected<ImportedPlan> back = importSeventyB(Engine::Megatron, c.text);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(nlohmann::json::parse(back->planJson)["training"]["mtp_layers"], 1);
    EXPECT_EQ(stagesOf(back), (std::vector<int> { 19, 20, 22, 19 }));
    std::string noFlag = c.text;
    noFlag.erase(noFlag.find("--mtp-num-layers 1"), std::string("--mtp-num-layers 1").size());
    const Expected<ImportedPlan> bad
        = importSeventyB(Engine::Megatron, noFlag);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().toString().find("--mtp-num-layers is not set"), std::string::npos)
        << bad.error().toString();
    // Engines without MTP say so.
    EXPECT_TRUE(anyWarningMentions(exportOf(plan, Engine::TorchTitan),
        "training.mtp_layers = 1: torchtitan has no multi-token-prediction modules"));
}


// torchtitan's V-shaped schedules (ZBVZeroBubble, DualPipeV) put two chunks on each rank, j and
// 2 pp - 1 - j (stage_ids_this_rank, style "v"). A zero-bubble plan with two chunks a rank is
// written as ZBVZeroBubble, its model parts in a V: 80 layers on PP 4 as 19, 21, 21, 19, each
// rank's layers cut in two (19 = 10 + 9, 21 = 11 + 10), so in model order the parts hold
// 10, 11, 11, 10 (ranks 0-3, first halves) then 9, 10, 10, 9 (ranks 3-0, second halves).
TEST(StageLayers, ZeroBubbleWithTwoChunksIsTorchTitansVShape)
{
    Plan plan = seventyBWith(4, 32, "[19,21,21,19]");
    plan.training.virtualStages = 2;
    plan.training.ppSchedule = PpSchedule::ZeroBubble;
    const EngineConfig c = exportOf(plan, Engine::TorchTitan);
    const nlohmann::json t = exportdetail::parseToml(c.text).value();
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_schedule"], "ZBVZeroBubble");
    std::vector<int> sizes;
    for (const nlohmann::json& part : t["parallelism"]["module_fqns_per_model_part"]) {
        int n = 0;
        for (const nlohmann::json& name : part)
            n += name.get<std::string>().rfind("layers.", 0) == 0;
        sizes.push_back(n);
    }
    EXPECT_EQ(sizes, (std::vector<int> { 10, 11, 11, 10, 9, 10, 10, 9 }));
    // Read back: the V puts part 4 on rank 3 and part 7 on rank 0, so ranks hold 19, 21, 21,
    // 19 again, and the schedule is zero bubble.
    const Expected<ImportedPlan> r = importSeventyB(Engine::TorchTitan, c.text);
    EXPECT_EQ(stagesOf(r), (std::vector<int> { 19, 21, 21, 19 }));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(nlohmann::json::parse(r->planJson)["training"]["pp_schedule"], "zb1p");
    // Read as a loop instead, the same parts would be 19, 21, 21, 19 only by symmetry: an
    // asymmetric split tells the two apart (20, 22, 21, 17 as 11 + 9, 11 + 11, 11 + 10, 9 + 8).
    plan.training.stageLayers = { 20, 22, 21, 17 };
    const Expected<ImportedPlan> odd = importSeventyB(
        Engine::TorchTitan, exportOf(plan, Engine::TorchTitan).text);
    EXPECT_EQ(stagesOf(odd), (std::vector<int> { 20, 22, 21, 17 }));
    // A V needs exactly two parts a rank: a ZBV file with the loop's four parts of PP 4 at one
    // chunk a rank is refused, naming the key.
    std::string one = exportOf(seventyBWith(4, 32, "[19,21,21,19]"), Engine::TorchTitan).text;
    one.replace(one.find("\"1F1B\""), 6, "\"ZBVZeroBubble\"");
    const Expected<ImportedPlan> bad
        = importSeventyB(Engine::TorchTitan, one);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().toString().find("must hold 2 x pipeline_parallel_degree = 8 parts"),
        std::string::npos)
        << bad.error().toString();
    // One chunk a rank cannot be zero bubble in torchtitan: written 1F1B, said.
    plan.training.virtualStages = 1;
    const EngineConfig single = exportOf(plan, Engine::TorchTitan);
    EXPECT_EQ(exportdetail::parseToml(single.text).value()["parallelism"]["pipeline_parallel_schedule"],
        "1F1B");
    EXPECT_TRUE(anyWarningMentions(single, "torchtitan's zero-bubble schedules need two or more"));
}

} // namespace
} // namespace envelope::testing
