// Google Benchmark: the estimator must stay in microseconds so a slider drag redraws in a frame.
//   build/bench/envelope_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

#include "compute/compute.h"
#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/load.h"
#include "serving/sweep.h"
#include "training/memory.h"

namespace {

envelope::Plan defaultPlan()
{
    auto presets = envelope::builtinPresets();
    if (!presets) {
        std::cerr << presets.error().toString() << '\n';
        std::abort();
    }
    auto plan = envelope::readPlan(presets->defaultPlanJson, *presets);
    if (!plan) {
        std::cerr << plan.error().toString() << '\n';
        std::abort();
    }
    return *plan;
}

// One full training-memory estimate (parameter count + every tenant + min_gpus).
void BM_TrainingMemory(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    for (auto _ : state) {
        const envelope::ParamCounts counts = envelope::countParameters(plan.model.arch);
        auto memory = envelope::estimateTrainingMemory(plan.model.arch, counts, plan.training,
                                                       plan.cluster, plan.gpu.gpu);
        benchmark::DoNotOptimize(memory);
    }
}
BENCHMARK(BM_TrainingMemory);

// The compute side alone (FLOPs, step time, communication, bubble, bottleneck, solver), on a
// hand-built Llama-2-70B-like shape so it depends on neither the presets nor the model counter.
void BM_Compute(benchmark::State& state)
{
    envelope::ModelArch arch;
    arch.layers = 80;
    arch.hidden = 8192;
    arch.ffnHidden = 28672;
    arch.heads = 64;
    arch.kvHeads = 8;
    arch.headDim = 128;
    arch.vocab = 32000;
    envelope::ParamCounts counts;
    counts.embedding = counts.lmHead = 32000.0 * 8192;
    counts.total = counts.active = 68.45e9 + 2 * 32000.0 * 8192;
    envelope::TrainingConfig config;
    config.zeroStage = 1;
    config.tp = 8;
    config.pp = 4;
    config.gradAccum = 16;
    config.commOverlap = 0.5;
    config.observedTokensPerS = 3e5;
    config.budgetUsd = 2e6;
    config.deadlineS = 30 * 86400.0;
    envelope::Gpu gpu;
    gpu.bf16Flops = 989e12;
    gpu.intraNodeBytesPerS = 450e9;
    gpu.interNodeBytesPerS = 50e9;
    gpu.pricePerHour = 4;
    const envelope::Cluster cluster { 128, 8 };
    for (auto _ : state) {
        auto compute = envelope::estimateCompute(arch, counts, config, cluster, gpu);
        benchmark::DoNotOptimize(compute);
    }
}
BENCHMARK(BM_Compute);

// Training memory with and without the compute side: the difference is what compute adds.
void BM_EstimateTrainingOnly(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    envelope::EstimateOptions options;
    options.compute = options.serving = options.rl = false;
    for (auto _ : state)
        benchmark::DoNotOptimize(envelope::estimate(plan, options));
}
BENCHMARK(BM_EstimateTrainingOnly);

void BM_EstimateTrainingAndCompute(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    envelope::EstimateOptions options;
    options.serving = options.rl = false;
    for (auto _ : state)
        benchmark::DoNotOptimize(envelope::estimate(plan, options));
}
BENCHMARK(BM_EstimateTrainingAndCompute);

// Everything the app redraws on a slider move (training, compute, serving, RL), no explanations.
void BM_EstimateEverything(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    for (auto _ : state)
        benchmark::DoNotOptimize(envelope::estimate(plan));
}
BENCHMARK(BM_EstimateEverything);

// With every formula formatted (what `envelope-cli explain` and the details pane ask for).
void BM_EstimateWithExplanations(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    envelope::EstimateOptions options;
    options.explain = true;
    for (auto _ : state)
        benchmark::DoNotOptimize(envelope::estimate(plan, options));
}
BENCHMARK(BM_EstimateWithExplanations);

// Serving under load (issue 27): Llama-3 8B on one H100, 1,000 + 300 token requests (mean, p90
// 1,800 and 550) at 6 requests/s, and an SLO of p90 TTFT 0.5 s and TPOT 50 ms.
envelope::Plan loadPlan(bool slo)
{
    auto presets = envelope::builtinPresets();
    std::string json = R"({"model": "llama-3-8b", "gpu": "h100-sxm", "cluster": {"gpus": 1},
        "serving": {"tp": 1, "context": 8192, "workload": {"input_tokens": {"mean": 1000, "p90": 1800},
        "output_tokens": {"mean": 300, "p90": 550}, "request_rate": 6})";
    json += slo ? R"(, "slo": {"ttft_p90_s": 0.5, "tpot_p90_s": 0.05}}})" : "}}";
    auto plan = envelope::readPlan(json, *presets);
    if (!plan) {
        std::cerr << plan.error().toString() << '\n';
        std::abort();
    }
    return *plan;
}

// The event simulation alone at the issue's size: 10,000 requests through one engine, scheduled
// as vLLM V1 (0: mixed steps), SGLang 0.4+ (1: prompt steps alone, the overlap scheduler) and
// vLLM V0 with --num-scheduler-steps 10 (2: bursts, which the steady-decode shortcut skips).
void BM_SimulateEngine10kRequests(benchmark::State& state)
{
    const envelope::Plan plan = loadPlan(false);
    const envelope::Estimate e = envelope::estimate(plan);
    envelope::EngineLimits limits;
    limits.kvTokens = e.serving.maxTokens;
    limits.maxNumSeqs = plan.serving.maxNumSeqs;
    limits.maxBatchedTokens = plan.serving.maxBatchedTokens;
    limits.mixedBatches = state.range(0) == 0;
    limits.overlapScheduler = state.range(0) == 1;
    limits.schedulerSteps = state.range(0) == 2 ? 10 : 1;
    const envelope::StepTimes steps
        = envelope::tabulatedStepTimes(plan.model.arch, plan.serving, plan.gpu.gpu, 256, 8192);
    for (auto _ : state)
        benchmark::DoNotOptimize(envelope::simulateEngine(
            *plan.serving.workload, limits, steps, 8192, 10'000, 1));
}
BENCHMARK(BM_SimulateEngine10kRequests)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// A serving estimate under the workload: the step table, the capacity run and the workload's run
// (state 0, a slider step), and with the goodput bisection under the SLO (state 1, the CLI).
void BM_EstimateServingUnderLoad(benchmark::State& state)
{
    const envelope::Plan plan = loadPlan(state.range(0) == 1);
    envelope::EstimateOptions options;
    options.training = options.compute = options.rl = false;
    for (auto _ : state) {
        envelope::Estimate e = envelope::estimate(plan, options);
        if (state.range(0) == 1)
            envelope::attachServingGoodput(plan, e); // what envelope-cli estimate adds
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_EstimateServingUnderLoad)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The Serving tab's latency-against-rate curve (servingRateCurve): eleven runs of the workload at
// 5% to 95% of the capacity, on the app's worker thread after each edit of a workload plan.
void BM_ServingRateCurve(benchmark::State& state)
{
    const envelope::Plan plan = loadPlan(true);
    const envelope::Estimate e = envelope::estimate(plan);
    for (auto _ : state)
        benchmark::DoNotOptimize(envelope::servingRateCurve(plan, e));
}
BENCHMARK(BM_ServingRateCurve)->Unit(benchmark::kMillisecond);

// Speculative decoding (issue 27): DeepSeek-V3 on 8 H200 with its MTP module drafting 2 tokens,
// 64 sequences of 4,096. A slider step's serving estimate (the verify and draft ops on top of
// the plain step), and the throughput-interactivity curve the Serving tab draws (every power of
// two up to the pool, speculative and plain).
envelope::Plan speculativePlan()
{
    auto presets = envelope::builtinPresets();
    auto plan = envelope::readPlan(R"({"model": "deepseek-v3", "gpu": "h200", "cluster": {"gpus": 8},
        "serving": {"tp": 8, "weight_bits": 8, "context": 4096, "concurrency": 64,
        "speculative": {"kind": "mtp", "tokens": 2, "acceptance": 0.8}}})",
        *presets);
    if (!plan) {
        std::cerr << plan.error().toString() << '\n';
        std::abort();
    }
    return *plan;
}

void BM_EstimateServingSpeculative(benchmark::State& state)
{
    envelope::Plan plan = speculativePlan();
    envelope::EstimateOptions options;
    options.training = options.compute = options.rl = false;
    int i = 0;
    for (auto _ : state) {
        // A different concurrency each time, as a slider drags: no memo hit.
        plan.serving.concurrency = 32 + (i++ % 64);
        benchmark::DoNotOptimize(envelope::estimate(plan, options));
    }
}
BENCHMARK(BM_EstimateServingSpeculative)->Unit(benchmark::kMicrosecond);

void BM_InteractivityCurve(benchmark::State& state)
{
    envelope::Plan plan = speculativePlan();
    int i = 0;
    for (auto _ : state) {
        plan.serving.context = 2048 + 16 * (i++ % 64); // a new KV length each time
        benchmark::DoNotOptimize(envelope::servingInteractivityCurve(plan));
    }
}
BENCHMARK(BM_InteractivityCurve)->Unit(benchmark::kMicrosecond);

// Disaggregated, expert-parallel serving (issue 27): DeepSeek's published deployment (EP32
// prefill, EP144 decode with data-parallel attention, MTP) as a slider step estimates it (both
// pools' memory and ops; Arg 0), and under a Poisson workload through both pools' simulations
// (Arg 1).
void BM_EstimateDisaggregated(benchmark::State& state)
{
    auto presets = envelope::builtinPresets();
    const std::string workload = state.range(0) == 1
        ? R"(, "workload": {"input_tokens": {"mean": 3000, "p90": 6000}, "output_tokens": {"mean": 1000, "p90": 2000}, "request_rate": 20})"
        : "";
    auto read = envelope::readPlan(R"({"model": "deepseek-v3", "gpu": "h800", "cluster": {"gpus": 176},
        "serving": {"weight_bits": 8, "context": 8192, "concurrency": 12672,
        "speculative": {"kind": "mtp", "tokens": 1, "acceptance": 0.875},
        "disaggregation": {"prefill": {"tp": 1, "ep": 32, "dp": 32}, "decode": {"tp": 1, "ep": 144, "dp": 144}})"
            + workload + "}}",
        *presets);
    if (!read) {
        std::cerr << read.error().toString() << '\n';
        std::abort();
    }
    envelope::Plan plan = *read;
    envelope::EstimateOptions options;
    options.training = options.compute = options.rl = false;
    int i = 0;
    for (auto _ : state) {
        plan.serving.concurrency = 12000 + (i++ % 64); // a slider drag: no memo hit
        benchmark::DoNotOptimize(envelope::estimate(plan, options));
    }
}
BENCHMARK(BM_EstimateDisaggregated)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
