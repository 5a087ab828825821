// The engine's scheduler in the serving simulation (issue 27; docs/formulas-serving.md, "The
// engine's step"): mixed or prompt-only steps, chunked or whole prompts, vLLM V0's multi-step
// bursts, and the defaults each engine version takes from presets/engines.json. Step times are
// hand-made constants, so every expected figure is worked out in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "estimate/estimate.h"
#include "export/export.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/load.h"
#include "serving/serving.h"
#include "fixtures.h"

namespace envelope {
namespace {

using testing::fixedWorkload;

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

// A decode step of exactly 10 ms whatever the batch and KV length; a prompt at 1 us a token.
StepTimes constantSteps()
{
    StepTimes s;
    s.decodeS = [](double batch, double) { return batch > 0 ? 10e-3 : 0.0; };
    s.decodeLine = [](double batch) { return std::pair { batch > 0 ? 10e-3 : 0.0, 0.0 }; };
    s.prefillS = [](double tokens) { return 1e-6 * tokens; };
    return s;
}

EngineLimits engine(bool mixed, bool chunked, int steps, int budget)
{
    EngineLimits l;
    l.kvTokens = 1e8;
    l.blockSize = 16;
    l.maxNumSeqs = 1024;
    l.maxBatchedTokens = budget;
    l.mixedBatches = mixed;
    l.chunkedPrefill = chunked;
    l.schedulerSteps = steps;
    return l;
}

// Poisson arrivals at 5 requests/s of 5,000 + 201 tokens: each decodes 200 steps of 10 ms, so
// about 10 sequences are always running and decode steps run back to back. A prompt costs
// 5,000 x 1 us = 5 ms.
// - Prompt steps alone (SGLang, vLLM V0), one decode step per scheduling: an arrival waits for
//   the step in flight (a mean residual of 10 / 2 = 5 ms) and then its prompt step, 5 ms:
//   TTFT about 10 ms.
// - The same in bursts of 10 decode steps (vLLM V0 --num-scheduler-steps 10): the residual of a
//   100 ms burst is 50 ms: TTFT about 55 ms, the (k - 1) d / 2 = 45 ms the burst adds.
// - Mixed steps (vLLM V1): the prompt rides a decode step of 10 + 5 ms: TTFT about 5 + 15 =
//   20 ms.
// Arrivals that land in the same step share its prompt cost, and prompt steps lengthen the
// cycle slightly, so each figure is held to 12%.
TEST(ServingScheduler, AMultiStepBurstDelaysANewRequestByHalfABurst)
{
    ServingWorkload w = fixedWorkload(5000, 201);
    w.requestRate = 5;
    const auto ttft = [&](bool mixed, int steps) {
        return simulateEngine(w, engine(mixed, true, steps, 8192), constantSteps(), 8192, 4000, 3)
            .ttftMeanS;
    };
    const double alone = ttft(false, 1), burst = ttft(false, 10), mixed = ttft(true, 1);
    EXPECT_NEAR(alone / 0.010, 1.0, 0.12) << alone;
    EXPECT_NEAR(burst / 0.055, 1.0, 0.12) << burst;
    EXPECT_NEAR(mixed / 0.020, 1.0, 0.12) << mixed;
    EXPECT_NEAR((burst - alone) / 0.045, 1.0, 0.12);
}

// An overlap scheduler (SGLang >= 0.4, TensorRT-LLM's PyTorch backend) has formed the next step
// when a request arrives: the same Poisson load as above, prompt steps alone, waits the step in
// flight (5 ms mean residual), then the step already formed (10 ms), then its prompt (5 ms):
// TTFT about 20 ms, 10 ms more than without. Alone (one user, nothing running) it waits for
// nothing: the engine forms a step as soon as the request arrives.
TEST(ServingScheduler, AnOverlapSchedulerAddsTheStepAlreadyFormed)
{
    ServingWorkload w = fixedWorkload(5000, 201);
    w.requestRate = 5;
    EngineLimits overlap = engine(false, true, 1, 8192);
    overlap.overlapScheduler = true;
    const double plain
        = simulateEngine(w, engine(false, true, 1, 8192), constantSteps(), 8192, 4000, 3).ttftMeanS;
    const double formed = simulateEngine(w, overlap, constantSteps(), 8192, 4000, 3).ttftMeanS;
    EXPECT_NEAR(formed / 0.020, 1.0, 0.12) << formed;
    EXPECT_NEAR((formed - plain) / 0.010, 1.0, 0.12) << formed - plain;
    ServingWorkload one = fixedWorkload(5000, 201);
    one.concurrency = 1;
    EXPECT_NEAR(simulateEngine(one, overlap, constantSteps(), 8192, 200, 1).ttftMeanS, 0.005, 1e-5);
}

// In a burst every running sequence stays until the burst ends, and its tokens reach the
// client then: with one closed-loop user of 32 + 26 tokens (25 decode steps) and bursts of 10,
// a request decodes 3 bursts = 30 steps of 10 ms (5 computed and thrown away), so it finishes
// 300 ms after its first token and TPOT = 300 / 25 = 12 ms, against 10 ms in single steps.
TEST(ServingScheduler, ASequenceThatEndsInsideABurstFinishesAtItsEnd)
{
    ServingWorkload w = fixedWorkload(32, 26);
    w.concurrency = 1;
    const EngineRun single
        = simulateEngine(w, engine(false, true, 1, 8192), constantSteps(), 8192, 200, 1);
    const EngineRun burst
        = simulateEngine(w, engine(false, true, 10, 8192), constantSteps(), 8192, 200, 1);
    EXPECT_NEAR(single.tpotMeanS, 0.010, 1e-9);
    EXPECT_NEAR(burst.tpotMeanS, 0.012, 1e-9);
    // Output tokens/s counts the 25 kept tokens, not the 5 thrown away: a cycle is the 32 us
    // prompt step and 30 decode steps, 25 + 1 tokens per 300.032 ms.
    EXPECT_NEAR(burst.outputTokensPerS, 26 / 0.300032, 0.5);
}

// Two closed-loop users of 10,000 + 101 tokens (100 decode steps), mixed steps of budget 4,096:
// they settle half a cycle apart, so each prompt arrives while the other user decodes.
// - Chunked: the prompt goes 4,095 + 4,095 + 1,810 tokens beside the one decode, three steps
//   of 10 + 4.095, 10 + 4.095 and 10 + 1.81 ms: TTFT 40.0 ms.
// - Whole (TensorRT-LLM's default, vLLM with chunked prefill off): one step of 10 + 10 ms,
//   over the budget as the engine's rule that the budget holds max_model_len allows: TTFT
//   20 ms.
TEST(ServingScheduler, AWholePromptTakesOneStepWhereChunksTakeThree)
{
    ServingWorkload w = fixedWorkload(10000, 101);
    w.concurrency = 2;
    const EngineRun chunked
        = simulateEngine(w, engine(true, true, 1, 4096), constantSteps(), 16384, 400, 2);
    const EngineRun whole
        = simulateEngine(w, engine(true, false, 1, 4096), constantSteps(), 16384, 400, 2);
    EXPECT_NEAR(chunked.ttftMeanS, 0.040, 0.0005);
    EXPECT_NEAR(whole.ttftMeanS, 0.020, 0.0005);
}

// An eager prompt step waits on the host's launches (docs/formulas-serving.md §7): with a floor
// of 24 ms (80 layers x 0.3 ms), two users whose 1,000-token prompts cost 1 ms each of GPU and
// who want one token each (the request is its prompt) are served in steps of 24 ms: TTFT 24 ms,
// against 2 ms without the floor. Both prompts ride one step and pay the floor once (48 ms if
// it were paid per prompt).
TEST(ServingScheduler, AnEagerPromptStepWaitsOnTheHostOncePerStep)
{
    ServingWorkload w = fixedWorkload(1000, 1);
    w.concurrency = 2;
    StepTimes eager = constantSteps();
    eager.promptHostFloorS = 80 * 0.3e-3;
    const EngineRun floored = simulateEngine(w, engine(false, true, 1, 4096), eager, 8192, 400, 3);
    const EngineRun graphed
        = simulateEngine(w, engine(false, true, 1, 4096), constantSteps(), 8192, 400, 3);
    EXPECT_NEAR(floored.ttftMeanS, 0.024, 1e-6);
    EXPECT_NEAR(graphed.ttftMeanS, 0.002, 1e-6);
    // Two requests a step: 2 / 24 ms = 83.3 requests/s (41.7 if each prompt had its own step).
    EXPECT_NEAR(floored.requestsPerS, 2 / 0.024, 0.5);
}

// A request's time outside the steps (the API server, tokenizer, hand-off and its first token's
// way back: SGLang's 6.9 ms) adds to each TTFT and end-to-end latency once and moves no step:
// the same schedule, TTFT and E2E 6.9 ms later, TPOT as it was.
TEST(ServingScheduler, ARequestsTimeOutsideTheStepsIsOnItsTtftOnce)
{
    ServingWorkload w = fixedWorkload(5000, 201);
    w.requestRate = 5;
    const EngineLimits plain = engine(false, true, 1, 8192);
    EngineLimits fronted = plain;
    fronted.requestOverheadS = 6.9e-3;
    const EngineRun a = simulateEngine(w, plain, constantSteps(), 8192, 400, 4);
    const EngineRun b = simulateEngine(w, fronted, constantSteps(), 8192, 400, 4);
    EXPECT_NEAR(b.ttftMeanS - a.ttftMeanS, 6.9e-3, 1e-9);
    EXPECT_NEAR(b.ttftP90S - a.ttftP90S, 6.9e-3, 1e-9);
    EXPECT_NEAR(b.e2eMeanS - a.e2eMeanS, 6.9e-3, 1e-9);
    EXPECT_DOUBLE_EQ(b.tpotMeanS, a.tpotMeanS);
}

// A disaggregated SGLang deployment: its decode pool receives computed KV, launches no prompt
// forward and does not see the request arrive, so neither the eager floor nor the request's
// front-end time touches its steps: TPOT as with both at 0; TTFT carries the front-end time
// once (through the prefill pool).
TEST(ServingScheduler, ADecodePoolPaysNeitherThePromptFloorNorTheFrontEnd)
{
    const Plan plan = readPlan(R"({"model": "llama-3-70b", "gpu": "h100-sxm",
        "cluster": {"gpus": 8}, "serving": {"engine": "sglang", "context": 4096,
        "disaggregation": {"prefill": {"workers": 1, "tp": 4}, "decode": {"workers": 1, "tp": 4}},
        "workload": {"input_tokens": 1000, "output_tokens": 200, "request_rate": 2}}})",
        presets()).value();
    Plan bare = plan;
    bare.serving.engineProfile.eagerHostSPerLayer = 0;
    bare.serving.engineProfile.requestOverheadS = 0;
    const ServingLoad with = *estimate(plan).serving.load;
    const ServingLoad without = *estimate(bare).serving.load;
    EXPECT_DOUBLE_EQ(with.tpotP90S, without.tpotP90S);
    EXPECT_GE(with.ttftMeanS - without.ttftMeanS, 6.9e-3 - 1e-9);
}

