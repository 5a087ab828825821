// "What makes it fit": the planner asked for the smallest change that makes a plan fit, for the
// training summary and suggestFits (issue 11 item 7, issue 14). ZeRO stage, recompute, offload
// and GPU count are considered together, and with FitScope::FullLayout also TP, PP, CP, EP,
// sequence parallel and the micro-batch split.
#pragma once

#include <optional>

#include "search/search.h"

namespace envelope {

enum class FitScope {
    MemorySettings, // ZeRO stage, recompute, offload, GPU count; the plan's parallel layout kept
    FullLayout // everything the planner searches
};

// The suggestion's budget: memory estimates over both searches (the plan's GPUs, then the
// fewest GPUs). At about 1.5 us an estimate that is under 20 ms on this project's machine,
// about a frame, even for a plan no layout can hold (micro-batch 1e6 x 1e8 tokens took 1.3 s
// unbounded): bench/bench_search.cpp, BM_WhatMakesItFitPathological; docs/performance.md.
inline constexpr long long kFitEstimateCap = 12000;

struct FitAnswer {
    std::optional<Candidate> fit; // a fitting layout, or none found
    bool capped = false; // the budget ran out first: a fit may exist beyond what was searched
    long long estimates = 0; // estimates run
};

// A fitting layout, or none when none exists up to `maxGpus` (0: 65,536) within `maxEstimates`
// (0: no cap). First the plan's own GPU count (most tokens/s there), else the fewest GPUs in
// whole nodes above it. Pure; milliseconds for the largest presets (bench/bench_search.cpp).
FitAnswer whatMakesItFit(
    const Plan& plan, FitScope scope, int maxGpus = 0, long long maxEstimates = kFitEstimateCap);

} // namespace envelope
