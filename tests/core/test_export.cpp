// Every exporter's output parsed back (JSON with nlohmann, TOML with the core's reader, argument
// lists and vllm command lines split like a shell) and every value checked against figures
// worked out by hand from the plan (the default plan: Llama-2 7B, Touvron et al. 2023 table 1:
// 32 layers, hidden 4096, FFN 11008, 32 heads, vocab 32000; 8 GPUs, micro batch 1, accumulation
// 8, 2e12 tokens of 4096).
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "export/args.h"
#include "export/toml.h"
#include "export_fixtures.h"

namespace envelope::testing {
namespace {

using exportdetail::parseToml;
using exportdetail::splitWords;

std::set<std::string> keysOf(const nlohmann::json& j)
{
    std::set<std::string> keys;
    for (const auto& [k, v] : j.items())
        keys.insert(k);
    return keys;
}

TEST(ExportDeepSpeed, DefaultPlanEveryKey)
{
    const EngineConfig c = exportOf(defaultPlanWith({}), Engine::DeepSpeed);
    const nlohmann::json j = nlohmann::json::parse(c.text);
    EXPECT_EQ(keysOf(j),
        (std::set<std::string> { "train_batch_size", "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps", "bf16", "fp16", "zero_optimization" }));
    EXPECT_EQ(j["train_batch_size"], 64); // 1 x 8 x 8 data-parallel GPUs
    EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 1);
    EXPECT_EQ(j["gradient_accumulation_steps"], 8);
    EXPECT_EQ(j["bf16"], nlohmann::json({ { "enabled", true } }));
    EXPECT_EQ(j["fp16"], nlohmann::json({ { "enabled", false } }));
    EXPECT_EQ(j["zero_optimization"], nlohmann::json({ { "stage", 3 } }));
    // Selective recompute has no DeepSpeed key: said, not dropped.
    EXPECT_TRUE(anyWarningMentions(c, "training.recompute = \"selective\""));
    EXPECT_TRUE(anyWarningMentions(c, "training.seq_len"));
    EXPECT_EQ(c.launch, "deepspeed --num_gpus 8 train.py --deepspeed ds_config.json");
}

TEST(ExportDeepSpeed, OffloadFullRecomputeFp32GradientsTwoNodes)
{
    const Plan plan
        = defaultPlanWith({ "training.offload_optimizer=true", "training.offload_params=true",
            "training.recompute=\"full\"", "training.recipe=\"bf16-mixed-18\"", "cluster.gpus=16",
            "training.micro_batch=2", "training.grad_accum=4" });
    const EngineConfig c = exportOf(plan, Engine::DeepSpeed);
    const nlohmann::json j = nlohmann::json::parse(c.text);
    EXPECT_EQ(j["train_batch_size"], 128); // 2 x 4 x 16
    EXPECT_EQ(j["data_types"]["grad_accum_dtype"], "fp32");
    EXPECT_EQ(j["zero_optimization"]["offload_optimizer"]["device"], "cpu");
    EXPECT_EQ(j["zero_optimization"]["offload_param"]["device"], "cpu");
    EXPECT_TRUE(j.contains("activation_checkpointing"));
    EXPECT_EQ(j["activation_checkpointing"]["partition_activations"], false);
    EXPECT_EQ(c.launch,
        "deepspeed --hostfile hostfile --num_nodes 2 --num_gpus 8 train.py --deepspeed "
        "ds_config.json");
}

TEST(ExportDeepSpeed, ModelParallelismAndFp8AreWarned)
{
    const Plan plan = defaultPlanWith({ "training.tp=2", "training.recipe=\"fp8-deepseek\"" });
    const EngineConfig c = exportOf(plan, Engine::DeepSpeed);
    EXPECT_TRUE(anyWarningMentions(c, "training.tp/pp/cp/ep = 2/1/1/1"));
    EXPECT_TRUE(anyWarningMentions(c, "fp8"));
    EXPECT_EQ(nlohmann::json::parse(c.text)["train_batch_size"], 32); // 1 x 8 x (8 / 2)
}

TEST(ExportTorchTitan, DefaultPlanEveryValue)
{
    const EngineConfig c = exportOf(defaultPlanWith({}), Engine::TorchTitan);
    Expected<nlohmann::json> toml = parseToml(c.text);
    ASSERT_TRUE(toml.ok()) << toml.error().toString();
    const nlohmann::json& t = toml.value();
    EXPECT_EQ(keysOf(t),
        (std::set<std::string> {
            "job", "model", "training", "parallelism", "activation_checkpoint", "compile" }));
    EXPECT_EQ(t["job"]["description"], "Llama-2 7B SFT on 8x H100");
    EXPECT_TRUE(t["model"].empty()); // no torchtitan flavour for Llama 2: a note and a warning
    EXPECT_TRUE(anyWarningMentions(c, "no flavour"));
    EXPECT_EQ(t["training"],
        nlohmann::json(
            { { "local_batch_size", 1 }, { "global_batch_size", 64 }, { "seq_len", 4096 },
                // ceil(2e12 / (64 x 4096)) = ceil(7,629,394.53)
                { "steps", 7629395 }, { "mixed_precision_param", "bfloat16" },
                { "mixed_precision_reduce", "float32" } }));
    EXPECT_EQ(t["parallelism"],
        nlohmann::json({ { "data_parallel_replicate_degree", 1 },
            { "data_parallel_shard_degree", 8 }, { "fsdp_reshard_after_forward", "always" },
            { "tensor_parallel_degree", 1 }, { "pipeline_parallel_degree", 1 },
            { "context_parallel_degree", 1 }, { "expert_parallel_degree", 1 } }));
    EXPECT_EQ(t["activation_checkpoint"],
        nlohmann::json({ { "mode", "selective" }, { "selective_ac_option", "op" } }));
    EXPECT_EQ(t["compile"]["enable"], true);
    EXPECT_NE(c.text.find("# Envelope: training memory per GPU"), std::string::npos);
}

TEST(ExportTorchTitan, ThreeDimensionalFp8Llama3)
{
    // Llama 3 8B (torchtitan flavour "8B") on 8 GPUs: tp 2 x pp 2 (2 chunks each) x dp 2.
    const Plan plan = defaultPlanWith({ "model=\"llama-3-8b\"", "training.tp=2",
        "training.sequence_parallel=true", "training.pp=2", "training.virtual_stages=2",
        "training.recompute=\"every-k\"", "training.recompute_every=2",
        "training.recipe=\"fp8-deepseek\"", "training.zero_stage=2" });
    const EngineConfig c = exportOf(plan, Engine::TorchTitan);
    const nlohmann::json t = parseToml(c.text).value();
    EXPECT_EQ(t["model"],
        nlohmann::json({ { "name", "llama3" }, { "flavor", "8B" },
            { "converters", { "quantize.linear.float8" } } }));
    EXPECT_EQ(t["training"]["local_batch_size"], 8); // micro 1 x 8 micro-batches per pipeline
    EXPECT_EQ(t["training"]["global_batch_size"], 16); // 1 x 8 x dp 2
    EXPECT_EQ(t["parallelism"]["data_parallel_shard_degree"], 2);
    EXPECT_EQ(t["parallelism"]["fsdp_reshard_after_forward"], "never"); // ZeRO-2
    EXPECT_EQ(t["parallelism"]["tensor_parallel_degree"], 2);
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_degree"], 2);
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_schedule"], "Interleaved1F1B");
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_microbatch_size"], 1);
    // 32 layers in 2 x 2 parts of 8, part j on rank j mod 2.
    const nlohmann::json parts = t["parallelism"]["module_fqns_per_model_part"];
    ASSERT_EQ(parts.size(), 4u);
    EXPECT_EQ(parts[0].size(), 9u); // tok_embeddings + layers.0-7
    EXPECT_EQ(parts[1][0], "layers.8");
    EXPECT_EQ(parts[3].size(), 10u); // layers.24-31 + norm + output
    EXPECT_FALSE(t["parallelism"].contains("pipeline_parallel_layers_per_stage"));
    EXPECT_EQ(t["activation_checkpoint"]["selective_ac_option"], "2");
    EXPECT_EQ(t["quantize"]["linear"]["float8"]["enable_fsdp_float8_all_gather"], true);
    EXPECT_FALSE(t.contains("float8"));
}

TEST(ExportMegatron, DefaultPlanEveryArgument)
{
    const EngineConfig c = exportOf(defaultPlanWith({}), Engine::Megatron);
    const std::map<std::string, std::string> expected {
        { "--num-layers", "32" },
        { "--hidden-size", "4096" },
        { "--ffn-hidden-size", "11008" },
        { "--num-attention-heads", "32" },
        { "--max-position-embeddings", "4096" },
        { "--vocab-size", "32000" },
        { "--position-embedding-type", "rope" },
        { "--rotary-base", "10000" },  // Llama 2's base (LlamaConfig's default)
        { "--normalization", "RMSNorm" },
        { "--swiglu", "" },
        { "--disable-bias-linear", "" },
        { "--untie-embeddings-and-output-weights", "" },
        { "--attention-dropout", "0" },
        { "--hidden-dropout", "0" },
        { "--tensor-model-parallel-size", "1" },
        { "--pipeline-model-parallel-size", "1" },
        { "--context-parallel-size", "1" },
        { "--expert-model-parallel-size", "1" },
        { "--micro-batch-size", "1" },
        { "--global-batch-size", "64" },
        { "--seq-length", "4096" },
        { "--train-samples", "488281250" }, // 2e12 / 4096
        { "--recompute-granularity", "selective" },
        { "--use-distributed-optimizer", "" },
        // ZeRO-3 is Megatron-FSDP, with the flags its user guide requires
        // (megatron/core/distributed/fsdp/README: docs "Megatron-FSDP Quick Start").
        { "--use-megatron-fsdp", "" },
        { "--data-parallel-sharding-strategy", "optim_grads_params" },
        { "--no-gradient-accumulation-fusion", "" },
        { "--ckpt-format", "fsdp_dtensor" },
        { "--init-model-with-meta-device", "" },
        { "--bf16", "" },
        { "--grad-reduce-in-bf16", "" },
        { "--attention-backend", "flash" },
    };
    EXPECT_EQ(argumentMap(c.text), expected);
    EXPECT_FALSE(anyWarningMentions(c, "training.zero_stage = 3"));
    EXPECT_NE(c.text.find("leave CUDA_DEVICE_MAX_CONNECTIONS unset"), std::string::npos);
    // ZeRO-2: gradients and optimizer sharded, parameters whole.
    const EngineConfig two = exportOf(defaultPlanWith({ "training.zero_stage=2" }), Engine::Megatron);
    EXPECT_EQ(argumentMap(two.text).at("--data-parallel-sharding-strategy"), "optim_grads");
    // ZeRO-1 is the distributed optimizer alone.
    const EngineConfig one = exportOf(defaultPlanWith({ "training.zero_stage=1" }), Engine::Megatron);
    EXPECT_EQ(argumentMap(one.text).count("--use-megatron-fsdp"), 0u);
}

TEST(ExportMegatron, MixtralWithExpertAndVirtualPipeline)
{
    // Mixtral 8x7B (config.json: 8 experts, top-2, expert FFN 14336, 8 KV heads) on 16 GPUs.
    const Plan plan = defaultPlanWith({ "model=\"mixtral-8x7b\"", "cluster.gpus=16",
        "training.tp=2", "training.pp=2", "training.virtual_stages=4", "training.ep=4",
        "training.sequence_parallel=true", "training.recompute=\"full\"", "training.zero_stage=1",
        "training.recipe=\"bf16-mixed-18\"", "training.offload_optimizer=true" });
    const std::map<std::string, std::string> args
        = argumentMap(exportOf(plan, Engine::Megatron).text);
    EXPECT_EQ(args.at("--group-query-attention"), "");
    EXPECT_EQ(args.at("--num-query-groups"), "8");
    EXPECT_EQ(args.at("--num-experts"), "8");
    EXPECT_EQ(args.at("--moe-router-topk"), "2");
    EXPECT_EQ(args.at("--moe-ffn-hidden-size"), "14336");
    EXPECT_EQ(args.at("--expert-model-parallel-size"), "4");
    EXPECT_EQ(args.at("--num-virtual-stages-per-pipeline-rank"), "4"); // 32 / 2 = 4 x 4 layers
    EXPECT_EQ(args.at("--sequence-parallel"), "");
    EXPECT_EQ(args.at("--global-batch-size"), "32"); // 1 x 8 x dp 4
    EXPECT_EQ(args.at("--recompute-granularity"), "full");
    EXPECT_EQ(args.at("--recompute-method"), "uniform");
    EXPECT_EQ(args.at("--recompute-num-layers"), "1");
    EXPECT_EQ(args.at("--optimizer-cpu-offload"), "");
    EXPECT_EQ(args.at("--use-precision-aware-optimizer"), "");
    EXPECT_EQ(args.count("--grad-reduce-in-bf16"), 0u); // fp32 gradients: Megatron's default
    EXPECT_EQ(args.count("--overlap-grad-reduce"), 0u); // the plan does not ask: Megatron's off
}

// training.overlap_grad_reduce / overlap_param_gather are Megatron's two switches; the
// all-gather overlap needs the distributed optimizer, so at ZeRO-0 it is not written and a
// warning says why.
TEST(ExportMegatron, DpOverlapSwitchesAsTheirFlags)
{
    const Plan on = defaultPlanWith({ "training.framework=\"megatron\"", "training.zero_stage=1",
        "training.overlap_grad_reduce=true", "training.overlap_param_gather=true" });
    const std::map<std::string, std::string> args = argumentMap(exportOf(on, Engine::Megatron).text);
    EXPECT_EQ(args.at("--overlap-grad-reduce"), "");
    EXPECT_EQ(args.at("--overlap-param-gather"), "");
    const Plan ddp = defaultPlanWith({ "training.framework=\"megatron\"", "training.zero_stage=0",
        "training.overlap_grad_reduce=true", "training.overlap_param_gather=true" });
    const EngineConfig c = exportOf(ddp, Engine::Megatron);
    EXPECT_EQ(argumentMap(c.text).count("--overlap-param-gather"), 0u);
    EXPECT_EQ(argumentMap(c.text).at("--overlap-grad-reduce"), "");
    EXPECT_TRUE(anyWarningMentions(c, "training.overlap_param_gather"));
}

TEST(ExportHf, TrainingArgumentsEveryKey)
{
    const EngineConfig c = exportOf(defaultPlanWith({}), Engine::Hf);
    const nlohmann::json j = nlohmann::json::parse(c.text);
    EXPECT_EQ(j,
        nlohmann::json({ { "output_dir", "output" }, { "per_device_train_batch_size", 1 },
            { "gradient_accumulation_steps", 8 }, { "max_steps", 7629395 }, { "bf16", true },
            { "fp16", false }, { "gradient_checkpointing", true },
            { "fsdp", "full_shard auto_wrap" },
            { "fsdp_config",
                { { "backward_prefetch", "backward_pre" }, { "use_orig_params", true },
                    { "activation_checkpointing", false } } },
            { "optim", "adamw_torch_fused" } }));
    EXPECT_TRUE(anyWarningMentions(c, "exported as full"));
    const nlohmann::json z2 = nlohmann::json::parse(
        exportOf(defaultPlanWith({ "training.zero_stage=2", "training.offload_params=true",
                     "training.offload_optimizer=true", "training.recipe=\"bf16-adam8bit\"" }),
            Engine::Hf)
            .text);
    EXPECT_EQ(z2["fsdp"], "shard_grad_op auto_wrap offload");
    EXPECT_EQ(z2["optim"], "adamw_bnb_8bit");
}

// issue 15: "a PEFT LoraConfig when the plan has LoRA". PEFT's adapter_config.json keys
// (LoraConfig.to_dict) with the Llama module names, and for a 4-bit NF4 base the bitsandbytes
// config QLoRA loads the model with (Dettmers et al. 2023: nf4, double quantization, bf16
// compute). The plan's values, written by hand: rank 16, alpha 32, q/k/v/o.
TEST(ExportHf, LoraPlanCarriesPeftAdapterAndBitsAndBytesConfigs)
{
    const EngineConfig none = exportOf(defaultPlanWith({}), Engine::Hf);
    EXPECT_TRUE(none.companions.empty());
    const EngineConfig c = exportOf(
        defaultPlanWith({ R"(training.lora={"rank": 16, "alpha": 32, "targets": ["q","k","v","o"],
                             "base_bits": 4, "double_quant": true})" }),
        Engine::Hf);
    ASSERT_EQ(c.companions.size(), 2u);
    EXPECT_EQ(c.companions[0].fileName, "adapter_config.json");
    EXPECT_EQ(nlohmann::json::parse(c.companions[0].text),
        nlohmann::json({ { "peft_type", "LORA" }, { "task_type", "CAUSAL_LM" }, { "r", 16 },
            { "lora_alpha", 32.0 }, { "lora_dropout", 0.0 }, { "bias", "none" },
            { "target_modules", { "q_proj", "k_proj", "v_proj", "o_proj" } } }));
    EXPECT_EQ(c.companions[1].fileName, "bnb_config.json");
    EXPECT_EQ(nlohmann::json::parse(c.companions[1].text),
        nlohmann::json({ { "load_in_4bit", true }, { "bnb_4bit_quant_type", "nf4" },
            { "bnb_4bit_use_double_quant", true }, { "bnb_4bit_compute_dtype", "bfloat16" } }));
    const EngineConfig int8
        = exportOf(defaultPlanWith({ R"(training.lora={"rank": 8, "base_bits": 8})" }), Engine::Hf);
    ASSERT_EQ(int8.companions.size(), 2u);
    EXPECT_EQ(nlohmann::json::parse(int8.companions[0].text)["r"], 8);
    EXPECT_EQ(nlohmann::json::parse(int8.companions[0].text)["target_modules"].size(), 7u);
    EXPECT_EQ(nlohmann::json::parse(int8.companions[1].text),
        nlohmann::json({ { "load_in_8bit", true } }));
    EXPECT_FALSE(anyWarningMentions(c, "training.lora"));
    EXPECT_TRUE(anyWarningMentions(
        exportOf(defaultPlanWith({ R"(training.lora={"rank": 8})" }), Engine::DeepSpeed),
        "training.lora"));
}

// The `vllm serve` words of the command (comments skipped), and the rollout block's.
std::pair<std::vector<std::string>, std::vector<std::string>> vllmWords(const std::string& text)
{
    std::string rollout;
    const std::size_t at = text.find("# RL rollout engine");
    EXPECT_NE(at, std::string::npos);
    std::istringstream lines(text.substr(text.find('\n', at) + 1));
    for (std::string line; std::getline(lines, line);)
        rollout += line.substr(2) + "\n"; // "# vllm serve ..." -> "vllm serve ..."
    return { splitWords(text), splitWords(rollout) };
}

TEST(ExportVllm, ServeAndRolloutFlags)
{
    const Plan plan
        = defaultPlanWith({ "serving.kv_bits=8", "serving.weight_bits=4", "serving.tp=2" });
    const EngineConfig c = exportOf(plan, Engine::Vllm);
    const auto [serve, rollout] = vllmWords(c.text);
    EXPECT_EQ(serve,
        (std::vector<std::string> { "vllm", "serve", "meta-llama/Llama-2-7b-hf",
            "--tensor-parallel-size", "2", "--max-model-len", "4096", "--gpu-memory-utilization",
            "0.9", "--max-num-seqs", "16", "--max-num-batched-tokens", "8192", "--block-size", "16",
            "--kv-cache-dtype", "fp8", "--quantization", "bitsandbytes" }));
    // GRPO: 8 prompts x 8 completions = 64 sequences of 512 + 3584 tokens on 3 rollout GPUs;
    // tp 2 leaves one replica.
    EXPECT_EQ(rollout,
        (std::vector<std::string> { "vllm", "serve", "meta-llama/Llama-2-7b-hf",
            "--tensor-parallel-size", "2", "--max-model-len", "4096", "--max-num-seqs", "64",
            "--max-num-batched-tokens", "8192", "--gpu-memory-utilization", "0.9", "--block-size",
            "16", "--kv-cache-dtype", "fp8" }));
    EXPECT_TRUE(anyWarningMentions(c, "serving.quant_group_size"));
}

TEST(ExportVllm, FourBitKvCacheIsWarnedNotDropped)
{
    const EngineConfig c = exportOf(defaultPlanWith({ "serving.kv_bits=4" }), Engine::Vllm);
    EXPECT_TRUE(anyWarningMentions(c, "serving.kv_bits = 4"));
    EXPECT_EQ(c.text.find("--kv-cache-dtype"), std::string::npos);
    // 3 disjoint rollout GPUs at tp 1: 3 data-parallel replicas, ceil(64 / 3) = 22 sequences each.
    const auto rollout = vllmWords(c.text).second;
    EXPECT_NE(std::find(rollout.begin(), rollout.end(), "--data-parallel-size"), rollout.end());
    EXPECT_EQ(*(std::find(rollout.begin(), rollout.end(), "--max-num-seqs") + 1), "22");
}

TEST(ExportAll, APlanThatDoesNotFitSaysSoFirst)
{
    // Llama-2 70B with no sharding on one 80 GB GPU: 70e9 x 16 B is far over.
    const Plan plan = defaultPlanWith(
        { "model=\"llama-2-70b\"", "training.zero_stage=0", "serving.concurrency=100000" });
    for (Engine e : kAllEngines) {
        const EngineConfig c = exportOf(plan, e);
        ASSERT_FALSE(c.warnings.empty());
        EXPECT_TRUE(c.warnings.front().starts_with("the plan does not fit")) << engineId(e);
    }
}

TEST(ExportAll, EngineIds)
{
    for (Engine e : kAllEngines) {
        Engine parsed = Engine::Vllm;
        ASSERT_TRUE(parseEngine(engineId(e), parsed));
        EXPECT_EQ(parsed, e);
    }
    Engine unused;
    EXPECT_FALSE(parseEngine("jax", unused));
    EXPECT_EQ(modelRepository(defaultPlanWith({}), exportPresets()), "meta-llama/Llama-2-7b-hf");
}

} // namespace
} // namespace envelope::testing
