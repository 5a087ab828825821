// "What makes it fit" asks the planner: a plan no single change rescues gets a combined change
// (layout, ZeRO, recompute, offload, GPU count) that really fits, by the estimator's own figures.
#include <gtest/gtest.h>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "search/fit.h"
#include "test_search_fixtures.h"
#include "whatif/whatif.h"

namespace envelope {
namespace {

using testing::searchPlan;

// Fits by the planner's rule: the per-GPU total within 90% of HBM.
void expectFits(const Plan& plan)
{
    EXPECT_FALSE(validatePlan(plan).has_value());
    const Estimate e = estimate(plan);
    EXPECT_LE(e.training.perGpu.total(), 0.9 * e.training.gpuMemoryBytes);
}

TEST(SearchFit, DeepSeekV3OnOneNodeGetsTheFewestNodesThatFit)
{
    // 671B x 16 B = 10.7 TB of states on 8 GPUs: no single change fits, nor does more DP at
    // this layout alone; the planner's answer leads the suggestions.
    const Plan plan = searchPlan("deepseek-v3", "h100-sxm", 8, 8,
        R"({"zero_stage": 1, "tp": 1, "pp": 1, "ep": 8, "micro_batch": 1, "grad_accum": 32,
            "seq_len": 4096, "recompute": "selective"})");
    ASSERT_FALSE(estimate(plan).training.fits);
    const std::vector<FitSuggestion> suggestions = suggestFits(plan);
    ASSERT_FALSE(suggestions.empty());
    const FitSuggestion& first = suggestions.front();
    EXPECT_TRUE(first.makesItFit);
    EXPECT_GT(first.plan.cluster.gpus, 8);
    EXPECT_LE(first.plan.cluster.gpus, 163);
    EXPECT_EQ(first.plan.cluster.gpus % 8, 0);
    EXPECT_NE(first.description.find(" nodes ("), std::string::npos) << first.description;
    expectFits(first.plan);
    EXPECT_EQ(first.savedBytes,
        estimate(plan).training.perGpu.total() - estimate(first.plan).training.perGpu.total());
}

TEST(SearchFit, MemorySettingsKeepTheParallelLayout)
{
    const Plan plan = searchPlan("llama-2-70b", "h100-sxm", 8, 8,
        R"({"zero_stage": 0, "tp": 4, "pp": 2, "micro_batch": 1, "grad_accum": 16,
            "seq_len": 4096, "recompute": "none"})");
    ASSERT_FALSE(estimate(plan).training.fits);
    const std::optional<Candidate> fit = whatMakesItFit(plan, FitScope::MemorySettings).fit;
    ASSERT_TRUE(fit.has_value());
    EXPECT_EQ(fit->layout.tp, 4);
    EXPECT_EQ(fit->layout.pp, 2);
    EXPECT_EQ(fit->layout.microBatch, 1);
    expectFits(applyLayout(plan, fit->layout));
}

// A plan no layout can hold (a million sequences of 1e8 tokens a micro-batch): unbounded, the
// fewest-GPUs search walks every node count to 65,536 GPUs (1.3 s); bounded, it stops at the
// cap, says so, and the summary's suggestion says the quick search stopped.
TEST(SearchFit, APathologicalPlanStopsAtTheEstimateCapAndSaysSo)
{
    const Plan plan = searchPlan("llama-3-70b", "h100-sxm", 8, 8,
        R"({"micro_batch": 1000000, "grad_accum": 1, "seq_len": 100000000})");
    const FitAnswer answer = whatMakesItFit(plan, FitScope::FullLayout);
    EXPECT_FALSE(answer.fit.has_value());
    EXPECT_TRUE(answer.capped);
    // One row past the cap at most: a row is a divisor of the 8e6 sequences a step
    // (2^9 x 5^6: 10 x 7 = 70 divisors) per micro-batch, so the cap plus 70.
    EXPECT_GE(answer.estimates, kFitEstimateCap);
    EXPECT_LE(answer.estimates, kFitEstimateCap + 70);
    const std::vector<FitSuggestion> suggestions = suggestFits(plan);
    ASSERT_FALSE(suggestions.empty());
    EXPECT_NE(suggestions.back().description.find("the quick search stopped"), std::string::npos);
    EXPECT_FALSE(suggestions.back().makesItFit);
    // With no cap the same search runs to the end and still finds nothing.
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    const SearchResult here = search(plan, o);
    EXPECT_FALSE(here.capped);
    EXPECT_TRUE(here.candidates.empty());
}

TEST(SearchFit, APlanThatFitsStaysAsItIs)
{
    const Plan plan = searchPlan("llama-2-7b", "h100-sxm", 8, 8,
        R"({"zero_stage": 3, "micro_batch": 1, "grad_accum": 4, "seq_len": 4096})");
    EXPECT_TRUE(suggestFits(plan).empty());
}


// fuzz_mutate's finding (docs/reliability.md): 4096 x 4096 sequences on 4096 GPUs is 2^36
// sequences, so one replica's micro-batch divisors reached 2^32, which narrowed to an int
// micro-batch of 0 and divided by zero (SIGFPE in release, a UBSan report in CI). The planner
// now splits a replica's sequences only into micro-batch x grad-accum within validatePlan's
// 1..1,000,000 each.
TEST(SearchFit, AHugeBatchIsSplitOnlyWithinTheFieldRanges)
{
    const Plan plan = searchPlan("llama-2-7b", "h100-sxm", 4096, 32,
        R"({"zero_stage": 0, "micro_batch": 4096, "grad_accum": 4096, "seq_len": 4096})");
    ASSERT_FALSE(validatePlan(plan).has_value());
    const long long sequences = 4096LL * 4096 * 4096; // micro x accum x dp (tp = pp = 1)
    for (SearchGoal goal : { SearchGoal::MinGpus, SearchGoal::MaxThroughput }) {
        SearchOptions options;
        options.goal = goal;
        options.maxEstimates = 20'000;
        const SearchResult r = search(plan, options);
        for (const Candidate& c : r.candidates) {
            const Layout& l = c.layout;
            EXPECT_GE(l.microBatch, 1);
            EXPECT_LE(l.microBatch, 1'000'000);
            EXPECT_LE(l.gradAccum, 1'000'000);
            const long long dp = l.gpus / (l.tp * l.pp * l.cp);
            EXPECT_EQ(1LL * l.microBatch * l.gradAccum * dp, sequences);
            EXPECT_FALSE(validatePlan(applyLayout(plan, l)).has_value());
        }
    }
    // The summary's suggestion runs the same search.
    for (const FitSuggestion& s : suggestFits(plan))
        EXPECT_FALSE(validatePlan(s.plan).has_value()) << s.description;
}

} // namespace
} // namespace envelope
