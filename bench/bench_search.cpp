// Google Benchmark: the planner's exhaustive searches must finish in under a second,
// single-threaded (issue 14). Counters: layouts searched and evaluated per second of search.
//   build/bench/envelope_bench_search --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

#include "plan/planio.h"
#include "plan/presets.h"
#include "search/fit.h"
#include "search/search.h"
#include "whatif/whatif.h"

// Every heap allocation of this process is counted, so the benchmark can report how many one
// search makes: the inner loop must make none per layout (issue 14).
namespace {
std::atomic<long long> g_allocations { 0 };
}

void* operator new(std::size_t size)
{
    ++g_allocations;
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}

namespace {

envelope::Plan readOrDie(const std::string& json)
{
    auto presets = envelope::builtinPresets();
    auto plan = presets ? envelope::readPlan(json, *presets)
                        : envelope::Expected<envelope::Plan>(presets.error());
    if (!plan) {
        std::cerr << plan.error().toString() << '\n';
        std::abort();
    }
    return *plan;
}

// Llama 3.1 405B pre-training as Meta describe it (Llama 3 paper, sec. 3.3): 16,384 H100s,
// 8,192-token sequences, a 16M-token global batch (2,048 sequences).
envelope::Plan llama405bPlan()
{
    return readOrDie(R"({"format": "envelope.plan", "version": 1, "model": "llama-3.1-405b",
        "gpu": "h100-sxm", "cluster": {"gpus": 16384, "gpus_per_node": 8},
        "training": {"zero_stage": 1, "tp": 8, "pp": 16, "micro_batch": 1, "grad_accum": 16,
                     "seq_len": 8192, "recompute": "selective", "sequence_parallel": true}})");
}

// DeepSeek-V3 full fine-tuning: 4,096-token sequences, 256 sequences a step.
envelope::Plan deepSeekPlan()
{
    return readOrDie(R"({"format": "envelope.plan", "version": 1, "model": "deepseek-v3",
        "gpu": "h100-sxm", "cluster": {"gpus": 256, "gpus_per_node": 8},
        "training": {"zero_stage": 3, "ep": 8, "micro_batch": 1, "grad_accum": 1,
                     "seq_len": 4096, "recompute": "full"}})");
}

void runSearch(
    benchmark::State& state, const envelope::Plan& plan, envelope::SearchGoal goal, bool offload)
{
    envelope::SearchOptions options;
    options.goal = goal;
    options.prune = state.range(0) != 0;
    options.allowOffload = offload;
    envelope::SearchResult last;
    long long allocations = 0;
    for (auto _ : state) {
        const long long before = g_allocations.load();
        last = envelope::search(plan, options);
        allocations = g_allocations.load() - before;
        benchmark::DoNotOptimize(last);
    }
    // Allocations of one search: the axes, the reserved lists, the result's candidates and
    // the validation of each reported candidate (it copies the plan), none per layout.
    state.counters["allocations"] = static_cast<double>(allocations);
    if (last.candidates.empty())
        state.SkipWithError("no layout fits");
    state.counters["searched"] = static_cast<double>(last.searched);
    state.counters["evaluated"] = static_cast<double>(last.evaluated);
    state.counters["feasible"] = static_cast<double>(last.feasible);
    state.counters["searched_per_s"] = benchmark::Counter(
        static_cast<double>(last.searched), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["evaluated_per_s"] = benchmark::Counter(
        static_cast<double>(last.evaluated), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["best_gpus"] = last.candidates.empty() ? 0 : last.candidates.front().layout.gpus;
}

// Exhaustive max-throughput for Llama 3.1 405B on 16,384 H100s. Arg: 1 pruned, 0 unpruned.
void BM_Search405bMaxThroughput(benchmark::State& state)
{
    runSearch(state, llama405bPlan(), envelope::SearchGoal::MaxThroughput, true);
}
BENCHMARK(BM_Search405bMaxThroughput)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// min-gpus for DeepSeek-V3 with EP, with and without offload.
void BM_SearchDeepSeekMinGpus(benchmark::State& state)
{
    runSearch(state, deepSeekPlan(), envelope::SearchGoal::MinGpus, true);
}
BENCHMARK(BM_SearchDeepSeekMinGpus)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_SearchDeepSeekMinGpusOnGpu(benchmark::State& state)
{
    runSearch(state, deepSeekPlan(), envelope::SearchGoal::MinGpus, false);
}
BENCHMARK(BM_SearchDeepSeekMinGpusOnGpu)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// The training summary's "what makes it fit" for DeepSeek-V3 on one node: suggestFits with the
// planner's answer (search/fit.h), which PlanDocument runs on every edit of a plan that does
// not fit.
void BM_SuggestFitsDeepSeekOnOneNode(benchmark::State& state)
{
    envelope::Plan plan = deepSeekPlan();
    plan.cluster.gpus = 8;
    plan.training.zeroStage = 1;
    plan.training.gradAccum = 32;
    for (auto _ : state) {
        auto suggestions = envelope::suggestFits(plan);
        benchmark::DoNotOptimize(suggestions);
    }
}
BENCHMARK(BM_SuggestFitsDeepSeekOnOneNode)->Unit(benchmark::kMillisecond);

// A plan no layout holds (a million sequences of 1e8 tokens a micro-batch, Llama-3 70B on one
// node): "what makes it fit" walks every node count to 65,536 GPUs unless bounded. Arg: the
// estimate cap (search/fit.h kFitEstimateCap; 0 = none, the 1.3 s it took before the cap).
void BM_WhatMakesItFitPathological(benchmark::State& state)
{
    const envelope::Plan plan = readOrDie(R"({"format": "envelope.plan", "version": 1,
        "model": "llama-3-70b", "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8},
        "training": {"micro_batch": 1000000, "grad_accum": 1, "seq_len": 100000000}})");
    envelope::FitAnswer last;
    for (auto _ : state) {
        last = envelope::whatMakesItFit(plan, envelope::FitScope::FullLayout, 0, state.range(0));
        benchmark::DoNotOptimize(last);
    }
    state.counters["estimates"] = static_cast<double>(last.estimates);
    state.counters["capped"] = last.capped ? 1 : 0;
}
BENCHMARK(BM_WhatMakesItFitPathological)
    ->Arg(envelope::kFitEstimateCap)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond);

