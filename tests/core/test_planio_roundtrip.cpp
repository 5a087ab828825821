// Plans read with their documented defaults, and the canonical writer round-trips every form:
// readPlan(writePlan(p)) == p and writePlan(readPlan(writePlan(p))) == writePlan(p).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// A Llama-2-7B config.json as Hugging Face ships it (meta-llama/Llama-2-7b-hf).
constexpr const char* kLlamaConfig = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
  "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
  "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "hidden_act": "silu",
  "torch_dtype": "float16"
})";

ReadOptions optionsWithConfig()
{
    ReadOptions options;
    options.baseDir = "/plans";
    options.readFile = [](const std::string& path) -> Expected<std::string> {
        if (path == "/plans/models/config.json")
            return std::string(kLlamaConfig);
        return Error { "", "no such file" };
    };
    return options;
}

void expectRoundTrip(const std::string& json, const ReadOptions& options = {})
{
    const PresetLibrary presets = testPresets();
    const Expected<Plan> first = readPlan(json, presets, options);
    ASSERT_TRUE(first.ok()) << first.error().toString() << "\n" << json;
    const std::string written = writePlan(*first);
    const Expected<Plan> second = readPlan(written, presets, options);
    ASSERT_TRUE(second.ok()) << second.error().toString() << "\n" << written;
    EXPECT_TRUE(*second == *first) << written;
    EXPECT_EQ(writePlan(*second), written);
}

TEST(PlanRead, AbsentSectionsTakeTheDocumentedDefaults)
{
    const Expected<Plan> plan = readPlan(kMinimalPlan, testPresets());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    const Plan& p = *plan;
    // docs/plan-format.md: every default, stated there and checked here one by one.
    EXPECT_EQ(p.model.form, ModelChoice::Form::Preset);
    EXPECT_EQ(p.model.arch, llama2_7bShape());
    EXPECT_EQ(p.gpu.presetId, "h100-sxm");
    EXPECT_EQ(p.gpu.gpu.memoryBytes, 81559.0 * 1024 * 1024);
    EXPECT_EQ(p.cluster.gpus, 8);
    EXPECT_EQ(p.cluster.gpusPerNode, 8);
    EXPECT_EQ(p.training.recipe.presetId, "bf16-mixed-16");
    EXPECT_EQ(p.training.recipe.recipe.masterBytes, 4);
    EXPECT_EQ(p.training.optimizer, OptimizerKind::AdamW);
    EXPECT_EQ(p.training.zeroStage, 0);
    EXPECT_EQ(p.training.tp * p.training.pp * p.training.cp * p.training.ep, 1);
    EXPECT_EQ(p.training.microBatch, 1);
    EXPECT_EQ(p.training.gradAccum, 1);
    EXPECT_EQ(p.training.seqLen, 4096);
    EXPECT_EQ(p.training.recompute, Recompute::Selective);
    EXPECT_TRUE(p.training.flashAttention);
    EXPECT_EQ(p.training.mfu, 0.45);
    EXPECT_EQ(p.training.trainTokens, 2e12);
    EXPECT_EQ(p.training.activationModel.kind, ActivationModel::Kind::Tensors);
    EXPECT_EQ(p.training.overhead.fixedBytes, 2.5e9);
    EXPECT_EQ(p.training.overhead.fragmentation, 0.1);
    EXPECT_FALSE(p.training.observedStepTimeS.has_value());
    EXPECT_EQ(p.serving.weightBits, 16);
    EXPECT_EQ(p.serving.context, 8192);
    EXPECT_EQ(p.serving.concurrency, 64);
    EXPECT_EQ(p.serving.blockSize, 16);
    EXPECT_EQ(p.serving.gpuMemoryUtilization, 0.9);
    EXPECT_EQ(p.rl.algorithm, RlAlgorithm::Grpo);
    EXPECT_EQ(p.rl.trainerGpus + p.rl.referenceGpus + p.rl.rolloutGpus, 8);
    EXPECT_EQ(p.rl.groupSize, 8);
}

