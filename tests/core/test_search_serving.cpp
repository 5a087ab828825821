// The serving search: against brute force over plain loops and estimate(), every reported
// candidate re-estimated through estimate() of its applied plan, the latency limits, and a known
// answer derived by hand (Llama-3 70B at 16 bits needs TP >= 2 on an 80 GB H100).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "search/search.h"
#include "search/solution.h"
#include "serving/load.h"
#include "test_search_fixtures.h"

namespace envelope {
namespace {

using testing::expectReestimates;
using testing::searchPlan;

Plan servingPlan(
    const std::string& model, int gpus, int context, int concurrency, const std::string& extra = "")
{
    return searchPlan(R"({"format": "envelope.plan", "version": 1, "model": ")" + model
        + R"(", "gpu": "h100-sxm", "cluster": {"gpus": )" + std::to_string(gpus)
        + R"(, "gpus_per_node": 8}, "serving": {"context": )" + std::to_string(context)
        + R"(, "concurrency": )" + std::to_string(concurrency) + extra + "}}");
}

struct Brute {
    double bestTokensPerS = 0;
    long long feasible = 0;
};

// Every (tp, weight bits, kv bits) of a TP engine with as many replicas as the GPUs hold, each
// applied to the plan by hand (the replica's share of the sequences): visit(plan).
template <class Visit> void forEachTpLayout(const Plan& input, Visit visit)
{
    for (int tp : { 1, 2, 4, 8 }) {
        if (tp > input.cluster.gpus || input.model.arch.heads % tp != 0)
            continue;
        const int replicas = input.cluster.gpus / tp;
        for (int wb : { 16, 8, 4 })
            for (int kb : { 16, 8 }) {
                Plan p = input;
                p.serving.tp = tp;
                p.serving.weightBits = wb;
                p.serving.kvBits = kb;
                p.serving.concurrency = (input.serving.concurrency + replicas - 1) / replicas;
                visit(p);
            }
    }
}

// Every such layout through estimate().
Brute bruteForce(const Plan& input, double maxItlS)
{
    Brute b;
    forEachTpLayout(input, [&](const Plan& p) {
        const ServingEstimate s = estimate(p).serving;
        if (!s.fits || s.itlS > maxItlS)
            return;
        ++b.feasible;
        b.bestTokensPerS = std::max(b.bestTokensPerS, input.serving.concurrency / s.itlS);
    });
    return b;
}

TEST(SearchServing, BestBeatsEveryBruteForceLayoutAndCandidatesReestimate)
{
    // Llama-3 8B, 32 sequences of 8k tokens on 4 H100s.
    const Plan input = servingPlan("llama-3-8b", 4, 8192, 32);
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxThroughput;
    o.top = 100;
    const ServingSearchResult r = searchServing(input, o);
    ASSERT_FALSE(r.candidates.empty());
    const Brute b = bruteForce(input, INFINITY);
    EXPECT_EQ(r.feasible, b.feasible);
    EXPECT_EQ(r.candidates.size(), size_t(b.feasible));
    EXPECT_EQ(r.candidates.front().tokensPerS, b.bestTokensPerS);
    for (size_t i = 0; i < r.candidates.size(); ++i) {
        expectReestimates(input, r.candidates[i]);
        if (i > 0)
            EXPECT_GE(r.candidates[i - 1].tokensPerS, r.candidates[i].tokensPerS);
    }
    for (const ServingCandidate& c : r.pareto)
        expectReestimates(input, c);
    // 3 TP groups (1, 2, 4) x 3 weight x 2 KV precisions; 8 does not fit on 4 GPUs.
    EXPECT_EQ(r.evaluated, 18);
}

TEST(SearchServing, ItlLimitIsAConstraintTheBruteForceAgrees)
{
    const Plan unlimited = servingPlan("llama-3-8b", 4, 8192, 32);
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxThroughput;
    o.top = 100;
    const ServingSearchResult free = searchServing(unlimited, o);
    ASSERT_GE(free.candidates.size(), 2u);
    // A limit between the two best ITLs: the best is excluded, the rest agree with brute force.
    const double limit = 0.5 * (free.candidates[0].itlS + free.candidates[1].itlS);
    const Plan input = servingPlan(
        "llama-3-8b", 4, 8192, 32, R"(, "max_itl_s": )" + std::to_string(limit * 0.999999));
    const ServingSearchResult r = searchServing(input, o);
    const Brute b = bruteForce(input, limit * 0.999999);
    EXPECT_EQ(r.feasible, b.feasible);
    ASSERT_FALSE(r.candidates.empty());
    EXPECT_EQ(r.candidates.front().tokensPerS, b.bestTokensPerS);
    for (const ServingCandidate& c : r.candidates)
        EXPECT_LE(c.itlS, limit);
    // An impossible limit: nothing, and the nearest miss is the fastest-stepping layout.
    SearchOptions tight = o;
    tight.maxItlS = 1e-6;
    const ServingSearchResult none = searchServing(input, tight);
    EXPECT_TRUE(none.candidates.empty());
    ASSERT_TRUE(none.nearestMiss.has_value());
    EXPECT_EQ(none.nearestMiss->itlS, free.candidates.front().itlS);
}

// Llama-3 70B at 16-bit weights and KV, one 8,192-token sequence, on 80 GB H100s:
//  - its weights are 141.1 GB (safetensors total_size 141,107,412,992 B): over one GPU's
//    85.5 GB at any utilization, so TP 1 cannot serve it;
//  - at TP 2 a GPU holds 70.55 GB of weights and half the KV heads (4 of 8): one sequence's KV
//    is 8,192 x 2 (K, V) x 80 layers x 4 heads x 128 x 2 B = 1.34 GB, 71.9 GB in all; vLLM
//    takes 0.9 of the memory CUDA reports (a little under the 85.5 GB: 0.9 x 85.0 = 76.5 GB),
//    leaving 4.6 GB for its 2.07 GiB (2.2 GB) of NCCL and CUDA context and the profiled
//    activations: one 8,192-token forward at TP 2 (residual, norm output, gate and up of half
//    the 28,672-wide FFN and their product: 8,192 x (2 x 8,192 + 3 x 14,336) x 2 B = 0.97 GB)
//    and fp32 logits of 1,024 sampled rows (1,024 x 128,256 x 4 B = 0.53 GB), under 2 GB;
// so the fewest GPUs is 2, as one TP-2 replica.
TEST(SearchServing, Llama70bAt16BitsNeedsTwoGpusByHand)
{
    const Plan input = servingPlan("llama-3-70b", 8, 8192, 1);
    const double weights = 141107412992.0, hbm = 85520809984.0;
    EXPECT_GT(weights, hbm);
    const double kvOneSequencePerGpu = 8192.0 * 2 * 80 * 4 * 128 * 2;
    EXPECT_NEAR(kvOneSequencePerGpu, 1.342e9, 1e6);
    EXPECT_LT(weights / 2 + kvOneSequencePerGpu + 2.07 * 1073741824.0 + 2.0e9, 0.9 * 85.0e9);

    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    o.fixed
        = { *parseFixedField("serving.weight_bits=16"), *parseFixedField("serving.kv_bits=16") };
    const ServingSearchResult r = searchServing(input, o);
    ASSERT_FALSE(r.candidates.empty());
    const ServingCandidate& best = r.candidates.front();
    EXPECT_EQ(best.gpus, 2);
    EXPECT_EQ(best.layout.tp, 2);
    EXPECT_EQ(best.layout.replicas, 1);
    EXPECT_EQ(best.layout.clusterGpus, 2);
    expectReestimates(input, best);
    // TP 1 on one GPU was tried and rejected for memory.
    long long memory = 0;
    for (const RejectCount& c : r.rejected)
        if (c.reason == "memory")
            memory = c.count;
    EXPECT_EQ(memory, 1 + 1); // 1 GPU x TP 1, 2 GPUs x TP 1 (two replicas of one GPU each)
}

TEST(SearchServing, MinGpusGrowsWithConcurrency)
{
    // More sequences never need fewer GPUs: the KV each replica holds only grows.
    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    int last = 0;
    for (int concurrency : { 16, 64, 256, 1024 }) {
        const ServingSearchResult r
            = searchServing(servingPlan("llama-3-70b", 8, 8192, concurrency), o);
        ASSERT_FALSE(r.candidates.empty()) << concurrency;
        EXPECT_GE(r.candidates.front().gpus, last);
        last = r.candidates.front().gpus;
        expectReestimates(servingPlan("llama-3-70b", 8, 8192, concurrency), r.candidates.front());
    }
}

TEST(SearchServing, FixedFieldsHoldAndBadOnesAreRefused)
{
    const Plan input = servingPlan("llama-3-8b", 8, 4096, 64);
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxThroughput;
    o.top = 50;
    o.fixed = { *parseFixedField("serving.tp=2") };
    const ServingSearchResult r = searchServing(input, o);
    ASSERT_FALSE(r.candidates.empty());
    for (const ServingCandidate& c : r.candidates) {
        EXPECT_EQ(c.layout.tp, 2);
        EXPECT_EQ(c.layout.replicas, 4);
    }
    EXPECT_FALSE(parseFixedField("serving.weight_bits=6").ok());
    EXPECT_FALSE(parseFixedField("serving.kv_bits=32").ok());
    const Expected<FixedField> bad = parseFixedField("serving.context=4096");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("serving.{tp,weight_bits,kv_bits}"), std::string::npos);
}

