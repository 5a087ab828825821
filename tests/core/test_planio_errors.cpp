// readPlan refuses every class of bad input with the JSON path and the allowed range: wrong
// types, out-of-range and absurd values, unknown keys, newer versions, impossible combinations
// and text that is not JSON at all. Each row states the exact message a user would see.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

struct BadPlan {
    const char* name;
    // JSON pointer -> value patched into the minimal plan; the value "<erase>" removes the key.
    std::vector<std::pair<const char*, nlohmann::json>> patches;
    const char* expected; // Error::toString(), whole or (with `prefix`) its start
    bool prefix = false;
};

std::string patched(const BadPlan& row)
{
    nlohmann::json plan = nlohmann::json::parse(kMinimalPlan);
    for (const auto& [pointer, value] : row.patches) {
        const nlohmann::json::json_pointer p(pointer);
        if (value == "<erase>")
            plan.at(p.parent_pointer()).erase(p.back());
        else
            plan[p] = value;
    }
    return plan.dump();
}

class PlanBadInput : public ::testing::TestWithParam<BadPlan> { };

TEST_P(PlanBadInput, IsRefusedNamingThePathAndTheRange)
{
    const BadPlan& row = GetParam();
    const Expected<Plan> plan = readPlan(patched(row), testPresets());
    ASSERT_FALSE(plan.ok()) << patched(row);
    const std::string message = plan.error().toString();
    if (row.prefix)
        EXPECT_EQ(message.rfind(row.expected, 0), 0u) << message;
    else
        EXPECT_EQ(message, row.expected);
}

using J = nlohmann::json;

