// Issue 28: the RL job as verl v0.7.0 runs it (`python3 -m verl.trainer.main_ppo` with Hydra
// overrides). Each expected value below is the plan's field under verl's own name, written out by
// hand from verl/trainer/config/_generated_ppo_trainer.yaml; tests/cli/check_engine_conformance.py
// checks every key and type of every preset's export against that file (tests/data/engines).
#include <gtest/gtest.h>

#include <map>

#include "export/launcher.h"
#include "export_fixtures.h"

namespace envelope::testing {
namespace {

// key -> value of the main_ppo command's overrides.
std::map<std::string, std::string> overridesOf(
    const std::string& text, const char* program = "python3 -m verl.trainer.main_ppo")
{
    std::map<std::string, std::string> out;
    const std::size_t at = text.find(program);
    EXPECT_NE(at, std::string::npos) << text;
    std::size_t pos = text.find('\n', at);
    while (pos != std::string::npos && pos + 1 < text.size()) {
        const std::size_t end = text.find('\n', pos + 1);
        std::string line = text.substr(pos + 1, end - pos - 1);
        pos = end;
        line.erase(0, line.find_first_not_of(' '));
        if (line.ends_with(" \\"))
            line.resize(line.size() - 2);
        const std::size_t eq = line.find('=');
        if (eq == std::string::npos)
            continue;
        EXPECT_EQ(out.count(line.substr(0, eq)), 0u) << line;
        out[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return out;
}

// GRPO on 8 colocated H100s (the RL planner's colocated case): 64 prompts x 8 completions of
// 1024 + 15360 tokens, the engine at half the memory, full recompute, micro-batch 1.
const std::vector<std::string> kGrpo = { "model=\"qwen2.5-7b\"", "cluster.gpus=8",
    "training.zero_stage=3", "training.micro_batch=1", "training.recompute=\"full\"",
    "serving.tp=1", "serving.gpu_memory_utilization=0.5", "rl.algorithm=\"grpo\"",
    "rl.placement=\"colocated\"", "rl.trainer_gpus=8", "rl.reference_gpus=8",
    "rl.rollout_gpus=8", "rl.prompts_per_step=64", "rl.group_size=8", "rl.prompt_len=1024",
    "rl.response_len=15360" };

TEST(ExportVerl, GrpoColocatedIsMainPpoWithThePlansFields)
{
    const Plan plan = defaultPlanWith(kGrpo);
    const EngineConfig c = exportOf(plan, Engine::Verl);
    EXPECT_EQ(c.fileName, "verl_main_ppo.sh");
    EXPECT_EQ(c.launch, "bash verl_main_ppo.sh");
    const std::map<std::string, std::string> expected {
        { "algorithm.adv_estimator", "grpo" },
        { "data.train_files", "DATA_TRAIN" },
        { "data.val_files", "DATA_VAL" },
        { "data.train_batch_size", "64" },          // prompts per step
        { "data.max_prompt_length", "1024" },
        { "data.max_response_length", "15360" },
        { "actor_rollout_ref.model.path", "Qwen/Qwen2.5-7B" },
        { "actor_rollout_ref.model.enable_gradient_checkpointing", "True" },
        { "actor_rollout_ref.actor.ppo_mini_batch_size", "64" }, // one update per step
        { "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "1" },
        { "actor_rollout_ref.actor.use_kl_loss", "True" },       // GRPO's KL to the reference
        { "actor_rollout_ref.actor.fsdp_config.param_offload", "False" },
        { "actor_rollout_ref.actor.fsdp_config.optimizer_offload", "False" },
        { "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu", "1" },
        { "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", "1" },
        { "actor_rollout_ref.rollout.name", "vllm" },
        { "actor_rollout_ref.rollout.tensor_model_parallel_size", "1" },
        { "actor_rollout_ref.rollout.gpu_memory_utilization", "0.5" },
        { "actor_rollout_ref.rollout.n", "8" },                  // completions per prompt
        { "actor_rollout_ref.rollout.max_num_batched_tokens", "8192" },
        { "actor_rollout_ref.rollout.max_num_seqs", "1024" },
        { "trainer.nnodes", "1" },
        { "trainer.n_gpus_per_node", "8" },
        { "trainer.logger", "'[\"console\"]'" },
    };
    EXPECT_EQ(overridesOf(c.text), expected);
    // Envelope's figures head the script: it fits, so the step time is shown.
    EXPECT_NE(c.text.find("# Envelope: 64 prompts x 8 completions of 1024 + 15360 tokens per step; "
                          "every role fits"),
        std::string::npos)
        << c.text;
    EXPECT_NE(c.text.find("steps per hour"), std::string::npos);
    // Colocated, ZeRO-3, full recompute, vLLM, 512 completions on 8 GPUs: nothing to warn.
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(ExportVerl, PpoAddsTheCriticAndTheRewardModel)
{
    std::vector<std::string> sets = kGrpo;
    sets.push_back("rl.algorithm=\"ppo\"");
    sets.push_back("serving.engine=\"sglang\"");
    const std::map<std::string, std::string> o
        = overridesOf(exportOf(defaultPlanWith(sets), Engine::Verl).text);
    EXPECT_EQ(o.at("algorithm.adv_estimator"), "gae");
    EXPECT_EQ(o.at("actor_rollout_ref.actor.use_kl_loss"), "False");
    EXPECT_EQ(o.at("algorithm.use_kl_in_reward"), "True");
    EXPECT_EQ(o.at("critic.model.path"), "Qwen/Qwen2.5-7B");
    EXPECT_EQ(o.at("critic.ppo_micro_batch_size_per_gpu"), "1");
    EXPECT_EQ(o.at("reward_model.enable"), "True");
    EXPECT_EQ(o.at("reward_model.model.path"), "REWARD_MODEL");
    EXPECT_EQ(o.at("actor_rollout_ref.rollout.name"), "sglang");
}

// What main_ppo cannot run as planned is said, each naming the plan field.
TEST(ExportVerl, WhatMainPpoCannotExpressIsSaid)
{
    // The default plan at ZeRO-1: disjoint 4 / 3 / 1 pools, selective recompute.
    const EngineConfig disjoint
        = exportOf(defaultPlanWith({ "training.zero_stage=1" }), Engine::Verl);
    EXPECT_TRUE(anyWarningMentions(disjoint, "rl.placement = \"disjoint\": verl's main_ppo "
                                             "colocates"));
    EXPECT_TRUE(anyWarningMentions(disjoint, "training.zero_stage = 1"));
    EXPECT_TRUE(anyWarningMentions(disjoint, "training.recompute = \"selective\""));
    std::vector<std::string> sets = kGrpo;
    sets.push_back("rl.algorithm=\"dpo\"");
    EXPECT_TRUE(anyWarningMentions(exportOf(defaultPlanWith(sets), Engine::Verl),
        "rl.algorithm = \"dpo\""));
    // 3 prompts x 1 completion on 8 GPUs: verl/utils/config.py asserts the batch divides them.
    sets = kGrpo;
    sets.push_back("rl.prompts_per_step=3");
    sets.push_back("rl.group_size=1");
    EXPECT_TRUE(anyWarningMentions(exportOf(defaultPlanWith(sets), Engine::Verl),
        "= 3 is not a multiple of the 8 GPUs"));
    sets = kGrpo;
    sets.push_back("serving.engine=\"trtllm\"");
    EXPECT_TRUE(anyWarningMentions(exportOf(defaultPlanWith(sets), Engine::Verl),
        "verl's rollout engines are vllm and sglang"));
    // verl starts Ray itself: no launcher wraps it.
    const Plan plan = defaultPlanWith(kGrpo);
    const Expected<EngineConfig> job
        = withLauncher(exportOf(plan, Engine::Verl), plan, Launcher::Slurm);
    ASSERT_FALSE(job.ok());
    EXPECT_NE(job.error().message.find("verl starts Ray"), std::string::npos);
}

// An RL plan that does not fit exports, but says so first and shows no step time.
TEST(ExportVerl, APlanThatDoesNotFitSaysSoFirstAndHasNoStepTime)
{
    std::vector<std::string> sets = kGrpo;
    sets.push_back("model=\"llama-3-70b\"");
    const EngineConfig c = exportOf(defaultPlanWith(sets), Engine::Verl);
    ASSERT_FALSE(c.warnings.empty());
    EXPECT_TRUE(c.warnings.front().starts_with("the plan does not fit")) << c.warnings.front();
    EXPECT_EQ(c.text.find("steps per hour"), std::string::npos) << c.text;
}

} // namespace
} // namespace envelope::testing

namespace envelope::testing {
namespace {

// rl.update_epochs is verl's actor.ppo_epochs (verl/trainer/config/actor/actor.yaml, default 1);
// bounded staleness and partial rollouts are its fully_async recipe, said and not written.
TEST(ExportVerl, UpdateEpochsArePpoEpochsAndAsyncIsSaid)
{
    std::vector<std::string> sets = kGrpo;
    sets.push_back("rl.update_epochs=2");
    const EngineConfig two = exportOf(defaultPlanWith(sets), Engine::Verl);
    EXPECT_EQ(overridesOf(two.text).at("actor_rollout_ref.actor.ppo_epochs"), "2");
    EXPECT_EQ(overridesOf(exportOf(defaultPlanWith(kGrpo), Engine::Verl).text)
                  .count("actor_rollout_ref.actor.ppo_epochs"),
        0u);
    sets = kGrpo;
    sets.push_back("rl.staleness=4");
    sets.push_back("rl.partial_rollouts=true");
    EXPECT_TRUE(anyWarningMentions(exportOf(defaultPlanWith(sets), Engine::Verl),
        "rl.staleness = 4 with rl.partial_rollouts, rl.updates_per_sync = 1: bounded staleness, "
        "partial rollouts and streamed updates are verl's recipe/fully_async_policy"));
}

// rl.updates_per_sync N is verl's mini-batch count per step: ppo_mini_batch_size = 64 prompts /
// 4 = 16 (main_ppo trains the step's batch in train_batch_size / ppo_mini_batch_size updates and
// syncs the engine once); a fractional bound on disjoint pools names fully_async's keys.
TEST(ExportVerl, UpdatesPerSyncAreMiniBatchesAndTheFractionalBoundIsFullyAsyncs)
{
    std::vector<std::string> sets = kGrpo;
    sets.push_back("rl.updates_per_sync=4");
    EXPECT_EQ(overridesOf(exportOf(defaultPlanWith(sets), Engine::Verl).text)
                  .at("actor_rollout_ref.actor.ppo_mini_batch_size"),
        "16");
    // 64 prompts do not split into 3 whole updates: one update, and the warning says so.
    sets.back() = "rl.updates_per_sync=3";
    const EngineConfig three = exportOf(defaultPlanWith(sets), Engine::Verl);
    EXPECT_EQ(overridesOf(three.text).at("actor_rollout_ref.actor.ppo_mini_batch_size"), "64");
    EXPECT_TRUE(anyWarningMentions(three, "does not divide rl.prompts_per_step = 64"));

    sets = kGrpo;
    sets.push_back("rl.placement=\"disjoint\"");
    sets.push_back("rl.trainer_gpus=4");
    sets.push_back("rl.reference_gpus=1");
    sets.push_back("rl.rollout_gpus=3");
    sets.push_back("rl.staleness=0.5");
    sets.push_back("rl.partial_rollouts=true");
    sets.push_back("rl.updates_per_sync=4");
    // Disjoint pools with a fractional bound, partial rollouts and four updates a sync: verl's
    // recipe/fully_async_policy. Its rollouter asserts train_batch_size 0, gen_batch_size 1,
    // no hybrid engine, async rollout with log-probs; a sync every 4 updates of 16 prompts
    // (ppo_mini_batch_size x require_batches) is the plan's 64 prompts a step; the rollout pool
    // of 3 and the trainer's 4 + 1 reference (the recipe runs the reference on the trainer).
    const EngineConfig async = exportOf(defaultPlanWith(sets), Engine::Verl);
    EXPECT_EQ(async.fileName, "verl_fully_async.sh");
    const auto o = overridesOf(async.text, "python3 -m recipe.fully_async_policy.fully_async_main");
    EXPECT_EQ(async.text.find("verl.trainer.main_ppo"), std::string::npos);
    const std::map<std::string, std::string> expected = {
        { "data.train_batch_size", "0" }, { "data.gen_batch_size", "1" },
        { "actor_rollout_ref.hybrid_engine", "False" },
        { "actor_rollout_ref.rollout.mode", "async" },
        { "actor_rollout_ref.rollout.calculate_log_probs", "True" },
        { "actor_rollout_ref.actor.ppo_mini_batch_size", "16" },
        { "async_training.staleness_threshold", "0.5" },
        { "async_training.trigger_parameter_sync_step", "4" },
        { "async_training.require_batches", "1" }, { "async_training.partial_rollout", "True" },
        { "async_training.use_rollout_log_probs", "False" }, // the plan recomputes them
        { "trainer.nnodes", "1" }, { "trainer.n_gpus_per_node", "5" },
        { "rollout.nnodes", "1" }, { "rollout.n_gpus_per_node", "3" },
        { "rollout.total_rollout_steps", "null" } };
    for (const auto& [key, value] : expected) {
        ASSERT_TRUE(o.count(key)) << key << "\n" << async.text;
        EXPECT_EQ(o.at(key), value) << key;
    }
    EXPECT_TRUE(anyWarningMentions(async, "written as 5 trainer GPUs (the plan's 4 trainer + 1 reference)"));
    EXPECT_FALSE(anyWarningMentions(async, "not written"));
    EXPECT_NE(async.launch.find("verl's source tree"), std::string::npos) << async.launch;

    // Colocated, the same bounds stay main_ppo's with the warning naming the recipe's keys.
    sets = kGrpo;
    sets.push_back("rl.staleness=0.5");
    sets.push_back("rl.partial_rollouts=true");
    sets.push_back("rl.updates_per_sync=4");
    const EngineConfig colocated = exportOf(defaultPlanWith(sets), Engine::Verl);
    EXPECT_EQ(colocated.fileName, "verl_main_ppo.sh");
    EXPECT_TRUE(anyWarningMentions(colocated, "async_training.staleness_threshold=0.5, partial_rollout=True"));
}

} // namespace
} // namespace envelope::testing
