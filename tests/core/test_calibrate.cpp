// Calibration from a measured run: the fitted factor and MFU reproduce the measurement, and a
// measurement out of reach is refused with the option it came from.
#include <gtest/gtest.h>

#include "estimate/calibrate.h"
#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope {
namespace {

Plan torchtitan8b()
{
    const Expected<Plan> plan = readPlan(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "cluster": {"gpus": 8}, "training": {"framework": "torchtitan", "zero_stage": 3,
        "micro_batch": 1, "seq_len": 8192, "recompute": "full"}})",
        builtinPresets().value());
    EXPECT_TRUE(plan.ok());
    return *plan;
}

TEST(Calibrate, ActivationFactorAndMfuInvertTheirFigures)
{
    // A run that kept 1.3x the modelled activations at MFU 0.31 (an `mfu` override): the fit
    // finds both back.
    Plan truth = torchtitan8b();
    truth.training.mfuOverride = true;
    truth.training.activationModel.calibration = 1.3;
    truth.training.mfu = 0.31;
    const Estimate measured = estimate(truth);
    CalibrationTarget target;
    target.peakBytes = measured.training.reservedBytes;
    target.metric = MemoryMetric::Reserved;
    target.tokensPerS = measured.compute.tokensPerS;
    Plan overridden = torchtitan8b();
    overridden.training.mfuOverride = true;
    const Expected<Calibration> fit = calibrate(overridden, target);
    ASSERT_TRUE(fit.ok()) << fit.error().toString();
    ASSERT_EQ(fit->changes.size(), 2u);
    EXPECT_EQ(fit->changes[0].field, "training.activation_calibration");
    EXPECT_NEAR(fit->plan.training.activationModel.calibration, 1.3, 1e-6);
    EXPECT_EQ(fit->changes[1].field, "training.mfu");
    EXPECT_NEAR(fit->plan.training.mfu, 0.31, 1e-6);
}

// An op-timed plan is calibrated in `efficiency_scale`: a job whose kernels ran at 0.6x the
// tables' speed is found back at 0.6 (its compute ops divided by 0.6; this plan's
// communication hides behind them).
TEST(Calibrate, OpTimedPlansFitTheEfficiencyScale)
{
    Plan truth = torchtitan8b();
    ASSERT_FALSE(truth.training.mfuOverride);
    truth.training.efficiencyScale = 0.6;
    CalibrationTarget target;
    target.tokensPerS = estimate(truth).compute.tokensPerS;
    const Expected<Calibration> fit = calibrate(torchtitan8b(), target);
    ASSERT_TRUE(fit.ok()) << fit.error().toString();
    ASSERT_EQ(fit->changes.size(), 1u);
    EXPECT_EQ(fit->changes[0].field, "training.efficiency_scale");
    EXPECT_NEAR(fit->plan.training.efficiencyScale, 0.6, 1e-6);
}

TEST(Calibrate, StepTimeIsTheGlobalBatchOverTheMeasuredTime)
{
    Plan plan = torchtitan8b();
    const Estimate e = estimate(plan);
    // 8 GPUs x 1 x 8192 tokens = 65,536 tokens per step; 10 s per step = 6,553.6 tokens/s.
    CalibrationTarget target;
    target.stepTimeS = 10.0;
    const Expected<Calibration> fit = calibrate(plan, target);
    ASSERT_TRUE(fit.ok()) << fit.error().toString();
    EXPECT_DOUBLE_EQ(e.compute.globalBatchTokens, 65536.0);
    EXPECT_NEAR(estimate(fit->plan).compute.tokensPerS, 6553.6, 1e-3);
}

TEST(Calibrate, OutOfReachNamesTheOption)
{
    CalibrationTarget target;
    target.peakBytes = 1e6; // 1 MB: below the sharded states alone
    const Expected<Calibration> fit = calibrate(torchtitan8b(), target);
    ASSERT_FALSE(fit.ok());
    EXPECT_EQ(fit.error().path, "--peak-gib");
    CalibrationTarget fast;
    fast.tokensPerS = 1e12;
    EXPECT_EQ(calibrate(torchtitan8b(), fast).error().path, "--tokens-per-s");
}

} // namespace
} // namespace envelope
