// Google Benchmark: engine export and import (issue 15). The GUI's export dialog refreshes the
// text on every engine pick, so an export (estimate excluded) must stay far below a frame.
//   build/bench/envelope_bench --benchmark_filter='Export|Import|ApplySets'
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

#include "estimate/estimate.h"
#include "export/export.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "plan/setpath.h"

namespace {

const envelope::PresetLibrary& presets()
{
    static const envelope::PresetLibrary library = [] {
        auto p = envelope::builtinPresets();
        if (!p) {
            std::cerr << p.error().toString() << '\n';
            std::abort();
        }
        return *p;
    }();
    return library;
}

envelope::Plan defaultPlan()
{
    auto plan = envelope::readPlan(presets().defaultPlanJson, presets());
    if (!plan) {
        std::cerr << plan.error().toString() << '\n';
        std::abort();
    }
    return *plan;
}

// One engine's export of the default plan, its estimate computed once outside the loop.
void BM_ExportEngine(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    const envelope::Estimate e = envelope::estimate(plan);
    const auto engine = static_cast<envelope::Engine>(state.range(0));
    state.SetLabel(std::string(envelope::engineId(engine)));
    for (auto _ : state) {
        auto config = envelope::exportPlan(plan, e, engine, "meta-llama/Llama-2-7b-hf");
        benchmark::DoNotOptimize(config);
    }
}
BENCHMARK(BM_ExportEngine)->DenseRange(0, 4);

// Import of an exported file into plan JSON (readPlan and the estimate not included).
void BM_ImportEngine(benchmark::State& state)
{
    const envelope::Plan plan = defaultPlan();
    const auto engine = static_cast<envelope::Engine>(state.range(0));
    const std::string text = envelope::exportPlan(plan, envelope::estimate(plan), engine, "").text;
    envelope::ImportOptions options;
    options.modelJson = "\"llama-2-7b\"";
    options.gpus = 8;
    state.SetLabel(std::string(envelope::engineId(engine)));
    for (auto _ : state) {
        auto imported = envelope::importEngineConfig(engine, text, presets(), options);
        benchmark::DoNotOptimize(imported);
    }
}
BENCHMARK(BM_ImportEngine)->DenseRange(0, 2);

// Two --set overrides on the default plan's text (parse, edit, dump).
void BM_ApplySets(benchmark::State& state)
{
    const std::vector<std::string> sets { "training.tp=8", "gpu=h200" };
    for (auto _ : state) {
        auto text = envelope::applySetsToText(presets().defaultPlanJson, sets);
        benchmark::DoNotOptimize(text);
    }
}
BENCHMARK(BM_ApplySets);

} // namespace
