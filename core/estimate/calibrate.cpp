#include "estimate/calibrate.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "estimate/estimate.h"
#include "plan/fields.h"
#include "plan/planio.h"

namespace envelope {
namespace {

// The ranges searched are the plan's own (plan/fields.h; validatePlan refuses anything else), so
// a calibrated plan always reads back: the search once went down to activation_calibration 0.001
// and mfu 1e-4 and wrote plans `estimate` refused.
constexpr double kMinCalibration = 0.01, kMaxCalibration = 100; // activation_calibration
constexpr double kMinEfficiencyScale = 0.05, kMaxEfficiencyScale = 20; // efficiency_scale
constexpr double kMaxFragmentation = 0.9;
constexpr double kGiB = 1073741824.0;
constexpr double kNegligibleActivations = 0.05; // below this share, fit the overhead instead

double memoryFigure(const Estimate& e, MemoryMetric metric)
{
    switch (metric) {
    case MemoryMetric::Allocated:
        return e.training.allocatedBytes;
    case MemoryMetric::Device:
        return e.training.perGpu.total();
    case MemoryMetric::Reserved:
        break;
    }
    return e.training.reservedBytes;
}

const char* memoryKey(MemoryMetric metric)
{
    switch (metric) {
    case MemoryMetric::Allocated:
        return "training.allocated_bytes";
    case MemoryMetric::Device:
        return "training.per_gpu_bytes.total";
    case MemoryMetric::Reserved:
        break;
    }
    return "training.allocator_reserved_bytes";
}

Estimate trainingOnly(const Plan& plan)
{
    EstimateOptions o;
    o.serving = false;
    o.rl = false;
    return estimate(plan, o);
}

// Smallest x in [lo, hi] with f(x) >= target for a non-decreasing f; nullopt when the target is
// outside [f(lo), f(hi)].
std::optional<double> solveIncreasing(
    const std::function<double(double)>& f, double lo, double hi, double target)
{
    if (!(f(lo) <= target && target <= f(hi)))
        return std::nullopt;
    for (int i = 0; i < 100; ++i) {
        const double mid = (lo + hi) / 2;
        (f(mid) < target ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
}

} // namespace

bool parseMemoryMetric(std::string_view id, MemoryMetric& out)
{
    if (id == "reserved")
        out = MemoryMetric::Reserved;
    else if (id == "allocated")
        out = MemoryMetric::Allocated;
    else if (id == "device")
        out = MemoryMetric::Device;
    else
        return false;
    return true;
}

Expected<Calibration> calibrate(const Plan& input, const CalibrationTarget& target)
{
    Calibration out { input, {} };
    Plan& plan = out.plan;

    if (target.peakBytes) {
        const double measured = *target.peakBytes;
        if (!(std::isfinite(measured) && measured > 0))
            return Error { "--peak-gib", "must be a positive number" };
        const Estimate before = trainingOnly(plan);
        // No metric of one GPU's peak exceeds the memory it has: more is a unit slip (MB for
        // GiB) or the whole node's figure.
        if (measured > before.training.gpuMemoryBytes)
            return Error { "--peak-gib",
                fmt::format("{:.2f} GiB is more than one {} holds ({:.2f} GiB): give one GPU's "
                            "peak, in GiB",
                    measured / kGiB, plan.gpu.gpu.name, before.training.gpuMemoryBytes / kGiB) };
        CalibrationChange c;
        c.measure = memoryKey(target.metric);
        c.measured = measured;
        c.estimateBefore = memoryFigure(before, target.metric);
        const double total = memoryFigure(before, target.metric);
        if (total > 0 && before.training.perGpu.activations >= kNegligibleActivations * total) {
            // The figure grows with the activation calibration factor (it scales the kept
            // activations), so one value reproduces the measurement.
            c.field = "training.activation_calibration";
            c.before = plan.training.activationModel.calibration;
            const auto f = [&](double k) {
                Plan p = plan;
                p.training.activationModel.calibration = k;
                return memoryFigure(trainingOnly(p), target.metric);
            };
            const std::optional<double> k
                = solveIncreasing(f, kMinCalibration, kMaxCalibration, measured);
            if (!k)
                return Error { "--peak-gib",
                    fmt::format(
                        "{:.2f} GiB is out of reach: activation_calibration {}..{} gives "
                        "{:.2f}..{:.2f} GiB for {}",
                        measured / kGiB, kMinCalibration, kMaxCalibration,
                        f(kMinCalibration) / kGiB, f(kMaxCalibration) / kGiB, c.measure) };
            plan.training.activationModel.calibration = *k;
            c.after = *k;
        } else if (target.metric == MemoryMetric::Device) {
            // Activations are negligible: the miss is in what the device adds (context, NCCL).
            c.field = "training.overhead.fixed_bytes";
            c.before = plan.training.overhead.fixedBytes;
            c.after = c.before + (measured - total);
            if (c.after < 0)
                return Error { "--peak-gib",
                    fmt::format("the states alone exceed {:.2f} GiB: the plan's figure cannot be "
                                "lowered by the overhead",
                        measured / kGiB) };
            plan.training.overhead.fixedBytes = c.after;
        } else if (target.metric == MemoryMetric::Reserved) {
            c.field = "training.overhead.fragmentation";
            c.before = plan.training.overhead.fragmentation;
            const double allocated = before.training.allocatedBytes;
            c.after = allocated > 0 ? measured / allocated - 1.0 : -1.0;
            if (c.after < 0 || c.after > kMaxFragmentation)
                return Error { "--peak-gib",
                    fmt::format("reserved {:.2f} GiB needs fragmentation {:.3f}, outside 0..{}",
                        measured / kGiB, c.after, kMaxFragmentation) };
            plan.training.overhead.fragmentation = c.after;
        } else {
            return Error { "--metric",
                "activations are negligible in this plan and allocated bytes have no overhead "
                "term to fit: use --metric reserved or device" };
        }
        c.estimateAfter = memoryFigure(trainingOnly(plan), target.metric);
        out.changes.push_back(c);
    }

    if (target.tokensPerS || target.stepTimeS) {
        const Estimate before = trainingOnly(plan);
        double measured = 0;
        std::string option;
        if (target.tokensPerS) {
            measured = *target.tokensPerS;
            option = "--tokens-per-s";
        } else {
            option = "--step-time-s";
            measured = *target.stepTimeS > 0 ? before.compute.globalBatchTokens / *target.stepTimeS
                                             : 0.0;
        }
        if (!(std::isfinite(measured) && measured > 0))
            return Error { option, "must be a positive number" };
        CalibrationChange c;
        c.measure = "training.tokens_per_s";
        c.measured = measured;
        c.estimateBefore = before.compute.tokensPerS;
        // A plan that overrides the op timing with `mfu` is calibrated in that figure; an
        // op-timed plan keeps its ops and scales how fast the kernels ran on this job (issue
        // 22: `efficiency_scale` divides every compute op's time; communication, the bubble's
        // share of it and offload keep their own models).
        const bool overridden = plan.training.mfuOverride;
        double TrainingConfig::*field
            = overridden ? &TrainingConfig::mfu : &TrainingConfig::efficiencyScale;
        const char* name = overridden ? "mfu" : "efficiency_scale";
        const double lo = overridden ? planfields::kMinFraction : kMinEfficiencyScale;
        const double hi = overridden ? 1.0 : kMaxEfficiencyScale;
        c.field = std::string("training.") + name;
        c.before = plan.training.*field;
        const auto f = [&](double value) {
            Plan p = plan;
            p.training.*field = value;
            return trainingOnly(p).compute.tokensPerS;
        };
        const std::optional<double> fitted = solveIncreasing(f, lo, hi, measured);
        if (!fitted)
            return Error { option,
                fmt::format("{:.0f} tokens/s is out of reach: {} {}..{} gives {:.0f}..{:.0f}{}",
                    measured, name, lo, hi, f(lo), f(hi),
                    overridden ? "" : " (communication, the bubble or offload bound the step)") };
        plan.training.*field = *fitted;
        c.after = *fitted;
        c.estimateAfter = trainingOnly(plan).compute.tokensPerS;
        out.changes.push_back(c);
    }
    // Every fitted value is inside its field's range by construction; the plan is checked as
    // `estimate` will check it all the same, so no caller ever writes a plan it refuses.
    if (std::optional<Error> invalid = validatePlan(plan))
        return Error { invalid->path,
            fmt::format("the calibrated plan is refused: {}", invalid->message) };
    return out;
}

} // namespace envelope
