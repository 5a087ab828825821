// writeResult: every key of design.md's result list is present, bytes are integers, times in
// seconds, observations only when given, explanations carry figure/formula/value/unit/source.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

Plan minimalPlan()
{
    const Expected<Plan> plan = readPlan(kMinimalPlan, testPresets());
    EXPECT_TRUE(plan.ok());
    return plan.ok() ? plan.value() : Plan {};
}

TEST(ResultJson, HasEveryKeyDesignListsEvenWhenFiguresAreZero)
{
    const nlohmann::json r = nlohmann::json::parse(writeResult(minimalPlan(), Estimate {}));
    EXPECT_EQ(r.at("format"), "envelope.result");
    EXPECT_EQ(r.at("version"), 1);
    // design.md, "Result JSON — envelope.result version 1".
    for (const char* pointer :
        { "/model/params", "/model/active_params", "/training/per_gpu_bytes/weights",
            "/training/per_gpu_bytes/gradients", "/training/per_gpu_bytes/optimizer",
            "/training/per_gpu_bytes/activations", "/training/per_gpu_bytes/overhead",
            "/training/per_gpu_bytes/total", "/training/gpu_memory_bytes", "/training/fits",
            "/training/min_gpus", "/training/host_bytes_per_node", "/training/flops_per_token",
            "/training/hardware_flops_per_token", "/training/mfu", "/training/hfu",
            "/training/step_time_s", "/training/tokens_per_s", "/training/train_time_s",
            "/training/gpu_hours", "/training/cost", "/training/communication/dp_s",
            "/training/communication/tp_s", "/training/communication/pp_bubble_fraction",
            "/training/bottleneck", "/serving/kv_bytes_per_token", "/serving/weights_bytes_per_gpu",
            "/serving/kv_budget_bytes", "/serving/max_tokens", "/serving/max_sequences",
            "/serving/decode_tokens_per_s", "/rl/per_role", "/rl/rollout_s", "/rl/train_s",
            "/rl/step_s", "/rl/steps_per_hour", "/rl/bottleneck", "/rl/suggestion_fits", "/explain",
            "/warnings" })
        EXPECT_TRUE(r.contains(nlohmann::json::json_pointer(pointer))) << pointer;
    EXPECT_FALSE(r.at("training").contains("observed_mfu"));
    EXPECT_FALSE(r.at("training").contains("observed_hfu"));
}

TEST(ResultJson, BytesAreIntegersAndTimesAreSeconds)
{
    Estimate e;
    e.params = 6738415616;
    e.training.perGpu.weights = 1234.6; // rounds to the nearest byte
    e.training.perGpu.gradients = 1000;
    e.training.gpuMemoryBytes = 85520809984;
    e.training.verdict = Verdict::Fits; // an "over" plan has no step time (test_verdicts_output)
    e.compute.stepTimeS = 1.5;
    e.compute.trainTimeS = INFINITY; // no throughput: written as null, never as garbage
    e.compute.observedMfu = 0.41;
    e.compute.observedHfu = 0.52;
    RoleEstimate trainer;
    trainer.role = "trainer";
    trainer.gpus = 4;
    trainer.perGpu.weights = 3.5e9;
    trainer.fits = true;
    e.rl.perRole.push_back(trainer);
    e.explain.push_back({ "training.per_gpu_bytes.weights", "P x 2 / 8", 1234.6, "bytes", "ZeRO" });
    e.warnings.push_back("a warning");

    const nlohmann::json r = nlohmann::json::parse(writeResult(minimalPlan(), e));
    const nlohmann::json& t = r.at("training");
    EXPECT_TRUE(t.at("per_gpu_bytes").at("weights").is_number_integer());
    EXPECT_EQ(t.at("per_gpu_bytes").at("weights"), 1235);
    EXPECT_EQ(t.at("per_gpu_bytes").at("total"), 2235); // 1234.6 + 1000, rounded once
    EXPECT_EQ(t.at("gpu_memory_bytes"), 85520809984);
    EXPECT_EQ(r.at("model").at("params"), 6738415616);
    EXPECT_EQ(t.at("step_time_s"), 1.5);
    EXPECT_TRUE(t.at("train_time_s").is_null());
    EXPECT_EQ(t.at("observed_mfu"), 0.41);
    EXPECT_EQ(t.at("observed_hfu"), 0.52);

    const nlohmann::json& role = r.at("rl").at("per_role").at(0);
    EXPECT_EQ(role.at("role"), "trainer");
    EXPECT_EQ(role.at("gpus"), 4);
    EXPECT_EQ(role.at("per_gpu_bytes").at("total"), 3500000000);
    EXPECT_EQ(role.at("fits"), true);

    const nlohmann::json& x = r.at("explain").at(0);
    EXPECT_EQ(x.at("figure"), "training.per_gpu_bytes.weights");
    EXPECT_EQ(x.at("formula"), "P x 2 / 8");
    EXPECT_EQ(x.at("value"), 1234.6);
    EXPECT_EQ(x.at("unit"), "bytes");
    EXPECT_EQ(x.at("source"), "ZeRO");
    EXPECT_EQ(r.at("warnings"), nlohmann::json::array({ "a warning" }));
}

TEST(ResultJson, ArchitectureIsPrintedAsAFullModelObject)
{
    const nlohmann::json arch = nlohmann::json::parse(writeArchitecture(llama2_7bShape()));
    EXPECT_EQ(arch.at("layers"), 32);
    EXPECT_EQ(arch.at("hidden"), 4096);
    EXPECT_EQ(arch.at("heads"), 32);
}

} // namespace
} // namespace envelope
