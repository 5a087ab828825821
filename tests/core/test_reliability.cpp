// Regression tests for the defects of issue 13 (docs/reliability.md): each input below crashed,
// hung, overflowed or misreported before its fix. Expected messages are written out by hand from
// the documented ranges (docs/plan-format.md), not taken from the code's output.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fcntl.h>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "base/text.h"
#include "base/units.h"
#include "estimate/estimate.h"
#include "io/files.h"
#include "model/model.h"
#include "fixtures.h"
#include "whatif/whatif.h"

namespace envelope {
namespace {

using namespace envelope::testing;

std::string deep(int levels)
{
    return std::string(levels, '[') + std::string(levels, ']');
}

// True when `s` is well-formed UTF-8 (RFC 3629), checked by hand, byte by byte.
bool validUtf8(const std::string& s)
{
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1
            : (c >> 5) == 6            ? 2
            : (c >> 4) == 14           ? 3
            : (c >> 3) == 30           ? 4
                                       : 0;
        if (n == 0 || i + n > s.size())
            return false;
        for (std::size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
                return false;
        i += n;
    }
    return true;
}

// Defect 1: 100,000 nested arrays overflowed the stack when a message serialised the value.
TEST(Reliability, DeeplyNestedJsonIsRefusedEverywhere)
{
    const std::string nested = deep(100'000);
    const Expected<Plan> plan = readPlan(nested, testPresets());
    ASSERT_FALSE(plan.ok());
    EXPECT_NE(plan.error().message.find("nested more than 64 levels"), std::string::npos);

    const std::string inTraining
        = R"({"model": "test-7b", "gpu": "h100-sxm", "training": )" + nested + "}";
    const Expected<Plan> training = readPlan(inTraining, testPresets());
    ASSERT_FALSE(training.ok());
    EXPECT_EQ(training.error().path.rfind("training", 0), 0u) << training.error().toString();

    const std::string inLayers = R"({"model": {"layers": )" + nested
        + R"(, "hidden": 64, "heads": 2, "vocab": 10}, "gpu": "h100-sxm"})";
    EXPECT_FALSE(readPlan(inLayers, testPresets()).ok());

    const Expected<ModelArch> hf
        = importHfConfig(R"({"model_type": "llama", "rope_scaling": )" + nested + "}");
    ASSERT_FALSE(hf.ok());
    EXPECT_EQ(hf.error().path.rfind("rope_scaling", 0), 0u) << hf.error().toString();

    PresetLibrary library = testPresets();
    const std::optional<Error> preset
        = mergePresetFile(library, R"({"gpus": )" + nested + "}", "mine.json");
    ASSERT_TRUE(preset.has_value());
    EXPECT_NE(preset->message.find("nested more than 64 levels"), std::string::npos);

    // 64 levels is allowed: the bound refuses hostile files, not honest ones.
    EXPECT_TRUE(parseJsonText(deep(64)).ok());
    EXPECT_FALSE(parseJsonText(deep(65)).ok());
}

// Defect 1 and 12: a message shows a bounded prefix of a value, whatever its size.
TEST(Reliability, MessagesQuoteABoundedPrefix)
{
    const nlohmann::json huge = std::string(10'000'000, 'a');
    EXPECT_LE(describeJson(huge).size(), 60u);
    nlohmann::json array = nlohmann::json::array();
    for (int i = 0; i < 100'000; ++i)
        array.push_back(i);
    EXPECT_LE(shortJson(array, 40).size(), 40u);

    // "é" is 2 bytes: a 41-byte cut must not split one.
    std::string accents;
    for (int i = 0; i < 100; ++i)
        accents += "\xC3\xA9";
    EXPECT_TRUE(validUtf8(describeJson(nlohmann::json(accents))));
    EXPECT_TRUE(validUtf8(printable(accents, 41)));
    EXPECT_EQ(printable(accents, 41).size(), 40u + 3u); // 20 characters and "..."

    // NUL and escape characters never reach a terminal raw.
    const Error e { std::string("cluster.g\0us", 12), "unknown key \x1b[31m" };
    const std::string shown = e.toString();
    EXPECT_EQ(shown.find('\0'), std::string::npos);
    EXPECT_EQ(shown.find('\x1b'), std::string::npos);
    EXPECT_EQ(shown, "cluster.g\\u0000us: unknown key \\u001b[31m");
    // Invalid UTF-8 is shown as bytes.
    EXPECT_EQ(printable("a\xFF"), "a\\xff");
}

// Defect 12: duplicate keys were accepted, the last one winning.
TEST(Reliability, DuplicateKeysAreRefusedNamingTheKey)
{
    const Expected<Plan> plan
        = readPlan(R"({"model": "test-7b", "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus": 3}})",
            testPresets());
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().toString(),
        "cluster.gpus: is given twice in the same object; give each key once");

    const Expected<ModelArch> hf
        = importHfConfig(R"({"model_type": "gpt2", "n_layer": 12, "n_layer": 24})");
    ASSERT_FALSE(hf.ok());
    EXPECT_EQ(hf.error().path, "n_layer");

    PresetLibrary library = testPresets();
    const std::optional<Error> preset = mergePresetFile(
        library, R"({"gpus": [{"id": "a"}, {"id": "b", "id": "c"}]})", "mine.json");
    ASSERT_TRUE(preset.has_value());
    EXPECT_EQ(preset->toString(),
        "mine.json: gpus[1].id: is given twice in the same object; give each key once");
}

// Defect 12: NaN, Infinity and 1e400 gave a line and column but no field.
TEST(Reliability, InvalidNumbersNameTheirField)
{
    for (const char* value : { "NaN", "Infinity", "1e400", "-1e400" }) {
        const std::string text
            = std::string(R"({"model": "test-7b", "gpu": "h100-sxm", "training": {"mfu": )") + value
            + "}}";
        const Expected<Plan> plan = readPlan(text, testPresets());
        ASSERT_FALSE(plan.ok()) << value;
        EXPECT_EQ(plan.error().path, "training.mfu") << value;
        EXPECT_EQ(plan.error().message.rfind("not valid JSON", 0), 0u) << plan.error().message;
    }
    PresetLibrary library = testPresets();
    const std::optional<Error> preset = mergePresetFile(
        library, R"({"gpus": [{"id": "a"}, {"id": "b", "hbm_gbps": NaN}]})", "mine.json");
    ASSERT_TRUE(preset.has_value());
    EXPECT_EQ(preset->path, "mine.json: gpus[1].hbm_gbps");
}

// Defects 2 and 3: 64-bit config values overflowed products or were narrowed to int unchecked.
TEST(Reliability, HfIntegersAreRangeCheckedUnderTheirOwnNames)
{
    const Expected<ModelArch> gpt2 = importHfConfig(R"({"model_type": "gpt2", "n_layer": 12,
        "n_embd": 4000000000000000000, "n_head": 12, "vocab_size": 50257, "n_positions": 1024})");
    ASSERT_FALSE(gpt2.ok());
    EXPECT_EQ(gpt2.error().toString(),
        "n_embd: must be an integer in 1..1000000, got 4000000000000000000");

    const Expected<ModelArch> layers = importHfConfig(R"({"model_type": "llama",
        "num_hidden_layers": 4294967328, "hidden_size": 4096, "intermediate_size": 11008,
        "num_attention_heads": 32, "vocab_size": 32000})");
    ASSERT_FALSE(layers.ok()); // 4294967328 = 2^32 + 32 used to import as 32 layers
    EXPECT_EQ(layers.error().toString(),
        "num_hidden_layers: must be an integer in 1..1000, got 4294967328");

