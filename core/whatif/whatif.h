// What-if questions the UI and CLI ask of the core: the same plan under each ZeRO stage or
// recompute mode, sweeps over context length or micro-batch, and the single change that would
// make a plan fit. All answers come from estimate(); nothing here has formulas of its own.
#pragma once

#include <string>
#include <vector>

#include "base/units.h"
#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

struct Variant {
    std::string label;     // "ZeRO-2", "selective"
    Plan plan;             // the modified plan
    TrainingMemory memory; // its training memory
    bool current = false;  // equals the input plan's setting
};

// The plan under ZeRO 0..3 (four variants).
std::vector<Variant> zeroStageVariants(const Plan& plan);

// The plan under recompute none, selective, full (three variants).
std::vector<Variant> recomputeVariants(const Plan& plan);

struct SweepPoint {
    double x = 0;            // context tokens or micro-batch
    double totalBytes = 0;   // per-GPU training memory
    bool fits = false;
};

enum class SweepAxis { SeqLen, MicroBatch };

// Per-GPU training memory along an axis: context on a log2 grid 256..1M (capped by the
// model's max positions only for learned-position models), micro-batch 1..512 on a log2 grid.
std::vector<SweepPoint> sweep(const Plan& plan, SweepAxis axis);

// Largest value on the axis that still fits (0 if none), by the same evaluation as sweep().
double largestFitting(const Plan& plan, SweepAxis axis);

struct FitSuggestion {
    std::string description; // "ZeRO-3 saves 71.2 GB, step +27 ms (+0.8%)", "needs 2 more GPUs"
    double savedBytes = 0;    // per-GPU bytes the change saves (0 for "more GPUs")
    bool makesItFit = false;
    Verdict verdict = Verdict::Over; // the changed plan's training verdict
    double stepTimeCostS = 0; // changed step time - current step time (what the saving costs)
    Plan plan;                // the plan with the change applied
};

// When the plan does not fit: the single changes (ZeRO stage up, recompute, flash attention,
// optimizer offload, more GPUs at fixed tp*pp*cp) ranked — fitting ones first (a comfortable
// fit before a tight one), then by what they cost in step time, then by bytes saved; each
// description says its step-time cost. When none of them fits on the plan's GPUs, the
// planner's answer (search/fit.h: layout, ZeRO, recompute, offload and GPU count together, e.g.
// "ZeRO-3 + full recompute + EP 8 on 20 nodes (160 GPUs)") comes first. When it fits: empty.
// `units` picks how descriptions show bytes.
std::vector<FitSuggestion> suggestFits(const Plan& plan, ByteUnits units = ByteUnits::GB);

// Fills estimate.whatMakesItFit (result JSON `training.what_makes_it_fit`) with the first
// suggestion of suggestFits that makes the training plan fit: the fields it changes (JSON path
// -> value, from the two plans' canonical JSON), the GPUs it runs on and its description. None
// when the plan runs (training.fits: verdict "fits" or "tight"), or when nothing fits within the
// planner's budget (whatMakesItFitNote says so). Bounded like suggestFits: milliseconds.
void attachWhatMakesItFit(const Plan& plan, Estimate& estimate, ByteUnits units = ByteUnits::GB);

}  // namespace envelope
