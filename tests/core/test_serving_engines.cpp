// The serving engines' own memory accounting (issue 27: `serving.engine`, `serving.engine_version`,
// presets/engines.json): SGLang's mem_fraction_static pool against a published SGLang startup log,
// its default fraction by version, TensorRT-LLM's free-memory fraction, and how a plan's version
// picks a modelled row. Every expected figure is worked out in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "serving/serving.h"

namespace envelope {
namespace {

constexpr double kGiB = 1073741824.0;

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

std::string servingPlan(const std::string& gpu, const std::string& serving)
{
    return R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b", "gpu": ")" + gpu
        + R"(", "cluster": {"gpus": 8, "gpus_per_node": 8}, "serving": )" + serving + "}";
}

Plan readOrDie(const std::string& text)
{
    Expected<Plan> plan = readPlan(text, presets());
    EXPECT_TRUE(bool(plan)) << (plan ? "" : plan.error().toString());
    return plan ? *plan : Plan {};
}

ServingEstimate servingOf(const std::string& gpu, const std::string& serving)
{
    const Plan plan = readOrDie(servingPlan(gpu, serving));
    return estimate(plan).serving;
}

// SGLang's docs ("Quick Start: Sending Requests", server log of 2025-01-23): Llama 3.1 8B
// Instruct, tp_size=1, mem_fraction_static=0.88 on an 80 GB device:
//   Load weight begin. avail mem=78.81 GB / Load weight end ... avail mem=63.72 GB
//   KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB / max_total_num_tokens=444500
// profile_max_num_token: rest = 63.72 - 78.81 x (1 - 0.88) = 54.26 GiB = K + V.
// Envelope, by hand: torch total 85,029,158,912 B (79.19 GiB) - startup 0.38 GiB
// (408,021,893 B) = M0 84,621,137,019 B; x 0.88 = 74,466,600,576.7 B; - bf16 weights
// 8,030,261,248 x 2 = 16,060,522,496 B -> 58,406,078,080.7 B = 54.395 GiB (+0.25% against 54.26:
// SGLang's weights took 15.09 GiB, Envelope's 14.96). Tokens at 131,072 B each (8 KV heads x
// 128 x 32 layers x 2 x 2 B): 445,603, in whole 16-token blocks 445,600 (+0.25% against 444,500).
TEST(ServingEngines, SglangPoolMatchesThePublishedStartupLog)
{
    const ServingEstimate s = servingOf("h100-sxm",
        R"({"engine": "sglang", "engine_version": "0.4.1", "tp": 1, "context": 8192})");
    EXPECT_EQ(s.engine, "sglang");
    EXPECT_EQ(s.engineVersion, "0.4");
    EXPECT_DOUBLE_EQ(s.memoryFraction, 0.88);
    EXPECT_NEAR(s.kvBudgetBytes, 58'406'078'080.7, 2.0);
    EXPECT_NEAR(s.kvBudgetBytes / (54.26 * kGiB), 1.0, 0.005);
    EXPECT_DOUBLE_EQ(s.maxTokens, 445'600.0);
    EXPECT_NEAR(s.maxTokens / 444'500.0, 1.0, 0.005);
    // The static line is what SGLang allocates with a full pool: weights + KV + the startup
    // memory = 408,021,893 + 74,466,600,576.7 B; the reserve M0 x 0.12 = 10,154,536,442 B stays
    // unallocated for the forward (its activations sit there) and the CUDA graphs.
    EXPECT_NEAR(s.usableBytes, 408'021'893.0 + 74'466'600'576.7, 4.0);
    EXPECT_NEAR(s.weightsBytesPerGpu + s.kvBudgetBytes + s.overheadBytes, s.usableBytes, 4.0);
    EXPECT_GT(s.activationPeakBytes, 0.0);
    EXPECT_LT(s.activationPeakBytes, 84'621'137'019.0 * 0.12);
}

// SGLang 0.5 (server_args.py _handle_gpu_memory_settings): reserved MiB by device class and
// tp x pp, fraction = round((memory - reserved) / memory, 3) with memory in MiB as nvidia-smi
// reports it:
//   H100 (81,559 MiB), TP 1: reserved (9.5 + 0.5) x 1,024 = 10,240 -> 71,319 / 81,559 = 0.87445 -> 0.874
//   H200 (143,771 MiB), TP 8: (12 + 4) x 1,024 = 16,384 -> 0.88604 -> 0.886
//   H200, TP 8, speculative: + 2,048 = 18,432 -> 0.87180 -> 0.872
//   B200 (183,359 MiB), TP 8: 32 x 1,024 = 32,768 -> 0.82129 -> 0.821
// SGLang 0.4: 0.88 / 0.87 / 0.85 / 0.81 / 0.79 at TP 1 / 2 / 4 / 8 / 16.
TEST(ServingEngines, SglangDefaultFractionFollowsTheVersionsRule)
{
    EXPECT_DOUBLE_EQ(servingOf("h100-sxm", R"({"engine": "sglang", "tp": 1})").memoryFraction, 0.874);
    EXPECT_DOUBLE_EQ(servingOf("h200", R"({"engine": "sglang", "tp": 8})").memoryFraction, 0.886);
    EXPECT_DOUBLE_EQ(servingOf("h200",
                         R"({"engine": "sglang", "tp": 8, "speculative": {"kind": "eagle",
                             "tokens": 2, "acceptance": 0.7}})")
                         .memoryFraction,
        0.872);
    EXPECT_DOUBLE_EQ(servingOf("b200", R"({"engine": "sglang", "tp": 8})").memoryFraction, 0.821);
    const char* v04 = R"({"engine": "sglang", "engine_version": "0.4", "tp": %d})";
    const double expected[] = { 0.88, 0.87, 0.85, 0.81 };
    const int tps[] = { 1, 2, 4, 8 };
    for (int i = 0; i < 4; ++i) {
        char buffer[128];
        std::snprintf(buffer, sizeof buffer, v04, tps[i]);
        EXPECT_DOUBLE_EQ(servingOf("h200", buffer).memoryFraction, expected[i]) << "tp " << tps[i];
    }
    // The plan's own fraction wins: M0 x 0.8 - weights = 67,696,909,615.2 - 16,060,522,496.
    const ServingEstimate own = servingOf("h100-sxm",
        R"({"engine": "sglang", "mem_fraction_static": 0.8, "tp": 1})");
    EXPECT_DOUBLE_EQ(own.memoryFraction, 0.8);
    EXPECT_NEAR(own.kvBudgetBytes, 84'621'137'019.0 * 0.8 - 16'060'522'496.0, 2.0);
}

// TensorRT-LLM: KV = free_gpu_memory_fraction x (torch total - weights - the profiling forward's
// activations - non-torch memory), default 0.9; the other 10% of the free memory stays free.
TEST(ServingEngines, TrtllmTakesItsFractionOfTheFreeMemory)
{
    const ServingEstimate s = servingOf("h100-sxm", R"({"engine": "trtllm", "tp": 1})");
    EXPECT_EQ(s.engine, "trtllm");
    EXPECT_EQ(s.engineVersion, "1.0");
    EXPECT_DOUBLE_EQ(s.memoryFraction, 0.9);
    const double free
        = 85'029'158'912.0 - 16'060'522'496.0 - s.activationPeakBytes - s.overheadBytes;
    EXPECT_DOUBLE_EQ(s.overheadBytes, 1.5e9); // the plan's runtime_overhead_bytes
    EXPECT_NEAR(s.kvBudgetBytes, 0.9 * free, 1.0);
    const ServingEstimate half = servingOf("h100-sxm",
        R"({"engine": "trtllm", "free_gpu_memory_fraction": 0.5, "tp": 1})");
    EXPECT_NEAR(half.kvBudgetBytes, 0.5 * free, 1.0);
}

// The nearest modelled version: the highest row not above the plan's, the lowest for an older
// one, the engine's default when the plan names none; the result names the row used.
TEST(ServingEngines, EngineVersionPicksTheNearestRowAndSaysSo)
{
    const auto versionOf = [](const std::string& serving) {
        return servingOf("h100-sxm", serving);
    };
    const ServingEstimate patch = versionOf(R"({"engine": "sglang", "engine_version": "0.4.6"})");
    EXPECT_EQ(patch.engineVersion, "0.4");
    EXPECT_NE(patch.engineVersionNote.find("SGLang 0.4.6 is modelled as 0.4"), std::string::npos)
        << patch.engineVersionNote;
    EXPECT_EQ(versionOf(R"({"engine": "sglang", "engine_version": "0.5.4"})").engineVersion, "0.5");
    EXPECT_EQ(versionOf(R"({"engine": "sglang", "engine_version": "v0.6"})").engineVersion, "0.5");
    EXPECT_EQ(versionOf(R"({"engine": "sglang", "engine_version": "0.3.0"})").engineVersion, "0.3");
    // Older than every row: the lowest row, named.
    EXPECT_EQ(versionOf(R"({"engine": "sglang", "engine_version": "0.2.9"})").engineVersion, "0.3");
    EXPECT_EQ(versionOf(R"({"engine_version": "0.5.4"})").engineVersion, "0.6");
    const ServingEstimate plain = versionOf(R"({"engine": "sglang"})");
    EXPECT_EQ(plain.engineVersion, "0.5");
    EXPECT_TRUE(plain.engineVersionNote.empty());
    EXPECT_EQ(versionOf(R"({"engine_version": "0.19.1"})").engineVersion, "0.19");

    // Named in the result JSON.
    const Plan plan = readOrDie(servingPlan("h100-sxm",
        R"({"engine": "sglang", "engine_version": "0.4.6"})"));
    const nlohmann::json j = nlohmann::json::parse(writeResult(plan, estimate(plan)));
    EXPECT_EQ(j["serving"]["engine"], "sglang");
    EXPECT_EQ(j["serving"]["engine_version"], "0.4");
    EXPECT_TRUE(j["serving"].contains("engine_version_note"));
    EXPECT_DOUBLE_EQ(j["serving"]["memory_fraction"].get<double>(), 0.85 + 0.03);
}

TEST(ServingEngines, BadEngineKeysNameTheFieldAndTheAllowedValues)
{
    const auto errorOf = [](const std::string& serving) {
        Expected<Plan> plan = readPlan(servingPlan("h100-sxm", serving), presets());
        return plan ? std::string() : plan.error().toString();
    };
    std::string e = errorOf(R"({"engine": "tgi"})");
    EXPECT_NE(e.find("serving.engine"), std::string::npos) << e;
    EXPECT_NE(e.find("\"sglang\""), std::string::npos) << e;
    EXPECT_NE(e.find("\"trtllm\""), std::string::npos) << e;
    e = errorOf(R"({"engine": "sglang", "engine_version": "main"})");
    EXPECT_NE(e.find("serving.engine_version"), std::string::npos) << e;
    EXPECT_NE(e.find("release number"), std::string::npos) << e;
    e = errorOf(R"({"engine": "sglang", "engine_version": 0.5})");
    EXPECT_NE(e.find("serving.engine_version"), std::string::npos) << e;
    e = errorOf(R"({"engine": "sglang", "mem_fraction_static": 1.5})");
    EXPECT_NE(e.find("serving.mem_fraction_static"), std::string::npos) << e;
    e = errorOf(R"({"engine": "trtllm", "free_gpu_memory_fraction": 0})");
    EXPECT_NE(e.find("serving.free_gpu_memory_fraction"), std::string::npos) << e;
}

// An engine's own key on a plan of another engine is read but not used, and the plan says so
// (each warning names its field, so the serving report and the Serving tab show it).
TEST(ServingEngines, AnotherEnginesKeysAreNamedAsUnused)
{
    const auto warningsOf = [](const std::string& serving) {
        return planWarnings(readOrDie(servingPlan("h100-sxm", serving)));
    };
    const auto has = [](const std::vector<std::string>& all, const std::string& text) {
        return std::any_of(all.begin(), all.end(),
            [&](const std::string& w) { return w.find(text) != std::string::npos; });
    };
    EXPECT_TRUE(has(warningsOf(R"({"engine": "vllm", "mem_fraction_static": 0.8})"),
        "serving.mem_fraction_static is SGLang's; serving.engine = \"vllm\" does not use it"));
    EXPECT_TRUE(has(warningsOf(R"({"engine": "sglang", "free_gpu_memory_fraction": 0.8})"),
        "serving.free_gpu_memory_fraction is TensorRT-LLM's"));
    EXPECT_TRUE(has(warningsOf(R"({"engine": "generic", "engine_version": "1.2"})"),
        "serving.engine_version = \"1.2\": the generic engine has no modelled versions"));
    const std::vector<std::string> own
        = warningsOf(R"({"engine": "sglang", "engine_version": "0.4", "mem_fraction_static": 0.8})");
    EXPECT_FALSE(has(own, "mem_fraction_static")) << (own.empty() ? "" : own.front());
    EXPECT_FALSE(has(own, "engine_version"));
}

TEST(ServingEngines, EngineKeysSurviveWriteAndRead)
{
    const Plan plan = readOrDie(servingPlan("h100-sxm",
        R"({"engine": "sglang", "engine_version": "0.4.6", "mem_fraction_static": 0.83})"));
    const Plan again = readOrDie(writePlan(plan));
    EXPECT_EQ(again.serving.engine, ServingEngine::Sglang);
    EXPECT_EQ(again.serving.engineVersion, "0.4.6");
    EXPECT_EQ(again.serving.memFractionStatic, 0.83);
    EXPECT_EQ(again.serving, plan.serving);
}

// A user's presets may replace an engine's figures; an engine Envelope has no accounting for
// is refused by name.
TEST(ServingEngines, UserPresetsReplaceAnEngineOrAreRefused)
{
    PresetLibrary library = presets();
    EXPECT_FALSE(mergePresetFile(library, R"({"engines": [{"id": "sglang", "name": "SGLang",
        "source": "my cluster's logs", "startup_bytes": 1e9, "default_version": "0.4",
        "versions": [{"version": "0.4", "changes": "mine", "source": "mine",
                      "mem_fraction_by_tp": [[1, 0.5]]}]}]})", "user.json"));
    Expected<Plan> plan = readPlan(
        servingPlan("h100-sxm", R"({"engine": "sglang", "tp": 1})"), library);
    ASSERT_TRUE(bool(plan));
    EXPECT_DOUBLE_EQ(estimate(*plan).serving.memoryFraction, 0.5);
    std::optional<Error> e = mergePresetFile(library,
        R"({"engines": [{"id": "tgi", "name": "TGI", "source": "x"}]})", "user.json");
    ASSERT_TRUE(e);
    EXPECT_NE(e->toString().find("tgi"), std::string::npos) << e->toString();
    e = mergePresetFile(library, R"({"engines": [{"id": "sglang", "source": "x",
        "mem_fraction_by_tp": [[1, 2.0]]}]})", "user.json");
    ASSERT_TRUE(e);
    EXPECT_NE(e->toString().find("mem_fraction_by_tp"), std::string::npos) << e->toString();
}

} // namespace
} // namespace envelope
