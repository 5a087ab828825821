// Serving under load (issue 27): the workload's plan keys, the log-normal lengths, the event
// simulation of the engine's scheduler against its closed form and Little's law, goodput under
// an SLO, and the result keys. Step times in the simulation tests are hand-made functions, so
// every expected figure is worked out in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "report/textreport.h"
#include "serving/load.h"
#include "serving/sweep.h"
#include "fixtures.h"

namespace envelope {
namespace {

using testing::fixedWorkload;

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

// A decode step of 5 ms + 0.1 ms per sequence (the weights, then each sequence's share), KV
// length ignored; a prompt at 10 us per computed token.
StepTimes handSteps()
{
    StepTimes s;
    s.decodeS = [](double batch, double) { return batch > 0 ? 5e-3 + 1e-4 * batch : 0.0; };
    s.prefillS = [](double tokens) { return 1e-5 * tokens; };
    return s;
}

EngineLimits roomyEngine()
{
    EngineLimits l;
    l.kvTokens = 1e7;
    l.blockSize = 16;
    l.maxNumSeqs = 1024;
    l.maxBatchedTokens = 2048;
    return l;
}

// mean 1000, p90 1500: a = ln 1.5 = 0.405465; sigma = 1.281552 - sqrt(1.281552^2 - 2a)
// = 1.281552 - sqrt(0.811436) = 1.281552 - 0.900797 = 0.380755... worked exactly:
// 1.281552^2 = 1.642375, minus 0.810930 = 0.831445, sqrt = 0.911836, sigma = 0.369716;
// mu = ln 1000 - sigma^2 / 2 = 6.907755 - 0.068345 = 6.839410. Check: exp(mu + 1.281552 sigma)
// = exp(7.313222) = 1500.0.
TEST(ServingLoad, MeanAndP90GiveTheLogNormalWithBoth)
{
    const LogNormal d = logNormalFromMeanP90(1000, 1500);
    EXPECT_NEAR(d.sigma, 0.369716, 1e-5);
    EXPECT_NEAR(d.mu, 6.839410, 1e-5);
    LengthDistribution dist;
    dist.form = LengthDistribution::Form::MeanP90;
    dist.mean = 1000;
    dist.p90 = 1500;
    Draws draws(42);
    std::vector<double> v;
    for (int i = 0; i < 200'000; ++i)
        v.push_back(draws.length(dist, 1e9));
    double sum = 0;
    for (double x : v)
        sum += x;
    EXPECT_NEAR(sum / v.size(), 1000, 10);
    std::sort(v.begin(), v.end());
    EXPECT_NEAR(v[std::size_t(0.9 * v.size())], 1500, 15);
}

// Closed loop of 16 users, 512 + 128 fixed tokens, budget 2048 per step. By hand: a prompt of
// 512 tokens fits one step's budget (2048 - 16 decodes), so k = 1 prefill step and 127 decode
// steps: a cycle of 128 steps, 16 x 127 / 128 = 15.875 sequences decoding per step. A step:
// 5 ms + 0.1 ms x 15.875 + (16 / 128) x 512 x 10 us = 5 + 1.5875 + 0.64 = 7.2275 ms = TPOT;
// requests/s = 16 / (128 x 7.2275 ms) = 17.295.
TEST(ServingLoad, TheClosedFormOfAClosedLoopByHand)
{
    const ClosedFormLoad c = closedFormLoad(512, 128, 16, 0, roomyEngine(), handSteps());
    EXPECT_NEAR(c.batch, 15.875, 1e-9);
    EXPECT_NEAR(c.stepS * 1e3, 7.2275, 1e-9);
    EXPECT_NEAR(c.tpotS * 1e3, 7.2275, 1e-9);
    EXPECT_NEAR(c.requestsPerS, 17.295, 1e-3);
    EXPECT_NEAR(c.outputTokensPerS, 17.295 * 128, 0.2);
}

// The simulation's accuracy against the closed form, stated: the same closed loop simulated
// over 4,000 requests lands within 2% of the closed form's TPOT and request rate (each request's
// decode window holds 15 other users' prompts in 127 steps, where the closed form spreads 15.875
// of them over every step).
TEST(ServingLoad, TheSimulationAgreesWithTheClosedForm)
{
    ServingWorkload w = fixedWorkload(512, 128);
    w.concurrency = 16;
    const ClosedFormLoad c = closedFormLoad(512, 128, 16, 0, roomyEngine(), handSteps());
    const EngineRun run = simulateEngine(w, roomyEngine(), handSteps(), 8192, 4000, 1);
    ASSERT_GT(run.requests, 3000);
    EXPECT_NEAR(run.tpotMeanS / c.tpotS, 1.0, 0.02);
    EXPECT_NEAR(run.requestsPerS / c.requestsPerS, 1.0, 0.02);
    EXPECT_NEAR(run.meanBatch / c.batch, 1.0, 0.03);
    // Fixed lengths and a steady loop: every request sees nearly the same TPOT.
    EXPECT_LT(run.tpotP99S / run.tpotP50S, 1.05);
}

// Little's law, L = lambda W, holds for any stable queue: the time-weighted requests in the
// engine equal the completion rate times the mean time in the engine.
TEST(ServingLoad, LittlesLawHoldsInTheSimulation)
{
    ServingWorkload w = fixedWorkload(0, 0);
    w.input.form = LengthDistribution::Form::MeanP90;
    w.input.mean = 800;
    w.input.p90 = 1400;
    w.output.form = LengthDistribution::Form::MeanP90;
    w.output.mean = 200;
    w.output.p90 = 380;
    w.requestRate = 20;
    const EngineRun run = simulateEngine(w, roomyEngine(), handSteps(), 8192, 6000, 5);
    ASSERT_FALSE(run.backlog);
    EXPECT_NEAR(run.requestsPerS, 20, 1.0); // what arrives is served
    EXPECT_NEAR(run.meanInEngine / (run.requestsPerS * run.e2eMeanS), 1.0, 0.05);
}

// The same seed gives the same run; another seed another sample of the same workload.
TEST(ServingLoad, TheSimulationIsDeterministicForASeed)
{
    ServingWorkload w = fixedWorkload(0, 100);
    w.input.form = LengthDistribution::Form::Histogram;
    w.input.histogram = { { 100, 1 }, { 2000, 1 } };
    w.requestRate = 10;
    const EngineRun a = simulateEngine(w, roomyEngine(), handSteps(), 8192, 2000, 9);
    const EngineRun b = simulateEngine(w, roomyEngine(), handSteps(), 8192, 2000, 9);
    const EngineRun c = simulateEngine(w, roomyEngine(), handSteps(), 8192, 2000, 10);
    EXPECT_EQ(a.ttftP90S, b.ttftP90S);
    EXPECT_EQ(a.tpotMeanS, b.tpotMeanS);
    EXPECT_NE(a.ttftP90S, c.ttftP90S);
    // Half the prompts are 2,000 tokens (20 ms of prefill alone): the p90 TTFT is at least that.
    EXPECT_GE(a.ttftP90S, 2000 * 1e-5);
    EXPECT_NEAR(a.meanInputTokens, 1050, 60);
}

// A pool that holds 4 requests of 1,000 tokens at a time caps the batch at 4 whatever the
// load: max_num_seqs 1024 does not matter, the KV pool does.
TEST(ServingLoad, TheKvPoolCapsTheBatch)
{
    ServingWorkload w = fixedWorkload(900, 100);
    w.concurrency = 64;
    EngineLimits small = roomyEngine();
    small.kvTokens = 4000;
    const EngineRun run = simulateEngine(w, small, handSteps(), 8192, 2000, 1);
    EXPECT_LE(run.meanBatch, 4.0 + 1e-9);
    EXPECT_GT(run.meanInEngine, 32); // the rest wait
    // A request longer than the whole pool can never run: said, not simulated forever.
    ServingWorkload huge = fixedWorkload(5000, 100);
    huge.requestRate = 1;
    EXPECT_TRUE(simulateEngine(huge, small, handSteps(), 8192, 100, 1).tooLong);
}

// More users than the engine runs at once only lengthen the queue: the engine's output rate is
// the same at 16 and at 64 users (a rate counted from the requests finishing in the window would
// under-count the long ones, and read lower the longer the queue).
TEST(ServingLoad, TheRateOfASaturatedClosedLoopDoesNotDependOnItsUsers)
{
    ServingWorkload w = fixedWorkload(200, 0);
    w.output.form = LengthDistribution::Form::Histogram;
    w.output.histogram = { { 50, 1 }, { 1000, 1 } };
    EngineLimits eight = roomyEngine();
    eight.maxNumSeqs = 8;
    w.concurrency = 16;
    const EngineRun sixteen = simulateEngine(w, eight, handSteps(), 8192, 3000, 2);
    w.concurrency = 64;
    const EngineRun sixtyFour = simulateEngine(w, eight, handSteps(), 8192, 3000, 2);
    EXPECT_NEAR(sixtyFour.outputTokensPerS / sixteen.outputTokensPerS, 1.0, 0.03);
    // By hand, an upper bound: 8 sequences decoding every step of 5.8 ms at most emit
    // 8 / 5.8 ms = 1,379 tokens/s; prompts take some steps, so a little less.
    EXPECT_LT(sixteen.outputTokensPerS, 1379.4);
    EXPECT_GT(sixteen.outputTokensPerS, 0.9 * 1379.4);
}

Plan servingPlan(const std::string& workload, const std::string& slo = "")
{
    const std::string json = R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "cluster": {"gpus": 2, "gpus_per_node": 8},
        "serving": {"tp": 1, "context": 8192, "workload": )"
        + workload + (slo.empty() ? "" : ", \"slo\": " + slo) + "}}";
    Expected<Plan> plan = readPlan(json, presets());
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().toString());
    return plan.ok() ? plan.value() : Plan {};
}

std::string errorOf(const std::string& workload, const std::string& slo = "")
{
    const std::string json = R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "serving": {"context": 8192, "workload": )"
        + workload + (slo.empty() ? "" : ", \"slo\": " + slo) + "}}";
    Expected<Plan> plan = readPlan(json, presets());
    return plan.ok() ? std::string("accepted") : plan.error().toString();
}

TEST(ServingLoad, BadWorkloadsNameTheFieldAndTheRange)
{
    EXPECT_NE(errorOf(R"({"input_tokens": {"mean": 1000, "p90": 800}, "output_tokens": 100, "request_rate": 1})")
                  .find("serving.workload.input_tokens.p90: must be at least the mean (1000), got 800"),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"input_tokens": 100, "output_tokens": 100, "request_rate": -2})")
                  .find("serving.workload.request_rate"),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"input_tokens": 100, "output_tokens": 100})").find("needs \"concurrency\""),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"input_tokens": 100, "output_tokens": 100, "concurrency": 4, "request_rate": 1})")
                  .find("not both"),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"input_tokens": 8000, "output_tokens": 500, "concurrency": 4})")
                  .find("exceeds serving.context = 8192"),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"input_tokens": {"histogram": [[100, 1], [200]]}, "output_tokens": 10, "concurrency": 4})")
                  .find("serving.workload.input_tokens.histogram[1]"),
        std::string::npos);
    // A log-normal's p90 is at most e^(1.2816^2 / 2) = 2.2735x its mean.
    EXPECT_NE(errorOf(R"({"input_tokens": {"mean": 100, "p90": 400}, "output_tokens": 10, "concurrency": 4})")
                  .find("input_tokens.p90: a log-normal's p90 is at most 2.2735x its mean (227 here), got 400"),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"input_tokens": 100, "output_tokens": 10, "concurrency": 4})", "{}")
                  .find("serving.slo: names no objective"),
        std::string::npos);
}

