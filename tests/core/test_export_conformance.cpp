// Issue 25: exports the engines accept, imports that read what real files mean. Each test names
// the item it covers and checks the engine's own rule, written out here from its source (tags
// and files named beside each rule), against the exported or imported values.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "export/args.h"
#include "export/common.h"
#include "export/toml.h"
#include "export_fixtures.h"

namespace envelope::testing {
namespace {

using exportdetail::parseToml;

Expected<ImportedPlan> importWith(Engine engine, const std::string& text,
    std::optional<int> gpus = std::nullopt, const std::string& model = "\"llama-2-7b\"")
{
    ImportOptions options;
    options.modelJson = model;
    options.gpus = gpus;
    return importEngineConfig(engine, text, exportPresets(), options);
}

nlohmann::json planOf(const Expected<ImportedPlan>& r)
{
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().toString());
    return r.ok() ? nlohmann::json::parse(r->planJson) : nlohmann::json::object();
}

std::string warningsOf(const Expected<ImportedPlan>& r)
{
    return r.ok() ? nlohmann::json(r->warnings).dump() : std::string();
}

// --- Refused by the engine -------------------------------------------------------------------

// Item 1. torchtitan v0.2.2 (73a0e697) registers the Float8 converter as
// "quantize.linear.float8" and reads its settings from [quantize.linear.float8]; "float8" raises
// KeyError and a [float8] section is an unknown field of JobConfig.
TEST(ConformanceTorchTitan, Float8UsesTheV02ConverterAndSection)
{
    const Plan plan
        = defaultPlanWith({ "model=\"llama-3-8b\"", "training.recipe=\"fp8-deepseek\"" });
    const EngineConfig c = exportOf(plan, Engine::TorchTitan);
    const nlohmann::json t = parseToml(c.text).value();
    EXPECT_EQ(t["model"]["converters"], nlohmann::json({ "quantize.linear.float8" }));
    EXPECT_FALSE(t.contains("float8"));
    ASSERT_TRUE(t.contains("quantize"));
    EXPECT_EQ(t["quantize"]["linear"]["float8"]["enable_fsdp_float8_all_gather"], true);
    // Float8 keeps bf16 weights and fp32 master and Adam (fp8-te): DeepSeek's recipe is warned.
    EXPECT_TRUE(anyWarningMentions(c, "(the fp8-te recipe)"));
    const EngineConfig te
        = exportOf(defaultPlanWith({ "model=\"llama-3-8b\"", "training.recipe=\"fp8-te\"" }),
            Engine::TorchTitan);
    EXPECT_EQ(parseToml(te.text).value()["model"]["converters"],
        nlohmann::json({ "quantize.linear.float8" }));
    EXPECT_FALSE(anyWarningMentions(te, "training.recipe"));
}

// Item 2. torchtitan's stage count with layers_per_stage set (v0.2.2 pipeline_parallel.py) was
// ceil((layers + first_less + last_less) / layers_per_stage), first_less and last_less 1 by
// default: Llama-3 70B (80 layers) at PP 4 x 2 virtual stages, 10 per stage, made 9 stages
// (ValueError). The export now names each model part's modules
// (parallelism.module_fqns_per_model_part), so the stage count is the list's length: pp x v,
// a multiple of the PP degree, every block named once, and the parts of rank k (j mod pp = k)
// hold the estimate's split: 80 -> 20 each; DeepSeek-V3's 61 -> 16, 16, 16, 13 (ceil(61 / 4)).
TEST(ConformanceTorchTitan, InterleavedStagesDivideByThePipelineDegree)
{
    struct Case {
        std::vector<std::string> sets;
        int layers;
        std::vector<int> perRank;
    };
    const Case cases[] = {
        { { "model=\"llama-3-70b\"", "cluster.gpus=64", "training.pp=4",
              "training.virtual_stages=2" },
            80, { 20, 20, 20, 20 } },
        { { "model=\"deepseek-v3\"", "cluster.gpus=64", "training.pp=4",
              "training.virtual_stages=2", "training.ep=8" },
            61, { 16, 16, 16, 13 } },
    };
    for (const Case& k : cases) {
        const EngineConfig c = exportOf(defaultPlanWith(k.sets), Engine::TorchTitan);
        const nlohmann::json p = parseToml(c.text).value()["parallelism"];
        EXPECT_FALSE(p.contains("pipeline_parallel_layers_per_stage"));
        const nlohmann::json parts = p["module_fqns_per_model_part"];
        ASSERT_EQ(parts.size(), 8u); // 4 ranks x 2 stages each
        std::vector<int> perRank(4, 0);
        std::set<std::string> blocks;
        for (std::size_t j = 0; j < parts.size(); ++j)
            for (const auto& name : parts[j])
                if (name.get<std::string>().rfind("layers.", 0) == 0) {
                    ++perRank[j % 4];
                    EXPECT_TRUE(blocks.insert(name.get<std::string>()).second) << name;
                }
        EXPECT_EQ(perRank, k.perRank);
        EXPECT_EQ(static_cast<int>(blocks.size()), k.layers);
        EXPECT_EQ(parts.front().front(), "tok_embeddings");
        EXPECT_EQ(parts.back().back(), "output");
    }
}

// Item 3. Only torchtitan v0.2.x reads a TOML job file; the export says which version it is for.
TEST(ConformanceTorchTitan, ExportNamesItsVersion)
{
    const EngineConfig c = exportOf(defaultPlanWith({}), Engine::TorchTitan);
    EXPECT_TRUE(c.text.starts_with("# Envelope export for torchtitan v0.2.2")) << c.text;
}

// Item 4. Megatron-LM (d98e8a64) validate_args(): max_position_embeddings >= seq_length.
// Llama-3 8B has 8192 positions (config.json); a 131072-token plan raises the flag to 131072.
TEST(ConformanceMegatron, PositionsCoverTheSequence)
{
    const EngineConfig c = exportOf(
        defaultPlanWith({ "model=\"llama-3-8b\"", "training.seq_len=131072" }), Engine::Megatron);
    const auto a = argumentMap(c.text);
    EXPECT_EQ(a.at("--seq-length"), "131072");
    EXPECT_GE(std::stoll(a.at("--max-position-embeddings")), std::stoll(a.at("--seq-length")));
    EXPECT_TRUE(anyWarningMentions(c, "8192 positions"));
}

// Megatron's uneven split (TransformerConfig, d98e8a64): the first and last stages take
// --decoder-first/last-pipeline-num-layers and the (pp - 2) middle stages share the rest evenly.
// The export writes the split the estimate used: DeepSeek-V3's 61 layers on PP 16 as ceil(61 /
// 16) = 4 on each stage and 1 on the last, 4 + 14 x 4 + 1, Megatron-Bridge's own DeepSeek-V3
// layout for PP 16 (deepseek_v3 recipe, layout map (16, 1)).
TEST(ConformanceMegatron, UnevenPipelineNamesFirstAndLastStages)
{
    const EngineConfig c = exportOf(defaultPlanWith({ "model=\"deepseek-v3\"", "cluster.gpus=128",
                                        "training.pp=16", "training.ep=8" }),
        Engine::Megatron);
    const auto a = argumentMap(c.text);
    ASSERT_TRUE(a.count("--decoder-first-pipeline-num-layers")) << c.text;
    const long long first = std::stoll(a.at("--decoder-first-pipeline-num-layers"));
    const long long last = std::stoll(a.at("--decoder-last-pipeline-num-layers"));
    EXPECT_EQ(first, 4);
    EXPECT_EQ(last, 1);
    EXPECT_EQ((61 - first - last) % 14, 0); // the middle stages' rule
    // An even split writes neither flag (32 layers on PP 4).
    const auto even = argumentMap(exportOf(defaultPlanWith({ "training.pp=4" }), Engine::Megatron).text);
    EXPECT_EQ(even.count("--decoder-first-pipeline-num-layers"), 0u);
}

// The uneven split with virtual stages: each stage's count must divide into its chunks, or the
// split is a layout. 30 layers on PP 4 x VP 2: 8, 8, 8, 6, every count even: first 8, last 6.
// 61 on PP 16 x VP 2: the last stage's 1 layer cannot fill 2 chunks: a layout whose chunk j of
// 32 sits on rank j mod 16 (4 layers = 2 + 2, 1 = 1 + 0).
TEST(ConformanceMegatron, UnevenSplitWithVirtualStages)
{
    auto a = argumentMap(exportOf(defaultPlanWith({ "model={\"preset\": \"llama-2-7b\", \"layers\": 30}",
                                                 "training.pp=4", "training.virtual_stages=2" }),
        Engine::Megatron)
                        .text);
    EXPECT_EQ(a.at("--num-virtual-stages-per-pipeline-rank"), "2");
    EXPECT_EQ(a.at("--decoder-first-pipeline-num-layers"), "8");
    EXPECT_EQ(a.at("--decoder-last-pipeline-num-layers"), "6");
    a = argumentMap(exportOf(defaultPlanWith({ "model=\"deepseek-v3\"", "cluster.gpus=256",
                                          "training.pp=16", "training.ep=8",
                                          "training.virtual_stages=2" }),
        Engine::Megatron)
                   .text);
    EXPECT_EQ(a.count("--num-virtual-stages-per-pipeline-rank"), 0u);
    std::string expected = "E";
    for (int j = 0; j < 32; ++j)
        expected += (j ? "|" : "") + std::string(j == 15 ? "(t)*1" : j == 31 ? "(t)*0" : "(t)*2");
    EXPECT_EQ(a.at("--pipeline-model-parallel-layout"), expected + "L");
}

// validate_args(): --optimizer-cpu-offload asserts --use-precision-aware-optimizer.
// --use-flash-attn is parsed but read nowhere: the backend is --attention-backend.
TEST(ConformanceMegatron, OffloadAndAttentionBackend)
{
    const EngineConfig c
        = exportOf(defaultPlanWith({ "training.zero_stage=1", "training.offload_optimizer=true" }),
            Engine::Megatron);
    const auto a = argumentMap(c.text);
    EXPECT_EQ(a.count("--optimizer-cpu-offload"), 1u);
    EXPECT_EQ(a.count("--use-precision-aware-optimizer"), 1u);
    EXPECT_EQ(a.count("--use-flash-attn"), 0u);
    EXPECT_EQ(a.at("--attention-backend"), "flash");
    // Llama 2's RoPE base is Megatron's default too, but it is written (item 4).
    EXPECT_EQ(a.at("--rotary-base"), "10000");
    EXPECT_FALSE(anyWarningMentions(c, "--rotary-base"));
}

// Item 4, --rotary-base: Megatron-LM arguments.py (megatron-core v0.19) defaults it to 10000
// (type int), so a Llama 3 job launched without it trains another model. Each preset's base and
// long-context scaling as its config.json states them (presets/models.json sources), in the
// flags arguments.py, argument_utils.py and rotary_pos_embedding.py read.
TEST(ConformanceMegatron, TheRopeOfTheNamedModel)
{
    struct Case {
        const char* model;
        std::map<std::string, std::string> flags;
        std::vector<std::string> absent;
        const char* warning;  // a rope_scaling key Megatron cannot state, or nullptr
    };
    const Case cases[] = {
        { "llama-3-8b", { { "--position-embedding-type", "rope" }, { "--rotary-base", "500000" } },
            { "--use-rope-scaling", "--rotary-percent" }, nullptr },
        // Llama 3.1: factor 8 with Megatron's fixed 1 / 4 / 8192 (the config's own values).
        { "llama-3.1-70b",
            { { "--rotary-base", "500000" }, { "--use-rope-scaling", "" },
                { "--rope-scaling-factor", "8" } },
            {}, nullptr },
        // Llama 4 Scout states high_freq_factor 1, which Megatron fixes at 4: said.
        { "llama-4-scout", { { "--rotary-base", "500000" }, { "--rope-scaling-factor", "16" } }, {},
            "rope_scaling.high_freq_factor = 1" },
        { "qwen2.5-7b", { { "--rotary-base", "1000000" } }, { "--use-rope-scaling" }, nullptr },
        // MLA takes YaRN through --rope-type with MLATransformerConfig's 4096 positions, betas
        // 32 and 1: DeepSeek-V3's own.
        { "deepseek-v3",
            { { "--position-embedding-type", "rope" }, { "--rope-type", "yarn" },
                { "--rotary-base", "10000" }, { "--rotary-scaling-factor", "40" },
                { "--mscale", "1" }, { "--mscale-all-dim", "1" } },
            { "--yarn-beta-fast", "--yarn-original-max-position-embeddings" }, nullptr },
        // Kimi K2's betas are 1 and 1: no MLA flag sets them.
        { "kimi-k2", { { "--rotary-base", "50000" }, { "--rotary-scaling-factor", "32" } }, {},
            "rope_scaling.beta_fast = 1" },
        // YaRN without MLA: --position-embedding-type yarn and the --yarn-* flags.
        { "gpt-oss-20b",
            { { "--position-embedding-type", "yarn" }, { "--rotary-base", "150000" },
                { "--rotary-scaling-factor", "32" },
                { "--yarn-original-max-position-embeddings", "4096" },
                { "--yarn-beta-fast", "32" }, { "--yarn-beta-slow", "1" } },
            { "--rope-type" }, nullptr },
        { "glm-4.5-air", { { "--rotary-base", "1000000" }, { "--rotary-percent", "0.5" } }, {},
            nullptr },
        { "gemma-3-27b", { { "--rotary-seq-len-interpolation-factor", "8" } }, {}, nullptr },
        { "gpt2", { { "--position-embedding-type", "learned_absolute" } },
            { "--rotary-base", "--rope-type" }, nullptr },
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.model);
        const EngineConfig c = exportOf(
            defaultPlanWith({ std::string("model=\"") + k.model + "\"", "training.seq_len=1024",
                "cluster.gpus=512", "training.tp=4", "training.zero_stage=1" }),
            Engine::Megatron);
        const auto a = argumentMap(c.text);
        for (const auto& [flag, value] : k.flags) {
            ASSERT_EQ(a.count(flag), 1u) << flag;
            EXPECT_EQ(a.at(flag), value) << flag;
        }
        for (const std::string& flag : k.absent)
            EXPECT_EQ(a.count(flag), 0u) << flag;
        EXPECT_FALSE(anyWarningMentions(c, "--rotary-base is not written"));
        if (k.warning)
            EXPECT_TRUE(anyWarningMentions(c, k.warning));
        else
            EXPECT_FALSE(anyWarningMentions(c, "has no Megatron flag"));
    }
    // A model that states no base: said, not silently left at 10000.
    const EngineConfig bare = exportOf(defaultPlanWith({ R"(model={"layers": 4, "hidden": 512,
        "heads": 8, "vocab": 1000})" }),
        Engine::Megatron);
    EXPECT_EQ(argumentMap(bare.text).count("--rotary-base"), 0u);
    EXPECT_TRUE(anyWarningMentions(bare, "--rotary-base is not written"));
}