TEST(SearchServing, CancelStopsAndStreamingSeesTheTopList)
{
    const Plan input = servingPlan("llama-3-70b", 8, 8192, 64);
    std::atomic<bool> cancel { true };
    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    o.cancel = &cancel;
    const ServingSearchResult cancelled = searchServing(input, o);
    EXPECT_TRUE(cancelled.cancelled);
    EXPECT_TRUE(cancelled.candidates.empty());

    SearchOptions streamed;
    streamed.goal = SearchGoal::ServingMaxThroughput;
    int batches = 0;
    std::vector<ServingCandidate> last;
    streamed.partialServing = [&](const std::vector<ServingCandidate>& top) {
        ++batches;
        last = top;
    };
    const ServingSearchResult r = searchServing(input, streamed);
    EXPECT_GE(batches, 1);
    ASSERT_FALSE(last.empty());
    EXPECT_EQ(last.front().layout, r.candidates.front().layout);
}

} // namespace
} // namespace envelope

namespace envelope {
namespace {

TEST(SearchServing, TheNearestMissNamesItsGpuCountOnce)
{
    // Issue 26: "nearest miss is ... on 65528 GPUs on 65528 GPUs". With an impossible ITL limit
    // on the fewest-GPUs goal the nearest miss is a fleet sized by the search, not the plan:
    // the message names its GPU count once.
    const Plan input = servingPlan("llama-3-70b", 8, 8192, 1);
    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    o.maxItlS = 1e-6;
    const ServingSearchResult r = searchServing(input, o);
    ASSERT_TRUE(r.candidates.empty());
    const std::string message = noSolutionMessage(input, r, ByteUnits::GB);
    std::size_t count = 0;
    for (std::size_t at = message.find(" GPUs"); at != std::string::npos;
         at = message.find(" GPUs", at + 1))
        ++count;
    EXPECT_EQ(count, 1u) << message;
}

} // namespace
} // namespace envelope

