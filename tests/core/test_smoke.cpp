#include <gtest/gtest.h>

#include "estimate/estimate.h"

TEST(Smoke, EstimateOfDefaultPlanRuns)
{
    envelope::Plan plan;
    const envelope::Estimate e = envelope::estimate(plan);
    EXPECT_GE(e.params, 0.0);
}
