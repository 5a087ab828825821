// A plan's model named by Hugging Face Hub id ({"hf_id": "OWNER/NAME[@REVISION]"}, issue 23):
// the core asks the app's reader for the config.json (it does no network I/O itself), imports
// it as an hf_config file is, and writes the id back.
#include <gtest/gtest.h>

#include <string>

#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope {
namespace {

// A Llama-2-7B config.json (meta-llama/Llama-2-7b-hf, the keys the importer reads):
// 6,738,415,616 parameters.
constexpr const char* kLlama2Config = R"({"model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096})";

std::string planWith(const std::string& model)
{
    return R"({"format": "envelope.plan", "version": 1, "model": )" + model
        + R"(, "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8}})";
}

TEST(PlanHubId, ReadsThroughTheAppsReaderAndWritesTheIdBack)
{
    const PresetLibrary presets = builtinPresets().value();
    std::string asked;
    ReadOptions options;
    options.readHub = [&](const std::string& id) -> Expected<std::string> {
        asked = id;
        return std::string(kLlama2Config);
    };
    const Expected<Plan> p = readPlan(planWith(R"({"hf_id": "meta-llama/Llama-2-7b-hf@main"})"), presets, options);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    EXPECT_EQ(asked, "meta-llama/Llama-2-7b-hf@main");
    EXPECT_EQ(p->model.form, ModelChoice::Form::HubId);
    EXPECT_EQ(countParameters(p->model.arch).total, 6738415616.0);
    EXPECT_EQ(p->model.arch.name, "meta-llama/Llama-2-7b-hf@main"); // named as the plan names it
    const std::string written = writePlan(*p);
    EXPECT_NE(written.find(R"("model": {
    "hf_id": "meta-llama/Llama-2-7b-hf@main"
  })"), std::string::npos) << written;
    const Expected<Plan> back = readPlan(written, presets, options);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(*back, *p);
}

TEST(PlanHubId, EachRefusalNamesTheField)
{
    const PresetLibrary presets = builtinPresets().value();
    const auto error = [&](const std::string& model, const ReadOptions& options) {
        const Expected<Plan> p = readPlan(planWith(model), presets, options);
        EXPECT_FALSE(p.ok()) << model;
        return p.ok() ? Error {} : p.error();
    };
    // No reader (a context that cannot fetch).
    EXPECT_EQ(error(R"({"hf_id": "o/n"})", {}).path, "model.hf_id");
    ReadOptions gated;
    gated.readHub = [](const std::string& id) -> Expected<std::string> {
        return Error { "", id + ": gated repository: accept the licence on the model page" };
    };
    const Error g = error(R"({"hf_id": "o/n"})", gated);
    EXPECT_EQ(g.path, "model.hf_id");
    EXPECT_NE(g.message.find("accept the licence"), std::string::npos) << g.message;
    ReadOptions broken;
    broken.readHub = [](const std::string&) -> Expected<std::string> {
        return std::string(R"({"model_type": "llama"})");
    };
    EXPECT_EQ(error(R"({"hf_id": "o/n"})", broken).path, "model.hf_id");
    EXPECT_EQ(error(R"({"hf_id": ""})", broken).path, "model.hf_id");
    EXPECT_EQ(error(R"({"hf_id": 7})", broken).path, "model.hf_id");
    // The id is the whole model: other keys beside it are refused by name.
    EXPECT_NE(error(R"({"hf_id": "o/n", "layers": 2})", broken).toString().find("layers"),
        std::string::npos);
}

} // namespace
} // namespace envelope