// A serving search per iteration: Arg 0 serving-max-throughput, 1 serving-min-gpus; counters
// for the layouts evaluated and their rate.
// Times searchServing for `goal`; returns the last result for the caller's counters.
envelope::ServingSearchResult timeServingSearch(
    benchmark::State& state, const envelope::Plan& plan, envelope::SearchGoal goal)
{
    envelope::SearchOptions options;
    options.goal = goal;
    envelope::ServingSearchResult last;
    for (auto _ : state) {
        last = envelope::searchServing(plan, options);
        benchmark::DoNotOptimize(last);
    }
    return last;
}

void runServingSearch(benchmark::State& state, const envelope::Plan& plan)
{
    const envelope::ServingSearchResult last = timeServingSearch(state, plan,
        state.range(0) ? envelope::SearchGoal::ServingMinGpus
                       : envelope::SearchGoal::ServingMaxThroughput);
    if (last.candidates.empty())
        state.SkipWithError("no layout fits");
    state.counters["evaluated"] = static_cast<double>(last.evaluated);
    state.counters["evaluated_per_s"] = benchmark::Counter(
        static_cast<double>(last.evaluated), benchmark::Counter::kIsIterationInvariantRate);
}

// Serving: Llama-3 70B, 256 sequences of 8k tokens. Arg 0: serving-max-throughput on 1,024
// H100s (every TP x weight x KV precision at the replicas the GPUs hold); 1: serving-min-gpus
// (GPU counts ascending to the first fleet that serves them).
void BM_SearchServing70b(benchmark::State& state)
{
    const envelope::Plan plan = readOrDie(R"({"format": "envelope.plan", "version": 1,
        "model": "llama-3-70b", "gpu": "h100-sxm", "cluster": {"gpus": 1024, "gpus_per_node": 8},
        "serving": {"context": 8192, "concurrency": 256}})");
    runServingSearch(state, plan);
}
BENCHMARK(BM_SearchServing70b)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// serving-max-goodput (issue 27: "a goodput search over every serving layout for one model on
// up to 64 GPUs takes < 1 s"): each layout's capacity is one event simulation, its goodput a
// bisection of a dozen, run in falling capacity order while a capacity can beat the top ten.
// Arg 0: Llama-3 70B on 64 H100s (TP engines); 1: Qwen3-235B-A22B on 64 H200s (TP engines and
// data-parallel-attention engines of EP 2 x tp ... 64). A Poisson workload of 2,000 + 300
// tokens at 40 requests/s, p90 TTFT 1 s and TPOT 50 ms. Both search the aggregated engines
// and every xPyD split of them into prefill and decode pools. Arg 2: Arg 1 under a TPOT no
// layout meets (1 ms), so that every layout is tried.
void BM_SearchServingGoodput(benchmark::State& state)
{
    const char* model = state.range(0) ? "qwen3-235b-a22b" : "llama-3-70b";
    const char* gpu = state.range(0) ? "h200" : "h100-sxm";
    const char* tpot = state.range(0) == 2 ? "0.001" : "0.05";
    const envelope::Plan plan = readOrDie(std::string(R"({"format": "envelope.plan", "version": 1,
        "model": ")") + model + R"(", "gpu": ")" + gpu + R"(",
        "cluster": {"gpus": 64, "gpus_per_node": 8},
        "serving": {"context": 8192, "workload": {"input_tokens": {"mean": 2000, "p90": 3500},
            "output_tokens": {"mean": 300, "p90": 600}, "request_rate": 40},
            "slo": {"ttft_p90_s": 1.0, "tpot_p90_s": )" + tpot + "}}}");
    const envelope::ServingSearchResult last
        = timeServingSearch(state, plan, envelope::SearchGoal::ServingMaxGoodput);
    if (last.candidates.empty() != (state.range(0) == 2))
        state.SkipWithError(state.range(0) == 2 ? "a layout met the impossible SLO" : "no layout meets the SLO");
    state.counters["layouts"] = static_cast<double>(last.searched);
    state.counters["bisected"] = static_cast<double>(last.bisected);
    state.counters["pool_bounds"] = static_cast<double>(last.poolBounds);
}
BENCHMARK(BM_SearchServingGoodput)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// serving-min-gpus under the same workloads and SLO as BM_SearchServingGoodput (Arg 0 Llama-3
// 70B on H100s, 1 Qwen3-235B-A22B on H200s, up to 64 GPUs): the fewest replicas of every
// aggregated layout, then every (prefill, decode) pair of layouts, each pool's workers grown
// and shrunk by bisection, pairs that could only need more GPUs than the top ten skipped.
void BM_SearchServingMinGpusUnderSlo(benchmark::State& state)
{
    const char* model = state.range(0) ? "qwen3-235b-a22b" : "llama-3-70b";
    const char* gpu = state.range(0) ? "h200" : "h100-sxm";
    const envelope::Plan plan = readOrDie(std::string(R"({"format": "envelope.plan", "version": 1,
        "model": ")") + model + R"(", "gpu": ")" + gpu + R"(",
        "cluster": {"gpus": 64, "gpus_per_node": 8},
        "serving": {"context": 8192, "workload": {"input_tokens": {"mean": 2000, "p90": 3500},
            "output_tokens": {"mean": 300, "p90": 600}, "request_rate": 40},
            "slo": {"ttft_p90_s": 1.0, "tpot_p90_s": 0.05}}})");
    envelope::SearchOptions options;
    options.goal = envelope::SearchGoal::ServingMinGpus;
    options.maxGpus = 64;
    envelope::ServingSearchResult last;
    for (auto _ : state) {
        last = envelope::searchServing(plan, options);
        benchmark::DoNotOptimize(last);
    }
    if (last.candidates.empty())
        state.SkipWithError("no fleet meets the SLO");
    else {
        state.counters["gpus"] = last.candidates.front().gpus;
        state.counters["xpyd"] = last.candidates.front().layout.disaggregation ? 1 : 0;
    }
    state.counters["estimates"] = static_cast<double>(last.estimates);
}
BENCHMARK(BM_SearchServingMinGpusUnderSlo)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Serving a MoE model: DeepSeek-V3 on 1,024 H200s, 16,384 sequences of 8k: the TP engines and
// every data-parallel-attention engine of EP 2 x tp ... 1,024 (issue 27). Arg 0: max-throughput;
// 1: min-gpus.
void BM_SearchServingDeepSeekEp(benchmark::State& state)
{
    const envelope::Plan plan = readOrDie(R"({"format": "envelope.plan", "version": 1,
        "model": "deepseek-v3", "gpu": "h200", "cluster": {"gpus": 1024, "gpus_per_node": 8},
        "serving": {"weight_bits": 8, "context": 8192, "concurrency": 16384}})");
    runServingSearch(state, plan);
}
BENCHMARK(BM_SearchServingDeepSeekEp)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// RL: GRPO on Qwen2.5-7B, pools of Arg GPUs (disjoint splits and the colocated pool).
void BM_SearchRlPools(benchmark::State& state)
{
    const envelope::Plan plan = readOrDie(R"({"format": "envelope.plan", "version": 1,
        "model": "qwen2.5-7b", "gpu": "h100-sxm", "cluster": {"gpus": )"
        + std::to_string(state.range(0)) + R"(, "gpus_per_node": 8},
        "training": {"zero_stage": 3},
        "rl": {"algorithm": "grpo", "trainer_gpus": 4, "reference_gpus": 1, "rollout_gpus": 3}})");
    envelope::SearchOptions options;
    options.goal = envelope::SearchGoal::RlMaxStepsPerHour;
    envelope::RlSearchResult last;
    for (auto _ : state) {
        last = envelope::searchRl(plan, options);
        benchmark::DoNotOptimize(last);
    }
    if (last.candidates.empty())
        state.SkipWithError("no layout fits");
    state.counters["evaluated"] = static_cast<double>(last.evaluated);
    state.counters["evaluated_per_s"] = benchmark::Counter(
        static_cast<double>(last.evaluated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SearchRlPools)->Arg(8)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
