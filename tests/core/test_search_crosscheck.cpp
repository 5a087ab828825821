// The planner against brute force: its best is at least as good as every layout a plain loop
// over estimate() finds, every candidate it reports re-estimates to the figures it claims and
// passes validatePlan, and pruning changes nothing but the work done.
#include <gtest/gtest.h>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "search/search.h"
#include "test_search_fixtures.h"

namespace envelope {
namespace {

using testing::expectReestimates;
using testing::searchPlan;

// Llama-2-7B SFT on 8 H100s, 4096 tokens, 16 sequences per step (the default plan's shape).
Plan smallPlan()
{
    return searchPlan("llama-2-7b", "h100-sxm", 8, 8,
        R"({"zero_stage": 0, "tp": 1, "pp": 1, "micro_batch": 2, "grad_accum": 1,
            "seq_len": 4096, "recompute": "none"})");
}

// The verdict rule written out: fits when the per-GPU total is within 90% of HBM.
bool fitsByHand(const Estimate& e)
{
    return e.training.perGpu.total() <= 0.9 * e.training.gpuMemoryBytes;
}

TEST(SearchCrossCheck, BestBeatsEveryBruteForceLayoutAndCandidatesReestimate)
{
    const Plan input = smallPlan();
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    o.top = 20;
    const SearchResult r = search(input, o);
    ASSERT_FALSE(r.candidates.empty());
    for (const Candidate& c : r.candidates)
        expectReestimates(input, c);
    for (const Candidate& c : r.pareto)
        expectReestimates(input, c);

    // Brute force over a sub-space with plain loops and estimate(): 16 sequences per step.
    double bestBrute = 0;
    int fitting = 0;
    for (int tp : { 1, 2, 4, 8 })
        for (int pp : { 1, 2, 4, 8 }) {
            if (tp * pp > 8)
                continue;
            const int dp = 8 / (tp * pp);
            for (int zero = 0; zero <= 3; ++zero)
                for (Recompute rc : { Recompute::None, Recompute::Selective, Recompute::Full })
                    for (int mb = 1; mb <= 16 / dp; ++mb) {
                        if ((16 / dp) % mb != 0)
                            continue;
                        Plan p = input;
                        p.training.tp = tp;
                        p.training.pp = pp;
                        p.training.zeroStage = zero;
                        p.training.recompute = rc;
                        p.training.microBatch = mb;
                        p.training.gradAccum = 16 / dp / mb;
                        ASSERT_FALSE(validatePlan(p).has_value());
                        const Estimate e = estimate(p);
                        if (!fitsByHand(e))
                            continue;
                        ++fitting;
                        bestBrute = std::max(bestBrute, e.compute.tokensPerS);
                    }
        }
    ASSERT_GT(fitting, 0);
    EXPECT_GE(r.candidates.front().tokensPerS, bestBrute);
    // Candidates come best first.
    for (size_t i = 1; i < r.candidates.size(); ++i)
        EXPECT_GE(r.candidates[i - 1].tokensPerS, r.candidates[i].tokensPerS);
}

TEST(SearchCrossCheck, EveryFeasibleLayoutIsNoBetterThanTheBest)
{
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    o.keepAllFeasible = true;
    const SearchResult r = search(smallPlan(), o);
    ASSERT_EQ(static_cast<long long>(r.feasibleList.size()), r.feasible);
    for (const Candidate& c : r.feasibleList)
        EXPECT_LE(c.tokensPerS, r.candidates.front().tokensPerS);
}

void expectPruningChangesNothing(const Plan& plan, SearchGoal goal)
{
    SearchOptions pruned;
    pruned.goal = goal;
    pruned.top = 25;
    SearchOptions full = pruned;
    full.prune = false;
    const SearchResult a = search(plan, pruned);
    const SearchResult b = search(plan, full);
    EXPECT_EQ(a.feasible, b.feasible);
    if (goal != SearchGoal::MinGpus) // both stop at the first count that fits
        EXPECT_LT(a.evaluated, b.evaluated);
    ASSERT_EQ(a.candidates.size(), b.candidates.size());
    for (size_t i = 0; i < a.candidates.size(); ++i) {
        EXPECT_EQ(a.candidates[i].layout, b.candidates[i].layout) << i;
        EXPECT_EQ(a.candidates[i].tokensPerS, b.candidates[i].tokensPerS) << i;
    }
    ASSERT_EQ(a.pareto.size(), b.pareto.size());
    if (goal != SearchGoal::MinGpus) { // min-gpus skips counts below its bound when pruning
        EXPECT_EQ(a.searched, b.searched);
        ASSERT_EQ(a.rejected.size(), b.rejected.size());
        for (size_t i = 0; i < a.rejected.size(); ++i)
            EXPECT_EQ(a.rejected[i].count, b.rejected[i].count) << a.rejected[i].reason;
    }
}

TEST(SearchCrossCheck, PruningChangesNothingOn70bAnd405b)
{
    expectPruningChangesNothing(searchPlan("llama-2-70b", "h100-sxm", 64, 8,
                                    R"({"zero_stage": 1, "tp": 8, "pp": 1, "micro_batch": 1,
                                        "grad_accum": 16, "seq_len": 4096})"),
        SearchGoal::MaxThroughput);
    expectPruningChangesNothing(searchPlan("llama-3.1-405b", "h100-sxm", 512, 8,
                                    R"({"zero_stage": 1, "tp": 8, "pp": 16, "micro_batch": 1,
                                        "grad_accum": 32, "seq_len": 8192})"),
        SearchGoal::MaxThroughput);
}

