// The goals besides throughput and GPU count: cost and time of a run within a deadline or a
// budget, the longest sequence and the largest micro-batch that fit. Each answer is checked
// against the constraint written out here and against the search's own feasible list.
#include <gtest/gtest.h>

#include "estimate/estimate.h"
#include "search/search.h"
#include "test_search_fixtures.h"

namespace envelope {
namespace {

using testing::searchPlan;

// Llama-2-70B on up to 64 H100s ($3 per GPU-hour, the preset), 4M-token batches, 1e11 tokens.
Plan runPlan(const std::string& extra)
{
    return searchPlan("llama-2-70b", "h100-sxm", 64, 8,
        R"({"zero_stage": 1, "tp": 8, "micro_batch": 1, "grad_accum": 128, "seq_len": 4096,
            "train_tokens": 1e11)"
            + extra + "}");
}

SearchResult run(const Plan& plan, SearchGoal goal)
{
    SearchOptions o;
    o.goal = goal;
    o.top = 50;
    o.keepAllFeasible = true;
    return search(plan, o);
}

TEST(SearchGoals, MinCostIsTheCheapestFeasibleRunAndMeetsTheDeadline)
{
    // 60 days.
    const Plan plan = runPlan(R"(, "deadline_s": 5184000)");
    const SearchResult r = run(plan, SearchGoal::MinCost);
    ASSERT_FALSE(r.candidates.empty());
    for (const Candidate& c : r.feasibleList) {
        EXPECT_LE(c.trainTimeS, 5184000.0);
        EXPECT_GE(c.cost, r.candidates.front().cost);
        // cost = GPUs x hours x $3 (the H100 preset's price).
        EXPECT_NEAR(c.cost, c.layout.gpus * c.trainTimeS / 3600 * 3.0, 1e-6 * c.cost);
    }
    // GPU counts below the plan's 64 are searched too (whole nodes).
    bool fewer = false;
    for (const Candidate& c : r.feasibleList)
        fewer = fewer || c.layout.gpus < 64;
    EXPECT_TRUE(fewer);
}

TEST(SearchGoals, MinTimeIsTheFastestRunWithinTheBudget)
{
    // 4.44e11 FLOPs a token (6 x 69e9 params + attention) x 1e11 tokens / (989.4 TFLOP/s x
    // 0.45 MFU) = 27.7k GPU-hours = $83k at $3 an hour before communication and the bubble:
    // $90k admits some layouts, not all.
    const Plan plan = runPlan(R"(, "budget_usd": 90000)");
    const SearchResult r = run(plan, SearchGoal::MinTime);
    ASSERT_FALSE(r.candidates.empty());
    for (const Candidate& c : r.feasibleList) {
        EXPECT_LE(c.cost, 90000.0);
        EXPECT_GE(c.trainTimeS, r.candidates.front().trainTimeS);
    }
    const auto budget = std::find_if(r.rejected.begin(), r.rejected.end(),
        [](const RejectCount& c) { return c.reason == "budget"; });
    EXPECT_NE(budget, r.rejected.end());

    // A budget below every run: the answer names the cheapest and the overshoot.
    const SearchResult none = run(runPlan(R"(, "budget_usd": 50000)"), SearchGoal::MinTime);
    EXPECT_TRUE(none.candidates.empty());
    ASSERT_TRUE(none.nearestConstraintMiss.has_value());
    EXPECT_GT(none.nearestConstraintMiss->cost, 50000.0);
}

TEST(SearchGoals, MaxSeqLenFitsAndTwiceItFitsNowhere)
{
    // Without context parallelism or offload, so the answer stays below the 1M-token cap.
    const Plan plan = runPlan("");
    SearchOptions o;
    o.goal = SearchGoal::MaxSeqLen;
    o.allowOffload = false;
    o.fixed.push_back(*parseFixedField("training.cp=1"));
    const SearchResult r = search(plan, o);
    ASSERT_FALSE(r.candidates.empty());
    const int longest = r.candidates.front().layout.seqLen;
    EXPECT_GE(longest, 4096);
    // The global batch in tokens is held: sequences x length = 128 x 8 x 4096 (dp 8 at tp 8).
    EXPECT_EQ(estimate(applyLayout(plan, r.candidates.front().layout)).compute.globalBatchTokens,
        128.0 * 8 * 4096);
    ASSERT_LT(longest, 1 << 20);
    SearchOptions twice = o;
    twice.goal = SearchGoal::MaxThroughput;
    twice.fixed.push_back(*parseFixedField("training.seq_len=" + std::to_string(2 * longest)));
    EXPECT_TRUE(search(plan, twice).candidates.empty());
}

TEST(SearchGoals, MaxMicroBatchIsTheLargestFeasibleMicroBatch)
{
    const SearchResult r = run(runPlan(""), SearchGoal::MaxMicroBatch);
    ASSERT_FALSE(r.candidates.empty());
    for (const Candidate& c : r.feasibleList)
        EXPECT_LE(c.layout.microBatch, r.candidates.front().layout.microBatch);
    EXPECT_GT(r.candidates.front().layout.microBatch, 1);
}

} // namespace
} // namespace envelope