// The floor in the engines' profiles and in a plan's prompt time: SGLang keeps it, vLLM V1 does
// not (its compiled piecewise graphs cover prompt tokens); Llama-3 70B's 80 layers make 24 ms. A
// 16-token prompt on 4 H100s takes less GPU time than that, so its prefill is the floor; a
// 8,192-token one is GPU-bound and keeps its ops' time.
TEST(Serving, AnEagerPromptStepWaitsOnTheHost)
{
    const Plan sglang = readPlan(R"({"model": "llama-3-70b", "gpu": "h100-sxm",
        "cluster": {"gpus": 4}, "serving": {"engine": "sglang", "tp": 4}})", presets()).value();
    const Plan vllm = readPlan(R"({"model": "llama-3-70b", "gpu": "h100-sxm",
        "cluster": {"gpus": 4}, "serving": {"tp": 4}})", presets()).value();
    const ModelArch& arch = sglang.model.arch;
    ASSERT_EQ(arch.layers, 80);
    EXPECT_DOUBLE_EQ(eagerHostFloorS(arch, sglang.serving), 80 * 0.3e-3);
    EXPECT_EQ(eagerHostFloorS(arch, vllm.serving), 0.0);
    const Gpu& h100 = sglang.gpu.gpu;
    const double shortOps = prefillOpsTime(arch, sglang.serving, h100, 1, 16);
    ASSERT_LT(shortOps, 0.024);
    EXPECT_DOUBLE_EQ(prefillTime(arch, sglang.serving, h100, 1, 16), 0.024);
    EXPECT_DOUBLE_EQ(prefillTime(arch, vllm.serving, h100, 1, 16),
        prefillOpsTime(arch, vllm.serving, h100, 1, 16));
    const double longOps = prefillOpsTime(arch, sglang.serving, h100, 1, 8192);
    ASSERT_GT(longOps, 0.024);
    EXPECT_DOUBLE_EQ(prefillTime(arch, sglang.serving, h100, 1, 8192), longOps);
    // The source is named with the figure.
    EXPECT_NE(sglang.serving.engineProfile.hostSource.find("metaseq"), std::string::npos);
}