TEST(ServingLoad, AWorkloadWritesBackInTheFormItWasRead)
{
    const Plan plan = servingPlan(
        R"({"input_tokens": {"histogram": [[128, 3], [4096, 1]]}, "output_tokens": {"mean": 300, "p90": 600}, "request_rate": 2.5, "prefix_hit_rate": 0.25})",
        R"({"ttft_p90_s": 0.5, "tpot_p99_s": 0.04})");
    const nlohmann::json written = nlohmann::json::parse(writePlan(plan));
    const nlohmann::json& w = written["serving"]["workload"];
    EXPECT_EQ(w["input_tokens"]["histogram"][1][0], 4096);
    EXPECT_EQ(w["output_tokens"]["p90"], 600);
    EXPECT_EQ(w["request_rate"], 2.5);
    EXPECT_EQ(w["prefix_hit_rate"], 0.25);
    EXPECT_FALSE(w.contains("concurrency"));
    EXPECT_EQ(written["serving"]["slo"]["tpot_p99_s"], 0.04);
    Expected<Plan> again = readPlan(writePlan(plan), presets());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value().serving.workload, plan.serving.workload);
    EXPECT_EQ(again.value().serving.slo, plan.serving.slo);
}

// The contract's result keys, and what they mean: ttft_s / itl_s are the means under the
// workload, the single request moves to *_min_s, and per-GPU rates are the deployment's over
// its GPUs (2 engines of 1 GPU here share the 6 requests/s).
TEST(ServingLoad, TheResultCarriesTheContractKeys)
{
    const Plan plan = servingPlan(
        R"({"input_tokens": {"mean": 1000, "p90": 1800}, "output_tokens": {"mean": 300, "p90": 550}, "request_rate": 6})",
        R"({"ttft_p90_s": 0.5, "tpot_p90_s": 0.05})");
    Estimate e = estimate(plan);
    ASSERT_TRUE(e.serving.load.has_value());
    // A slider step's estimate checks the SLO; the goodput search runs when asked for.
    EXPECT_TRUE(e.serving.load->meetsSlo.has_value());
    EXPECT_FALSE(e.serving.load->goodputRps.has_value());
    // Not searched: absent from the result, not a null that could read as "no rate meets it".
    EXPECT_FALSE(nlohmann::json::parse(writeResult(plan, e))["serving"].contains("goodput_rps"));
    attachServingGoodput(plan, e);
    const ServingLoad& l = *e.serving.load;
    EXPECT_EQ(l.replicas, 2);
    EXPECT_EQ(l.latencyKind, "simulated");
    const nlohmann::json j = nlohmann::json::parse(writeResult(plan, e));
    const nlohmann::json& s = j["serving"];
    EXPECT_EQ(s["latency_kind"], "simulated");
    EXPECT_DOUBLE_EQ(s["ttft_s"].get<double>(), l.ttftMeanS);
    EXPECT_DOUBLE_EQ(s["itl_s"].get<double>(), l.itlMeanS);
    for (const char* key : { "ttft_min_s", "itl_min_s", "ttft_p90_s", "tpot_p90_s", "goodput_rps",
             "output_tokens_per_s_per_gpu", "output_tokens_per_s_per_user" })
        EXPECT_TRUE(s.contains(key) && s[key].is_number()) << key;
    // Served as offered, with each token's output counted once: tokens/s per GPU = 6 requests/s
    // x ~300 tokens / 2 GPUs ~ 900.
    EXPECT_NEAR(l.requestRateRps, 6, 0.5);
    EXPECT_NEAR(l.outputTokensPerSPerGpu, 6 * 300 / 2.0, 120);
    EXPECT_NEAR(l.outputTokensPerSPerUser, 1 / l.tpotMeanS, 1e-9);
    // One request alone is faster than any under load.
    EXPECT_LE(e.serving.itlMinS, l.tpotP50S);
    EXPECT_TRUE(l.meetsSlo.value_or(false));
    ASSERT_TRUE(l.goodputRps.has_value());
    EXPECT_GE(*l.goodputRps, 6.0);
    EXPECT_LE(*l.goodputRps, l.capacityRps * 1.0001);
    // Without a workload the figures stay the static batch's, said to be a closed form.
    Plan staticPlan = plan;
    staticPlan.serving.workload.reset();
    staticPlan.serving.slo.reset();
    const nlohmann::json k = nlohmann::json::parse(writeResult(staticPlan, estimate(staticPlan)));
    EXPECT_EQ(k["serving"]["latency_kind"], "closed form");
    EXPECT_FALSE(k["serving"].contains("goodput_rps"));
}

