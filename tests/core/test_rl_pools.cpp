// Issue 28: every RL pool is checked against its own layout, and one fit rule (the training
// tab's usable line) holds for the RL table, the planner and solve. The two plans are the
// issue's, verbatim; each expectation is a hand figure written out here.
#include <gtest/gtest.h>

#include <string>

#include "estimate/estimate.h"
#include "rl/rl.h"
#include "search/search.h"
#include "fixtures.h"
#include "test_search_fixtures.h"

namespace envelope {
namespace {

using testing::findRole;
using testing::searchPlan;

const char* kLlama70b3d = R"({"name":"Llama-3-70B pretrain 3-D parallel on 64xH100",
 "model":"llama-3-70b","gpu":"h100-sxm","cluster":{"gpus":64,"gpus_per_node":8},
 "training":{"zero_stage":1,"tp":8,"pp":4,"virtual_stages":5,"sequence_parallel":true,
  "seq_len":8192,"micro_batch":1,"grad_accum":64,"recompute":"selective",
  "framework":"megatron","train_tokens":1.5e13}})";

const char* kGrpo7b = R"({"name":"GRPO Qwen2.5-7B 16k rollouts on 8xH100 disjoint",
 "model":"qwen2.5-7b","gpu":"h100-sxm","cluster":{"gpus":8,"gpus_per_node":8},
 "training":{"zero_stage":3,"seq_len":16384,"micro_batch":1,"recompute":"full",
  "framework":"torchtitan"},"serving":{"tp":1,"context":16384},
 "rl":{"algorithm":"grpo","placement":"disjoint","trainer_gpus":4,"reference_gpus":1,
  "rollout_gpus":3,"prompts_per_step":64,"group_size":8,"prompt_len":1024,
  "response_len":15360}})";

TEST(RlPools, TheTrainerIsLaidOutOnItsOwnGpusNotTheTrainingTabs)
{
    // TP 8 x PP 4 needs 32 GPUs per replica; a 4-GPU trainer pool holds none. Before, the pool
    // was sized with the training tab's layout and read "70.9 GB, fits".
    Plan plan = searchPlan(kLlama70b3d);
    plan.rl.trainerGpus = 4;
    const std::optional<Error> error = rlLayoutError(plan);
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->path, "rl.trainer_gpus");
    EXPECT_NE(error->message.find("multiple of 32 GPUs, got 4"), std::string::npos)
        << error->message;

    const RlEstimate r = estimate(plan).rl;
    const RoleEstimate* trainer = findRole(r, "trainer");
    ASSERT_NE(trainer, nullptr);
    EXPECT_EQ(trainer->gpus, 4);
    // Whatever the layout, 70.55e9 params x 16 B (bf16 weights and gradients, fp32 master and
    // two Adam moments) over 4 GPUs is 282 GB per GPU before any activation.
    EXPECT_GE(trainer->perGpu.total(), 70.55e9 * 16 / 4);
    EXPECT_FALSE(trainer->fits);
    EXPECT_EQ(trainer->verdict, Verdict::Over);
    EXPECT_FALSE(trainer->problem.empty());
    EXPECT_FALSE(r.fits);
    EXPECT_NE(r.problem.find("rl.trainer_gpus"), std::string::npos) << r.problem;

    // 32 GPUs lay it out: no error.
    plan.rl.trainerGpus = 32;
    EXPECT_FALSE(rlLayoutError(plan).has_value());
}

TEST(RlPools, ARolloutPoolSmallerThanOneEngineIsRefused)
{
    // A TP-4 engine needs 4 GPUs; 3 cannot host it (before: "fits", and the fastest of TP 1/2/4).
    Plan plan = searchPlan(kGrpo7b);
    plan.serving.tp = 4;
    const std::optional<Error> error = rlLayoutError(plan);
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->path, "rl.rollout_gpus");
    EXPECT_NE(error->message.find("serving.tp = 4"), std::string::npos) << error->message;
    EXPECT_NE(error->message.find("got 3"), std::string::npos) << error->message;
    const RlEstimate r = estimate(plan).rl;
    const RoleEstimate* rollout = findRole(r, "rollout");
    ASSERT_NE(rollout, nullptr);
    EXPECT_FALSE(rollout->fits);
    EXPECT_FALSE(r.fits);
    // TP 8 on 3 GPUs likewise; TP 1 and TP 3-free layouts are fine.
    plan.serving.tp = 8;
    EXPECT_TRUE(rlLayoutError(plan).has_value());
    plan.serving.tp = 1;
    EXPECT_FALSE(rlLayoutError(plan).has_value());
    // Six GPUs at TP 4: one engine and two idle GPUs; the pool must be whole engines.
    plan.serving.tp = 4;
    plan.rl.rolloutGpus = 6;
    EXPECT_TRUE(rlLayoutError(plan).has_value());
    plan.rl.rolloutGpus = 8;
    EXPECT_FALSE(rlLayoutError(plan).has_value());
}

