// Plans for the planner tests, read through readPlan with the built-in presets so every field
// is validated the way a user's plan file is.
#pragma once

#include <gtest/gtest.h>

#include <string>

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

} // namespace envelope::testing