// Llama-3 8B on an H100 with `serving` as its serving section, read as a plan file is.
Expected<Plan> readServing(const std::string& serving)
{
    return readPlan(
        R"({"model": "llama-3-8b", "gpu": "h100-sxm", "serving": )" + serving + "}", presets());
}

Plan planOf(const std::string& serving)
{
    Expected<Plan> plan = readServing(serving);
    EXPECT_TRUE(bool(plan)) << (plan ? std::string() : plan.error().message);
    return plan ? *plan : Plan {};
}

ServingConfig servingOf(const std::string& serving) { return planOf(serving).serving; }

std::string errorOf(const std::string& serving)
{
    Expected<Plan> plan = readServing(serving);
    return plan ? std::string() : plan.error().path + ": " + plan.error().message;
}

// Each engine's defaults, as its source sets them (presets/engines.json's scheduler_source).
TEST(ServingScheduler, EachEngineVersionSchedulesAsItsSourceSays)
{
    // vLLM V1 (0.19): one budget for decodes and prompt chunks, chunked prefill on.
    EngineScheduler s = engineScheduler(servingOf(R"({"context": 4096})"));
    EXPECT_TRUE(s.mixedBatches);
    EXPECT_TRUE(s.chunkedPrefill);
    EXPECT_EQ(s.schedulerSteps, 1);
    // vLLM 0.6 (V0): chunked prefill off at max_model_len 4096 (on above 32,768), and then
    // prompt steps alone; with chunked prefill, mixed.
    s = engineScheduler(servingOf(R"({"engine_version": "0.6.0", "context": 4096, "scheduler_steps": 10})"));
    EXPECT_FALSE(s.chunkedPrefill);
    EXPECT_FALSE(s.mixedBatches);
    EXPECT_EQ(s.schedulerSteps, 10);
    EXPECT_NE(s.chunkedWhy.find("default at max_model_len 4096"), std::string::npos) << s.chunkedWhy;
    s = engineScheduler(servingOf(R"({"engine_version": "0.6.0", "context": 65536})"));
    EXPECT_TRUE(s.chunkedPrefill);
    EXPECT_TRUE(s.mixedBatches);
    // SGLang: chunked prompts in steps of their own unless --enable-mixed-chunk.
    s = engineScheduler(servingOf(R"({"engine": "sglang", "context": 4096})"));
    EXPECT_TRUE(s.chunkedPrefill);
    EXPECT_FALSE(s.mixedBatches);
    s = engineScheduler(servingOf(R"({"engine": "sglang", "context": 4096, "mixed_batches": true})"));
    EXPECT_TRUE(s.mixedBatches);
    EXPECT_EQ(s.mixedWhy, "serving.mixed_batches");
    EXPECT_TRUE(s.overlapScheduler); // SGLang 0.5 (and 0.4): on by default
    EXPECT_FALSE(engineScheduler(servingOf(R"({"engine": "sglang", "engine_version": "0.3.0"})")).overlapScheduler);
    EXPECT_FALSE(engineScheduler(servingOf(R"({"engine": "sglang", "overlap_scheduler": false})")).overlapScheduler);
    // TensorRT-LLM: in-flight batching mixes; enable_chunked_prefill defaults to False; the
    // PyTorch backend's overlap scheduler is on.
    s = engineScheduler(servingOf(R"({"engine": "trtllm", "context": 8192})"));
    EXPECT_TRUE(s.mixedBatches);
    EXPECT_FALSE(s.chunkedPrefill);
    EXPECT_TRUE(s.overlapScheduler);
    // vLLM 0.19: no overlap unless --async-scheduling is asked for.
    EXPECT_FALSE(engineScheduler(servingOf(R"({})")).overlapScheduler);
    EXPECT_TRUE(engineScheduler(servingOf(R"({"overlap_scheduler": true})")).overlapScheduler);
}

