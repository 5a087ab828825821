// The envelope.solution document (design.md): its keys, and best.plan as a plan file that
// reads back and estimates to the figures the solution states.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "search/solution.h"
#include "test_search_fixtures.h"

namespace envelope {
namespace {

using testing::searchPlan;

TEST(SearchSolution, JsonHasTheContractKeysAndBestPlanReestimates)
{
    const Plan input = searchPlan("llama-2-7b", "h100-sxm", 8, 8,
        R"({"zero_stage": 0, "tp": 1, "micro_batch": 2, "grad_accum": 1, "seq_len": 4096})");
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    o.top = 5;
    const SearchResult r = search(input, o);
    const nlohmann::json j = nlohmann::json::parse(writeSolutionJson(input, r));
    EXPECT_EQ(j["format"], "envelope.solution");
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["goal"], "max-throughput");
    for (const char* key :
        { "searched", "feasible", "rejected", "elapsed_s", "best", "candidates", "pareto" })
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j["rejected"].contains("memory"));
    EXPECT_TRUE(j["rejected"].contains("divisibility"));
    ASSERT_EQ(j["candidates"].size(), 5u);
    for (const char* key :
        { "changes", "per_gpu_bytes_total", "verdict", "step_time_s", "tokens_per_s", "cost" })
        EXPECT_TRUE(j["candidates"][0].contains(key)) << key;

    // best.plan is a plan file: read it back and estimate it.
    Expected<PresetLibrary> presets = builtinPresets();
    Expected<Plan> best = readPlan(j["best"]["plan"].dump(), *presets);
    ASSERT_TRUE(best.ok()) << best.error().toString();
    const Estimate e = estimate(*best);
    const nlohmann::json& summary = j["best"]["summary"];
    EXPECT_EQ(summary["per_gpu_bytes"]["total"].get<std::int64_t>(),
        std::llround(e.training.perGpu.total()));
    EXPECT_DOUBLE_EQ(summary["tokens_per_s"].get<double>(), e.compute.tokensPerS);
    EXPECT_DOUBLE_EQ(j["candidates"][0]["tokens_per_s"].get<double>(), e.compute.tokensPerS);
    // best.changes applied to the input give best.plan.
    Plan changed = input;
    for (const auto& [path, value] : j["best"]["changes"].items()) {
        if (path == "training.tp")
            changed.training.tp = value.get<int>();
        else if (path == "training.zero_stage")
            changed.training.zeroStage = value.get<int>();
        else if (path == "training.micro_batch")
            changed.training.microBatch = value.get<int>();
        else if (path == "training.grad_accum")
            changed.training.gradAccum = value.get<int>();
        else if (path == "training.recompute")
            parseRecompute(value.get<std::string>(), changed.training.recompute);
        else if (path == "training.sequence_parallel")
            changed.training.sequenceParallel = value.get<bool>();
        else
            ADD_FAILURE() << "unexpected change " << path;
    }
    EXPECT_EQ(changed.training, best->training);
}

TEST(SearchSolution, CsvListsEveryFeasibleCandidate)
{
    const Plan input = searchPlan("llama-2-7b", "h100-sxm", 8, 8,
        R"({"zero_stage": 0, "micro_batch": 1, "grad_accum": 2, "seq_len": 4096})");
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    o.keepAllFeasible = true;
    const SearchResult r = search(input, o);
    const std::string csv = writeSolutionCsv(r);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), r.feasible + 1);
    EXPECT_EQ(csv.rfind("gpus,gpus_per_node,tp,pp,cp,ep,", 0), 0u);
}

TEST(SearchSolution, DescribesChangesInWords)
{
    const Plan input = searchPlan("llama-2-7b", "h100-sxm", 8, 8,
        R"({"zero_stage": 0, "recompute": "none", "micro_batch": 1, "grad_accum": 1})");
    Layout l = layoutOf(input);
    l.zeroStage = 3;
    l.recompute = Recompute::Full;
    l.gpus = 160;
    EXPECT_EQ(describeChanges(input, l), "ZeRO-3 + full recompute on 20 nodes (160 GPUs)");
    EXPECT_EQ(describeChanges(input, layoutOf(input)), "the plan as it is");
}

} // namespace
} // namespace envelope

namespace envelope {
namespace {

TEST(SearchSolution, ABestLayoutWhosePipelineIdlesSaysTheBatchCannotUseTheGpus)
{
    // Llama-3 70B on 64 GPUs as TP 8 x PP 4 (2 replicas) with one micro-batch each per step:
    // the 1F1B bubble is (p - 1) / (m + p - 1) = 3 / 4 = 75 % of the step. The solution must
    // say the fixed global batch (1 x 1 x 2 = 2 sequences) cannot use 64 GPUs well instead of
    // presenting the layout as simply "best".
    const Plan input = testing::searchPlan(R"({"model":"llama-3-70b","gpu":"h100-sxm",
        "cluster":{"gpus":64,"gpus_per_node":8},"training":{"zero_stage":1,"tp":8,"pp":4,
        "sequence_parallel":true,"seq_len":4096,"micro_batch":1,"grad_accum":1,
        "recompute":"full","framework":"megatron"}})");
    SearchResult r;
    Candidate c;
    c.layout = layoutOf(input);
    c.verdict = FitVerdict::Fits;
    r.candidates.push_back(c);
    const nlohmann::json j = nlohmann::json::parse(writeSolutionJson(input, r));
    ASSERT_TRUE(j["best"].contains("batch_note")) << j["best"].dump();
    const std::string note = j["best"]["batch_note"];
    EXPECT_NE(note.find("2 sequences"), std::string::npos) << note;
    EXPECT_NE(note.find("idles 75 %"), std::string::npos) << note;
    EXPECT_NE(writeSolutionText(input, r, ByteUnits::GB, false).find("Note: the plan's global"),
        std::string::npos);
    // 64 micro-batches per pipeline: 3 / 67 = 4.5 %, no note.
    Plan busy = input;
    busy.training.gradAccum = 64;
    r.candidates.front().layout = layoutOf(busy);
    EXPECT_FALSE(
        nlohmann::json::parse(writeSolutionJson(busy, r))["best"].contains("batch_note"));
}

} // namespace
} // namespace envelope
