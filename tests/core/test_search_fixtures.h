// Plans for the planner tests, read through readPlan with the built-in presets so every field
// is validated the way a user's plan file is, and the one check every test makes of what the
// planner offers: the candidate's plan re-validates and re-estimates to the figures it claims.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "search/search.h"

namespace envelope::testing {

inline Plan searchPlan(const std::string& json)
{
    Expected<PresetLibrary> presets = builtinPresets();
    EXPECT_TRUE(presets.ok());
    Expected<Plan> plan = readPlan(json, *presets);
    EXPECT_TRUE(plan.ok()) << plan.error().toString();
    return plan.ok() ? plan.value() : Plan {};
}

// A plan in the design.md format: model and GPU preset ids, cluster and training fields.
inline Plan searchPlan(const std::string& model, const std::string& gpu, int gpus, int gpusPerNode,
    const std::string& training)
{
    return searchPlan(R"({"format": "envelope.plan", "version": 1, "model": ")" + model
        + R"(", "gpu": ")" + gpu + R"(", "cluster": {"gpus": )" + std::to_string(gpus)
        + R"(, "gpus_per_node": )" + std::to_string(gpusPerNode) + R"(}, "training": )" + training
        + "}");
}

// A training candidate: its applied plan validates, estimate() gives exactly its bytes, step
// time, rate and cost, its verdict is the rule written out (fits when the per-GPU total is
// within `usableFraction` of HBM), and the global batch in tokens is the input's.
inline void expectReestimates(
    const Plan& input, const Candidate& c, std::optional<double> usable = std::nullopt)
{
    const Plan plan = applyLayout(input, c.layout);
    const auto invalid = validatePlan(plan);
    EXPECT_FALSE(invalid.has_value()) << invalid->toString();
    const Estimate e = estimate(plan);
    EXPECT_EQ(e.training.perGpu.total(), c.perGpuBytes);
    EXPECT_EQ(e.compute.stepTimeS, c.stepTimeS);
    EXPECT_EQ(e.compute.tokensPerS, c.tokensPerS);
    EXPECT_EQ(e.compute.cost, c.cost);
    // The search's fits line: the option when set, else the plan's training.usable_fraction.
    const double usableFraction = usable ? *usable : input.training.usableFraction;
    EXPECT_EQ(e.training.perGpu.total() <= usableFraction * e.training.gpuMemoryBytes,
        c.verdict == FitVerdict::Fits);
    EXPECT_EQ(e.compute.globalBatchTokens, estimate(input).compute.globalBatchTokens);
}

// A serving candidate: one replica's figures from estimate() of the plan it applies, the fleet
// rate = target concurrency / ITL, and the replicas sharing the target, ceil(target / replicas)
// sequences each.
inline void expectReestimates(const Plan& input, const ServingCandidate& c)
{
    const Plan plan = applyServingLayout(input, c.layout);
    const auto invalid = validatePlan(plan);
    EXPECT_FALSE(invalid.has_value()) << invalid->toString();
    const ServingEstimate s = estimate(plan).serving;
    EXPECT_EQ(s.perGpu.total(), c.perGpuBytes);
    EXPECT_EQ(s.maxSequences, c.maxSequences);
    EXPECT_EQ(s.ttftS, c.ttftS);
    EXPECT_EQ(s.itlS, c.itlS);
    EXPECT_EQ(s.fits, c.fits);
    EXPECT_DOUBLE_EQ(input.serving.concurrency / s.itlS, c.tokensPerS);
    // An engine is tp GPUs, or ep under data-parallel attention (the plan's own count).
    EXPECT_EQ(c.layout.engineGpus(), servingParallel(plan.serving).gpus());
    EXPECT_EQ(c.gpus, c.layout.engineGpus() * c.layout.replicas);
    EXPECT_EQ(c.layout.concurrency,
        (input.serving.concurrency + c.layout.replicas - 1) / c.layout.replicas);
}

// An RL candidate: steps per hour, step, rollout and train times, fit, GPU count and
// bottleneck from estimate() of the plan it applies, within the input's cluster.
inline void expectReestimates(const Plan& input, const RlCandidate& c)
{
    const Plan plan = applyRlLayout(input, c.layout);
    const auto invalid = validatePlan(plan);
    EXPECT_FALSE(invalid.has_value()) << invalid->toString();
    const RlEstimate e = estimate(plan).rl;
    EXPECT_EQ(e.stepsPerHour, c.stepsPerHour);
    EXPECT_EQ(e.stepS, c.stepS);
    EXPECT_EQ(e.rolloutS, c.rolloutS);
    EXPECT_EQ(e.trainS, c.trainS);
    EXPECT_EQ(e.fits, c.fits);
    EXPECT_EQ(e.totalGpus, c.gpus);
    EXPECT_EQ(e.bottleneck == "rollout", c.rolloutBound);
    EXPECT_LE(c.gpus, input.cluster.gpus);
}

} // namespace envelope::testing