// Item 4 on import: a --rotary-base other than the model's trains another model; said.
TEST(ConformanceMegatron, ImportComparesTheRotaryBaseWithTheModel)
{
    const std::string args = "--tensor-model-parallel-size 1 --micro-batch-size 1 "
                             "--global-batch-size 8 --seq-length 4096 --bf16 --rotary-base ";
    const auto wrong = importWith(Engine::Megatron, args + "10000", 8, "\"llama-3-8b\"");
    EXPECT_NE(warningsOf(wrong).find("--rotary-base 10000 differs from the model's rope_theta "
                                     "500000"),
        std::string::npos)
        << warningsOf(wrong);
    const auto right = importWith(Engine::Megatron, args + "500000", 8, "\"llama-3-8b\"");
    EXPECT_EQ(warningsOf(right).find("--rotary-base"), std::string::npos) << warningsOf(right);
}

// Item 5. DeepSpeed v0.19.5 engine.py _do_optimizer_sanity_check: with ZeRO off, a bf16 model
// with fp32 gradient accumulation raises NotImplementedError; ZeRO-Offload needs a ZeRO stage.
TEST(ConformanceDeepSpeed, ZeroStageZeroGetsNeitherFp32AccumulationNorOffload)
{
    const EngineConfig c
        = exportOf(defaultPlanWith({ "training.zero_stage=0", "training.recipe=\"bf16-mixed-18\"",
                       "training.offload_optimizer=true" }),
            Engine::DeepSpeed);
    const nlohmann::json j = nlohmann::json::parse(c.text);
    const bool bf16 = j["bf16"]["enabled"].get<bool>();
    const bool fp32Accumulation = j.contains("data_types")
        && j["data_types"].value("grad_accum_dtype", std::string()) == "fp32";
    EXPECT_FALSE(bf16 && fp32Accumulation && j["zero_optimization"]["stage"] == 0);
    EXPECT_FALSE(j["zero_optimization"].contains("offload_optimizer"));
    EXPECT_TRUE(anyWarningMentions(c, "NotImplementedError"));
    EXPECT_TRUE(anyWarningMentions(c, "training.offload_optimizer at training.zero_stage = 0"));
    // From stage 1 both are written.
    const nlohmann::json one = nlohmann::json::parse(
        exportOf(defaultPlanWith({ "training.zero_stage=1", "training.recipe=\"bf16-mixed-18\"",
                     "training.offload_optimizer=true" }),
            Engine::DeepSpeed)
            .text);
    EXPECT_EQ(one["data_types"]["grad_accum_dtype"], "fp32");
    EXPECT_EQ(one["zero_optimization"]["offload_optimizer"]["device"], "cpu");
}

