// The preset library: built-in GPU figures against their datasheets, merging user files by id,
// and errors that name the file and the JSON path.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "plan/presets.h"

namespace envelope {
namespace {

PresetLibrary builtin()
{
    Expected<PresetLibrary> lib = builtinPresets();
    EXPECT_TRUE(lib.ok()) << lib.error().toString();
    return lib.ok() ? lib.value() : PresetLibrary {};
}

constexpr double kMiB = 1024.0 * 1024.0;

TEST(Presets, BuiltinLibraryHasEveryDesignGpuId)
{
    const PresetLibrary lib = builtin();
    for (const char* id : { "h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200",
             "l40s", "mi300x", "rtx-4090" })
        EXPECT_NE(lib.findGpu(id), nullptr) << id;
    EXPECT_EQ(lib.findGpu("h100"), nullptr);
}

TEST(Presets, EveryGpuPresetHasASourceAndPositiveFigures)
{
    const PresetLibrary lib = builtin();
    ASSERT_FALSE(lib.gpus.empty());
    std::set<std::string> ids;
    for (const GpuPreset& g : lib.gpus) {
        SCOPED_TRACE(g.id);
        EXPECT_TRUE(ids.insert(g.id).second) << "duplicate id";
        EXPECT_FALSE(g.source.empty());
        EXPECT_FALSE(g.gpu.name.empty());
        EXPECT_GT(g.gpu.memoryBytes, 0);
        EXPECT_GT(g.gpu.bf16Flops, 0);
        EXPECT_GE(g.gpu.fp8Flops, 0);
        EXPECT_GT(g.gpu.hbmBytesPerS, 0);
        EXPECT_GT(g.gpu.intraNodeBytesPerS, 0);
        EXPECT_GT(g.gpu.interNodeBytesPerS, 0);
        EXPECT_GT(g.gpu.pricePerHour, 0);
        // The driver reports whole MiB; the marketing "80 GB" is never the figure.
        EXPECT_DOUBLE_EQ(g.gpu.memoryBytes / kMiB, std::floor(g.gpu.memoryBytes / kMiB));
    }
}

TEST(Presets, MemoryIsWhatTheDriverReports)
{
    // nvidia-smi memory.total: H100 80GB 81,559 MiB; A100 80GB 81,920; A100 40GB 40,960;
    // H200 143,771; B200 183,359; L40S 46,068; RTX 4090 24,564.
    const PresetLibrary lib = builtin();
    const std::pair<const char*, double> expected[] = {
        { "h100-sxm", 81559 },
        { "h100-pcie", 81559 },
        { "a100-80gb", 81920 },
        { "a100-40gb", 40960 },
        { "h200", 143771 },
        { "b200", 183359 },
        { "l40s", 46068 },
        { "rtx-4090", 24564 },
    };
    for (const auto& [id, mib] : expected) {
        const GpuPreset* g = lib.findGpu(id);
        ASSERT_NE(g, nullptr) << id;
        EXPECT_EQ(g->gpu.memoryBytes, mib * kMiB) << id;
    }
    EXPECT_EQ(lib.findGpu("h100-sxm")->gpu.memoryBytes, 85'520'809'984.0);
}

TEST(Presets, PeaksAreDenseNotSparse)
{
    // H100 SXM datasheet: 1,979 TFLOPS BF16 and 3,958 FP8 "with sparsity" -> half dense.
    // A100: 312 TFLOPS dense BF16, no FP8 tensor cores.
    const PresetLibrary lib = builtin();
    const Gpu& h100 = lib.findGpu("h100-sxm")->gpu;
    EXPECT_NEAR(h100.bf16Flops, 1979e12 / 2, 1e12);
    EXPECT_NEAR(h100.fp8Flops, 3958e12 / 2, 1e12);
    EXPECT_EQ(lib.findGpu("a100-80gb")->gpu.bf16Flops, 312e12);
    EXPECT_EQ(lib.findGpu("a100-80gb")->gpu.fp8Flops, 0);
    EXPECT_EQ(lib.findGpu("a100-40gb")->gpu.fp8Flops, 0);
    // NVLink 4: 900 GB/s bidirectional = 450 GB/s per direction; 400 Gb/s NIC = 50 GB/s.
    EXPECT_EQ(h100.intraNodeBytesPerS, 450e9);
    EXPECT_EQ(h100.interNodeBytesPerS, 50e9);
    EXPECT_EQ(h100.hbmBytesPerS, 3350e9);
}

TEST(Presets, H800IsAnH100WithDeepSeeksNvlink)
{
    // H800 datasheet: the H100 SXM's 1,979 / 3,958 TFLOPS with sparsity (989.4 / 1,978.9 dense)
    // and 3.35 TB/s, but NVLink 400 GB/s bidirectional = 200 GB/s per direction; DeepSeek-V3
    // report sec. 3.2.2: 400 Gb/s IB per GPU = 50 GB/s. Same 80 GB part: 81,559 MiB.
    const PresetLibrary lib = builtin();
    const GpuPreset* h800 = lib.findGpu("h800");
    ASSERT_NE(h800, nullptr);
    EXPECT_EQ(h800->gpu.intraNodeBytesPerS, 400e9 / 2);
    EXPECT_EQ(h800->gpu.interNodeBytesPerS, 400e9 / 8);
    EXPECT_NEAR(h800->gpu.bf16Flops, 1979e12 / 2, 1e12);
    EXPECT_NEAR(h800->gpu.fp8Flops, 3958e12 / 2, 1e12);
    EXPECT_EQ(h800->gpu.hbmBytesPerS, 3350e9);
    EXPECT_EQ(h800->gpu.memoryBytes, 81559 * kMiB);
}

TEST(Presets, BuiltinLibraryCarriesTheDefaultPlan)
{
    const PresetLibrary lib = builtin();
    EXPECT_NE(lib.defaultPlanJson.find("\"envelope.plan\""), std::string::npos);
    EXPECT_NE(lib.defaultPlanJson.find("\"llama-2-7b\""), std::string::npos);
}

constexpr const char* kUserFile = R"({
  "format": "envelope.presets", "version": 1,
  "gpus": [
    {"id": "h100-sxm", "name": "H100 at my price", "source": "ours", "memory_bytes": 85520809984,
     "bf16_tflops": 989.4, "fp8_tflops": 1978.9, "hbm_gbps": 3350, "intra_node_gbps": 450,
     "inter_node_gbps": 50, "price_per_hour": 1.5},
    {"id": "my-gpu", "memory_bytes": 1e10, "bf16_tflops": 100, "hbm_gbps": 500,
     "intra_node_gbps": 32, "inter_node_gbps": 12.5}
  ],
  "recipes": [
    {"id": "my-recipe", "name": "mine", "weights": 2, "gradients": 2, "master": 0,
     "moment_bytes": 2}
  ]
})";

TEST(Presets, MergeReplacesByIdAndAddsNewIds)
{
    PresetLibrary lib = builtin();
    const std::size_t gpus = lib.gpus.size();
    const std::size_t recipes = lib.recipes.size();
    ASSERT_EQ(mergePresetFile(lib, kUserFile, "my.json"), std::nullopt);
    EXPECT_EQ(lib.gpus.size(), gpus + 1);
    EXPECT_EQ(lib.recipes.size(), recipes + 1);
    EXPECT_EQ(lib.findGpu("h100-sxm")->gpu.pricePerHour, 1.5);
    EXPECT_EQ(lib.findGpu("h100-sxm")->gpu.name, "H100 at my price");
    const GpuPreset* mine = lib.findGpu("my-gpu");
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(mine->gpu.memoryBytes, 1e10);
    EXPECT_EQ(mine->gpu.interNodeBytesPerS, 12.5e9);
    EXPECT_EQ(mine->gpu.fp8Flops, 0); // absent: no FP8
    EXPECT_EQ(mine->gpu.name, "my-gpu"); // no name: the id
    const RecipePreset* recipe = lib.findRecipe("my-recipe");
    ASSERT_NE(recipe, nullptr);
    EXPECT_EQ(optimizerStateBytesPerParam(recipe->recipe, OptimizerKind::AdamW), 4);
}

struct BadFile {
    const char* name;
    const char* text;
    const char* expected; // the whole message, or its start when `prefix`
    bool prefix = false;
};

class PresetsBadFile : public ::testing::TestWithParam<BadFile> { };

TEST_P(PresetsBadFile, IsRefusedWithOriginAndPathAndChangesNothing)
{
    PresetLibrary lib = builtin();
    const PresetLibrary before = lib;
    const std::optional<Error> e = mergePresetFile(lib, GetParam().text, "my.json");
    ASSERT_TRUE(e.has_value());
    if (GetParam().prefix)
        EXPECT_EQ(e->toString().rfind(GetParam().expected, 0), 0u) << e->toString();
    else
        EXPECT_EQ(e->toString(), GetParam().expected);
    EXPECT_EQ(lib.gpus.size(), before.gpus.size());
    EXPECT_EQ(lib.findGpu("h100-sxm")->gpu, before.findGpu("h100-sxm")->gpu);
}

#define GPU_OK "\"bf16_tflops\": 1, \"hbm_gbps\": 1, \"intra_node_gbps\": 1, \"inter_node_gbps\": 1"

INSTANTIATE_TEST_SUITE_P(Table, PresetsBadFile,
    ::testing::Values(BadFile { "ZeroMemory",
                          R"({"gpus": [{"id": "a", "memory_bytes": 8e10, )" GPU_OK R"(},
                             {"id": "h100-sxm", "memory_bytes": 8e10, "price_per_hour": 0.5, )" GPU_OK
                          R"(},
                             {"id": "c", "memory_bytes": 0, )" GPU_OK R"(}]})",
                          "my.json: gpus[2].memory_bytes: must be 1e8..1e13, got 0" },
        BadFile { "MissingMemory", R"({"gpus": [{"id": "a", )" GPU_OK R"(}]})",
            "my.json: gpus[0].memory_bytes: is required" },
        BadFile { "TypoInKey",
            R"({"gpus": [{"id": "a", "memroy_bytes": 1, "memory_bytes": 8e10, )" GPU_OK R"(}]})",
            "my.json: gpus[0].memroy_bytes: unknown key (did you mean \"memory_bytes\"?)" },
        BadFile { "NegativePrice",
            R"({"gpus": [{"id": "a", "memory_bytes": 8e10, "price_per_hour": -1, )" GPU_OK R"(}]})",
            "my.json: gpus[0].price_per_hour: must be 0..10000, got -1" },
        BadFile { "EmptyId", R"({"gpus": [{"id": "", "memory_bytes": 8e10, )" GPU_OK R"(}]})",
            "my.json: gpus[0].id: must not be empty" },
        BadFile { "DuplicateId", R"({"gpus": [{"id": "a", "memory_bytes": 8e10, )" GPU_OK R"(},
                                            {"id": "a", "memory_bytes": 9e10, )" GPU_OK R"(}]})",
            "my.json: gpus[1].id: \"a\" appears twice in this file" },
        BadFile { "GpusNotAnArray", R"({"gpus": {"id": "a"}})",
            "my.json: gpus: must be an array, got an object" },
        BadFile { "UnknownSection", R"({"gpu": []})",
            "my.json: gpu: unknown key (did you mean \"gpus\"?)" },
        BadFile { "NewerVersion", R"({"version": 2, "gpus": []})",
            "my.json: version: this file is envelope.presets version 2; this Envelope reads "
            "version 1 — update Envelope" },
        BadFile { "RecipeComputeUnknown",
            R"({"recipes": [{"id": "r", "weights": 2, "gradients": 2, "master": 4, "moment_bytes": 4, "compute": "int4"}]})",
            "my.json: recipes[0].compute: must be \"bf16\", \"fp8\" or \"tf32\", got \"int4\" (a "
            "string)" },
        BadFile { "NotJson", "{\"gpus\": [", "my.json: gpus[0]: not valid JSON: parse error", true },
        BadFile { "Empty", "", "my.json: not valid JSON: the text is empty" },
        BadFile { "Junk", "\x01\xff\xfe binary", "my.json: not valid JSON", true },
        BadFile { "NotAnObject", "[1, 2]", "my.json: must be a JSON object, got an array" }),
    [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace envelope