TEST(PlanRead, EveryFieldIsReadIntoThePlan)
{
    const std::string json = R"({
      "format": "envelope.plan", "version": 1, "name": "everything",
      "model": "test-7b",
      "gpu": {"name": "my GPU", "memory_bytes": 5e10, "bf16_tflops": 400.5, "fp8_tflops": 801,
              "hbm_gbps": 1600.3, "intra_node_gbps": 200, "inter_node_gbps": 12.5,
              "price_per_hour": 1.25},
      "cluster": {"gpus": 32, "gpus_per_node": 4},
      "training": {"recipe": {"weights": 2, "gradients": 4, "master": 4, "optimizer": 6},
                   "optimizer": "lion", "zero_stage": 2, "tp": 2, "pp": 2, "cp": 2, "ep": 2,
                   "sequence_parallel": true, "virtual_stages": 2, "micro_batch": 2,
                   "grad_accum": 16, "seq_len": 8192, "recompute": "every-k",
                   "recompute_every": 4, "flash_attention": false, "offload_optimizer": true,
                   "offload_params": true, "mfu": 0.38, "train_tokens": 1.5e11,
                   "comm_overlap": 0.5, "activation_model": {"bytes_per_sbh_per_layer": 24},
                   "activation_calibration": 1.2,
                   "overhead": {"fixed_bytes": 0, "fragmentation": 0},
                   "observed_step_time_s": 12.5, "observed_tokens_per_s": null,
                   "budget_usd": 100000, "deadline_s": 864000},
      "serving": {"weight_bits": 4, "kv_bits": 8, "quant_group_size": 64, "tp": 4,
                  "context": 32768, "concurrency": 16, "block_size": 32,
                  "gpu_memory_utilization": 0.85, "max_batched_tokens": 4096,
                  "average_length": 2000, "runtime_overhead_bytes": 1e9,
                  "decode_efficiency": 0.7},
      "rl": {"algorithm": "ppo", "placement": "colocated", "trainer_gpus": 16,
             "reference_gpus": 0, "rollout_gpus": 0, "critic_gpus": 8, "reward_gpus": 4,
             "prompts_per_step": 64, "group_size": 4, "prompt_len": 256, "response_len": 1024,
             "old_policy_bytes_per_param": 2, "kl": false, "rollout_tokens_per_s": 20000,
             "off_policy_pipeline": true}
    })";
    const Expected<Plan> plan = readPlan(json, testPresets());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    const Plan& p = *plan;
    EXPECT_EQ(p.name, "everything");
    EXPECT_TRUE(p.gpu.presetId.empty());
    EXPECT_EQ(p.gpu.gpu.memoryBytes, 5e10);
    EXPECT_DOUBLE_EQ(p.gpu.gpu.bf16Flops, 400.5e12);
    EXPECT_DOUBLE_EQ(p.gpu.gpu.hbmBytesPerS, 1600.3e9);
    EXPECT_EQ(p.gpu.gpu.interNodeBytesPerS, 12.5e9);
    EXPECT_TRUE(p.training.recipe.presetId.empty());
    EXPECT_EQ(p.training.recipe.recipe.gradientBytes, 4);
    // A custom recipe's optimizer bytes are used as given, whatever the optimizer's moments.
    EXPECT_EQ(optimizerStateBytesPerParam(p.training.recipe.recipe, OptimizerKind::Lion), 6);
    EXPECT_EQ(p.training.optimizer, OptimizerKind::Lion);
    EXPECT_EQ(p.training.recompute, Recompute::EveryK);
    EXPECT_EQ(p.training.recomputeEvery, 4);
    EXPECT_EQ(p.training.activationModel.kind, ActivationModel::Kind::SimpleSbh);
    EXPECT_EQ(p.training.activationModel.calibration, 1.2);
    EXPECT_EQ(p.training.observedStepTimeS, 12.5);
    EXPECT_FALSE(p.training.observedTokensPerS.has_value());
    EXPECT_EQ(p.training.budgetUsd, 100000);
    EXPECT_EQ(p.serving.kvBits, 8);
    EXPECT_EQ(p.serving.averageLength, 2000);
    EXPECT_EQ(p.rl.algorithm, RlAlgorithm::Ppo);
    EXPECT_EQ(p.rl.placement, RlPlacement::Colocated);
    EXPECT_EQ(p.rl.rolloutTokensPerS, 20000);
    EXPECT_TRUE(p.rl.offPolicyPipeline);

    expectRoundTrip(json);
    // Rates are written back in the units they were read in, digit for digit.
    const std::string written = writePlan(p);
    EXPECT_NE(written.find("\"bf16_tflops\": 400.5"), std::string::npos) << written;
    EXPECT_NE(written.find("\"hbm_gbps\": 1600.3"), std::string::npos) << written;
    EXPECT_NE(written.find("\"observed_tokens_per_s\": null"), std::string::npos);
}