// The `vllm serve` command's flags (the first command of the file).
std::map<std::string, std::string> vllmServe(const std::string& text, std::string* prefix)
{
    std::vector<std::string> words = exportdetail::splitWords(text.substr(0, text.find("\n\n")));
    std::map<std::string, std::string> out;
    const auto serve = std::find(words.begin(), words.end(), "serve");
    if (prefix)
        *prefix = words.empty() ? "" : words.front();
    for (auto it = serve; it != words.end(); ++it)
        if (it->starts_with("--"))
            out[*it] = (it + 1 != words.end() && !(it + 1)->starts_with("--")) ? *(it + 1) : "";
    return out;
}

// Item 6. vLLM SchedulerConfig: max_num_batched_tokens >= max_num_seqs; ModelConfig: a
// max_model_len above the model's max_position_embeddings needs VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.
// Llama-2 7B has 4096 positions (config.json).
TEST(ConformanceVllm, SchedulerAndModelLengthChecks)
{
    const EngineConfig c = exportOf(defaultPlanWith({ "serving.max_batched_tokens=8",
                                        "serving.concurrency=16", "serving.context=8192" }),
        Engine::Vllm);
    std::string prefix;
    const auto f = vllmServe(c.text, &prefix);
    EXPECT_GE(std::stoll(f.at("--max-num-batched-tokens")), std::stoll(f.at("--max-num-seqs")));
    EXPECT_EQ(f.at("--max-model-len"), "8192");
    EXPECT_EQ(prefix, "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
    EXPECT_TRUE(anyWarningMentions(c, "serving.max_batched_tokens = 8"));
}

// A serving plan at TP 4 with the default RL section's 3 rollout GPUs: no rollout engine block.
TEST(ConformanceVllm, NoRolloutBlockThatCannotStart)
{
    const EngineConfig c = exportOf(defaultPlanWith({ "serving.tp=4" }), Engine::Vllm);
    EXPECT_EQ(c.text.find("RL rollout engine"), std::string::npos) << c.text;
    EXPECT_TRUE(anyWarningMentions(c, "rl.rollout_gpus = 3"));
}

// Item 7. A plan name with newlines: no injected argument, TOML that reads back the same name.
TEST(ConformanceAll, PlanNameWithNewlinesInjectsNothing)
{
    Plan plan = defaultPlanWith({});
    plan.name = "evil\n--num-layers 1\n[job]\ndescription = \"x\"\n\t\x01";
    const auto megatron = argumentMap(exportOf(plan, Engine::Megatron).text);
    EXPECT_EQ(megatron.at("--num-layers"), "32");
    const EngineConfig titan = exportOf(plan, Engine::TorchTitan);
    Expected<nlohmann::json> toml = parseToml(titan.text);
    ASSERT_TRUE(toml.ok()) << toml.error().toString() << "\n" << titan.text;
    EXPECT_EQ(toml.value()["job"]["description"], plan.name);
    const std::string vllm = exportOf(plan, Engine::Vllm).text;
    for (std::size_t at = vllm.find("evil"); at != std::string::npos;
         at = vllm.find("evil", at + 1))
        EXPECT_EQ(vllm.substr(at, 6), "evil\\n");
}

// --- Misread on import -----------------------------------------------------------------------

// Item 8. transformers' ds_config_zero2.json (settings below): every batch value and fp16 are
// "auto". The HF integration fills them from TrainingArguments (per_device_train_batch_size,
// gradient_accumulation_steps, world x both; fp16 = args.fp16), and accelerate adds
// bf16.enabled for a bf16 run: the plan's own precision and batch, never fp32.
TEST(ConformanceDeepSpeedImport, AutoIsThePlansPrecisionAndBatch)
{
    // huggingface/transformers tests/deepspeed/ds_config_zero2.json @ 9490c0a0.
    const auto r = importWith(Engine::DeepSpeed, R"({
        "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000,
                 "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1},
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                      "weight_decay": "auto"}},
        "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto",
                      "warmup_max_lr": "auto", "warmup_num_steps": "auto"}},
        "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": true},
            "allgather_partitions": true, "allgather_bucket_size": 2e8, "overlap_comm": true,
            "reduce_scatter": true, "reduce_bucket_size": 2e8, "contiguous_gradients": true},
        "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
        "steps_per_print": 2000, "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto", "wall_clock_breakdown": false})",
        8, "\"llama-3-8b\"");
    const nlohmann::json p = planOf(r);
    EXPECT_EQ(p["training"]["recipe"], "bf16-mixed-16"); // the default plan's; was fp32
    EXPECT_EQ(p["training"]["micro_batch"], 1);
    EXPECT_EQ(p["training"]["grad_accum"], 8);
    EXPECT_EQ(p["cluster"]["gpus"], 8);
    EXPECT_EQ(p["training"]["zero_stage"], 2);
    EXPECT_EQ(p["training"]["offload_optimizer"], true);
    EXPECT_NE(warningsOf(r).find("\\\"auto\\\" values resolved"), std::string::npos);
    EXPECT_NE(warningsOf(r).find("optimizer"), std::string::npos); // listed as not read
}

