// Text and Markdown reports a planning doc can paste (issue 11): they open with the configuration
// a reader needs to reproduce the plan, print only the sections the plan is about (or those
// --sections names), show the budget solver's answers, and the RL step table adds up.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "fixtures.h"
#include "estimate/estimate.h"
#include "report/textreport.h"

namespace envelope {
namespace {

using namespace envelope::testing;
using report::ReportFormat;
using report::ReportSections;

Plan planFrom(const std::string& text)
{
    const Expected<Plan> plan = readPlan(text, testPresets());
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().toString());
    return plan.ok() ? plan.value() : Plan {};
}

std::string markdown(const Plan& plan, const ReportSections& sections = {})
{
    return report::formatReport(
        plan, estimate(plan), ByteUnits::GB, ReportFormat::Markdown, sections);
}

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// The value cell of a two-column Markdown row "| label | value |", or "" when absent.
std::string cell(const std::string& md, const std::string& label)
{
    const std::string open = "| " + label + " | ";
    const std::size_t at = md.find(open);
    if (at == std::string::npos)
        return {};
    const std::size_t from = at + open.size();
    return md.substr(from, md.find(" |\n", from) - from);
}

// 16 H100s, TP 2 x PP 2 (2 virtual stages) with sequence parallelism: DP = 16 / (2 x 2) = 4.
// Global batch = micro-batch 2 x accumulation 4 x DP 4 = 32 sequences of 2048 = 65,536 tokens.
constexpr const char* kLayoutPlan = R"({"name": "layout", "model": "test-7b", "gpu": "h100-sxm",
    "cluster": {"gpus": 16, "gpus_per_node": 8},
    "training": {"recipe": "bf16-mixed-16", "zero_stage": 2, "tp": 2, "pp": 2, "cp": 1, "ep": 1,
        "virtual_stages": 2, "sequence_parallel": true, "micro_batch": 2, "grad_accum": 4,
        "seq_len": 2048, "recompute": "full", "framework": "megatron", "loss": "chunked",
        "mfu": 0.4, "offload_optimizer": true}})";

TEST(Report, MarkdownOpensWithTheConfigurationTable)
{
    const std::string md = markdown(planFrom(kLayoutPlan));
    EXPECT_EQ(
        md.rfind("# layout\n\n## Configuration\n\n| Setting | Value |\n| --- | --- |\n", 0), 0u)
        << md;
    // The configuration comes before any figure.
    EXPECT_LT(md.find("## Configuration"), md.find("## Training memory"));
    EXPECT_EQ(cell(md, "ZeRO stage"), "ZeRO-2");
    EXPECT_EQ(cell(md, "parallelism"),
        "TP 2, PP 2, CP 1, EP 1, DP 4; 2 virtual stages per pipeline rank; sequence parallel on");
    EXPECT_EQ(cell(md, "sequence length"), "2048 tokens");
    EXPECT_EQ(cell(md, "batch"),
        "micro-batch 2 x gradient accumulation 4 x DP 4 = global batch 32 sequences (65.5K "
        "tokens)");
    EXPECT_EQ(cell(md, "recompute"), "full; flash attention");
    EXPECT_EQ(cell(md, "kernel efficiency (mfu)"), "40.0 % (override of the op timing)");
    EXPECT_EQ(cell(md, "offload"), "optimizer states to CPU");
    EXPECT_EQ(cell(md, "optimizer"), "adamw");
    EXPECT_TRUE(has(cell(md, "precision recipe"), "bf16-mixed-16")) << md;
    EXPECT_EQ(cell(md, "framework").rfind("megatron — ", 0), 0u) << cell(md, "framework");
    EXPECT_TRUE(has(cell(md, "framework"), "loss chunked")) << cell(md, "framework");
    EXPECT_EQ(cell(md, "GPUs").rfind("16 x ", 0), 0u) << cell(md, "GPUs");
    EXPECT_TRUE(has(cell(md, "GPUs"), "8 per node")) << cell(md, "GPUs");
}

TEST(Report, TextOpensWithTheConfigurationToo)
{
    const Plan plan = planFrom(kLayoutPlan);
    const std::string text
        = report::formatReport(plan, estimate(plan), ByteUnits::GB, ReportFormat::Text);
    EXPECT_EQ(text.rfind("Configuration\n  name ", 0), 0u) << text;
    EXPECT_TRUE(has(text, "ZeRO-2")) << text;
}

