// Issue 28: "a headroom preference (do not rank a 76.9 GB plan on a 77.0 GB line first when a
// roomier one is within 2%)". The candidates are written out by hand: an 80 GB H100's 85.5 GB
// of HBM at the default usable fraction 0.9 puts the line at 76.97 GB.
#include <gtest/gtest.h>

#include <algorithm>

#include "fixtures.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "search/search.h"
#include "search/solution.h"

namespace envelope {
namespace {

constexpr double kHbm = 85.52e9; // an H100 SXM 80GB as the GPU presets state it
constexpr double kUsable = 0.9;  // the line: 76.97 GB

Candidate candidate(int gpus, int tp, double perGpuGb, double tokensPerS, double cost = 0)
{
    Candidate c;
    c.layout.gpus = gpus;
    c.layout.tp = tp;
    c.perGpuBytes = perGpuGb * 1e9;
    c.gpuMemoryBytes = kHbm;
    c.verdict = FitVerdict::Fits;
    c.tokensPerS = tokensPerS;
    c.cost = cost;
    return c;
}

TEST(SearchHeadroom, ABestOnTheLineGivesWayToARoomierOneWithin2Percent)
{
    // 76.9 GB is 0.1% under the 76.97 GB line; 1.2% fewer tokens/s buys 6.9 GB of headroom.
    std::vector<Candidate> ranked { candidate(64, 8, 76.9, 10'000), candidate(64, 4, 76.5, 9'950),
        candidate(64, 2, 70.0, 9'880), candidate(64, 1, 60.0, 9'000) };
    const std::string note = preferHeadroom(ranked, SearchGoal::MaxThroughput, kUsable);
    ASSERT_FALSE(note.empty());
    // 76.5 GB is also within 2% of the line (75.43 GB and up): the 70 GB layout moves up.
    EXPECT_EQ(ranked[0].layout.tp, 2);
    EXPECT_EQ(ranked[1].layout.tp, 8); // the rest keep their order
    EXPECT_EQ(ranked[2].layout.tp, 4);
    EXPECT_EQ(ranked[3].layout.tp, 1);
    EXPECT_NE(note.find("70.0 GB"), std::string::npos) << note;
    EXPECT_NE(note.find("76.9 GB"), std::string::npos) << note;
    EXPECT_NE(note.find("77.0 GB usable line"), std::string::npos) << note;
}

TEST(SearchHeadroom, NothingMovesWhenTheRoomierOneIsMoreThan2PercentSlower)
{
    // 9,790 tokens/s is 2.1% below 10,000.
    std::vector<Candidate> ranked { candidate(64, 8, 76.9, 10'000), candidate(64, 2, 70.0, 9'790) };
    EXPECT_TRUE(preferHeadroom(ranked, SearchGoal::MaxThroughput, kUsable).empty());
    EXPECT_EQ(ranked[0].layout.tp, 8);
}

TEST(SearchHeadroom, NothingMovesWhenTheBestHasRoom)
{
    // 75.0 GB is 2.6% under the line: room enough.
    std::vector<Candidate> ranked { candidate(64, 8, 75.0, 10'000), candidate(64, 2, 60.0, 9'990) };
    EXPECT_TRUE(preferHeadroom(ranked, SearchGoal::MaxThroughput, kUsable).empty());
    EXPECT_EQ(ranked[0].layout.tp, 8);
}

TEST(SearchHeadroom, TheLineIsThePlansUsableFraction)
{
    // At usable_fraction 1.0 the line is 85.52 GB: 76.9 GB is 10% under it.
    std::vector<Candidate> ranked { candidate(64, 8, 76.9, 10'000), candidate(64, 2, 60.0, 9'990) };
    EXPECT_TRUE(preferHeadroom(ranked, SearchGoal::MaxThroughput, 1.0).empty());
}

TEST(SearchHeadroom, MinGpusKeepsItsGpuCountAndMinCostComparesCost)
{
    // Fewer GPUs is the goal: a roomier layout on more GPUs does not move up.
    std::vector<Candidate> gpus { candidate(48, 8, 76.9, 10'000), candidate(64, 8, 60.0, 10'000) };
    EXPECT_TRUE(preferHeadroom(gpus, SearchGoal::MinGpus, kUsable).empty());
    // Cost: $101,500 is within 2% of $100,000.
    std::vector<Candidate> cost { candidate(64, 8, 76.9, 10'000, 100'000),
        candidate(64, 2, 60.0, 9'000, 101'500) };
    EXPECT_FALSE(preferHeadroom(cost, SearchGoal::MinCost, kUsable).empty());
    EXPECT_EQ(cost[0].layout.tp, 2);
}

TEST(SearchHeadroom, GoalsThatAskForTheLineKeepTheirOrder)
{
    std::vector<Candidate> ranked { candidate(64, 8, 76.9, 10'000), candidate(64, 2, 60.0, 10'000) };
    EXPECT_TRUE(preferHeadroom(ranked, SearchGoal::MaxSeqLen, kUsable).empty());
    EXPECT_TRUE(preferHeadroom(ranked, SearchGoal::MaxMicroBatch, kUsable).empty());
    EXPECT_EQ(ranked[0].layout.tp, 8);
}

// On a published plan (Megatron-Bridge 25.11's Qwen3-30B-A3B FP8 on 16 H100s) at 8192 tokens a
// sequence, the layout the goal alone ranks first sits within 2% of the 77.0 GB line; the search
// answers a roomier one within 2% of its tokens/s, and says so. (At the run's own 4096 the best
// layouts have room since issue 24 kept its FP8 linears' inputs at 1 B.)
TEST(SearchHeadroom, TheSearchAppliesItAndSaysSo)
{
    const std::string path = std::string(ENVELOPE_TEST_DATA_DIR)
        + "/validation/throughput/mbridge2511-h100-qwen3-30b-a3b-16gpu-fp8-cs.json";
    const PresetLibrary presets = builtinPresets().value();
    const Expected<Plan> plan = readPlan(testing::readText(path), presets);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    Plan longer = *plan;
    longer.training.seqLen = 8192;
    SearchOptions options;
    options.goal = SearchGoal::MaxThroughput;
    const SearchResult r = search(longer, options);
    ASSERT_FALSE(r.candidates.empty());
    ASSERT_FALSE(r.headroomNote.empty());
    const Candidate& best = r.candidates.front();
    const double line = r.usableFraction * best.gpuMemoryBytes;
    EXPECT_LE(best.perGpuBytes, 0.98 * line);
    // The displaced layout is still listed: faster, by less than 2%, and within 2% of the line.
    const auto faster = std::find_if(r.candidates.begin() + 1, r.candidates.end(),
        [&](const Candidate& c) { return c.tokensPerS > best.tokensPerS; });
    ASSERT_NE(faster, r.candidates.end());
    EXPECT_LT(faster->tokensPerS, best.tokensPerS / 0.98);
    EXPECT_GT(faster->perGpuBytes, 0.98 * line);
    // The solution says it in each format.
    EXPECT_NE(writeSolutionText(longer, r, ByteUnits::GB, false).find("ranked first for its headroom"),
        std::string::npos);
    EXPECT_NE(writeSolutionJson(longer, r).find("\"headroom_note\""), std::string::npos);
}

} // namespace
} // namespace envelope