// DeepSpeedExamples training/bf16_master_weight/configs/bf16_full.json @ 45b4b715: bf16 master
// weights and gradients with bf16 optimizer states, ZeRO-3, micro 4, no accumulation. DeepSpeed
// v0.19.5 precision_config.py: no fp32 master copy, bf16 moments: 2 + 2 + 2 x 2 = 8 B/param.
TEST(ConformanceDeepSpeedImport, Bf16MasterWeightsAndOptimizerStates)
{
    const auto r = importWith(Engine::DeepSpeed, R"({
        "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
        "steps_per_print": 100,
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "betas": [0.9, 0.999],
                      "eps": 1e-8, "weight_decay": 0.01}},
        "bf16": {"enabled": true, "bf16_master_weights_and_grads": true,
                 "bf16_optimizer_states": true},
        "zero_optimization": {"stage": 3, "overlap_comm": true, "contiguous_gradients": true,
            "reduce_bucket_size": 5e7, "stage3_param_persistence_threshold": 0},
        "torch_autocast": {"enabled": true, "dtype": "torch.bfloat16"}})",
        4);
    const nlohmann::json p = planOf(r);
    EXPECT_EQ(p["training"]["recipe"], "bf16-pure");
    EXPECT_EQ(p["training"]["zero_stage"], 3);
    EXPECT_EQ(p["training"]["micro_batch"], 4);
    EXPECT_EQ(p["training"]["grad_accum"], 1);
    EXPECT_EQ(p["cluster"]["gpus"], 4);
    EXPECT_EQ(warningsOf(r).find("bf16.bf16_master_weights_and_grads"), std::string::npos);
    EXPECT_NE(warningsOf(r).find("torch_autocast"), std::string::npos);
    // Master weights in bf16 alone keep fp32 moments: 2 + 2 + 0 + 8 bytes per parameter.
    const nlohmann::json alone = planOf(importWith(Engine::DeepSpeed,
        R"({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true,
            "bf16_master_weights_and_grads": true}, "zero_optimization": {"stage": 2}})",
        8));
    EXPECT_EQ(alone["training"]["recipe"]["master"], 0);
    EXPECT_EQ(alone["training"]["recipe"]["optimizer"], 8);
    EXPECT_EQ(alone["training"]["recipe"]["gradients"], 2);
}

