// estimate(plan): every figure the core computes for a Plan, as the Estimate value
// (result/result.h; design.md, "Result JSON").
//
//   Estimate e = estimate(plan);                       // fast path, no explanations
//   Estimate e = estimate(plan, {.explain = true});    // with formulas for every figure
//
// All bytes are per GPU unless named otherwise; times in seconds.
#pragma once

#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

struct EstimateOptions {
    bool explain = false;
    bool training = true;
    bool compute = true;
    bool serving = true;
    bool rl = true;
};

// Everything for one plan. Pure; the plan must have passed validation (planio.h).
Estimate estimate(const Plan& plan, const EstimateOptions& options = {});

}  // namespace envelope
