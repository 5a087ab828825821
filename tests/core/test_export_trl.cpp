// Issue 28: the RL job as TRL v1.9.0's GRPOTrainer runs it (`python -m trl.scripts.grpo --config
// trl_grpo.yaml`, started by trl_grpo.sh). Expected values are the plan's fields under the names
// TRL's dataclasses declare (trl/trainer/grpo_config.py, trl/trainer/model_config.py,
// trl/scripts/grpo.py, trl/scripts/vllm_serve.py at v1.9.0), worked out by hand below;
// tests/cli/check_engine_conformance.py checks every preset's export against those dataclasses'
// fields and GRPOConfig's asserts (tests/data/engines/trl-v1.9.0.json).
//
// The batch arithmetic these tests pin, from GRPOConfig.__post_init__ at v1.9.0:
//   steps_per_generation = gradient_accumulation_steps (when neither it nor
//   generation_batch_size is set); generation_batch_size = per_device_train_batch_size *
//   num_processes * steps_per_generation; "generation_batch_size (...) must be divisible by
//   num_generations (...)"; "GRPO requires at least 2 generations per prompt".
#include <gtest/gtest.h>

#include <map>

#include "export/launcher.h"
#include "export_fixtures.h"

namespace envelope::testing {
namespace {

// The YAML's top-level `key: value` lines (a nested section's key maps to "").
std::map<std::string, std::string> keysOf(const EngineConfig& c)
{
    std::map<std::string, std::string> out;
    std::size_t start = 0;
    while (start < c.text.size()) {
        const std::size_t end = c.text.find('\n', start);
        const std::string line = c.text.substr(start, end - start);
        start = end == std::string::npos ? c.text.size() : end + 1;
        if (line.empty() || line[0] == '#' || line[0] == ' ')
            continue;
        const std::size_t colon = line.find(':');
        EXPECT_NE(colon, std::string::npos) << line;
        const std::string key = line.substr(0, colon);
        EXPECT_EQ(out.count(key), 0u) << key;
        out[key] = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    }
    return out;
}

std::string scriptOf(const EngineConfig& c)
{
    for (const EngineConfig::Companion& companion : c.companions)
        if (companion.fileName == "trl_grpo.sh")
            return companion.text;
    ADD_FAILURE() << "no trl_grpo.sh";
    return {};
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// GRPO on 8 colocated H100s: 64 prompts x 8 completions of 1024 + 15360 tokens, the engine at
// half the memory, tensor parallel 2, full recompute, micro-batch 1 (the verl test's plan).
const std::vector<std::string> kColocated = { "model=\"qwen2.5-7b\"", "cluster.gpus=8",
    "training.zero_stage=3", "training.micro_batch=1", "training.recompute=\"full\"",
    "serving.tp=2", "serving.gpu_memory_utilization=0.5", "rl.algorithm=\"grpo\"",
    "rl.placement=\"colocated\"", "rl.trainer_gpus=8", "rl.reference_gpus=8", "rl.rollout_gpus=8",
    "rl.prompts_per_step=64", "rl.group_size=8", "rl.prompt_len=1024", "rl.response_len=15360" };

TEST(ExportTrl, GrpoColocatedIsOneGenerationOfThePlansCompletionsPerUpdate)
{
    const EngineConfig c = exportOf(defaultPlanWith(kColocated), Engine::Trl);
    EXPECT_EQ(c.fileName, "trl_grpo.yaml");
    // 64 prompts x 8 = 512 completions per step; 8 processes of 1 completion each per micro-step
    // need 512 / (1 x 8) = 64 accumulation steps: generation_batch_size = 1 x 8 x 64 = 512,
    // a multiple of num_generations 8 (64 whole groups).
    const std::map<std::string, std::string> expected {
        { "model_name_or_path", "\"Qwen/Qwen2.5-7B\"" },
        { "dataset_name", "\"DATA\"" },
        { "reward_funcs", "[\"REWARD_FUNC\"]" },
        { "per_device_train_batch_size", "1" },
        { "gradient_accumulation_steps", "64" },
        { "num_generations", "8" },
        { "max_completion_length", "15360" },
        { "beta", "0.001" }, // the plan's KL: the reference is loaded
        { "bf16", "true" },
        { "gradient_checkpointing", "true" }, // recompute full
        { "use_vllm", "true" },
        { "vllm_mode", "\"colocate\"" },
        { "vllm_tensor_parallel_size", "2" }, // serving.tp; 2 divides the 8 processes
        { "vllm_gpu_memory_utilization", "0.5" },
        { "vllm_enable_sleep_mode", "true" }, // the engine released while the trainer runs
        { "vllm_max_model_length", "16384" }, // 1024 + 15360
        { "deepspeed", "" },
    };
    EXPECT_EQ(keysOf(c), expected);
    EXPECT_TRUE(contains(c.text, "  zero_optimization:\n    stage: 3\n"));
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
    // One torchrun job of every GPU, which the launchers can wrap.
    EXPECT_TRUE(contains(scriptOf(c),
        "\ntorchrun --standalone --nproc-per-node 8 -m trl.scripts.grpo --config trl_grpo.yaml\n"));
    EXPECT_EQ(c.program, "-m trl.scripts.grpo --config trl_grpo.yaml");
    EXPECT_EQ(c.launch, "bash trl_grpo.sh");
}

// Disjoint pools on one node: trl vllm-serve on the rollout GPUs, the trainer on the next ones.
TEST(ExportTrl, DisjointPoolsAreAServerAndATrainerOnTheirOwnGpus)
{
    const Plan plan = defaultPlanWith({ "model=\"qwen2.5-7b\"", "cluster.gpus=8",
        "training.micro_batch=2", "training.recompute=\"none\"", "serving.tp=2",
        "rl.placement=\"disjoint\"", "rl.trainer_gpus=4", "rl.rollout_gpus=2",
        "rl.reference_gpus=0", "rl.prompts_per_step=32", "rl.group_size=8" });
    const EngineConfig c = exportOf(plan, Engine::Trl);
    const std::map<std::string, std::string> keys = keysOf(c);
    // 32 x 8 = 256 completions; 4 processes x 2 per micro-step = 8: 256 / 8 = 32 steps.
    EXPECT_EQ(keys.at("per_device_train_batch_size"), "2");
    EXPECT_EQ(keys.at("gradient_accumulation_steps"), "32");
    EXPECT_EQ(keys.at("beta"), "0.0"); // no reference GPUs: no KL
    EXPECT_EQ(keys.at("gradient_checkpointing"), "false"); // TRL's default is true
    EXPECT_EQ(keys.at("vllm_mode"), "\"server\"");
    EXPECT_EQ(keys.at("vllm_server_port"), "8000");
    // The colocate-only keys are the server's flags here.
    EXPECT_EQ(keys.count("vllm_tensor_parallel_size"), 0u);
    EXPECT_EQ(keys.count("vllm_gpu_memory_utilization"), 0u);
    const std::string script = scriptOf(c);
    EXPECT_TRUE(contains(script,
        "CUDA_VISIBLE_DEVICES=0,1 trl vllm-serve \\\n"
        "  --model Qwen/Qwen2.5-7B \\\n"
        "  --tensor_parallel_size 2 \\\n"
        "  --data_parallel_size 1 \\\n"
        "  --gpu_memory_utilization 0.9 \\\n"
        "  --max_model_len 4096 \\\n" // 512 + 3584
        "  --port 8000 &\n"))
        << script;
    EXPECT_TRUE(contains(script,
        "CUDA_VISIBLE_DEVICES=2,3,4,5 torchrun --standalone --nproc-per-node 4 -m "
        "trl.scripts.grpo --config trl_grpo.yaml\n"))
        << script;
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
    // Two jobs: no launcher writes them.
    EXPECT_TRUE(c.program.empty());
    const Expected<EngineConfig> job = withLauncher(c, plan, Launcher::Slurm);
    ASSERT_FALSE(job.ok());
    EXPECT_TRUE(contains(job.error().message, "trl vllm-serve")) << job.error().message;
}

// Pools over several nodes: the script takes a role, the trainer's nodes meet at MASTER_ADDR.
TEST(ExportTrl, MultiNodePoolsAreRolesOfOneScript)
{
    const Plan plan = defaultPlanWith({ "model=\"llama-3-70b\"", "cluster.gpus=24", "serving.tp=8",
        "rl.trainer_gpus=16", "rl.rollout_gpus=8", "rl.reference_gpus=0", "rl.prompts_per_step=64",
        "rl.group_size=8" });
    const EngineConfig c = exportOf(plan, Engine::Trl);
    const std::string script = scriptOf(c);
    EXPECT_TRUE(contains(script,
        "server)\n  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 exec trl "
        "vllm-serve \\\n"))
        << script;
    EXPECT_TRUE(contains(script, "exec torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d"))
        << script;
    EXPECT_TRUE(contains(script, "--config trl_grpo.yaml --vllm_server_host \"$VLLM_SERVER_HOST\""))
        << script;
    // 512 completions over 16 processes of 1: 32 accumulation steps.
    EXPECT_EQ(keysOf(c).at("gradient_accumulation_steps"), "32");
}

// A step that is not a whole number of micro-steps: the nearest count TRL accepts, said.
TEST(ExportTrl, AStepTrlCannotSplitIsRoundedToWholeGroupsAndSaid)
{
    std::vector<std::string> sets = kColocated;
    sets.push_back("rl.prompts_per_step=10");
    sets.push_back("rl.group_size=6");
    const EngineConfig c = exportOf(defaultPlanWith(sets), Engine::Trl);
    // 10 x 6 = 60 completions over 8 processes of 1: 7 steps make 56 (56 % 6 = 2), 8 make 64
    // (64 % 6 = 4), 9 make 72 = 12 groups of 6, the first that GRPOConfig accepts.
    EXPECT_EQ(keysOf(c).at("gradient_accumulation_steps"), "9");
    EXPECT_TRUE(anyWarningMentions(c, "TRL trains 72 completions (12 prompts) per step"));
}

TEST(ExportTrl, WhatGrpoTrainerCannotRunAsPlannedIsSaid)
{
    const EngineConfig ppo = exportOf(defaultPlanWith({ "rl.algorithm=\"ppo\"" }), Engine::Trl);
    EXPECT_TRUE(anyWarningMentions(ppo, "TRL's GRPOTrainer has no critic"));
    EXPECT_EQ(keysOf(ppo).at("reward_model_name_or_path"), "\"REWARD_MODEL\"");
    const EngineConfig dpo = exportOf(defaultPlanWith({ "rl.algorithm=\"dpo\"" }), Engine::Trl);
    EXPECT_TRUE(anyWarningMentions(dpo, "DPOTrainer"));
    const EngineConfig async
        = exportOf(defaultPlanWith({ "rl.off_policy_pipeline=true" }), Engine::Trl);
    EXPECT_TRUE(anyWarningMentions(async, "AsyncGRPOTrainer"));
    // The default plan's reference pool: TRL keeps the reference in the trainer's processes.
    const EngineConfig reference = exportOf(defaultPlanWith({}), Engine::Trl);
    EXPECT_TRUE(anyWarningMentions(reference, "rl.reference_gpus = 1: TRL keeps the reference"));
    // 3 rollout GPUs of a dense model at tp 1: one engine, the rest idle.
    EXPECT_TRUE(anyWarningMentions(reference, "runs a dense model as one engine"));
    EXPECT_TRUE(contains(scriptOf(reference), "--data_parallel_size 1"));
    // An MoE model's engines are trl vllm-serve's data-parallel ones.
    const EngineConfig moe
        = exportOf(defaultPlanWith({ "model=\"mixtral-8x7b\"", "cluster.gpus=16", "serving.tp=2",
                       "rl.trainer_gpus=8", "rl.rollout_gpus=4" }),
            Engine::Trl);
    EXPECT_TRUE(contains(scriptOf(moe), "--data_parallel_size 2 \\\n")) << scriptOf(moe);
    EXPECT_FALSE(anyWarningMentions(moe, "dense model"));
    const EngineConfig lonely = exportOf(defaultPlanWith({ "rl.group_size=1" }), Engine::Trl);
    EXPECT_TRUE(anyWarningMentions(lonely, "refuses num_generations below 2"));
    // serving.tp 4 does not divide 6 colocated processes (nor, Envelope says, the pool).
    const EngineConfig uneven = exportOf(defaultPlanWith({ "model=\"qwen2.5-7b\"", "cluster.gpus=6",
                                             "serving.tp=4", "rl.placement=\"colocated\"" }),
        Engine::Trl);
    EXPECT_TRUE(anyWarningMentions(uneven, "serving.tp = 4 does not divide the 6 training"));
}

TEST(ExportTrl, SkippingTheOldLogProbForwardIsASettingNotAWarning)
{
    std::vector<std::string> sets = kColocated;
    sets.push_back("rl.old_log_prob_forward=false");
    const EngineConfig c = exportOf(defaultPlanWith(sets), Engine::Trl);
    EXPECT_EQ(keysOf(c).at("vllm_importance_sampling_correction"), "false");
    EXPECT_FALSE(anyWarningMentions(c, "old_log_prob_forward"));
}

TEST(ExportTrl, ShardingLoraAndPrecisionAreTheTrainersKeys)
{
    // ZeRO-0 is DDP: no DeepSpeed section, and nothing to offload with.
    const EngineConfig ddp
        = exportOf(defaultPlanWith({ "training.zero_stage=0", "training.offload_optimizer=true" }),
            Engine::Trl);
    EXPECT_EQ(keysOf(ddp).count("deepspeed"), 0u);
    EXPECT_TRUE(anyWarningMentions(ddp, "written as plain DDP"));
    const EngineConfig offload
        = exportOf(defaultPlanWith({ "training.zero_stage=2", "training.offload_optimizer=true" }),
            Engine::Trl);
    EXPECT_TRUE(
        contains(offload.text, "    stage: 2\n    offload_optimizer:\n      device: \"cpu\"\n"));
    const EngineConfig lora
        = exportOf(defaultPlanWith({ R"(training.lora={"rank": 8, "alpha": 16, "base_bits": 4})" }),
            Engine::Trl);
    const std::map<std::string, std::string> keys = keysOf(lora);
    EXPECT_EQ(keys.at("use_peft"), "true");
    EXPECT_EQ(keys.at("lora_r"), "8");
    EXPECT_EQ(keys.at("lora_alpha"), "16");
    EXPECT_EQ(keys.at("load_in_4bit"), "true");
    EXPECT_TRUE(contains(keys.at("lora_target_modules"), "\"q_proj\""));
    EXPECT_FALSE(anyWarningMentions(lora, "cannot express LoRA"));
    const EngineConfig fp16
        = exportOf(defaultPlanWith({ "training.recipe=\"fp16-mixed\"" }), Engine::Trl);
    EXPECT_EQ(keysOf(fp16).at("bf16"), "false");
    EXPECT_EQ(keysOf(fp16).at("fp16"), "true");
}

TEST(ExportTrl, AColocatedJobIsATorchrunLaunchersProgram)
{
    const Plan plan = defaultPlanWith(kColocated);
    const Expected<EngineConfig> job
        = withLauncher(exportOf(plan, Engine::Trl), plan, Launcher::Torchrun);
    ASSERT_TRUE(job.ok()) << job.error().toString();
    EXPECT_TRUE(contains(job->companions.back().text,
        "torchrun --standalone --nproc-per-node 8 -m trl.scripts.grpo --config trl_grpo.yaml"));
}

} // namespace
} // namespace envelope::testing

namespace envelope::testing {
namespace {

// rl.update_epochs is GRPOConfig's num_iterations (trl/trainer/grpo_config.py, default 1).
TEST(ExportTrl, UpdateEpochsAreNumIterations)
{
    EXPECT_EQ(keysOf(exportOf(defaultPlanWith({ "rl.update_epochs=2" }), Engine::Trl))
                  .at("num_iterations"),
        "2");
    EXPECT_EQ(keysOf(exportOf(defaultPlanWith({}), Engine::Trl)).count("num_iterations"), 0u);
}

// rl.updates_per_sync N: one generation of 512 completions trained in N optimizer steps.
// GRPOConfig: generation_batch_size = per_device x processes x steps_per_generation, and an
// optimizer step every gradient_accumulation_steps: 64 accumulation steps over 4 updates are
// steps_per_generation 64 with gradient_accumulation_steps 64 / 4 = 16.
TEST(ExportTrl, UpdatesPerSyncAreOptimizerStepsPerGeneration)
{
    std::vector<std::string> sets = kColocated;
    sets.push_back("rl.updates_per_sync=4");
    const EngineConfig c = exportOf(defaultPlanWith(sets), Engine::Trl);
    EXPECT_EQ(keysOf(c).at("steps_per_generation"), "64");
    EXPECT_EQ(keysOf(c).at("gradient_accumulation_steps"), "16");
    EXPECT_TRUE(anyWarningMentions(c, "not streamed as completions arrive"));
    // 64 accumulation steps do not split into 3 updates: one update, said.
    sets.back() = "rl.updates_per_sync=3";
    const EngineConfig three = exportOf(defaultPlanWith(sets), Engine::Trl);
    EXPECT_EQ(keysOf(three).count("steps_per_generation"), 0u);
    EXPECT_EQ(keysOf(three).at("gradient_accumulation_steps"), "64");
    EXPECT_TRUE(anyWarningMentions(three, "does not divide the 64 accumulation steps"));
}

} // namespace
} // namespace envelope::testing