// DeepSpeed's runtime/config.py _set_batch_related_parameters: two values give the third with the
// world size. DeepSpeedExamples bing_bert/deepspeed_bsz64k_lamb_config_seq128.json: train batch
// 65,536 at micro 64 and no accumulation key: 1,024 GPUs with accumulation 1, or, on --gpus 256,
// accumulation 65,536 / (64 x 256) = 4.
TEST(ConformanceDeepSpeedImport, TheThirdBatchValueComesFromTheOtherTwo)
{
    const std::string bingBert = R"({"train_batch_size": 65536,
        "train_micro_batch_size_per_gpu": 64, "steps_per_print": 100,
        "prescale_gradients": false, "gradient_clipping": 1.0, "wall_clock_breakdown": false,
        "fp16": {"enabled": true, "loss_scale": 0}})";
    const auto own = importWith(Engine::DeepSpeed, bingBert);
    const nlohmann::json p = planOf(own);
    EXPECT_EQ(p["cluster"]["gpus"], 1024);
    EXPECT_EQ(p["training"]["grad_accum"], 1);
    EXPECT_EQ(p["training"]["micro_batch"], 64);
    EXPECT_NE(warningsOf(own).find("cluster.gpus = 1024"), std::string::npos);
    const nlohmann::json q = planOf(importWith(Engine::DeepSpeed, bingBert, 256));
    EXPECT_EQ(q["cluster"]["gpus"], 256);
    EXPECT_EQ(q["training"]["grad_accum"], 4);
    // The issue's case: train_batch_size 8 at micro 4 on 2 GPUs is no accumulation (it was
    // refused, "must be a multiple of 32", from the default plan's accumulation 8).
    const nlohmann::json two = planOf(importWith(
        Engine::DeepSpeed, R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4})", 2));
    EXPECT_EQ(two["training"]["grad_accum"], 1);
    EXPECT_EQ(two["cluster"]["gpus"], 2);
    // Micro batch and accumulation with train_batch_size "auto": the GPU count is kept and said.
    const auto kept = importWith(Engine::DeepSpeed,
        R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 2,
            "gradient_accumulation_steps": 4})");
    EXPECT_EQ(planOf(kept)["cluster"]["gpus"], 8);
    EXPECT_EQ(planOf(kept)["training"]["grad_accum"], 4);
    EXPECT_NE(warningsOf(kept).find("the default plan's 8 is used"), std::string::npos);
}

// Item 9. torchtitan: FP8 is the converter, not a section; memory_budget is a mode; unread keys
// are named.
TEST(ConformanceTorchTitanImport, Float8MemoryBudgetAndUnreadKeys)
{
    const std::string base = "[parallelism]\ndata_parallel_shard_degree = 8\n";
    const nlohmann::json converted = planOf(importWith(
        Engine::TorchTitan, base + "[model]\nconverters = [\"quantize.linear.float8\"]\n"));
    EXPECT_EQ(converted["training"]["recipe"], "fp8-te");
    const auto sectionOnly
        = importWith(Engine::TorchTitan, base + "[float8]\nenable_fsdp_float8_all_gather = true\n");
    EXPECT_EQ(planOf(sectionOnly)["training"]["recipe"], "bf16-mixed-16");
    const auto budget = importWith(Engine::TorchTitan,
        base
            + "[activation_checkpoint]\nmode = \"memory_budget\"\nmemory_budget = 0.3\n"
              "[job]\ndump_folder = \"./outputs\"\n");
    EXPECT_EQ(planOf(budget)["training"]["recompute"], "selective");
    EXPECT_NE(warningsOf(budget).find("not read: job.dump_folder"), std::string::npos)
        << warningsOf(budget);
    EXPECT_NE(
        warningsOf(sectionOnly).find("float8.enable_fsdp_float8_all_gather"), std::string::npos);
    EXPECT_EQ(planOf(importWith(Engine::TorchTitan,
                  base + "[activation_checkpoint]\nmode = \"memory_budget\"\nmemory_budget = 0\n"))
                  ["training"]["recompute"],
        "full");
}

// Issue 24: the recompute modules Megatron-Bridge's recipes set (DeepSeek-V3: mla_up_proj;
// GPT-OSS: layernorm, moe_act) are training.recompute_ops, both ways, and an FP8 recipe's bf16
// gradients are written (without --grad-reduce-in-bf16 Megatron keeps them in fp32).
TEST(ConformanceMegatron, RecomputeModulesAndFp8GradientsRoundTrip)
{
    const Plan deepseek = defaultPlanWith({ "model=\"deepseek-v3\"", "cluster.gpus=256",
        "training.recipe=\"fp8-te\"", "training.pp=16", "training.ep=8", "training.recompute=\"none\"",
        "training.recompute_ops=[\"mla_up\"]", "training.framework=\"megatron\"" });
    const EngineConfig c = exportOf(deepseek, Engine::Megatron);
    EXPECT_NE(c.text.find("--recompute-granularity selective"), std::string::npos) << c.text;
    EXPECT_NE(c.text.find("--recompute-modules mla_up_proj"), std::string::npos) << c.text;
    EXPECT_EQ(c.text.find("core_attn"), std::string::npos) << c.text;
    EXPECT_NE(c.text.find("--grad-reduce-in-bf16"), std::string::npos) << c.text;

    const nlohmann::json back = planOf(importWith(Engine::Megatron,
        "--recompute-granularity selective --recompute-modules layernorm moe_act --num-experts 8 "
        "--bf16\n",
        8));
    EXPECT_EQ(back["training"]["recompute"], "none");
    EXPECT_EQ(back["training"]["recompute_ops"], nlohmann::json({ "norm", "swiglu" }));
    const nlohmann::json withCore = planOf(importWith(Engine::Megatron,
        "--recompute-granularity selective --recompute-modules core_attn mla_up_proj --bf16\n", 8));
    EXPECT_EQ(withCore["training"]["recompute"], "selective");
    EXPECT_EQ(withCore["training"]["recompute_ops"], nlohmann::json({ "mla_up" }));

    // A dense model's SwiGLU has no module of its own: said, not written.
    const Plan dense = defaultPlanWith({ "model=\"llama-3-8b\"", "training.recompute=\"selective\"",
        "training.recompute_ops=[\"swiglu\"]" });
    const EngineConfig d = exportOf(dense, Engine::Megatron);
    EXPECT_EQ(d.text.find("--recompute-modules"), std::string::npos) << d.text;
    EXPECT_NE(d.text.find("--recompute-granularity selective"), std::string::npos) << d.text;
    EXPECT_TRUE(anyWarningMentions(d, "moe_act"));
}

// Item 10. Megatron: nargs flags, bash arrays, Megatron-FSDP's sharding, virtual stages per rank.
TEST(ConformanceMegatronImport, NargsArraysFsdpAndVirtualStages)
{
    const auto nargs = importWith(Engine::Megatron,
        "--recompute-granularity selective --recompute-modules core_attn mlp --bf16\n", 8);
    EXPECT_EQ(planOf(nargs)["training"]["recompute"], "selective");
    EXPECT_NE(warningsOf(nargs).find("--recompute-modules mlp"), std::string::npos);

    // The layout of Megatron-LM's examples/*.sh: arrays expanded on the torchrun line.
    const auto script = importWith(Engine::Megatron, R"(#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
NUM_NODES=2
CHECKPOINT_PATH=$1 #<Specify path>
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
)
MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 2
    --pipeline-model-parallel-size 2
    --num-virtual-stages-per-pipeline-rank 2
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 32 # 1 x 8 x 4
    --bf16
    --use-megatron-fsdp
    --data-parallel-sharding-strategy optim_grads_params
)
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    "${MODEL_PARALLEL_ARGS[@]}" \
    ${TRAINING_ARGS[@]} \
    --save $CHECKPOINT_PATH
)");
    const nlohmann::json p = planOf(script);
    EXPECT_EQ(p["cluster"]["gpus"], 16); // 8 per node x 2 nodes
    EXPECT_EQ(p["training"]["tp"], 2);
    EXPECT_EQ(p["training"]["pp"], 2);
    EXPECT_EQ(p["training"]["virtual_stages"], 2);
    EXPECT_EQ(p["training"]["grad_accum"], 8); // 32 / (1 x 16 / 4)
    EXPECT_EQ(p["training"]["zero_stage"], 3); // optim_grads_params
    const nlohmann::json grads = planOf(importWith(Engine::Megatron,
        "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads\n", 8));
    EXPECT_EQ(grads["training"]["zero_stage"], 2);
}

