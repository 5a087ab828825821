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

// A fitting layout, or nullopt when none exists up to `maxGpus` (0: 65,536). First the plan's
// own GPU count (most tokens/s there), else the fewest GPUs in whole nodes above it. Pure;
// milliseconds for the largest presets (bench/bench_search.cpp).
std::optional<Candidate> whatMakesItFit(const Plan& plan, FitScope scope, int maxGpus = 0);

} // namespace envelope
