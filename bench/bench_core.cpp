// Google Benchmark: the estimator must stay in microseconds so a slider drag redraws in a frame.
//   build/bench/envelope_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

#include "compute.h"
#include "estimate.h"
#include "planio.h"
#include "presets.h"
#include "training_memory.h"

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

// The compute side alone (FLOPs, step time, communication, bubble, bottleneck).
void BM_Compute(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    const envelope::ParamCounts counts = envelope::countParameters(plan.model.arch);
    for (auto _ : state) {
        auto compute = envelope::estimateCompute(plan.model.arch, counts, plan.training,
                                                 plan.cluster, plan.gpu.gpu);
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

}  // namespace