TEST(RlPools, OneFitLineForTheRlTableAndTheTrainingTab)
{
    // The 16k-response GRPO trainer on 4 GPUs, judged by the training tab's rule: move the
    // usable line just under the trainer's total and the RL table must say "tight", as the
    // training tab says of the same bytes, and the planner must not offer it.
    Plan plan = searchPlan(kGrpo7b);
    const RlEstimate before = estimate(plan).rl;
    const RoleEstimate* trainer = findRole(before, "trainer");
    ASSERT_NE(trainer, nullptr);
    const double hbm = plan.gpu.gpu.memoryBytes;
    const double share = trainer->perGpu.total() / hbm;
    ASSERT_LT(share, 1.0);
    plan.training.usableFraction = share - 0.01;
    const RlEstimate after = estimate(plan).rl;
    EXPECT_EQ(findRole(after, "trainer")->verdict, Verdict::Tight);
    EXPECT_TRUE(findRole(after, "trainer")->fits); // within HBM: runs, as training.fits says
    EXPECT_EQ(after.verdict, Verdict::Tight);
    plan.training.usableFraction = share + 0.01;
    EXPECT_EQ(findRole(estimate(plan).rl, "trainer")->verdict, Verdict::Fits);
}

TEST(RlPools, SolveUsesThePlansUsableFraction)
{
    // A plan that accepts 100 % of HBM as its fits line gets it from solve too (before: always
    // 0.9, so it was told to buy more GPUs than its own estimate needs).
    Plan plan = searchPlan(R"({"model":"llama-3-70b","gpu":"h100-sxm",
        "cluster":{"gpus":64,"gpus_per_node":8},"training":{"zero_stage":3,"seq_len":4096}})");
    SearchOptions o;
    o.goal = SearchGoal::MinGpus;
    plan.training.usableFraction = 1.0;
    const SearchResult full = search(plan, o);
    EXPECT_DOUBLE_EQ(full.usableFraction, 1.0);
    plan.training.usableFraction = 0.9;
    const SearchResult ninety = search(plan, o);
    EXPECT_DOUBLE_EQ(ninety.usableFraction, 0.9);
    ASSERT_FALSE(full.candidates.empty());
    ASSERT_FALSE(ninety.candidates.empty());
    EXPECT_LE(full.candidates.front().layout.gpus, ninety.candidates.front().layout.gpus);
    // An explicit option still wins over the plan.
    o.usableFraction = 0.8;
    EXPECT_DOUBLE_EQ(search(plan, o).usableFraction, 0.8);
}

TEST(RlPools, TheColocatedEnginesShareBeatsDisjointPoolsOnLongResponses)
{
    // GRPO 7B, 512 responses of 15,360 tokens on 8 H100s. Disjoint, three TP-1 engines run
    // 171 sequences each; colocated at gpu_memory_utilization 0.5, eight engines run 64 each
    // while the trainer's states wait beside them, and the step is the sum of its phases.
    const Plan disjoint = searchPlan(kGrpo7b);
    const RlEstimate d = estimate(disjoint).rl;
    ASSERT_TRUE(d.fits) << d.problem;
    Plan colocated = disjoint;
    colocated.rl.placement = RlPlacement::Colocated;
    colocated.serving.gpuMemoryUtilization = 0.5;
    const RlEstimate c = estimate(colocated).rl;
    ASSERT_EQ(c.verdict, Verdict::Fits);
    EXPECT_LT(c.stepS, d.stepS);

    // The planner tries the engine's share and finds a colocated layout at least as fast.
    SearchOptions o;
    o.goal = SearchGoal::RlMaxStepsPerHour;
    const RlSearchResult r = searchRl(disjoint, o);
    ASSERT_FALSE(r.candidates.empty());
    const RlCandidate& best = r.candidates.front();
    EXPECT_EQ(best.layout.placement, RlPlacement::Colocated);
    EXPECT_LT(best.layout.gpuMemoryUtilization, 0.9);
    EXPECT_GE(best.stepsPerHour, 3600 / c.stepS * (1 - 1e-9));
}

