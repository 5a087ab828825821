// What a serving.workload length distribution (plan/workload.h) says of its requests: the
// figures the plan reader and validator check against serving.context and the load model
// samples around. One definition for core/plan and core/serving.
#pragma once

#include "plan/workload.h"

namespace envelope {

// A log-normal's p90 is at most e^(z90^2 / 2) = 2.2735x its mean (z90 = 1.2816): the widest
// `{"mean", "p90"}` a length may give (docs/plan-format.md, serving.workload).
inline constexpr double kMaxLogNormalP90OverMean = 2.2735;

// The longest request a distribution names: a count, a log-normal's mean (the sampler cuts the
// rare longer draws at serving.context, docs/formulas-serving.md), a histogram's longest bin
// with weight.
double longestTokens(const LengthDistribution& d);

// Mean tokens of a distribution (a log-normal: its mean before the cut at the context).
double meanTokens(const LengthDistribution& d);

} // namespace envelope
