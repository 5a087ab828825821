// The parameter count explains itself as the sum of its parts, each part's value substituted.
#include <gtest/gtest.h>

#include <string>

#include "estimate/estimate.h"
#include "plan/presets.h"

namespace envelope {
namespace {

Plan planFor(const char* modelId)
{
    const Expected<PresetLibrary> lib = builtinPresets();
    EXPECT_TRUE(lib.ok());
    Plan plan;
    plan.model.presetId = modelId;
    plan.model.arch = lib->findModel(modelId)->arch;
    plan.gpu.gpu = lib->findGpu("h100-sxm")->gpu;
    return plan;
}

const Explanation* find(const Estimate& e, const std::string& figure)
{
    for (const Explanation& x : e.explain)
        if (x.figure == figure)
            return &x;
    return nullptr;
}

TEST(ModelExplain, Llama2ParamsAreTheSumOfTheirPartsSubstituted)
{
    const Estimate e = estimate(planFor("llama-2-7b"), { .explain = true });
    const Explanation* p = find(e, "model.params");
    ASSERT_NE(p, nullptr);
    // Hand count (Llama-2 7B: V 32000, h 4096, f 11008, 32 MHA layers, untied):
    // embedding 32000 x 4096 = 131,072,000 = 1.311e+08; attention 4 x 4096^2 = 67,108,864;
    // FFN 3 x 4096 x 11008 = 135,266,304; norms 2 x 4096 = 8192; total 6,738,415,616.
    EXPECT_EQ(p->value, 6738415616.0);
    for (const char* part : { "embedding 1.311e+08", "32 dense layers", "attention 6.711e+07",
             "norms 8192", "FFN 1.353e+08", "LM head 1.311e+08", "= 6.738e+09" })
        EXPECT_NE(p->formula.find(part), std::string::npos) << part << " in " << p->formula;
    EXPECT_FALSE(p->source.empty());
}

TEST(ModelExplain, MixtralActiveParamsSubtractTheExpertsATokenSkips)
{
    const Estimate e = estimate(planFor("mixtral-8x7b"), { .explain = true });
    const Explanation* a = find(e, "model.active_params");
    ASSERT_NE(a, nullptr);
    // Published: 46,702,792,704 total, 12,879,925,248 active. Each layer has 8 experts of
    // 3 x 4096 x 14336 = 176,160,768 and a router 4096 x 8: top-2 leaves 6 experts unvisited,
    // 32 x 6 x 176,160,768 = 33,822,867,456 = 3.382e+10.
    EXPECT_EQ(a->value, 12879925248.0);
    EXPECT_NE(a->formula.find("top-2"), std::string::npos) << a->formula;
    EXPECT_NE(a->formula.find("3.382e+10"), std::string::npos) << a->formula;
}

TEST(ModelExplain, AMultimodalCheckpointNamesItsVisionTower)
{
    // gemma-3-27b: text 27,009,346,304 + SigLIP and projector 423,060,336 = 27,432,406,640
    // (4.231e+08); a text token never runs the tower, so active = total - tower.
    const Estimate e = estimate(planFor("gemma-3-27b"), { .explain = true });
    const Explanation* p = find(e, "model.params");
    const Explanation* a = find(e, "model.active_params");
    ASSERT_NE(p, nullptr);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(p->value, 27432406640.0);
    EXPECT_NE(p->formula.find("vision tower 4.231e+08"), std::string::npos) << p->formula;
    EXPECT_EQ(a->value, 27009346304.0);
    EXPECT_NE(a->formula.find("vision tower"), std::string::npos) << a->formula;
}

TEST(ModelExplain, BareCountSaysItIsDeclared)
{
    Plan plan = planFor("llama-2-7b");
    plan.model.arch = standardShapeForParams(13e9);
    const Estimate e = estimate(plan, { .explain = true });
    const Explanation* p = find(e, "model.params");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->value, 13e9);
    EXPECT_NE(p->formula.find("declared"), std::string::npos) << p->formula;
}

} // namespace
} // namespace envelope