INSTANTIATE_TEST_SUITE_P(Table, PlanBadInput,
    ::testing::Values(
        // Ranges and types of single fields.
        BadPlan { "ZeroStageOutOfRange", { { "/training/zero_stage", 5 } },
            "training.zero_stage: must be 0..3, got 5" },
        BadPlan { "ZeroStageAsString", { { "/training/zero_stage", "3" } },
            "training.zero_stage: must be 0..3, got \"3\" (a string)" },
        BadPlan { "ZeroStageFractional", { { "/training/zero_stage", 1.5 } },
            "training.zero_stage: must be a whole number 0..3, got 1.5" },
        BadPlan {
            "MfuZero", { { "/training/mfu", 0 } }, "training.mfu: must be 0.001..1, got 0" },
        BadPlan { "MfuAboveOne", { { "/training/mfu", 1.5 } },
            "training.mfu: must be 0.001..1, got 1.5" },
        BadPlan { "MfuNegative", { { "/training/mfu", -0.1 } },
            "training.mfu: must be 0.001..1, got -0.1" },
        BadPlan { "TrainTokensAbsurd", { { "/training/train_tokens", 1e30 } },
            "training.train_tokens: must be 1..1e17, got 1e30" },
        BadPlan { "MicroBatchZero", { { "/training/micro_batch", 0 } },
            "training.micro_batch: must be 1..1000000, got 0" },
        BadPlan { "SeqLenNegative", { { "/training/seq_len", -4096 } },
            "training.seq_len: must be 1..100000000, got -4096" },
        BadPlan { "FragmentationTooLarge", { { "/training/overhead/fragmentation", 2 } },
            "training.overhead.fragmentation: must be 0..0.9, got 2" },
        BadPlan { "FixedBytesNegative", { { "/training/overhead/fixed_bytes", -1 } },
            "training.overhead.fixed_bytes: must be 0..1e13, got -1" },
        BadPlan { "ObservedStepTimeNegative", { { "/training/observed_step_time_s", -1 } },
            "training.observed_step_time_s: must be 1e-6..1e9, got -1 (or null)" },
        BadPlan { "BooleanAsString", { { "/training/sequence_parallel", "yes" } },
            "training.sequence_parallel: must be true or false, got \"yes\" (a string)" },
        BadPlan { "RecomputeUnknown", { { "/training/recompute", "sometimes" } },
            "training.recompute: must be \"none\", \"selective\", \"full\" or \"every-k\", "
            "got \"sometimes\" (a string)" },
        BadPlan { "OptimizerNumber", { { "/training/optimizer", 3 } },
            "training.optimizer: must be \"adamw\", \"adam\", \"lion\", \"sgd-momentum\", "
            "\"sgd\", \"adafactor\", \"adamw-8bit\", \"paged-adamw\" or \"paged-adamw-8bit\", "
            "got 3" },
        BadPlan { "ActivationOffloadZero", { { "/training/activation_offload", 0 } },
            "training.activation_offload: must be false, true (every layer) or a layer count "
            "1..100000, got 0" },
        BadPlan { "ActivationOffloadString", { { "/training/activation_offload", "all" } },
            "training.activation_offload: must be false, true (every layer) or a layer count "
            "1..100000, got \"all\" (a string)" },
        BadPlan { "OptimizerInBackwardString", { { "/training/optimizer_in_backward", "yes" } },
            "training.optimizer_in_backward: must be true or false, got \"yes\" (a string)" },
        BadPlan { "ActivationModelUnknown", { { "/training/activation_model", "simple" } },
            "training.activation_model: must be \"tensors\" or {\"bytes_per_sbh_per_layer\": "
            "k x bytes}, got \"simple\" (a string)" },
        BadPlan { "ActivationConstantNegative",
            { { "/training/activation_model", J { { "bytes_per_sbh_per_layer", -1 } } } },
            "training.activation_model.bytes_per_sbh_per_layer: must be > 0 and <= 10000, "
            "got -1" },
        BadPlan { "TrainingNotAnObject", { { "/training", 5 } },
            "training: must be a JSON object, got 5" },
        BadPlan { "ClusterNoGpus", { { "/cluster/gpus", 0 } },
            "cluster.gpus: must be 1..1000000, got 0" },
        BadPlan { "ServingUtilisationAboveOne", { { "/serving/gpu_memory_utilization", 1.2 } },
            "serving.gpu_memory_utilization: must be 0.01..1, got 1.2" },
        BadPlan { "ServingWeightBits", { { "/serving/weight_bits", 6 } },
            "serving.weight_bits: must be 4, 8 or 16, got 6" },
        BadPlan { "RlAlgorithmUnknown", { { "/rl/algorithm", "sac" } },
            "rl.algorithm: must be \"ppo\", \"grpo\" or \"dpo\", got \"sac\" (a string)" },
        BadPlan { "RlPromptsZero", { { "/rl/prompts_per_step", 0 } },
            "rl.prompts_per_step: must be 1..10000000, got 0" },
        // Recipes and GPUs.
        BadPlan { "RecipeUnknown", { { "/training/recipe", "bf17" } },
            "training.recipe: unknown recipe \"bf17\" (known: bf16-mixed-16, ", true },
        BadPlan { "CustomRecipeMissingOptimizer",
            { { "/training/recipe", J { { "weights", 2 }, { "gradients", 2 }, { "master", 4 } } } },
            "training.recipe.optimizer: is required" },
        BadPlan { "CustomRecipeZeroWeights",
            { { "/training/recipe",
                J { { "weights", 0 }, { "gradients", 2 }, { "master", 4 }, { "optimizer", 8 } } } },
            "training.recipe.weights: must be > 0 and <= 64, got 0" },
        BadPlan { "GpuUnknown", { { "/gpu", "h1000" } },
            "gpu: unknown GPU preset \"h1000\" (known: h100-sxm, ", true },
        BadPlan { "GpuNumber", { { "/gpu", 5 } },
            "gpu: must be a preset id (a string) or an object, got 5" },
        BadPlan { "GpuObjectZeroMemory",
            { { "/gpu",
                J { { "memory_bytes", 0 }, { "bf16_tflops", 1 }, { "hbm_gbps", 1 },
                    { "intra_node_gbps", 1 }, { "inter_node_gbps", 1 } } } },
            "gpu.memory_bytes: must be 1e8..1e13, got 0" },
        // Unit slips (issue 11): 80 typed for 80 GB, gigabits typed into GB/s fields.
        BadPlan { "GpuMemoryInGigabytes",
            { { "/gpu",
                J { { "memory_bytes", 80 }, { "bf16_tflops", 989 }, { "hbm_gbps", 3350 },
                    { "intra_node_gbps", 450 }, { "inter_node_gbps", 50 } } } },
            "gpu.memory_bytes: must be >= 1e8 bytes (100 MB), got 80: did you mean 80 GB = 8e10 "
            "bytes?" },
        BadPlan { "GpuNicInGigabits",
            { { "/gpu",
                J { { "memory_bytes", 8e10 }, { "bf16_tflops", 989 }, { "hbm_gbps", 3350 },
                    { "intra_node_gbps", 450 }, { "inter_node_gbps", 400 } } } },
            "gpu.inter_node_gbps: must be <= 200 GB/s (bytes per second, one direction), got "
            "400: did you mean 400 Gb/s = 50 GB/s?" },
        BadPlan { "GpuNvlinkInGigabits",
            { { "/gpu",
                J { { "memory_bytes", 8e10 }, { "bf16_tflops", 989 }, { "hbm_gbps", 3350 },
                    { "intra_node_gbps", 3600 }, { "inter_node_gbps", 50 } } } },
            "gpu.intra_node_gbps: must be <= 2000 GB/s (bytes per second, one direction), got "
            "3600: did you mean 3600 Gb/s = 450 GB/s?" },
        BadPlan { "GpuHbmInGigabits",
            { { "/gpu",
                J { { "memory_bytes", 8e10 }, { "bf16_tflops", 989 }, { "hbm_gbps", 38400 },
                    { "intra_node_gbps", 450 }, { "inter_node_gbps", 50 } } } },
            "gpu.hbm_gbps: must be <= 30000 GB/s (bytes per second, one direction), got "
            "38400: did you mean 38400 Gb/s = 4800 GB/s?" },
        BadPlan { "GpuHostLinkInGigabits",
            { { "/gpu",
                J { { "memory_bytes", 8e10 }, { "bf16_tflops", 989 }, { "hbm_gbps", 3350 },
                    { "intra_node_gbps", 450 }, { "inter_node_gbps", 50 },
                    { "host_link_gbps", 1024 } } } },
            "gpu.host_link_gbps: must be <= 1000 GB/s (bytes per second, one direction), got "
            "1024: did you mean 1024 Gb/s = 128 GB/s?" },
        BadPlan { "GpuObjectMissingPeak", { { "/gpu", J { { "memory_bytes", 8e10 } } } },
            "gpu.bf16_tflops: is required" },
        // Models.
        BadPlan { "ModelUnknown", { { "/model", "llama-9" } },
            "model: unknown model preset \"llama-9\" (known: ", true },
        BadPlan { "ModelMissing", { { "/model", "<erase>" } }, "model: is required" },
        BadPlan { "ModelArray", { { "/model", J::array() } },
            "model: must be a preset id (a string) or an object, got an array" },
        BadPlan { "HfConfigWithoutReader", { { "/model", J { { "hf_config", "config.json" } } } },
            "model.hf_config: reading a config.json is not available here (no file reader "
            "given)" },
        // Unknown keys, formats and versions.
        BadPlan { "UnknownTrainingKey", { { "/training/zero_stge", 3 } },
            "training.zero_stge: unknown key (did you mean \"zero_stage\"?)" },
        BadPlan { "UnknownOverheadKey", { { "/training/overhead/fixed_byte", 0 } },
            "training.overhead.fixed_byte: unknown key (did you mean \"fixed_bytes\"?)" },
        BadPlan { "UnknownTopLevelKey", { { "/colour", "blue" } },
            "colour: unknown key (known keys: ", true },
        BadPlan { "NewerVersion", { { "/version", 2 }, { "/new_section", J::object() } },
            "version: this plan is envelope.plan version 2; this Envelope reads version 1 — "
            "update Envelope" },
        BadPlan { "WrongFormat", { { "/format", "envelope.result" } },
            "format: must be \"envelope.plan\", got \"envelope.result\"" },
        // Combinations no framework runs.
        BadPlan { "GpusNotMultipleOfModelParallel",
            { { "/cluster/gpus", 6 }, { "/training/tp", 4 } },
            "cluster.gpus: must be a multiple of tp x pp x cp = 4 x 1 x 1 = 4, got 6" },
        BadPlan { "TpDoesNotDivideHeads", { { "/cluster/gpus", 6 }, { "/training/tp", 3 } },
            "training.tp: must divide the model's 32 attention heads, got 3" },
        BadPlan { "EpDoesNotDivideDataParallel", { { "/training/ep", 3 } },
            "training.ep: must divide the data-parallel size gpus / (tp x pp x cp) = 8 / 1 = "
            "8, got 3" },
        BadPlan { "PpMoreThanLayers", { { "/cluster/gpus", 64 }, { "/training/pp", 64 } },
            "training.pp: must be at most the model's 32 layers, got 64" },
        BadPlan { "SeqLenNotMultipleOfCp", { { "/training/cp", 2 }, { "/training/seq_len", 4097 } },
            "training.seq_len: must be a multiple of cp = 2, got 4097" },
        BadPlan { "ServingTpDoesNotDivideHeads", { { "/serving/tp", 5 } },
            "serving.tp: must divide the model's 32 attention heads, got 5" },
        BadPlan { "AverageLengthAboveContext", { { "/serving/average_length", 9000 } },
            "serving.average_length: must be at most the context (8192), got 9000" },
        BadPlan { "DisjointRlWithoutRollout", { { "/rl/rollout_gpus", 0 } },
            "rl.rollout_gpus: must be at least 1 with disjoint placement, got 0" }),
    [](const auto& info) { return std::string(info.param.name); });