// Arrays that name arrays grow geometrically (60 words, four levels: 60^4 = 13 million words):
// the expansion stops at its budget and the script is read as written, refused in a moment.
TEST(ConformanceMegatronImport, ArrayExpansionIsBounded)
{
    std::string script = "A=(";
    for (int i = 0; i < 60; ++i)
        script += " --x";
    script += ")\n";
    for (const char* name : { "B", "C", "D" }) {
        script += std::string(name) + "=(";
        for (int i = 0; i < 60; ++i)
            script += std::string(" ${") + char(name[0] - 1) + "[@]}";
        script += ")\n";
    }
    script += "torchrun pretrain_gpt.py ${D[@]}\n";
    const Expected<ImportedPlan> r = importWith(Engine::Megatron, script, 8);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(
        r.error().toString(), "${D[@]}: expected an argument starting with --, got \"${D[@]}\"");
}

// --- Real files (../shared/engine-configs/SOURCE.md): their settings, written here ------------

// pytorch/torchtitan torchtitan/models/llama3/train_configs/llama3_8b.toml @ v0.2.2 (73a0e697),
// "a preset for 64 A100 GPUs"; and the same with the Float8 settings of the tag's
// docs/float8.md. Keys Envelope has no field for are listed as not read.
TEST(RealFiles, TorchTitanLlama3_8b)
{
    const std::string file = R"(# NOTE: this toml config is a preset for 64 A100 GPUs.
[job]
dump_folder = "./outputs"
description = "Llama 3 8B training"
[profiling]
enable_profiling = true
save_traces_folder = "profile_trace"
profile_freq = 100
[metrics]
log_freq = 10
enable_tensorboard = true
save_tb_folder = "tb"
[model]
name = "llama3"
flavor = "8B"
hf_assets_path = "./assets/hf/Llama-3.1-8B"
CONVERTERS
[optimizer]
name = "AdamW"
lr = 3e-4
eps = 1e-8
[lr_scheduler]
warmup_steps = 200  # lr scheduler warm up
[training]
local_batch_size = 1
seq_len = 8192
max_norm = 1.0  # grad norm clipping
steps = 1000
dataset = "c4"
[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
pipeline_parallel_degree = 1
context_parallel_degree = 1
[checkpoint]
enable = false
folder = "checkpoint"
interval = 500
last_save_model_only = true
export_dtype = "float32"
async_mode = "disabled" # ["disabled", "async", "async_with_pinned_mem"]
[compile]
enable=COMPILE
components = ["model", "loss"]
[activation_checkpoint]
mode = "selective"  # ["none", "selective", "full"]
selective_ac_option = "op"  # "int" = ac every positive int layer or 'op', ac based on ops policy
FLOAT8
[validation]
enable = false
dataset = "c4_validation"
freq = 500
steps = 1200
)";
    const auto fill = [&](bool fp8) {
        std::string s = file;
        const auto put = [&](const std::string& key, const std::string& value) {
            s.replace(s.find(key), key.size(), value);
        };
        put("CONVERTERS", fp8 ? "converters = [\"quantize.linear.float8\"]" : "");
        put("COMPILE", fp8 ? "true" : "false");
        put("FLOAT8",
            fp8 ? "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n"
                  "precompute_float8_dynamic_scale_for_fsdp = true\nfilter_fqns = [\"output\"]"
                : "");
        return s;
    };
    for (bool fp8 : { false, true }) {
        SCOPED_TRACE(fp8 ? "float8" : "bf16");
        const auto r = importWith(Engine::TorchTitan, fill(fp8), 64, "\"llama-3-8b\"");
        const nlohmann::json p = planOf(r);
        EXPECT_EQ(p["name"], "Llama 3 8B training");
        EXPECT_EQ(p["cluster"]["gpus"], 64);
        EXPECT_EQ(p["training"]["zero_stage"], 3); // FSDP over the 64 leftover ranks
        EXPECT_EQ(p["training"]["micro_batch"], 1);
        EXPECT_EQ(p["training"]["grad_accum"], 1);
        EXPECT_EQ(p["training"]["seq_len"], 8192);
        EXPECT_EQ(p["training"]["recompute"], "selective");
        EXPECT_DOUBLE_EQ(p["training"]["train_tokens"].get<double>(), 1000.0 * 64 * 8192);
        EXPECT_EQ(p["training"]["recipe"], fp8 ? "fp8-te" : "bf16-mixed-16");
        EXPECT_NE(warningsOf(r).find("optimizer.lr"), std::string::npos);
        ReadOptions options;
        EXPECT_TRUE(readPlan(r->planJson, exportPresets(), options).ok());
    }
}