// The Serving tab's latency-against-rate curve: the workload offered at 5% to 95% of the
// deployment's capacity. Queueing theory fixes its shape: as the load rho rises to 1 the wait
// grows without bound (M/G/1: mean wait ~ rho / (1 - rho), 19 at 0.95 against 0.05 at 0.05), so
// p90 TTFT at 95% is well above the unloaded one; the decode batch grows with the rate, so TPOT
// rises too. The SLO holds below the goodput the bisection finds and fails above it: two
// separate computations (eleven runs here, a bisection there) that must agree.
TEST(ServingLoad, TheRateCurveRisesToCapacityAndCrossesTheSloAtTheGoodput)
{
    const Plan plan = servingPlan(
        R"({"input_tokens": {"mean": 1000, "p90": 1800}, "output_tokens": {"mean": 300, "p90": 550}, "request_rate": 6})",
        R"({"ttft_p90_s": 0.1, "tpot_p90_s": 0.03})");
    Estimate e = estimate(plan);
    const ServingRateCurve curve = servingRateCurve(plan, e);
    ASSERT_EQ(curve.points.size(), std::size(kServingRateFractions));
    EXPECT_EQ(curve.capacityRps, e.serving.load->capacityRps);
    for (std::size_t i = 0; i < curve.points.size(); ++i) {
        SCOPED_TRACE(i);
        const ServingRatePoint& p = curve.points[i];
        EXPECT_DOUBLE_EQ(p.rateRps, kServingRateFractions[i] * curve.capacityRps);
        EXPECT_FALSE(p.saturated);
        EXPECT_TRUE(p.meetsSlo.has_value());
    }
    const ServingRatePoint& low = curve.points.front();
    const ServingRatePoint& high = curve.points.back();
    EXPECT_GT(high.ttftP90S, 2 * low.ttftP90S);
    EXPECT_GT(high.tpotP90S, low.tpotP90S);

    attachServingGoodput(plan, e);
    ASSERT_TRUE(e.serving.load->goodputRps.has_value());
    const double goodput = *e.serving.load->goodputRps;
    ASSERT_GT(goodput, low.rateRps);
    ASSERT_LT(goodput, high.rateRps); // this SLO binds below the capacity
    for (const ServingRatePoint& p : curve.points) {
        SCOPED_TRACE(p.rateRps);
        if (p.rateRps < 0.9 * goodput)
            EXPECT_TRUE(*p.meetsSlo);
        else if (p.rateRps > 1.1 * goodput)
            EXPECT_FALSE(*p.meetsSlo);
    }

    // Without a workload there is nothing to offer.
    Plan staticPlan = plan;
    staticPlan.serving.workload.reset();
    staticPlan.serving.slo.reset();
    EXPECT_TRUE(servingRateCurve(staticPlan, estimate(staticPlan)).points.empty());
}