namespace envelope {
namespace {

// serving-max-goodput (issue 27): Llama-3 8B on 4 H100s under a Poisson workload of fixed
// lengths (2,000 prompt + 200 output tokens) and an SLO.
Plan goodputPlan(const std::string& slo)
{
    return searchPlan(R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b",
        "gpu": "h100-sxm", "cluster": {"gpus": 4, "gpus_per_node": 8},
        "serving": {"context": 8192, "concurrency": 16, "workload": {"input_tokens": 2000,
        "output_tokens": 200, "request_rate": 8})"
        + (slo.empty() ? std::string() : R"(, "slo": )" + slo) + "}}");
}

// The goodput of every TP layout on the plan's GPUs (forEachTpLayout), each estimated as
// `envelope-cli estimate` does (estimate + attachServingGoodput).
struct GoodputBrute {
    double best = 0;
    long long meetsSlo = 0; // layouts with a goodput above zero
};
GoodputBrute goodputBruteForce(const Plan& input)
{
    GoodputBrute b;
    forEachTpLayout(input, [&](const Plan& p) {
        Estimate e = estimate(p);
        if (!e.serving.fitsWeights)
            return;
        attachServingGoodput(p, e);
        const double g = e.serving.load ? e.serving.load->goodputRps.value_or(0) : 0;
        if (g > 0) {
            ++b.meetsSlo;
            b.best = std::max(b.best, g);
        }
    });
    return b;
}

TEST(SearchServingGoodput, TheBestIsTheHighestGoodputOfEveryLayoutEstimatedOnItsOwn)
{
    const Plan input = goodputPlan(R"({"ttft_p90_s": 0.4, "tpot_p90_s": 0.02})");
    const GoodputBrute brute = goodputBruteForce(input);
    ASSERT_GT(brute.meetsSlo, 0);
    // top 1 bisects only while a capacity can beat the best goodput; top 100 bisects every layout.
    for (int top : { 1, 100 }) {
        SearchOptions o;
        o.goal = SearchGoal::ServingMaxGoodput;
        o.top = top;
        // The aggregated layouts forEachTpLayout enumerates (xPyD: the test below).
        o.fixed = { *parseFixedField("serving.disaggregation=false") };
        const ServingSearchResult r = searchServing(input, o);
        ASSERT_FALSE(r.candidates.empty()) << top;
        EXPECT_NEAR(r.candidates.front().goodputRps.value_or(0), brute.best, 1e-9 * brute.best)
            << top;
        for (size_t i = 0; i < r.candidates.size(); ++i) {
            const ServingCandidate& c = r.candidates[i];
            ASSERT_TRUE(c.goodputRps.has_value());
            // The bisection searches below the capacity run's rate, the same run the bound used:
            // the applied plan's estimate reports that capacity.
            EXPECT_LE(*c.goodputRps, c.capacityRps * (1 + 1e-12));
            const Plan applied = applyServingLayout(input, c.layout);
            EXPECT_DOUBLE_EQ(estimate(applied).serving.load->capacityRps, c.capacityRps);
            // Output tokens/s at the goodput: every request of the fixed-length workload
            // returns 200 tokens.
            EXPECT_NEAR(c.tokensPerS, *c.goodputRps * 200, 1e-6 * c.tokensPerS);
            if (i > 0)
                EXPECT_GE(*r.candidates[i - 1].goodputRps, *c.goodputRps);
        }
        if (top == 100)
            EXPECT_EQ(r.feasible, brute.meetsSlo);
        else
            EXPECT_GT(r.searched, r.feasible); // the bound skipped bisections
    }
}

TEST(SearchServingGoodput, ALooserSloNeverServesLess)
{
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxGoodput;
    const ServingSearchResult tight
        = searchServing(goodputPlan(R"({"ttft_p90_s": 0.4, "tpot_p90_s": 0.02})"), o);
    const ServingSearchResult loose
        = searchServing(goodputPlan(R"({"ttft_p90_s": 2, "tpot_p90_s": 0.1})"), o);
    ASSERT_FALSE(tight.candidates.empty());
    ASSERT_FALSE(loose.candidates.empty());
    EXPECT_GE(*loose.candidates.front().goodputRps, *tight.candidates.front().goodputRps);
}

TEST(SearchServingGoodput, NoRateMeetingTheSloNamesTheNearestMissAndWhy)
{
    // A TPOT of 0.1 ms: no H100 decodes a token of an 8B model that fast, even alone.
    const Plan input = goodputPlan(R"({"tpot_p90_s": 0.0001})");
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxGoodput;
    const ServingSearchResult r = searchServing(input, o);
    EXPECT_TRUE(r.candidates.empty());
    ASSERT_TRUE(r.nearestMiss.has_value());
    const std::string message = noSolutionMessage(input, r, ByteUnits::GB);
    EXPECT_NE(message.find("no serving layout meets the SLO at any request rate: nearest miss is "),
        std::string::npos)
        << message;
    EXPECT_NE(message.find("TPOT p90"), std::string::npos) << message;

    // Without an SLO there is nothing to rank by: the message names what the plan lacks.
    const Plan noSlo = goodputPlan("");
    const ServingSearchResult none = searchServing(noSlo, o);
    EXPECT_EQ(none.searched, 0);
    EXPECT_NE(noSolutionMessage(noSlo, none, ByteUnits::GB).find("serving.slo"), std::string::npos);
}

} // namespace
} // namespace envelope