// NVIDIA/Megatron-LM examples/mixtral/train_mixtral_8x7b_distributed.sh @ d98e8a64, its
// variables expanded (paths are placeholders). PP 4 x EP 8 needs 32 GPUs: --gpus 32.
TEST(RealFiles, MegatronMixtral8x7b)
{
    const auto r = importWith(Engine::Megatron,
        "torchrun --nproc_per_node 8 --nnodes 1 --node_rank 0 --master_addr localhost "
        "--master_port 29500 pretrain_gpt.py --use-mcore-models --disable-bias-linear "
        "--seq-length 4096 --max-position-embeddings 32768 --num-layers 32 --hidden-size 4096 "
        "--ffn-hidden-size 14336 --num-attention-heads 32 --init-method-std 0.01 "
        "--attention-dropout 0.0 --hidden-dropout 0.0 --normalization RMSNorm "
        "--position-embedding-type rope --swiglu --untie-embeddings-and-output-weights "
        "--group-query-attention --num-query-groups 8 --no-masked-softmax-fusion "
        "--no-position-embedding --rotary-base 1000000 --num-experts 8 --moe-router-topk 2 "
        "--moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-2 --moe-grouped-gemm "
        "--moe-token-dispatcher-type alltoall --overlap-param-gather --overlap-grad-reduce "
        "--tokenizer-type Llama2Tokenizer --tokenizer-model TOKENIZER --data-path DATA "
        "--split 99990\\,8\\,2 --micro-batch-size 1 --global-batch-size 256 --lr 1e-4 "
        "--train-iters 500000 --lr-decay-iters 320000 --lr-decay-style cosine --min-lr 1.0e-5 "
        "--weight-decay 0.1 --lr-warmup-iters 500 --clip-grad 1.0 --bf16 "
        "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 "
        "--expert-model-parallel-size 8 --use-distributed-optimizer --sequence-parallel "
        "--log-interval 1 --save-interval 10000 --eval-interval 1000 --eval-iters 10 --save CKPT "
        "--load CKPT --tensorboard-dir CKPT/tensorboard --no-load-optim --no-load-rng\n",
        32, "\"mixtral-8x7b\"");
    const nlohmann::json p = planOf(r);
    const nlohmann::json& t = p["training"];
    EXPECT_EQ(p["cluster"]["gpus"], 32);
    EXPECT_EQ(t["pp"], 4);
    EXPECT_EQ(t["ep"], 8);
    EXPECT_EQ(t["grad_accum"], 32); // 256 / (1 x 32 / 4)
    EXPECT_EQ(t["seq_len"], 4096);
    EXPECT_EQ(t["zero_stage"], 1);
    EXPECT_EQ(t["recipe"], "bf16-mixed-18"); // --bf16 without --grad-reduce-in-bf16
    EXPECT_EQ(t["recompute"], "none");
    EXPECT_EQ(t["overlap_grad_reduce"], true);
    EXPECT_EQ(t["overlap_param_gather"], true);
    EXPECT_DOUBLE_EQ(t["train_tokens"].get<double>(), 500000.0 * 256 * 4096);
    EXPECT_TRUE(readPlan(r->planJson, exportPresets()).ok());
}

// NVIDIA/Megatron-LM examples/megatron_fsdp/train_llama3_8b_fsdp_h100_fp8.sh @ d98e8a64,
// expanded likewise (one node of 8 H100s).
TEST(RealFiles, MegatronFsdpLlama3_8bFp8)
{
    const auto r = importWith(Engine::Megatron,
        "python -m torch.distributed.run --nproc_per_node 8 --nnodes 1 --node_rank 0 "
        "--master_addr localhost --master_port 29500 pretrain_gpt.py --use-mcore-models "
        "--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
        "--group-query-attention --num-query-groups 8 --kv-channels 128 --seq-length 8192 "
        "--max-position-embeddings 8192 --position-embedding-type rope --rotary-base 1000000 "
        "--rotary-percent 1.0 --attention-dropout 0.0 --hidden-dropout 0.0 --swiglu "
        "--normalization RMSNorm --init-method-std 0.0134 --attention-backend fused "
        "--apply-layernorm-1p --untie-embeddings-and-output-weights --disable-bias-linear "
        "--micro-batch-size 1 --global-batch-size 128 --train-samples 1953125000 "
        "--lr-decay-samples 1949218748 --lr-warmup-samples 3906252 --lr 0.00015 --min-lr 0.00001 "
        "--bf16 --cross-entropy-loss-fusion --use-megatron-fsdp "
        "--data-parallel-sharding-strategy optim_grads_params --no-gradient-accumulation-fusion "
        "--ckpt-format fsdp_dtensor --use-distributed-optimizer --overlap-grad-reduce "
        "--overlap-param-gather --fp8-format hybrid --fp8-amax-history-len 1024 "
        "--fp8-amax-compute-algo max --fp8-param-gather --tensor-model-parallel-size 1 "
        "--context-parallel-size 1 --sequence-parallel --data-path DATA "
        "--tokenizer-type HuggingFaceTokenizer --tokenizer-model TOKENIZER --split '99,1,0' "
        "--vocab-size 128256 --log-interval 1\n",
        std::nullopt, "\"llama-3-8b\"");
    const nlohmann::json p = planOf(r);
    const nlohmann::json& t = p["training"];
    EXPECT_EQ(p["cluster"]["gpus"], 8); // torchrun: 8 per node x 1 node
    EXPECT_EQ(t["zero_stage"], 3); // Megatron-FSDP optim_grads_params (was read as ZeRO-1)
    EXPECT_EQ(t["grad_accum"], 16); // 128 / (1 x 8)
    EXPECT_EQ(t["seq_len"], 8192);
    EXPECT_EQ(t["recipe"], "fp8-te"); // Transformer Engine FP8: bf16 weights, fp32 master/Adam
    EXPECT_EQ(t["flash_attention"], true); // --attention-backend fused
    EXPECT_DOUBLE_EQ(t["train_tokens"].get<double>(), 1953125000.0 * 8192);
    EXPECT_TRUE(readPlan(r->planJson, exportPresets()).ok());
}

// transformers tests/deepspeed/ds_config_zero3.json (the "auto" version): ZeRO-3 with parameter
// and optimizer offload; every batch value and fp16 "auto".
TEST(RealFiles, TransformersZero3Auto)
{
    const auto r = importWith(Engine::DeepSpeed, R"({
        "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000,
                 "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1},
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                      "weight_decay": "auto"}},
        "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto",
                      "warmup_max_lr": "auto", "warmup_num_steps": "auto"}},
        "zero_optimization": {"stage": 3,
            "offload_optimizer": {"device": "cpu", "pin_memory": true},
            "offload_param": {"device": "cpu", "pin_memory": true},
            "overlap_comm": true, "contiguous_gradients": true, "sub_group_size": 1e14,
            "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
            "stage3_param_persistence_threshold": "auto", "stage3_max_live_parameters": 1e9,
            "stage3_max_reuse_distance": 1e9, "stage3_gather_fp16_weights_on_model_save": true},
        "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
        "steps_per_print": 2000, "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto", "wall_clock_breakdown": false})",
        16, "\"llama-3-8b\"");
    const nlohmann::json p = planOf(r);
    EXPECT_EQ(p["training"]["recipe"], "bf16-mixed-16");
    EXPECT_EQ(p["training"]["zero_stage"], 3);
    EXPECT_EQ(p["training"]["offload_optimizer"], true);
    EXPECT_EQ(p["training"]["offload_params"], true);
    EXPECT_EQ(p["cluster"]["gpus"], 16);
    EXPECT_TRUE(readPlan(r->planJson, exportPresets()).ok());
}

} // namespace
} // namespace envelope::testing