// Published colocated RL jobs that ran (tests/data/validation/rl/published-rl.json): each fits
// as published, with the engine's share, TP and offload they state.
TEST(RlPublished, VerlsMinimumForQwen2SevenBIsTwoGpusAndOneCannotHostItsEngine)
{
    // verl-min-qwen2-7b-grpo-2xh800: GRPO Qwen2-7B on 2 x H800 (80 GB), colocated, FSDP with
    // param and optimizer offload, vLLM TP 2 at gpu_memory_utilization 0.6, 1,024 prompts x 5,
    // 1K prompt / 1K response, gradient checkpointing. The H800 is an H100 with less NVLink.
    Plan plan = searchPlan(R"({"model":"qwen2.5-7b","gpu":"h100-sxm",
        "cluster":{"gpus":2,"gpus_per_node":8},
        "training":{"zero_stage":3,"seq_len":2048,"micro_batch":1,"recompute":"full",
          "offload_optimizer":true,"offload_params":true,"framework":"torchtitan"},
        "serving":{"tp":2,"context":2048,"gpu_memory_utilization":0.6},
        "rl":{"algorithm":"grpo","placement":"colocated","prompts_per_step":1024,"group_size":5,
          "prompt_len":1024,"response_len":1024}})");
    const RlEstimate two = estimate(plan).rl;
    EXPECT_EQ(two.verdict, Verdict::Fits) << two.problem;
    // One GPU fewer: the published TP-2 engine has no second GPU.
    plan.cluster.gpus = 1;
    const std::optional<Error> e = rlLayoutError(plan);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->path, "cluster.gpus");
    EXPECT_FALSE(estimate(plan).rl.fits);
}

TEST(RlPublished, TrlsColocatedSeventyTwoBFitsOnThirtyTwoGpus)
{
    // trl-qwen2.5-math-72b-grpo-colocate-32gpu: Qwen2.5-Math-72B (80 layers, hidden 8192, FFN
    // 29,568, 64 heads, 8 KV heads, vocab 152,064), 32 GPUs, vLLM colocated at
    // gpu_memory_utilization 0.25 with TP 16 x DP 2, DeepSpeed ZeRO-3 with the optimizer on the
    // CPU. 72.7e9 params x 2 B / 32 = 4.5 GB of weights per GPU resident; the engine's quarter
    // of an 80 GB card holds 145 GB / 16 = 9.1 GB of weights and a KV pool beside them.
    const Plan plan = searchPlan(R"({"model":{"layers":80,"hidden":8192,"ffn_hidden":29568,
          "heads":64,"kv_heads":8,"head_dim":128,"vocab":152064,"tied_embeddings":false,
          "ffn":"swiglu","norm":"rmsnorm","qkv_bias":true,"max_positions":4096},
        "gpu":"h100-sxm","cluster":{"gpus":32,"gpus_per_node":8},
        "training":{"zero_stage":3,"seq_len":1024,"micro_batch":1,"recompute":"full",
          "offload_optimizer":true,"framework":"deepspeed"},
        "serving":{"tp":16,"context":1024,"gpu_memory_utilization":0.25},
        "rl":{"algorithm":"grpo","placement":"colocated","prompts_per_step":32,"group_size":8,
          "prompt_len":512,"response_len":512}})");
    EXPECT_FALSE(rlLayoutError(plan).has_value());
    const RlEstimate r = estimate(plan).rl;
    EXPECT_EQ(r.verdict, Verdict::Fits) << r.problem;
    const RoleEstimate* rollout = findRole(r, "rollout");
    ASSERT_NE(rollout, nullptr);
    EXPECT_NEAR(rollout->perGpu.weights, 2.0 * 72.7e9 / 16, 0.02 * 2.0 * 72.7e9 / 16);
}

} // namespace
} // namespace envelope