struct BadText {
    const char* name;
    const char* text;
    const char* expected;
    bool prefix = false;
};

class PlanBadText : public ::testing::TestWithParam<BadText> { };

TEST_P(PlanBadText, IsRefusedWithoutACrash)
{
    const Expected<Plan> plan = readPlan(GetParam().text, testPresets());
    ASSERT_FALSE(plan.ok());
    const std::string message = plan.error().toString();
    if (GetParam().prefix)
        EXPECT_EQ(message.rfind(GetParam().expected, 0), 0u) << message;
    else
        EXPECT_EQ(message, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Table, PlanBadText,
    ::testing::Values(BadText { "Empty", "", "not valid JSON: the text is empty" },
        BadText { "Whitespace", " \n\t", "not valid JSON: the text is empty" },
        BadText { "Truncated", "{\"model\": ", "model: not valid JSON: parse error at line 1", true },
        BadText { "BinaryJunk", "\x7f\x45\x4c\x46\x02\x01\xff\xfe", "not valid JSON", true },
        BadText { "NanLiteral",
            "{\"model\": \"test-7b\", \"gpu\": \"h100-sxm\", "
            "\"training\": {\"mfu\": NaN}}",
            "training.mfu: not valid JSON", true },
        BadText { "HugeNumber",
            "{\"model\": \"test-7b\", \"gpu\": \"h100-sxm\", "
            "\"training\": {\"mfu\": 1e999}}",
            "training.mfu: not valid JSON", true },
        BadText { "Array", "[1, 2]", "a plan must be a JSON object, got an array" },
        BadText { "Null", "null", "a plan must be a JSON object, got null" }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PlanValidation, CodeBuiltPlansGetTheSameMessagesAsReadOnes)
{
    const Expected<Plan> read = readPlan(kMinimalPlan, testPresets());
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(validatePlan(*read), std::nullopt);

    Plan p = *read;
    p.training.zeroStage = 5;
    ASSERT_TRUE(validatePlan(p).has_value());
    EXPECT_EQ(validatePlan(p)->toString(), "training.zero_stage: must be 0..3, got 5");

    p = *read;
    p.training.mfu = std::nan("");
    EXPECT_EQ(validatePlan(p)->toString(), "training.mfu: must be 0.001..1, got NaN");

    p = *read;
    p.gpu.gpu.memoryBytes = -1;
    EXPECT_EQ(validatePlan(p)->toString(), "gpu.memory_bytes: must be 1e8..1e13, got -1");

    p = *read;
    p.cluster.gpus = 12;
    p.training.pp = 8;
    EXPECT_EQ(validatePlan(p)->toString(),
        "cluster.gpus: must be a multiple of tp x pp x cp = 1 x 8 x 1 = 8, got 12");
}

TEST(PlanValidation, LegalButDoubtfulCombinationsAreWarnings)
{
    Expected<Plan> read = readPlan(kMinimalPlan, testPresets());
    ASSERT_TRUE(read.ok());
    // The default serving context (8192) is longer than Llama-2's 4096 positions.
    EXPECT_EQ(planWarnings(*read),
        std::vector<std::string> { "serving.context = 8192 exceeds the model's 4096 positions" });
    read->serving.context = 4096;
    Plan p = *read;
    EXPECT_TRUE(planWarnings(p).empty());

    // GQA with 8 KV heads under tp = 16: heads (32) divide, KV heads get replicated.
    p.model.arch.kvHeads = 8;
    p.cluster.gpus = 16;
    p.training.tp = 16;
    EXPECT_EQ(validatePlan(p), std::nullopt);
    const std::vector<std::string> w = planWarnings(p);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(w[0],
        "training.tp = 16 does not divide the model's 8 KV heads: KV heads are "
        "replicated across the tensor-parallel group");

    p = *read;
    p.training.sequenceParallel = true;
    p.training.seqLen = 8192; // the test model has 4096 positions
    const std::vector<std::string> w2 = planWarnings(p);
    ASSERT_EQ(w2.size(), 2u);
    EXPECT_EQ(w2[0], "training.sequence_parallel has no effect with tp = 1");
    EXPECT_EQ(w2[1], "training.seq_len = 8192 exceeds the model's 4096 positions");
}

} // namespace
} // namespace envelope
