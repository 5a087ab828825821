// Honest outputs (issue 11 items 1, 5, 6, 10): a plan that does not fit shows no real-looking
// throughput or cost in the result JSON or the text/Markdown reports, the serving verdict names
// the requested concurrency, and a bare parameter count's embeddings stay 16-bit when quantized.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "estimate/estimate.h"
#include "report/textreport.h"
#include "serving/serving.h"

namespace envelope {
namespace {

using namespace envelope::testing;

Plan planFrom(const std::string& text)
{
    const Expected<Plan> plan = readPlan(text, testPresets());
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().toString());
    return plan.ok() ? plan.value() : Plan {};
}

// DeepSeek-V3 (671e9 parameters) on 8 H100s: even ZeRO-3 leaves 16 B x 671e9 / 8 = 1.34 TB of
// states per GPU against 85.5 GB of HBM. The issue saw "to train 1B tokens: 30.2 h, $725".
constexpr const char* kDeepSeekOn8 = R"({"model": "deepseek-v3", "gpu": "h100-sxm",
    "cluster": {"gpus": 8, "gpus_per_node": 8},
    "training": {"zero_stage": 3, "train_tokens": 1e9},
    "serving": {"context": 4096, "concurrency": 8}})";

TEST(InfeasibleOutput, ResultJsonSaysSoAndNullsTimeThroughputAndCost)
{
    const Plan plan = planFrom(kDeepSeekOn8);
    const Estimate e = estimate(plan);
    EXPECT_GT(e.training.perGpu.total(), 16 * 671e9 / 8 * 0.99);
    EXPECT_EQ(e.training.verdict, Verdict::Over);
    const nlohmann::json r = nlohmann::json::parse(writeResult(plan, e));
    const nlohmann::json& t = r.at("training");
    EXPECT_EQ(t.at("verdict"), "over");
    EXPECT_EQ(t.at("fits"), false);
    EXPECT_EQ(t.at("throughput_valid"), false);
    for (const char* key : { "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "train_time_s",
             "gpu_hours", "cost", "mfu", "hfu" })
        EXPECT_TRUE(t.at(key).is_null()) << key;
    // 1.34 TB of bf16 weights on one GPU: the serving plan does not fit either.
    const nlohmann::json& s = r.at("serving");
    EXPECT_EQ(s.at("fits"), false);
    EXPECT_EQ(s.at("fits_weights"), false);
    EXPECT_EQ(s.at("throughput_valid"), false);
    EXPECT_TRUE(s.at("decode_tokens_per_s").is_null());
    EXPECT_TRUE(s.at("itl_s").is_null());
}