namespace envelope::testing {
namespace {

// The flags of the first command in an export (after any VAR=value prefix and the program).
std::map<std::string, std::string> commandFlags(const std::string& text)
{
    std::string command;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("#"))
            continue;
        if (line.empty())
            break;
        command += line + "\n";
    }
    std::map<std::string, std::string> out;
    const std::vector<std::string> words = exportdetail::splitWords(command);
    for (auto it = words.begin(); it != words.end(); ++it)
        if (it->starts_with("--"))
            out[*it] = (it + 1 != words.end() && !(it + 1)->starts_with("--")) ? *(it + 1) : "";
    return out;
}

// Issue 27: `--to sglang`. Every flag is one SGLang's ServerArgs declares
// (python/sglang/srt/server_args.py); the fraction is the one Envelope sized the pool with
// (SGLang 0.5 on an H100 at TP 1: 0.874, tests/core/test_serving_engines.cpp).
TEST(ConformanceSglang, FlagsAreServerArgsAndTheFractionIsEnvelopes)
{
    const std::set<std::string> known { "--model-path", "--tp-size", "--context-length",
        "--mem-fraction-static", "--max-running-requests", "--chunked-prefill-size",
        "--kv-cache-dtype", "--quantization", "--speculative-algorithm",
        "--speculative-draft-model-path", "--speculative-num-steps", "--speculative-eagle-topk",
        "--speculative-num-draft-tokens" };
    const Plan plan = defaultPlanWith({ "gpu=\"h100-sxm\"", "serving.engine=\"sglang\"",
        "serving.kv_bits=8", "serving.weight_bits=8", "serving.context=4096" });
    const EngineConfig c = exportOf(plan, Engine::Sglang);
    const auto f = commandFlags(c.text);
    for (const auto& [name, value] : f)
        EXPECT_TRUE(known.contains(name)) << name << " is not an SGLang server argument";
    EXPECT_EQ(f.at("--tp-size"), "1");
    EXPECT_EQ(f.at("--context-length"), "4096");
    EXPECT_EQ(f.at("--mem-fraction-static"), "0.874");
    EXPECT_EQ(f.at("--kv-cache-dtype"), "fp8_e5m2");
    EXPECT_EQ(f.at("--quantization"), "fp8");
    EXPECT_EQ(f.at("--max-running-requests"), std::to_string(plan.serving.concurrency));
    EXPECT_NE(c.text.find("python3 -m sglang.launch_server"), std::string::npos) << c.text;
    EXPECT_FALSE(anyWarningMentions(c, "serving.engine"));

    // The plan's engine is vLLM: no fraction flag, and a warning that the pool is vLLM's.
    const EngineConfig v = exportOf(defaultPlanWith({}), Engine::Sglang);
    EXPECT_FALSE(commandFlags(v.text).contains("--mem-fraction-static"));
    EXPECT_TRUE(anyWarningMentions(v, "serving.engine = \"vllm\""));
}

// SGLang's chain drafting at top-k 1: num_draft_tokens = num_steps + 1 (server_args.py adjusts
// it to that when topk is 1); DeepSeek's MTP module runs as SGLang's EAGLE draft.
TEST(ConformanceSglang, SpeculativeDecodingAsAChain)
{
    const EngineConfig c = exportOf(defaultPlanWith({ "model=\"deepseek-v3\"", "gpu=\"h200\"",
                                        "cluster.gpus=8", "serving.tp=8", "serving.engine=\"sglang\"",
                                        R"(serving.speculative={"kind": "mtp", "tokens": 2, "acceptance": 0.8})" }),
        Engine::Sglang);
    const auto f = commandFlags(c.text);
    EXPECT_EQ(f.at("--speculative-algorithm"), "EAGLE");
    EXPECT_EQ(f.at("--speculative-num-steps"), "2");
    EXPECT_EQ(f.at("--speculative-eagle-topk"), "1");
    EXPECT_EQ(f.at("--speculative-num-draft-tokens"), "3");
    EXPECT_FALSE(f.contains("--speculative-draft-model-path"));
    const EngineConfig eagle = exportOf(defaultPlanWith({ "serving.engine=\"sglang\"",
        R"(serving.speculative={"kind": "eagle", "tokens": 3, "acceptance": 0.7})" }),
        Engine::Sglang);
    EXPECT_EQ(commandFlags(eagle.text).at("--speculative-draft-model-path"), "EAGLE_HEAD");
    EXPECT_TRUE(anyWarningMentions(eagle, "EAGLE_HEAD"));
}

// `--to trtllm`: trtllm-serve's flags; what has no flag goes to extra_llm_api_options.yaml.
TEST(ConformanceTrtllm, FlagsAndTheExtraOptionsFile)
{
    const std::set<std::string> known { "--backend", "--tp_size", "--max_batch_size",
        "--max_num_tokens", "--max_seq_len", "--kv_cache_free_gpu_memory_fraction",
        "--extra_llm_api_options" };
    const EngineConfig plain
        = exportOf(defaultPlanWith({ "serving.engine=\"trtllm\"" }), Engine::Trtllm);
    const auto f = commandFlags(plain.text);
    for (const auto& [name, value] : f)
        EXPECT_TRUE(known.contains(name)) << name << " is not a trtllm-serve option";
    EXPECT_EQ(f.at("--backend"), "pytorch");
    EXPECT_EQ(f.at("--kv_cache_free_gpu_memory_fraction"), "0.9");
    EXPECT_GE(std::stoll(f.at("--max_num_tokens")), std::stoll(f.at("--max_batch_size")));
    EXPECT_TRUE(plain.companions.empty());
    EXPECT_FALSE(f.contains("--extra_llm_api_options"));

    const EngineConfig mtp = exportOf(defaultPlanWith({ "model=\"deepseek-v3\"", "gpu=\"h200\"",
                                          "cluster.gpus=8", "serving.tp=8", "serving.kv_bits=8",
                                          "serving.engine=\"trtllm\"",
                                          R"(serving.speculative={"kind": "mtp", "tokens": 3, "acceptance": 0.8})" }),
        Engine::Trtllm);
    EXPECT_EQ(commandFlags(mtp.text).at("--extra_llm_api_options"), "extra_llm_api_options.yaml");
    ASSERT_EQ(mtp.companions.size(), 1u);
    EXPECT_EQ(mtp.companions[0].fileName, "extra_llm_api_options.yaml");
    const std::string& yaml = mtp.companions[0].text;
    EXPECT_NE(yaml.find("kv_cache_config:\n  dtype: fp8\n"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 3\n"),
        std::string::npos)
        << yaml;
}

} // namespace
} // namespace envelope::testing