TEST(ServingScheduler, AnEngineWithoutTheKnobRefusesItNamingTheField)
{
    EXPECT_NE(errorOf(R"({"scheduler_steps": 10})").find("serving.scheduler_steps: vLLM 0.19 has no "
                                                          "multi-step scheduling"),
        std::string::npos)
        << errorOf(R"({"scheduler_steps": 10})");
    EXPECT_NE(errorOf(R"({"engine": "sglang", "scheduler_steps": 2})").find("serving.scheduler_steps"),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"scheduler_steps": 0})").find("serving.scheduler_steps: must be 1..64"),
        std::string::npos)
        << errorOf(R"({"scheduler_steps": 0})");
    EXPECT_NE(errorOf(R"({"mixed_batches": false})").find("serving.mixed_batches: vLLM 0.19 always"),
        std::string::npos)
        << errorOf(R"({"mixed_batches": false})");
    EXPECT_NE(errorOf(R"({"engine_version": "0.6", "chunked_prefill": true, "mixed_batches": false})")
                  .find("serving.mixed_batches"),
        std::string::npos);
    EXPECT_NE(errorOf(R"({"chunked_prefill": "yes"})").find("serving.chunked_prefill: must be true, false or null"),
        std::string::npos)
        << errorOf(R"({"chunked_prefill": "yes"})");
    EXPECT_NE(errorOf(R"({"engine_version": "0.6", "overlap_scheduler": true})").find("serving.overlap_scheduler"),
        std::string::npos);
    // The generic engine takes any scheduler.
    EXPECT_EQ(errorOf(R"({"engine": "generic", "scheduler_steps": 4, "mixed_batches": false})"), "");
}