// Llama-3 8B PPO with all five roles colocated on 8 H100s (tests/data/plans/hard): during
// generation each GPU holds the trainer's and critic's states (weights, gradients, optimizer:
// 16 B x 8.03e9 / 8 x 2 = 32 GB before activations) beside the engine's share of
// 0.9 x 85.5 GB: more than the 85.5 GB it has, so no step runs.
TEST(InfeasibleOutput, RlJobThatDoesNotFitNullsItsStepAndRate)
{
    std::ifstream in(
        std::string(ENVELOPE_TEST_DATA_DIR) + "/plans/hard/llama-3-8b-ppo-colocated.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Plan plan = planFrom(text);
    const Estimate e = estimate(plan);
    ASSERT_FALSE(e.rl.fits);
    // Trainer and critic states, 16 B/param sharded over 8, beside the engine's 0.9 share.
    EXPECT_GT(e.rl.colocatedPeakBytes, 2 * 16 * 8.03e9 / 8 + 0.9 * 85.5e9 * 0.95);
    const nlohmann::json r = nlohmann::json::parse(writeResult(plan, e)).at("rl");
    EXPECT_EQ(r.at("throughput_valid"), false);
    for (const char* key : { "rollout_s", "reference_s", "train_s", "step_s", "steps_per_hour" })
        EXPECT_TRUE(r.at(key).is_null()) << key;
    const std::string report
        = report::formatReport(plan, e, ByteUnits::GB, report::ReportFormat::Text);
    const std::string rlStep = report.substr(report.find("RL step"));
    EXPECT_NE(rlStep.find("steps per hour"), std::string::npos);
    EXPECT_EQ(rlStep.find("steps per hour  48"), std::string::npos) << rlStep;
    EXPECT_NE(rlStep.find("does not fit"), std::string::npos) << rlStep;
}

TEST(InfeasibleOutput, TextAndMarkdownMarkDoesNotFitInsteadOfFigures)
{
    const Plan plan = planFrom(kDeepSeekOn8);
    const Estimate e = estimate(plan);
    for (report::ReportFormat format :
        { report::ReportFormat::Text, report::ReportFormat::Markdown }) {
        const std::string text = report::formatReport(plan, e, ByteUnits::GB, format);
        EXPECT_EQ(text.find("USD"), std::string::npos) << text;
        EXPECT_EQ(text.find("tokens/s"), std::string::npos) << text;
        EXPECT_NE(text.find("over: does not fit"), std::string::npos) << text;
    }
}

TEST(ServingOutput, ConcurrencyAboveMaxSequencesIsNoInEveryOutput)
{
    // Llama-2 7B at 4096 tokens admits 28 sequences on one H100 (test_verdicts.cpp works it out).
    const Plan plan = planFrom(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "serving": {"context": 4096, "concurrency": 32}})");
    const Estimate e = estimate(plan);
    const nlohmann::json s = nlohmann::json::parse(writeResult(plan, e)).at("serving");
    EXPECT_EQ(s.at("max_sequences"), 28);
    EXPECT_EQ(s.at("fits"), false);
    EXPECT_EQ(s.at("fits_weights"), true);
    EXPECT_TRUE(s.at("decode_tokens_per_s").is_null());
    const std::string text
        = report::formatReport(plan, e, ByteUnits::GB, report::ReportFormat::Text);
    EXPECT_NE(text.find("no: 32 sequences requested, at most 28 fit"), std::string::npos) << text;
}

TEST(TrainingOutput, TightPlanKeepsItsFiguresAndSaysTight)
{
    // Llama-2 7B, ZeRO-3 on 8 H100s with usable_fraction 0.01: any real total is above 1% of HBM
    // (855 MB) and below HBM, so the verdict is tight and the figures stay.
    const Plan plan = planFrom(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "cluster": {"gpus": 8}, "training": {"zero_stage": 3, "usable_fraction": 0.01}})");
    const Estimate e = estimate(plan);
    const nlohmann::json t = nlohmann::json::parse(writeResult(plan, e)).at("training");
    EXPECT_EQ(t.at("verdict"), "tight");
    EXPECT_EQ(t.at("usable_bytes"), 855208100); // 85,520,809,984 x 0.01
    EXPECT_EQ(t.at("throughput_valid"), true);
    EXPECT_TRUE(t.at("step_time_s").is_number());
    const std::string text
        = report::formatReport(plan, e, ByteUnits::GB, report::ReportFormat::Text);
    EXPECT_NE(text.find("tight: "), std::string::npos) << text;
}

TEST(Warnings, TravelWithTheEstimateSoEveryOutputShowsThem)
{
    // Llama-3 8B has 8192 positions (config.json max_position_embeddings).
    const Plan plan = planFrom(R"({"model": "llama-3-8b", "gpu": "h100-sxm",
        "training": {"seq_len": 32768}})");
    const Estimate e = estimate(plan);
    ASSERT_FALSE(e.warnings.empty());
    EXPECT_NE(std::find(e.warnings.begin(), e.warnings.end(),
                  "training.seq_len = 32768 exceeds the model's 8192 positions"),
        e.warnings.end());
}

