// Calibration from a measured run (envelope-cli calibrate; docs/formulas-training.md §9a): fit
// the plan's activation calibration factor (or the overhead, when activations are negligible)
// to a measured peak in the metric the run reports, and the MFU to a measured throughput.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/expected.h"
#include "plan/plan.h"

namespace envelope {

enum class MemoryMetric {
    Reserved, // torch.cuda.max_memory_reserved: training.allocator_reserved_bytes
    Allocated, // torch.cuda.max_memory_allocated: training.allocated_bytes
    Device // nvidia-smi: training.per_gpu_bytes.total
};
bool parseMemoryMetric(std::string_view id, MemoryMetric& out); // "reserved" "allocated" "device"

struct CalibrationTarget {
    std::optional<double> peakBytes; // measured peak per GPU, bytes
    MemoryMetric metric = MemoryMetric::Reserved;
    std::optional<double> tokensPerS; // measured, whole job
    std::optional<double> stepTimeS; // measured step time (alternative to tokensPerS)
};

struct CalibrationChange {
    std::string field; // plan path, e.g. "training.activation_calibration"
    double before = 0;
    double after = 0;
    std::string measure; // the figure it fits, e.g. "training.allocator_reserved_bytes"
    double estimateBefore = 0;
    double estimateAfter = 0;
    double measured = 0;
};

struct Calibration {
    Plan plan; // the input with the fitted fields changed
    std::vector<CalibrationChange> changes;
};

// Fits the plan to the measurements. Errors (path "--peak-gib", "--tokens-per-s", ...) when a
// target cannot be reached within the fields' allowed ranges.
Expected<Calibration> calibrate(const Plan& plan, const CalibrationTarget& target);

} // namespace envelope