TEST(ServingScheduler, TheKeysReadBackAsWritten)
{
    Expected<Plan> plan
        = readServing(R"({"engine_version": "0.6", "scheduler_steps": 8, "chunked_prefill": true})");
    ASSERT_TRUE(bool(plan));
    Expected<Plan> again = readPlan(writePlan(*plan), presets());
    ASSERT_TRUE(bool(again));
    EXPECT_EQ(again->serving, plan->serving);
    EXPECT_EQ(again->serving.schedulerSteps, 8);
    EXPECT_EQ(again->serving.chunkedPrefill, std::optional<bool>(true));
    EXPECT_FALSE(again->serving.mixedBatches.has_value());
}

// The scheduler keys reach each engine's own flags, and only where the plan sets them: SGLang
// --enable-mixed-chunk, --chunked-prefill-size -1, --disable-overlap-schedule (ServerArgs); vLLM
// --no-enable-chunked-prefill, --async-scheduling, V0's --num-scheduler-steps (EngineArgs);
// TensorRT-LLM enable_chunked_prefill and disable_overlap_scheduler (LlmArgs).
TEST(ServingScheduler, EachEngineGetsItsOwnFlags)
{
    const Plan sglang = planOf(R"({"engine": "sglang", "mixed_batches": true, "chunked_prefill": false,
        "overlap_scheduler": false})");
    const std::string s = exportPlan(sglang, estimate(sglang), Engine::Sglang, "m").text;
    for (const char* f : { "--enable-mixed-chunk", "--chunked-prefill-size -1", "--disable-overlap-schedule" })
        EXPECT_NE(s.find(f), std::string::npos) << f << " in\n" << s;
    const Plan plain = planOf(R"({"engine": "sglang"})");
    const std::string p = exportPlan(plain, estimate(plain), Engine::Sglang, "m").text;
    for (const char* f : { "--enable-mixed-chunk", "--chunked-prefill-size -1", "--disable-overlap-schedule" })
        EXPECT_EQ(p.find(f), std::string::npos) << f << " in\n" << p;

    const Plan v0 = planOf(R"({"engine_version": "0.6", "scheduler_steps": 10, "context": 4096,
        "max_batched_tokens": 4096, "chunked_prefill": false})");
    const EngineConfig v = exportPlan(v0, estimate(v0), Engine::Vllm, "m");
    EXPECT_NE(v.text.find("--num-scheduler-steps 10"), std::string::npos) << v.text;
    EXPECT_NE(v.text.find("--no-enable-chunked-prefill"), std::string::npos) << v.text;
    EXPECT_TRUE(std::any_of(v.warnings.begin(), v.warnings.end(),
        [](const std::string& w) { return w.find("vLLM 0.10 and later refuse") != std::string::npos; }));
    const Plan v1 = planOf(R"({"overlap_scheduler": true, "chunked_prefill": false, "context": 16384})");
    const EngineConfig a = exportPlan(v1, estimate(v1), Engine::Vllm, "m");
    EXPECT_NE(a.text.find("--async-scheduling"), std::string::npos) << a.text;
    EXPECT_TRUE(std::any_of(a.warnings.begin(), a.warnings.end(),
        [](const std::string& w) { return w.find("vLLM refuses to start") != std::string::npos; }));

    const Plan trt = planOf(R"({"engine": "trtllm", "chunked_prefill": true, "overlap_scheduler": false})");
    const EngineConfig t = exportPlan(trt, estimate(trt), Engine::Trtllm, "m");
    std::string yaml;
    for (const auto& c : t.companions)
        yaml += c.text;
    EXPECT_NE(yaml.find("enable_chunked_prefill: true"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("disable_overlap_scheduler: true"), std::string::npos) << yaml;
}

} // namespace
} // namespace envelope
