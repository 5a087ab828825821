#include "document/trainingresults.h"
#include "estimate/estimate.h"

namespace envelope::ui {

TrainingResults computeTrainingResults(const Plan& plan)
{
    TrainingResults r;
    r.estimate = estimate(plan);
    r.zeroVariants = zeroStageVariants(plan);
    r.recomputeVariants = recomputeVariants(plan);
    r.seqLenSweep = sweep(plan, SweepAxis::SeqLen);
    r.microBatchSweep = sweep(plan, SweepAxis::MicroBatch);
    r.largestSeqLen = largestFitting(plan, SweepAxis::SeqLen);
    r.largestMicroBatch = largestFitting(plan, SweepAxis::MicroBatch);
    r.suggestionsPending = !r.estimate.training.fits;
    r.goodputPending = plan.serving.workload && plan.serving.slo && r.estimate.serving.load
        && r.estimate.serving.load->requests > 0;
    r.rateCurvePending = servingRateCurveApplies(plan, r.estimate);
    return r;
}

} // namespace envelope::ui