namespace envelope {
namespace {

// serving-max-goodput's xPyD layouts (docs/planner.md, "Disaggregated prefill and decode"):
// Llama-3 8B on 8 H100s (one node) with long prompts and short answers, the workload
// disaggregation is for (DistServe, Zhong et al. 2024: prefill chunks in a decode step stretch
// every running sequence's TPOT).
Plan xpydPlan(const std::string& slo, int gpus = 8)
{
    return searchPlan(R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b",
        "gpu": "h100-sxm", "cluster": {"gpus": )"
        + std::to_string(gpus) + R"(, "gpus_per_node": 8},
        "serving": {"context": 8192, "concurrency": 16, "workload": {"input_tokens": 6000,
        "output_tokens": 300, "request_rate": 8}, "slo": )"
        + slo + "}}");
}

// Every xPyD layout of TP pools on the plan's GPUs (every split: y the whole decode workers the
// x prefill workers leave), each applied to the plan by hand and estimated as `envelope-cli
// estimate` does.
double bestXpydGoodputByHand(const Plan& input, int weightBits, int kvBits)
{
    double best = 0;
    const int gpus = input.cluster.gpus;
    for (int ptp : { 1, 2, 4, 8 })
        for (int dtp : { 1, 2, 4, 8 })
            for (int x = 1; x * ptp + dtp <= gpus; ++x) {
                const int y = (gpus - x * ptp) / dtp;
                Plan p = input;
                p.serving.weightBits = weightBits;
                p.serving.kvBits = kvBits;
                p.serving.tp = dtp;
                p.serving.concurrency = (input.serving.concurrency + y - 1) / y;
                p.serving.disaggregation = ServingDisaggregation { { x, ptp, 1, 1 }, { y, dtp, 1, 1 } };
                Estimate e = estimate(p);
                if (!e.serving.fitsWeights)
                    continue;
                attachServingGoodput(p, e);
                best = std::max(best, e.serving.load->goodputRps.value_or(0));
            }
    return best;
}

TEST(SearchServingGoodput, XpydBestIsTheBestOfEverySplitEstimatedOnItsOwn)
{
    const Plan input = xpydPlan(R"({"ttft_p90_s": 2, "tpot_p90_s": 0.012})");
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxGoodput;
    o.fixed = { *parseFixedField("serving.disaggregation=true"),
        *parseFixedField("serving.weight_bits=16"), *parseFixedField("serving.kv_bits=16") };
    const ServingSearchResult r = searchServing(input, o);
    ASSERT_FALSE(r.candidates.empty()) << noSolutionMessage(input, r, ByteUnits::GB);
    const double byHand = bestXpydGoodputByHand(input, 16, 16);
    ASSERT_GT(byHand, 0);
    EXPECT_NEAR(*r.candidates.front().goodputRps, byHand, 1e-9 * byHand);
    for (const ServingCandidate& c : r.candidates) {
        ASSERT_TRUE(c.layout.disaggregation.has_value());
        const ServingDisaggregation& d = *c.layout.disaggregation;
        EXPECT_LE(d.prefill.gpus() + d.decode.gpus(), 8);
        EXPECT_EQ(c.gpus, d.prefill.gpus() + d.decode.gpus());
        // The candidate is the applied plan: its capacity and goodput are estimate()'s.
        const Plan applied = applyServingLayout(input, c.layout);
        ASSERT_FALSE(validatePlan(applied).has_value());
        ASSERT_EQ(applied.serving.disaggregation, c.layout.disaggregation);
        Estimate e = estimate(applied);
        EXPECT_DOUBLE_EQ(e.serving.load->capacityRps, c.capacityRps);
        attachServingGoodput(applied, e);
        EXPECT_DOUBLE_EQ(e.serving.load->goodputRps.value_or(0), *c.goodputRps);
        EXPECT_LE(*c.goodputRps, c.capacityRps * (1 + 1e-12));
    }
    // The solution names the pools: in the candidate, its changes and its words.
    const nlohmann::json j = nlohmann::json::parse(writeSolutionJson(input, r));
    const nlohmann::json& best = j["candidates"][0];
    EXPECT_EQ(best["disaggregation"]["prefill"]["workers"],
        r.candidates.front().layout.disaggregation->prefill.workers);
    EXPECT_EQ(best["changes"]["serving.disaggregation"], best["disaggregation"]);
    EXPECT_NE(best["description"].get<std::string>().find("prefill worker"), std::string::npos);
    EXPECT_EQ(j["best"]["plan"]["serving"]["disaggregation"], best["disaggregation"]);
}

TEST(SearchServingGoodput, LongPromptsUnderATightTpotAreServedDisaggregated)
{
    // 6,000-token prompts and a 12 ms TPOT: an aggregated engine's steps carry prefill chunks
    // of up to max_batched_tokens, each far longer than 12 ms on an 8B model, so its TPOT
    // percentiles rise with the rate; a decode pool's steps carry none. Under a loose TPOT the
    // interference costs nothing and the aggregated engines, which prefill on every GPU, serve
    // at least as much.
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxGoodput;
    o.fixed = { *parseFixedField("serving.weight_bits=16"), *parseFixedField("serving.kv_bits=16") };
    const ServingSearchResult tight
        = searchServing(xpydPlan(R"({"ttft_p90_s": 2, "tpot_p90_s": 0.012})"), o);
    ASSERT_FALSE(tight.candidates.empty());
    EXPECT_TRUE(tight.candidates.front().layout.disaggregation.has_value())
        << tight.candidates.front().sloNote;

    SearchOptions aggregatedOnly = o;
    aggregatedOnly.fixed.push_back(*parseFixedField("serving.disaggregation=false"));
    const ServingSearchResult tightAggregated = searchServing(
        xpydPlan(R"({"ttft_p90_s": 2, "tpot_p90_s": 0.012})"), aggregatedOnly);
    for (const ServingCandidate& c : tightAggregated.candidates)
        EXPECT_FALSE(c.layout.disaggregation.has_value());
    if (!tightAggregated.candidates.empty())
        EXPECT_GT(*tight.candidates.front().goodputRps,
            *tightAggregated.candidates.front().goodputRps);
}

TEST(SearchServingGoodput, APoolNoRateSuitsIsRuledOutUnloadedAndNamed)
{
    // A 0.1 ms TPOT: no H100 decodes a token of an 8B model that fast, even alone, so every
    // decode pool misses it unloaded and no split needs a bisection to know it.
    const Plan input = xpydPlan(R"({"tpot_p90_s": 0.0001})");
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxGoodput;
    o.fixed = { *parseFixedField("serving.disaggregation=true") };
    const ServingSearchResult r = searchServing(input, o);
    EXPECT_TRUE(r.candidates.empty());
    EXPECT_EQ(r.bisected, 0);
    ASSERT_TRUE(r.nearestMiss.has_value());
    EXPECT_TRUE(r.nearestMiss->layout.disaggregation.has_value());
    const std::string message = noSolutionMessage(input, r, ByteUnits::GB);
    EXPECT_NE(message.find("even unloaded, the decode pool alone has TPOT p90"), std::string::npos)
        << message;
}

TEST(SearchServingGoodput, ACancelStopsTheXpydSearchBeforeAnyPoolIsTimed)
{
    std::atomic<bool> cancel { true };
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxGoodput;
    o.fixed = { *parseFixedField("serving.disaggregation=true") };
    o.cancel = &cancel;
    const ServingSearchResult r
        = searchServing(xpydPlan(R"({"ttft_p90_s": 2, "tpot_p90_s": 0.012})"), o);
    EXPECT_TRUE(r.cancelled);
    EXPECT_TRUE(r.candidates.empty());
    EXPECT_EQ(r.estimates, 0); // no role was timed, no split estimated
}

TEST(SearchServingGoodput, FixingDisaggregationTakesOnlyTrueOrFalse)
{
    EXPECT_EQ(parseFixedField("serving.disaggregation=true")->number, 1);
    EXPECT_EQ(parseFixedField("serving.disaggregation=false")->number, 0);
    const auto bad = parseFixedField("serving.disaggregation=2");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "serving.disaggregation");
    EXPECT_NE(bad.error().message.find("true or false"), std::string::npos);
}

} // namespace
} // namespace envelope