    const Expected<ModelArch> heads = importHfConfig(R"({"model_type": "llama",
        "num_hidden_layers": 2, "hidden_size": 4096, "intermediate_size": 11008,
        "num_attention_heads": 0, "vocab_size": 32000})");
    ASSERT_FALSE(heads.ok());
    EXPECT_EQ(heads.error().path, "num_attention_heads");

    const Expected<ModelArch> unsignedMax = importHfConfig(R"({"model_type": "llama",
        "num_hidden_layers": 18446744073709551615, "hidden_size": 4096, "intermediate_size": 11008,
        "num_attention_heads": 32, "vocab_size": 32000})");
    ASSERT_FALSE(unsignedMax.ok());
    EXPECT_EQ(unsignedMax.error().path, "num_hidden_layers");

    // DeepSeek-V3's head_dim is qk_nope + qk_rope: 2147483647 + 1 wrapped to -2147483648.
    nlohmann::json ds = nlohmann::json::parse(R"({"model_type": "deepseek_v3",
        "num_hidden_layers": 61, "hidden_size": 7168, "intermediate_size": 18432,
        "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280,
        "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1,
        "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "q_lora_rank": 1536,
        "kv_lora_rank": 512, "qk_rope_head_dim": 1, "qk_nope_head_dim": 2147483647,
        "v_head_dim": 128})");
    const Expected<ModelArch> mla = importHfConfig(ds.dump());
    ASSERT_FALSE(mla.ok());
    EXPECT_EQ(mla.error().toString(),
        "qk_nope_head_dim: must be an integer in 0..1000000, got 2147483647");
    EXPECT_EQ(mla.error().toString().find("-2147483648"), std::string::npos);
}

// Defect 12: heads > hidden blamed model.head_dim, a key the user never wrote.
TEST(Reliability, HeadsAboveHiddenBlameHeads)
{
    const Expected<Plan> plan = readPlan(
        R"({"model": {"layers": 2, "hidden": 64, "heads": 128, "vocab": 100}, "gpu": "h100-sxm"})",
        testPresets());
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().path, "model.heads");
    EXPECT_NE(plan.error().message.find("at most hidden (64)"), std::string::npos);

    const Expected<ModelArch> hf = importHfConfig(R"({"model_type": "gpt_neox",
        "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 128, "vocab_size": 100})");
    ASSERT_FALSE(hf.ok());
    EXPECT_EQ(hf.error().path, "num_attention_heads");
}