TEST(Report, MoeModelNamesExpertsAndTopK)
{
    // Mixtral-style: 8 experts, 2 active per token.
    Plan plan = planFrom(kLayoutPlan);
    plan.model.arch.moe = MoeConfig {};
    plan.model.arch.moe->experts = 8;
    plan.model.arch.moe->topK = 2;
    plan.model.arch.moe->expertFfnHidden = plan.model.arch.ffnHidden;
    EXPECT_TRUE(has(cell(markdown(plan), "model"), "MoE 8 experts, top-2")) << markdown(plan);
}

TEST(ReportSections, PlanKeysDecideTheSections)
{
    const auto sections = [](const char* json) { return report::planSections(json); };
    EXPECT_EQ(sections(R"({"model": "m", "training": {}})"),
        (ReportSections { true, true, false, false }));
    EXPECT_EQ(sections(R"({"model": "m", "serving": {}})"),
        (ReportSections { false, false, true, false }));
    EXPECT_EQ(sections(R"({"model": "m", "training": {}, "rl": {}})"),
        (ReportSections { true, true, false, true }));
    EXPECT_EQ(
        sections(R"({"model": "m", "training": {}, "serving": {}, "rl": {}})"), ReportSections {});
    // No job section at all: the estimator's default job, training.
    EXPECT_EQ(
        sections(R"({"model": "m", "gpu": "g"})"), (ReportSections { true, true, false, false }));
    EXPECT_EQ(sections("not json"), ReportSections {});
}

TEST(ReportSections, ParsesAListAndNamesTheAllowedValues)
{
    const Expected<ReportSections> two = report::parseReportSections("serving, rl");
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(*two, (ReportSections { false, false, true, true }));
    const Expected<ReportSections> bad = report::parseReportSections("training,memory");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().toString(),
        "--sections: unknown section \"memory\"; allowed: training, compute, serving, rl");
    EXPECT_FALSE(report::parseReportSections("").ok());
    EXPECT_FALSE(report::parseReportSections(",").ok());
}

TEST(ReportSections, TrainingOnlyPlanGetsNoServingRlOrRlWarnings)
{
    // 4 GPUs against the default RL pools (4 + 1 + 3 = 8): planWarnings() warns about the RL
    // pools, which a training-only plan is not about.
    const Plan plan = planFrom(R"({"model": "test-7b", "gpu": "h100-sxm",
        "cluster": {"gpus": 4, "gpus_per_node": 8}, "training": {"zero_stage": 3}})");
    const Estimate e = estimate(plan);
    const std::string rlWarning = "the RL pools use 8 GPUs, more than the cluster's 4";
    ASSERT_TRUE(std::find(e.warnings.begin(), e.warnings.end(), rlWarning) != e.warnings.end());
    const ReportSections trainingOnly = report::planSections(
        R"({"model": "test-7b", "gpu": "h100-sxm", "training": {"zero_stage": 3}})");
    const std::string md = markdown(plan, trainingOnly);
    EXPECT_TRUE(has(md, "## Training memory")) << md;
    EXPECT_TRUE(has(md, "## Training compute")) << md;
    EXPECT_FALSE(has(md, "## Serving")) << md;
    EXPECT_FALSE(has(md, "## RL")) << md;
    EXPECT_FALSE(has(md, "| serving |")) << md; // no serving configuration row either
    EXPECT_FALSE(has(md, rlWarning)) << md;
    EXPECT_FALSE(has(md, "## Warnings")) << md;
    // Asked for, the RL section brings its warning with it.
    const std::string rl = markdown(plan, ReportSections { false, false, false, true });
    EXPECT_TRUE(has(rl, "## RL step")) << rl;
    EXPECT_TRUE(has(rl, rlWarning)) << rl;
    EXPECT_FALSE(has(rl, "## Training memory")) << rl;
    EXPECT_FALSE(has(rl, "| ZeRO stage |")) << rl;
}

TEST(ReportSections, WarningsGoWithTheFieldTheyName)
{
    const ReportSections serving { false, false, true, false };
    EXPECT_TRUE(
        report::warningShown("serving.context = 9000 exceeds the model's 4096 positions", serving));
    EXPECT_FALSE(report::warningShown(
        "training.seq_len = 9000 exceeds the model's 4096 positions", serving));
    EXPECT_FALSE(report::warningShown(
        "the model's 32 layers do not split evenly into pp = 3 stages", serving));
    EXPECT_TRUE(
        report::warningShown("cluster.gpus = 12 is not a whole number of 8-GPU nodes", serving));
}