// An SLO no rate meets: a TPOT p90 of 1 ms, below the 8B model's single decode step on an H100
// (16 GB of weights at ~2.7 TB/s: ~6 ms). Goodput 0, and the note names the objective missed.
TEST(ServingLoad, AnSloNoRateMeetsSaysWhatItMisses)
{
    const Plan plan = servingPlan(R"({"input_tokens": 500, "output_tokens": 200, "request_rate": 1})",
        R"({"tpot_p90_s": 0.001})");
    Estimate e = estimate(plan);
    attachServingGoodput(plan, e);
    const ServingLoad l = *e.serving.load;
    EXPECT_FALSE(l.meetsSlo.value_or(true));
    EXPECT_EQ(l.goodputRps.value_or(-1), 0.0);
    EXPECT_NE(l.sloNote.find("no request rate meets the SLO"), std::string::npos) << l.sloNote;
    EXPECT_NE(l.sloNote.find("TPOT p90"), std::string::npos) << l.sloNote;
}

// Above capacity the queue grows without bound: saturated, TTFT withheld, the SLO not met.
TEST(ServingLoad, AboveCapacityTtftIsWithheld)
{
    const Plan plan = servingPlan(R"({"input_tokens": 2000, "output_tokens": 500, "request_rate": 1000})",
        R"({"ttft_p90_s": 1})");
    const Estimate e = estimate(plan);
    const ServingLoad& l = *e.serving.load;
    EXPECT_TRUE(l.saturated);
    EXPECT_LT(l.capacityRps, 1000);
    EXPECT_FALSE(l.meetsSlo.value_or(true));
    const nlohmann::json j = nlohmann::json::parse(writeResult(plan, e));
    EXPECT_TRUE(j["serving"]["ttft_p90_s"].is_null());
    EXPECT_TRUE(j["serving"]["ttft_s"].is_null());
    // The nulls are said to be withheld, as throughput_valid says it of a plan that does not fit.
    EXPECT_EQ(j["serving"]["latency_valid"], false);
    EXPECT_NE(j["serving"]["latency_note"].get<std::string>().find("above capacity"), std::string::npos);
    EXPECT_EQ(j["serving"]["load"]["latency_valid"], false);
    EXPECT_TRUE(j["serving"]["load"]["ttft_p99_s"].is_null());
    EXPECT_EQ(j["serving"]["load"]["throughput_valid"], true);
    EXPECT_NE(report::formatReport(plan, e, ByteUnits::GB, report::ReportFormat::Text).find("unbounded (above capacity)"),
        std::string::npos);
}

} // namespace
} // namespace envelope