// Defect 4: the micro-batch suggestion overflowed int and offered plans validation refuses.
TEST(Reliability, EverySuggestionValidates)
{
    for (const auto& [micro, accum] : { std::pair { 46341, 46341 }, std::pair { 1000, 2000 } }) {
        nlohmann::json j = nlohmann::json::parse(kMinimalPlan);
        j["training"] = { { "micro_batch", micro }, { "grad_accum", accum } };
        const Expected<Plan> plan = readPlan(j.dump(), testPresets());
        ASSERT_TRUE(plan.ok()) << plan.error().toString();
        const std::vector<FitSuggestion> suggestions = suggestFits(*plan);
        ASSERT_FALSE(suggestions.empty()); // 1000 x 4096-token sequences never fit an H100
        for (const FitSuggestion& s : suggestions) {
            EXPECT_FALSE(validatePlan(s.plan).has_value()) << s.description;
            // grad_accum may not exceed 1,000,000 (docs/plan-format.md); 1000 x 2000 does.
            EXPECT_LE(s.plan.training.gradAccum, 1'000'000) << s.description;
        }
    }
}

// Defect 8: 1e-300 TFLOPS passed "> 0" and made every time infinite.
TEST(Reliability, LowerBoundsCatchUnitSlips)
{
    const Expected<Plan> plan = readPlan(R"({"model": "test-7b", "gpu": {"memory_bytes": 8e10,
        "bf16_tflops": 1e-300, "hbm_gbps": 3350, "intra_node_gbps": 450, "inter_node_gbps": 50}})",
        testPresets());
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().toString(), "gpu.bf16_tflops: must be 0.1..100000, got 1e-300");
    const Expected<Plan> mfu = readPlan(
        R"({"model": "test-7b", "gpu": "h100-sxm", "training": {"mfu": 1e-300}})", testPresets());
    ASSERT_FALSE(mfu.ok());
    EXPECT_EQ(mfu.error().toString(), "training.mfu: must be 0.001..1, got 1e-300");
}

// Defect 8: every formatter checks for finite values and keeps huge ones short.
TEST(Reliability, FormattersShowNonFiniteAsNotAvailable)
{
    const double inf = INFINITY;
    EXPECT_EQ(formatCount(inf), "n/a");
    EXPECT_EQ(formatCount(NAN), "n/a");
    EXPECT_EQ(formatBytes(inf, ByteUnits::GB), "n/a");
    EXPECT_EQ(formatBytesScaled(-inf, ByteUnits::GiB), "n/a");
    EXPECT_EQ(formatDuration(inf), "n/a");
    // 1e300 s = 1.157e295 days (86,400 s a day): short, not 296 digits.
    EXPECT_EQ(formatDuration(1e300), "1.16e+295 days");
    // 2.25e25 bytes = 2.25e13 TB (1 TB = 1e12 bytes).
    EXPECT_EQ(formatBytes(2.25e25, ByteUnits::GB), "2.25e+13 TB");
    EXPECT_EQ(formatCount(3e20), "3.00e+20");
}

// Defect 9: finite bytes above 9e18 were written as null, which the docs reserve for non-finite.
TEST(Reliability, FiniteBytesAreNeverNull)
{
    nlohmann::json j = nlohmann::json::parse(kMinimalPlan);
    j["training"] = { { "micro_batch", 1'000'000 }, { "seq_len", 100'000'000 } };
    const Expected<Plan> plan = readPlan(j.dump(), testPresets());
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    const Estimate e = estimate(*plan);
    const double total = e.training.perGpu.total();
    ASSERT_TRUE(std::isfinite(total));
    // At least the input embeddings' activations: 1e6 x 1e8 tokens x 4096 x 2 bytes = 8.2e17,
    // times 32 layers of many such tensors: far past 2^63 = 9.2e18.
    ASSERT_GT(total, 9.3e18);
    const nlohmann::json result = nlohmann::json::parse(writeResult(*plan, e));
    const nlohmann::json& written = result["training"]["per_gpu_bytes"]["total"];
    ASSERT_TRUE(written.is_number()) << written;
    EXPECT_DOUBLE_EQ(written.get<double>(), total);
}

// Defects 5 and 6: a fifo blocked forever; /dev/zero grew memory until bad_alloc.
TEST(Reliability, ReaderRefusesWhatIsNotARegularFile)
{
    const std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("envelope-fifo-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string fifo = (dir / "plan.json").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Should the reader block on the fifo again, this writer releases it after 2 s and the test
    // fails instead of hanging.
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    std::thread release([&] {
        if (finished.wait_for(std::chrono::seconds(2)) == std::future_status::ready)
            return;
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0)
            ::close(fd);
    });
    const auto started = std::chrono::steady_clock::now();
    const Expected<std::string> text = io::readTextFile(fifo);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
    done.set_value();
    release.join();
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.error().toString(), fifo + ": is not a regular file (a pipe, device or socket)");
    std::filesystem::remove_all(dir);

    const Expected<std::string> zero = io::readTextFile("/dev/zero");
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(
        zero.error().toString(), "/dev/zero: is not a regular file (a pipe, device or socket)");
}

} // namespace
} // namespace envelope