TEST(SearchCrossCheck, PruningChangesNothingForMinGpusWithExperts)
{
    expectPruningChangesNothing(searchPlan("mixtral-8x7b", "h100-sxm", 64, 8,
                                    R"({"zero_stage": 3, "tp": 1, "pp": 1, "ep": 8,
                                        "micro_batch": 1, "grad_accum": 1, "seq_len": 4096})"),
        SearchGoal::MinGpus);
}

TEST(SearchCrossCheck, FixedFieldsAreHeldAndBadOnesNamed)
{
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    o.fixed.push_back(*parseFixedField("training.tp=2"));
    o.fixed.push_back(*parseFixedField("training.recompute=full"));
    const SearchResult r = search(smallPlan(), o);
    ASSERT_FALSE(r.candidates.empty());
    for (const Candidate& c : r.candidates) {
        EXPECT_EQ(c.layout.tp, 2);
        EXPECT_EQ(c.layout.recompute, Recompute::Full);
    }
    const Expected<FixedField> unknown = parseFixedField("training.mfu=0.5");
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().path, "training.mfu");
    const Expected<FixedField> range = parseFixedField("training.zero_stage=5");
    ASSERT_FALSE(range.ok());
    EXPECT_EQ(range.error().toString(), "training.zero_stage: must be an integer 0..3, got \"5\"");
    EXPECT_FALSE(parseFixedField("training.tp").ok());
}

TEST(SearchCrossCheck, NothingFitsNamesTheNearestMiss)
{
    // Llama-3.1-405B on one 8-GPU node: its 16 B/param states alone are 6.5 TB, 810 GB a GPU.
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    o.allowOffload = false;
    const SearchResult r = search(searchPlan("llama-3.1-405b", "h100-sxm", 8, 8,
                                      R"({"zero_stage": 3, "tp": 8, "micro_batch": 1,
                                          "grad_accum": 1, "seq_len": 8192})"),
        o);
    EXPECT_TRUE(r.candidates.empty());
    EXPECT_EQ(r.feasible, 0);
    ASSERT_TRUE(r.nearestMiss.has_value());
    EXPECT_GT(r.nearestMiss->perGpuBytes, 16 * 405e9 / 8);
}

} // namespace
} // namespace envelope