namespace envelope {
namespace {

// serving-min-gpus under a workload and an SLO (issue 27: "serving-min-gpus ... sizes decode
// only and ignores the prefill those requests need"): the fewest GPUs whose fleet meets the SLO
// at the workload's own rate, prompts included.
TEST(SearchServingMinGpusUnderSlo, TheFewestGpusOfEveryLayoutEstimatedOnItsOwn)
{
    // Llama-3 8B, 8 requests/s of 2,000 + 200 tokens, p90 TTFT 0.4 s and TPOT 20 ms.
    const Plan input = goodputPlan(R"({"ttft_p90_s": 0.4, "tpot_p90_s": 0.02})");
    // By hand: every TP layout and format at 1, 2, ... replicas, each applied to the plan and
    // estimated as `envelope-cli estimate` does; a fleet meets when its load meets the SLO and
    // its queue stays bounded.
    const auto meets = [](const Plan& p) {
        const Estimate e = estimate(p);
        return e.serving.fitsWeights && e.serving.load
            && e.serving.load->meetsSlo.value_or(false) && !e.serving.load->saturated;
    };
    int fewest = 1 << 30;
    for (int tp : { 1, 2, 4, 8 })
        for (int wb : { 16, 8, 4 })
            for (int kb : { 16, 8 })
                for (int replicas = 1; replicas * tp <= 16 && replicas * tp < fewest; ++replicas) {
                    Plan p = input;
                    p.cluster.gpus = replicas * tp;
                    p.serving.tp = tp;
                    p.serving.weightBits = wb;
                    p.serving.kvBits = kb;
                    p.serving.concurrency = (input.serving.concurrency + replicas - 1) / replicas;
                    if (meets(p)) {
                        fewest = replicas * tp;
                        break;
                    }
                }
    ASSERT_LT(fewest, 1 << 30);

    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    o.top = 100;
    o.fixed = { *parseFixedField("serving.disaggregation=false") }; // xPyD: the next test
    const ServingSearchResult r = searchServing(input, o);
    ASSERT_FALSE(r.candidates.empty()) << noSolutionMessage(input, r, ByteUnits::GB);
    EXPECT_EQ(r.candidates.front().gpus, fewest);
    for (const ServingCandidate& c : r.candidates) {
        // Each candidate is its applied plan, which meets the SLO; one replica fewer does not.
        const Plan applied = applyServingLayout(input, c.layout);
        EXPECT_TRUE(meets(applied)) << describeChanges(input, c.layout);
        EXPECT_EQ(applied.cluster.gpus, c.gpus);
        EXPECT_DOUBLE_EQ(estimate(applied).serving.load->outputTokensPerS, c.tokensPerS);
        if (c.layout.replicas > 1) {
            ServingLayout fewer = c.layout;
            fewer.replicas -= 1;
            fewer.clusterGpus = fewer.replicas * fewer.engineGpus();
            fewer.concurrency = (input.serving.concurrency + fewer.replicas - 1) / fewer.replicas;
            EXPECT_FALSE(meets(applyServingLayout(input, fewer))) << describeChanges(input, fewer);
        }
    }
}

// xPyD under an SLO (issue 27): Llama-3 8B on H100s, 20 requests/s of 6,000-token prompts and
// 300-token answers, p90 TTFT 2 s and TPOT 12 ms, both pools TP 1 at 16 bits. By hand: every
// split of x prefill and y decode workers up to 16 GPUs, each applied to the plan and estimated
// as `envelope-cli estimate` does; the fewest GPUs that meet the SLO is the search's answer,
// and every candidate meets it with neither pool able to lose a worker.
TEST(SearchServingMinGpusUnderSlo, TheFewestXpydGpusOfEverySplitEstimatedOnItsOwn)
{
    const Plan input = searchPlan(R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b",
        "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8},
        "serving": {"context": 8192, "workload": {"input_tokens": 6000, "output_tokens": 300,
        "request_rate": 20}, "slo": {"ttft_p90_s": 2, "tpot_p90_s": 0.012}}})");
    const auto meets = [](const Plan& p) {
        const Estimate e = estimate(p);
        return e.serving.fitsWeights && e.serving.load
            && e.serving.load->meetsSlo.value_or(false) && !e.serving.load->saturated;
    };
    const auto split = [&](int x, int y) {
        ServingLayout l;
        l.clusterGpus = x + y;
        l.tp = 1;
        l.replicas = y;
        l.weightBits = 16;
        l.kvBits = 16;
        l.concurrency = (input.serving.concurrency + y - 1) / y;
        l.disaggregation = ServingDisaggregation { { x, 1, 1, 1 }, { y, 1, 1, 1 } };
        return applyServingLayout(input, l);
    };
    int fewest = 1 << 30;
    for (int gpus = 2; gpus <= 16 && fewest > 16; ++gpus)
        for (int x = 1; x < gpus; ++x)
            if (meets(split(x, gpus - x))) {
                fewest = gpus;
                break;
            }
    ASSERT_LE(fewest, 16);

    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    o.top = 20;
    o.maxGpus = 16;
    o.fixed = { *parseFixedField("serving.disaggregation=true"), *parseFixedField("serving.tp=1"),
        *parseFixedField("serving.weight_bits=16"), *parseFixedField("serving.kv_bits=16") };
    const ServingSearchResult r = searchServing(input, o);
    ASSERT_FALSE(r.candidates.empty()) << noSolutionMessage(input, r, ByteUnits::GB);
    EXPECT_EQ(r.candidates.front().gpus, fewest);
    for (const ServingCandidate& c : r.candidates) {
        ASSERT_TRUE(c.layout.disaggregation.has_value());
        const int x = c.layout.disaggregation->prefill.workers;
        const int y = c.layout.disaggregation->decode.workers;
        const Plan applied = applyServingLayout(input, c.layout);
        EXPECT_TRUE(meets(applied)) << describeChanges(input, c.layout);
        EXPECT_EQ(c.gpus, x + y);
        EXPECT_DOUBLE_EQ(estimate(applied).serving.load->outputTokensPerS, c.tokensPerS);
        if (x > 1)
            EXPECT_FALSE(meets(split(x - 1, y))) << x - 1 << "P" << y << "D";
        if (y > 1)
            EXPECT_FALSE(meets(split(x, y - 1))) << x << "P" << y - 1 << "D";
    }
    // Unfixed, the search offers the same split or one on fewer GPUs, and fewer than the best
    // aggregated fleet: the long prompts no longer share the decodes' steps.
    SearchOptions any;
    any.goal = SearchGoal::ServingMinGpus;
    const ServingSearchResult all = searchServing(input, any);
    SearchOptions aggregatedOnly = any;
    aggregatedOnly.fixed = { *parseFixedField("serving.disaggregation=false") };
    const ServingSearchResult aggregated = searchServing(input, aggregatedOnly);
    ASSERT_FALSE(all.candidates.empty());
    ASSERT_FALSE(aggregated.candidates.empty());
    EXPECT_LE(all.candidates.front().gpus, fewest);
    EXPECT_LT(all.candidates.front().gpus, aggregated.candidates.front().gpus);
    EXPECT_TRUE(all.candidates.front().layout.disaggregation.has_value());
}

TEST(SearchServingMinGpusUnderSlo, LongPromptsNeedMoreGpusThanTheirDecodes)
{
    // The same rate and output, prompts 4,000 tokens longer: each request's prefill is 3x the
    // compute, so the fleet the SLO needs grows, where the static sizing (concurrency and ITL)
    // sees only the decodes and would not change.
    const auto plan = [](int input) {
        return searchPlan(R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b",
            "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8},
            "serving": {"context": 8192, "concurrency": 16, "workload": {"input_tokens": )"
            + std::to_string(input) + R"(, "output_tokens": 200, "request_rate": 40},
            "slo": {"ttft_p90_s": 1, "tpot_p90_s": 0.03}}})");
    };
    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    const ServingSearchResult shortPrompts = searchServing(plan(2000), o);
    const ServingSearchResult longPrompts = searchServing(plan(6000), o);
    ASSERT_FALSE(shortPrompts.candidates.empty());
    ASSERT_FALSE(longPrompts.candidates.empty());
    EXPECT_GT(longPrompts.candidates.front().gpus, shortPrompts.candidates.front().gpus);
    // A lower bound by hand: 40 requests/s x 6,000 prompt tokens x 2 x 8.03e9 parameters is
    // 3.85e15 FLOP/s of prefill; one H100 SXM does at most 989 TFLOP/s at 16 bits and 1,979 at
    // 8 (dense): at least 2 GPUs even at 8 bits and 100% of peak.
    EXPECT_GE(longPrompts.candidates.front().gpus, 2);
}

TEST(SearchServingMinGpusUnderSlo, NoFleetMeetingTheSloNamesTheNearestMiss)
{
    const Plan input = goodputPlan(R"({"tpot_p90_s": 0.0001})");
    SearchOptions o;
    o.goal = SearchGoal::ServingMinGpus;
    o.maxGpus = 16;
    const ServingSearchResult r = searchServing(input, o);
    EXPECT_TRUE(r.candidates.empty());
    const std::string message = noSolutionMessage(input, r, ByteUnits::GB);
    EXPECT_NE(message.find("TPOT p90"), std::string::npos) << message;
}

} // namespace
} // namespace envelope