TEST(Report, RlStepRowsAddUpToTheStep)
{
    // Seed 000's GRPO run with its measured rates: 32 prompts x 8 completions x (512 + 3584)
    // = 1,048,576 tokens. Rollout at 35,000 tok/s: 29.959 s. Reference forward on 1 GPU at 3x
    // the trainer's 200,000 / 4 tok/s per GPU = 150,000 tok/s: 6.990 s. Policy training at
    // 200,000 tok/s: 5.243 s. The weight sync: Llama-3 8B's 2 B x 8.03e9 = 16.06 GB over the
    // node's 450 GB/s NVLink = 35.7 ms; the old log-probs' forward (1.75 s on the trainer's
    // GPUs) runs beside the reference's. Step = 29.959 + 0.036 + 6.990 + 5.243 = 42.23 s.
    const Plan plan = seedGrpoPlan();
    const std::string report = markdown(plan);
    const std::string md = report.substr(report.find("## RL step")); // past the roles' rows
    const char* forwards = "reference forward (old log-probs alongside)";
    EXPECT_EQ(cell(md, "rollout"), "29.96 s") << md;
    EXPECT_EQ(cell(md, "weight sync to the engines"), "35.7 ms") << md;
    EXPECT_EQ(cell(md, forwards), "6.99 s") << md;
    EXPECT_EQ(cell(md, "policy training"), "5.24 s") << md;
    EXPECT_EQ(cell(md, "step (the sum of the rows above)"), "42.23 s") << md;
    const auto seconds = [&](const char* label) {
        const std::string text = cell(md, label);
        const double v = std::atof(text.c_str());
        return text.find(" ms") != std::string::npos ? v / 1000 : v;
    };
    EXPECT_NEAR(seconds("rollout") + seconds("weight sync to the engines") + seconds(forwards)
            + seconds("policy training"),
        seconds("step (the sum of the rows above)"), 0.015);
}

TEST(Report, BudgetSolverAnswersAppearInMarkdown)
{
    // 100,000 USD over a 30-day deadline at 3 USD per H100-hour: 100,000 / (3 x 720) = 46.3
    // -> 46 GPUs the budget affords.
    const Plan plan = planFrom(R"({"model": "test-7b", "gpu": "h100-sxm",
        "training": {"zero_stage": 3, "deadline_s": 2592000, "budget_usd": 100000}})");
    const Estimate e = estimate(plan);
    ASSERT_TRUE(e.compute.gpusForDeadline && e.compute.requiredMfu);
    const std::string md = markdown(plan);
    EXPECT_EQ(cell(md, "GPUs the budget affords"), "46") << md;
    EXPECT_EQ(cell(md, "GPUs for the deadline"), std::to_string(*e.compute.gpusForDeadline)) << md;
    EXPECT_FALSE(cell(md, "MFU the deadline requires").empty()) << md;
    EXPECT_EQ(cell(md, "budget"), "USD 100000") << md;
    EXPECT_EQ(cell(md, "deadline"), "30.0 days") << md;
}

TEST(Report, MinGpusLineSaysItCountsTheFitsVerdict)
{
    const std::string md = markdown(planFrom(kLayoutPlan));
    EXPECT_FALSE(cell(md, "min GPUs (verdict fits)").empty()) << md;
}

} // namespace
} // namespace envelope

namespace envelope {
namespace {

// The configuration names the off-policy bound, the update epochs and the expert layout: each
// moves a figure of the report (issue 11: a reader can reproduce the plan).
TEST(Report, ConfigurationNamesStalenessEpochsAndTheExpertLayout)
{
    const Expected<Plan> plan = readPlan(R"({"name": "async", "model": "mixtral-8x7b",
        "gpu": "h100-sxm", "cluster": {"gpus": 16, "gpus_per_node": 8},
        "training": {"zero_stage": 3, "recompute": "full"},
        "serving": {"tp": 1, "ep": 8, "dp_attention": true, "redundant_experts": 8},
        "rl": {"trainer_gpus": 8, "rollout_gpus": 8, "reference_gpus": 0, "kl": false,
            "staleness": 4, "partial_rollouts": true, "update_epochs": 2}})",
        envelope::testing::testPresets());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    const std::string md = report::formatReport(
        *plan, estimate(*plan), ByteUnits::GB, report::ReportFormat::Markdown);
    const std::string open = "| RL | ";
    const std::size_t at = md.find(open);
    ASSERT_NE(at, std::string::npos) << md;
    const std::string rl = md.substr(at, md.find('\n', at) - at);
    EXPECT_NE(rl.find("; staleness 4, partial rollouts; 2 update epochs"), std::string::npos) << rl;
    EXPECT_NE(md.find("| expert parallel | EP 8, data-parallel attention (8 ranks of TP 1), 8 "
                      "redundant experts |"),
        std::string::npos)
        << md;
}

} // namespace
} // namespace envelope
