// The RL pool search against brute force: every split of a small cluster between trainer,
// reference and rollout (any rollout count, not only "the GPUs left"), and the colocated pool,
// through estimate(); the planner's best is at least as good, and every candidate it reports
// re-estimates to the figures it claims.
#include <gtest/gtest.h>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "search/search.h"
#include "test_search_fixtures.h"

namespace envelope {
namespace {

using testing::expectReestimates;
using testing::searchPlan;

// GRPO on Qwen2.5-7B, ZeRO-3 trainer (seed 000's worked example is a 7B on 8 H100s).
Plan rlPlan(int gpus, const std::string& algorithm = "grpo")
{
    return searchPlan(R"({"format": "envelope.plan", "version": 1, "model": "qwen2.5-7b",
        "gpu": "h100-sxm", "cluster": {"gpus": )"
        + std::to_string(gpus) + R"(, "gpus_per_node": 8}, "training": {"zero_stage": 3},
        "rl": {"algorithm": ")"
        + algorithm + R"(", "trainer_gpus": 2, "reference_gpus": 1, "rollout_gpus": 1}})");
}

struct Brute {
    double best = 0;
    RlLayout layout;
};

// Every disjoint split with trainer + reference + rollout <= GPUs, rollout in whole engines,
// and the colocated pool, for each rollout TP.
Brute bruteForce(const Plan& input)
{
    Brute b;
    const int n = input.cluster.gpus;
    const auto consider = [&](const Plan& p) {
        const RlEstimate e = estimate(p).rl;
        if (e.verdict == Verdict::Fits && e.stepsPerHour > b.best) {
            b.best = e.stepsPerHour;
            b.layout = rlLayoutOf(p);
        }
    };
    for (int tp : { 1, 2, 4 }) {
        Plan p = input;
        p.serving.tp = tp;
        p.rl.placement = RlPlacement::Colocated;
        // The colocated engine's share, in tenths (what the resident trainer leaves it).
        for (int tenths = 2; tenths <= 9 && n % tp == 0; ++tenths) {
            p.serving.gpuMemoryUtilization = tenths / 10.0;
            consider(p);
        }
        p.serving.gpuMemoryUtilization = input.serving.gpuMemoryUtilization;
        p.rl.placement = RlPlacement::Disjoint;
        for (int trainer = 1; trainer < n; ++trainer)
            for (int reference = 1; trainer + reference < n; ++reference)
                for (int rollout = tp; trainer + reference + rollout <= n; rollout += tp) {
                    p.rl.trainerGpus = trainer;
                    p.rl.referenceGpus = reference;
                    p.rl.rolloutGpus = rollout;
                    consider(p);
                }
    }
    return b;
}

TEST(SearchRl, BestBeatsEveryBruteForceSplitAndCandidatesReestimate)
{
    // Not 4 GPUs: the 7B ZeRO-3 trainer needs 3 of them (93.7 GB on 2), and colocated at
    // gpu_memory_utilization 0.9 holds the engine's whole pool beside the trainer's states, so
    // nothing fits there (the search's exit 3 case, tested below).
    for (int gpus : { 8, 16 }) {
        const Plan input = rlPlan(gpus);
        SearchOptions o;
        o.goal = SearchGoal::RlMaxStepsPerHour;
        o.top = 50;
        const RlSearchResult r = searchRl(input, o);
        ASSERT_FALSE(r.candidates.empty()) << gpus;
        const Brute b = bruteForce(input);
        ASSERT_GT(b.best, 0) << gpus;
        EXPECT_GE(r.candidates.front().stepsPerHour, b.best) << gpus;
        EXPECT_DOUBLE_EQ(r.candidates.front().stepsPerHour, b.best) << gpus;
        for (size_t i = 0; i < r.candidates.size(); ++i) {
            expectReestimates(input, r.candidates[i]);
            if (i > 0)
                EXPECT_GE(r.candidates[i - 1].stepsPerHour, r.candidates[i].stepsPerHour);
        }
        for (const RlCandidate& c : r.pareto)
            expectReestimates(input, c);
    }
}

TEST(SearchRl, FixedPlacementAndTooSmallClusterSayWhy)
{
    const Plan input = rlPlan(8);
    SearchOptions o;
    o.goal = SearchGoal::RlMaxStepsPerHour;
    o.top = 100;
    o.fixed = { *parseFixedField("rl.placement=disjoint"), *parseFixedField("serving.tp=2") };
    const RlSearchResult r = searchRl(input, o);
    ASSERT_FALSE(r.candidates.empty());
    for (const RlCandidate& c : r.candidates) {
        EXPECT_EQ(c.layout.placement, RlPlacement::Disjoint);
        EXPECT_EQ(c.layout.rolloutTp, 2);
        EXPECT_EQ(c.layout.rolloutGpus % 2, 0);
        // The rollout engines take every GPU the other pools leave, in whole engines.
        EXPECT_GT(c.layout.trainerGpus + c.layout.referenceGpus + c.layout.rolloutGpus, 8 - 2);
    }
    EXPECT_FALSE(parseFixedField("rl.placement=shared").ok());

    // Qwen2.5-7B's trainer (16 B per parameter of states with AdamW mixed precision, 122 GB)
    // cannot sit on one 80 GB GPU, and two GPUs leave no room for a reference and a rollout
    // engine: nothing fits, and the message names the closest layout.
    const RlSearchResult none
        = searchRl(rlPlan(2), SearchOptions { .goal = SearchGoal::RlMaxStepsPerHour });
    EXPECT_TRUE(none.candidates.empty());
    EXPECT_TRUE(none.nearestMiss.has_value());
}

} // namespace
} // namespace envelope