TEST(ColocatedRl, TheClusterIsTheBudgetAndNoSplitIsSuggested)
{
    // Issue 11: every role at 8 GPUs on an 8-GPU cluster read "on 40 x H100" with a suggested
    // 12 + 4 split. Colocated, all roles share the same 8 GPUs.
    const Plan plan = planFrom(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "cluster": {"gpus": 8, "gpus_per_node": 8},
        "training": {"zero_stage": 3},
        "rl": {"algorithm": "ppo", "placement": "colocated", "trainer_gpus": 8,
               "reference_gpus": 8, "rollout_gpus": 8, "critic_gpus": 8, "reward_gpus": 8}})");
    const Estimate e = estimate(plan);
    EXPECT_EQ(e.rl.totalGpus, 8);
    for (const RoleEstimate& role : e.rl.perRole)
        EXPECT_EQ(role.gpus, 8) << role.role;
    EXPECT_EQ(e.rl.suggestedRolloutGpus, 0);
    EXPECT_EQ(e.rl.suggestedTrainerGpus, 0);
    const nlohmann::json r = nlohmann::json::parse(writeResult(plan, e)).at("rl");
    EXPECT_EQ(r.at("total_gpus"), 8);
    EXPECT_EQ(r.at("placement"), "colocated");
    EXPECT_TRUE(r.at("colocated_peak_bytes").is_number_integer());
    const std::string text
        = report::formatReport(plan, e, ByteUnits::GB, report::ReportFormat::Text);
    EXPECT_NE(text.find("colocated on 8 GPUs"), std::string::npos) << text;
    EXPECT_NE(text.find("colocated peak"), std::string::npos) << text;
    EXPECT_EQ(text.find("balanced split"), std::string::npos) << text;
}

TEST(BudgetSolverOutput, AnswersAppearInJsonAndText)
{
    // Seed 001 ex. 3 style: 2e12 tokens of a 7B model in 30 days on H100s at 0.45: the GPUs
    // for the deadline, the GPUs a budget affords and the MFU the deadline needs are reported.
    const Plan plan = planFrom(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "training": {"zero_stage": 3, "deadline_s": 2592000, "budget_usd": 100000}})");
    const Estimate e = estimate(plan);
    ASSERT_TRUE(e.compute.gpusForDeadline.has_value());
    ASSERT_TRUE(e.compute.affordableGpus.has_value());
    // 100,000 USD / (3 USD x 720 h) = 46.3 -> 46 GPUs.
    EXPECT_EQ(*e.compute.affordableGpus, 46);
    const nlohmann::json t = nlohmann::json::parse(writeResult(plan, e)).at("training");
    EXPECT_EQ(t.at("gpus_for_deadline"), *e.compute.gpusForDeadline);
    EXPECT_EQ(t.at("affordable_gpus"), 46);
    EXPECT_TRUE(t.at("required_mfu").is_number());
    const std::string text
        = report::formatReport(plan, e, ByteUnits::GB, report::ReportFormat::Text);
    EXPECT_NE(text.find("GPUs the budget affords"), std::string::npos) << text;
    EXPECT_NE(text.find("GPUs for the deadline"), std::string::npos) << text;
    EXPECT_NE(text.find("MFU the deadline requires"), std::string::npos) << text;
}

TEST(QuantizedServing, BareParameterCountKeepsItsShapesEmbeddingsAtSixteenBits)
{
    // docs/formulas-serving.md: a bare count is spread over a standard shape; as GPTQ/AWQ (and
    // seed 002: "Linear layers are quantized; LayerNorm, embed, lm_head stay in FP16") its
    // embedding and LM head stay 16-bit: weights = linear x (0.5 + 2.5/128) + 2 x the rest.
    const Plan plan = planFrom(R"({"model": {"params": 7e9}, "gpu": "h100-sxm",
        "serving": {"weight_bits": 4}})");
    const ParamCounts c = countParameters(plan.model.arch);
    const double kept = c.embedding + c.lmHead + c.positions + c.finalNorm
        + plan.model.arch.layers * c.normsPerLayer;
    ASSERT_GT(c.embedding, 0);
    const double bytes = (7e9 - kept) * (0.5 + 2.5 / 128) + 2 * kept;
    EXPECT_NEAR(estimate(plan).serving.weightsBytesPerGpu, bytes, 1.0);
    EXPECT_GT(bytes, 7e9 * (0.5 + 2.5 / 128)); // more than "all of it quantized"
}

} // namespace
} // namespace envelope
