// Issue 28: the RL job as OpenRLHF v0.11.0 runs it (`python3 -m openrlhf.cli.train_ppo_ray`).
// Expected flags are the plan's fields under the names openrlhf/cli/train_ppo_ray.py declares,
// written out by hand; tests/cli/check_engine_conformance.py checks every preset's export against
// that file's flags and asserts (tests/data/engines/openrlhf-v0.11.0.json).
#include <gtest/gtest.h>

#include <map>

#include "export/args.h"
#include "export_fixtures.h"

namespace envelope::testing {
namespace {

std::map<std::string, std::string> flagsOf(const EngineConfig& c)
{
    std::string text = c.text;
    const std::size_t at = text.find("python3 -m openrlhf.cli.train_ppo_ray");
    EXPECT_NE(at, std::string::npos) << text;
    text = text.substr(at + std::string("python3 -m openrlhf.cli.train_ppo_ray").size());
    for (std::size_t p = text.find("\\\n"); p != std::string::npos; p = text.find("\\\n"))
        text.replace(p, 2, " ");
    std::map<std::string, std::string> out;
    const Expected<std::vector<exportdetail::Argument>> args = exportdetail::parseArguments(text);
    EXPECT_TRUE(args.ok()) << (args.ok() ? "" : args.error().toString());
    if (!args.ok())
        return out;
    for (const exportdetail::Argument& a : *args) {
        EXPECT_EQ(out.count(a.flag), 0u) << a.flag;
        out[a.flag] = a.value.value_or("");
    }
    return out;
}

// GRPO, 8 colocated GPUs: every role on the actor's placement group, the engines filling it.
TEST(ExportOpenRlhf, GrpoColocatedFillsTheActorsGpusWithEngines)
{
    const Plan plan = defaultPlanWith({ "model=\"qwen2.5-7b\"", "cluster.gpus=8",
        "training.zero_stage=3", "training.micro_batch=1", "training.recompute=\"full\"",
        "serving.tp=2", "serving.gpu_memory_utilization=0.5", "rl.algorithm=\"grpo\"",
        "rl.placement=\"colocated\"", "rl.trainer_gpus=8", "rl.reference_gpus=8",
        "rl.rollout_gpus=8", "rl.prompts_per_step=64", "rl.group_size=8", "rl.prompt_len=1024",
        "rl.response_len=15360" });
    const EngineConfig c = exportOf(plan, Engine::OpenRlhf);
    EXPECT_EQ(c.fileName, "openrlhf_train_ppo.sh");
    const std::map<std::string, std::string> expected {
        { "--actor.model_name_or_path", "Qwen/Qwen2.5-7B" },
        { "--reward.remote_url", "REWARD_URL" },
        { "--data.prompt_dataset", "DATA" },
        { "--actor.num_nodes", "1" },
        { "--actor.num_gpus_per_node", "8" },
        { "--ref.num_nodes", "1" },          // colocated: the actor's group (asserted equal)
        { "--ref.num_gpus_per_node", "8" },
        { "--vllm.num_engines", "4" },       // 8 GPUs / tp 2 (asserted = actor GPUs)
        { "--vllm.tensor_parallel_size", "2" },
        { "--vllm.gpu_memory_utilization", "0.5" },
        { "--train.colocate_all", "" },
        { "--vllm.enable_sleep", "" },
        { "--rollout.batch_size", "64" },
        { "--rollout.n_samples_per_prompt", "8" },
        { "--train.batch_size", "512" },     // 64 x 8 samples: one update per step
        { "--train.micro_batch_size", "1" },
        { "--rollout.micro_batch_size", "1" },
        { "--data.max_len", "16384" },       // 1024 + 15360
        { "--rollout.max_new_tokens", "15360" },
        { "--algo.advantage.estimator", "group_norm" },
        { "--algo.kl.use_loss", "" },
        { "--algo.kl.estimator", "k3" },
        { "--ds.zero_stage", "3" },
        { "--actor.gradient_checkpointing_enable", "" },
        { "--ds.param_dtype", "bf16" },
    };
    EXPECT_EQ(flagsOf(c), expected);
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

// PPO on disjoint pools: each role its own placement group, as Envelope sized them.
TEST(ExportOpenRlhf, PpoDisjointPoolsAreTheRolesOwnGroups)
{
    const Plan plan = defaultPlanWith({ "model=\"qwen2.5-7b\"", "cluster.gpus=32",
        "training.zero_stage=3", "serving.tp=2", "rl.algorithm=\"ppo\"",
        "rl.placement=\"disjoint\"", "rl.trainer_gpus=16", "rl.reference_gpus=4",
        "rl.rollout_gpus=6", "rl.critic_gpus=4", "rl.reward_gpus=2", "rl.prompts_per_step=64",
        "rl.group_size=4", "rl.off_policy_pipeline=true", "training.offload_optimizer=true" });
    const std::map<std::string, std::string> f = flagsOf(exportOf(plan, Engine::OpenRlhf));
    EXPECT_EQ(f.at("--actor.num_nodes"), "2");          // 16 GPUs = 2 nodes of 8
    EXPECT_EQ(f.at("--actor.num_gpus_per_node"), "8");
    EXPECT_EQ(f.at("--ref.num_gpus_per_node"), "4");
    EXPECT_EQ(f.at("--critic.num_gpus_per_node"), "4");
    EXPECT_EQ(f.at("--reward.num_gpus_per_node"), "2");
    EXPECT_EQ(f.at("--critic.model_name_or_path"), "Qwen/Qwen2.5-7B");
    EXPECT_EQ(f.at("--reward.model_name_or_path"), "REWARD_MODEL");
    EXPECT_EQ(f.at("--vllm.num_engines"), "3");         // 6 rollout GPUs / tp 2
    EXPECT_EQ(f.at("--algo.advantage.estimator"), "gae");
    EXPECT_EQ(f.count("--train.colocate_all"), 0u);
    EXPECT_EQ(f.count("--algo.kl.use_loss"), 0u);       // PPO: KL in the reward
    EXPECT_EQ(f.count("--train.async_enable"), 1u);     // the off-policy pipeline
    EXPECT_EQ(f.count("--ds.adam_offload"), 1u);
}

TEST(ExportOpenRlhf, WhatTrainPpoRayCannotExpressIsSaid)
{
    const EngineConfig dpo
        = exportOf(defaultPlanWith({ "rl.algorithm=\"dpo\"" }), Engine::OpenRlhf);
    EXPECT_TRUE(anyWarningMentions(dpo, "openrlhf.cli.train_dpo"));
    // 12 trainer GPUs on nodes of 8 are not whole nodes.
    const EngineConfig partial = exportOf(
        defaultPlanWith({ "cluster.gpus=16", "rl.trainer_gpus=12", "rl.rollout_gpus=3" }),
        Engine::OpenRlhf);
    EXPECT_TRUE(anyWarningMentions(partial, "rl.trainer_gpus = 12 is not whole nodes of 8"));
    // 3 rollout GPUs at tp 2: one engine, said.
    const EngineConfig odd = exportOf(
        defaultPlanWith({ "serving.tp=2", "rl.rollout_gpus=3" }), Engine::OpenRlhf);
    EXPECT_TRUE(anyWarningMentions(odd, "3 rollout GPUs are not whole engines"));
    // No KL: no reference pool, init_coef 0.
    const std::map<std::string, std::string> noKl
        = flagsOf(exportOf(defaultPlanWith({ "rl.kl=false" }), Engine::OpenRlhf));
    EXPECT_EQ(noKl.count("--ref.num_nodes"), 0u);
    EXPECT_EQ(noKl.at("--algo.kl.init_coef"), "0");
}

} // namespace
} // namespace envelope::testing

namespace envelope::testing {
namespace {

// rl.update_epochs is train_ppo_ray's --train.max_epochs; OpenRLHF's async pipeline is one step.
TEST(ExportOpenRlhf, UpdateEpochsAreMaxEpochsAndItsAsyncIsOneStep)
{
    const std::map<std::string, std::string> f
        = flagsOf(exportOf(defaultPlanWith({ "rl.update_epochs=3" }), Engine::OpenRlhf));
    EXPECT_EQ(f.at("--train.max_epochs"), "3");
    const EngineConfig stale = exportOf(
        defaultPlanWith({ "rl.staleness=2", "rl.partial_rollouts=true" }), Engine::OpenRlhf);
    EXPECT_TRUE(anyWarningMentions(stale, "rl.staleness = 2, rl.partial_rollouts: OpenRLHF's "
                                          "--train.async_enable overlaps one step"));
    EXPECT_EQ(flagsOf(stale).count("--train.async_enable"), 1u);
    // A fraction of a step is not OpenRLHF's whole-step pipeline: written on-policy, said.
    const EngineConfig fraction = exportOf(
        defaultPlanWith({ "rl.staleness=0.5" }), Engine::OpenRlhf);
    EXPECT_EQ(flagsOf(fraction).count("--train.async_enable"), 0u);
    EXPECT_TRUE(anyWarningMentions(fraction, "rl.staleness = 0.5: OpenRLHF's "
                                             "--train.async_enable overlaps a whole step"));
}

// rl.updates_per_sync N: N optimizer steps per rollout, --train.batch_size = completions / N
// (the default plan's 8 prompts x 8 = 64 completions: 16 per update at N = 4).
TEST(ExportOpenRlhf, UpdatesPerSyncSplitTheTrainBatch)
{
    const EngineConfig c
        = exportOf(defaultPlanWith({ "rl.updates_per_sync=4" }), Engine::OpenRlhf);
    EXPECT_EQ(flagsOf(c).at("--train.batch_size"), "16");
    EXPECT_EQ(flagsOf(c).at("--rollout.batch_size"), "8");
    EXPECT_TRUE(anyWarningMentions(c, "written as --train.batch_size 16 (4 updates per rollout)"));
}

} // namespace
} // namespace envelope::testing