struct ModelForm {
    const char* name;
    const char* model; // the "model" value
    ModelChoice::Form form;
};

class PlanModelForm : public ::testing::TestWithParam<ModelForm> { };

TEST_P(PlanModelForm, RoundTripsThroughTheCanonicalWriter)
{
    const std::string json = std::string(R"({"model": )") + GetParam().model
        + R"(, "gpu": "h100-sxm", "serving": {"context": 4096}})";
    expectRoundTrip(json, optionsWithConfig());
    const Expected<Plan> plan = readPlan(json, testPresets(), optionsWithConfig());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_EQ(plan->model.form, GetParam().form);
    EXPECT_GT(plan->model.arch.layers, 0);
}

INSTANTIATE_TEST_SUITE_P(Forms, PlanModelForm,
    ::testing::Values(ModelForm { "Preset", R"("test-7b")", ModelChoice::Form::Preset },
        ModelForm { "PresetOverrides", R"({"preset": "test-7b", "layers": 16, "kv_heads": 8})",
            ModelChoice::Form::PresetOverrides },
        ModelForm { "Params", R"({"params": 7e9})", ModelChoice::Form::Params },
        ModelForm {
            "HfConfig", R"({"hf_config": "models/config.json"})", ModelChoice::Form::HfConfig },
        ModelForm { "Architecture",
            R"({"name": "tiny", "layers": 4, "hidden": 512, "ffn_hidden": 1376,
                      "heads": 8, "kv_heads": 2, "vocab": 32000, "ffn": "gated",
                      "norm": "rmsnorm", "max_positions": 4096})",
            ModelChoice::Form::Architecture }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PlanRead, PresetOverridesChangeOnlyTheNamedKeys)
{
    const Expected<Plan> plan = readPlan(
        R"({"model": {"preset": "test-7b", "layers": 16}, "gpu": "h100-sxm"})", testPresets());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    ModelArch expected = llama2_7bShape();
    expected.layers = 16;
    EXPECT_EQ(plan->model.arch.layers, 16);
    EXPECT_EQ(plan->model.arch.hidden, expected.hidden);
    EXPECT_EQ(plan->model.arch.ffnHidden, expected.ffnHidden);
    EXPECT_EQ(plan->model.presetId, "test-7b");
}

TEST(PlanRead, HfConfigPathIsResolvedAgainstThePlanFolder)
{
    const Expected<Plan> plan
        = readPlan(R"({"model": {"hf_config": "models/config.json"}, "gpu": "h100-sxm"})",
            testPresets(), optionsWithConfig());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_EQ(plan->model.hfConfigPath, "models/config.json"); // written back as written
    EXPECT_EQ(plan->model.arch.hidden, 4096);
    EXPECT_EQ(plan->model.arch.layers, 32);

    const Expected<Plan> missing
        = readPlan(R"({"model": {"hf_config": "nope.json"}, "gpu": "h100-sxm"})", testPresets(),
            optionsWithConfig());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().toString(),
        "model.hf_config: cannot read \"/plans/nope.json\": no such file");
}

TEST(PlanRead, TheShippedDefaultPlanReadsAndRoundTrips)
{
    const Expected<PresetLibrary> presets = builtinPresets();
    ASSERT_TRUE(presets.ok()) << presets.error().toString();
    const Expected<Plan> plan = readPlan(presets->defaultPlanJson, *presets);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_EQ(plan->name, "Llama-2 7B SFT on 8x H100");
    EXPECT_EQ(plan->model.presetId, "llama-2-7b");
    EXPECT_EQ(plan->training.zeroStage, 3);
    EXPECT_EQ(plan->training.gradAccum, 8);
    const std::string written = writePlan(*plan);
    const Expected<Plan> again = readPlan(written, *presets);
    ASSERT_TRUE(again.ok()) << again.error().toString();
    EXPECT_TRUE(*again == *plan);
    // The shipped file is itself in canonical form (modulo number spelling: 2e12 vs digits).
    EXPECT_EQ(nlohmann::json::parse(written), nlohmann::json::parse(presets->defaultPlanJson));
}

} // namespace
} // namespace envelope
