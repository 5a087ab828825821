// Everything the training panel draws for one plan, as the core computed it.
#pragma once

#include <vector>

#include "estimate/estimate.h"
#include "serving/sweep.h"
#include "whatif/whatif.h"

namespace envelope::ui {

struct TrainingResults {
    Estimate estimate; // estimate(plan), fast path
    std::vector<Variant> zeroVariants; // zeroStageVariants(plan)
    std::vector<Variant> recomputeVariants; // recomputeVariants(plan)
    std::vector<SweepPoint> seqLenSweep; // sweep(plan, SeqLen)
    std::vector<SweepPoint> microBatchSweep; // sweep(plan, MicroBatch)
    double largestSeqLen = 0; // largestFitting(plan, SeqLen)
    double largestMicroBatch = 0; // largestFitting(plan, MicroBatch)
    std::vector<FitSuggestion> suggestions; // suggestFits(plan, units); empty when it fits
    // True while the suggestions are being searched on a worker thread (PlanDocument): the
    // plan does not fit and `suggestions` is not filled yet.
    bool suggestionsPending = false;
    // True while the serving goodput under the plan's SLO (attachServingGoodput, a bisection of
    // simulations) is searched on the same worker: estimate.serving.load has no goodput yet.
    bool goodputPending = false;
    // The Serving tab's latency against request rate (servingRateCurve: eleven simulations of
    // the workload), computed on the same worker: no points while pending or without a workload.
    ServingRateCurve rateCurve;
    bool rateCurvePending = false;

    // Whether the worker has something left to compute for these results.
    bool workPending() const { return suggestionsPending || goodputPending || rateCurvePending; }
};

// Asks the core for every figure above but the suggestions, which PlanDocument searches off
// the GUI thread (suggestionsPending is set when the plan does not fit).
TrainingResults computeTrainingResults(const Plan& plan);

} // namespace envelope::ui
