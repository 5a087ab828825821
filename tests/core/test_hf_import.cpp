// Importing Hugging Face config.json files: each supported model_type, checked against the
// published parameter count of that checkpoint, and the errors for bad configs.
//
// Published counts (parameters of the released checkpoint, as the Hugging Face safetensors
// metadata reports them, or safetensors index total_size / 2 for 16-bit weights):
//   meta-llama/Llama-2-7b-hf           6,738,415,616   (total_size 13,476,839,424)
//   mistralai/Mistral-7B-v0.1          7,241,732,096   (total_size 14,483,464,192)
//   mistralai/Mixtral-8x7B-v0.1       46,702,792,704   (total_size 93,405,585,408)
//   Qwen/Qwen2.5-7B                    7,615,616,512   (total_size 15,231,233,024)
//   google/gemma-7b                    8,537,680,896   (HF safetensors parameter count)
//   openai-community/gpt2                124,439,808   (HF safetensors parameter count)
//   EleutherAI/pythia-160m               162,322,944   (Biderman et al. 2023, Pythia table)
//   microsoft/Phi-3-mini-4k-instruct   3,821,079,552   (HF safetensors parameter count)
//   deepseek-ai/DeepSeek-V3          671,026,419,200   main model without the MTP module
//                                                    (tensor-by-tensor count of the released
//                                                    checkpoint; the paper's "671B")
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/model.h"

namespace envelope {
namespace {

std::string readConfig(const std::string& name)
{
    std::ifstream in(std::string(ENVELOPE_TEST_DATA_DIR) + "/hf/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

struct HfCase {
    const char* file;
    double published;
};

TEST(HfImport, EachModelTypeGivesThePublishedParameterCount)
{
    const HfCase cases[] = {
        { "llama-2-7b.json", 6'738'415'616 },
        { "mistral-7b-v0.1.json", 7'241'732'096 },
        { "mixtral-8x7b.json", 46'702'792'704 },
        { "qwen2.5-7b.json", 7'615'616'512 },
        { "gemma-7b.json", 8'537'680'896 },
        { "gpt2.json", 124'439'808 },
        { "pythia-160m.json", 162'322'944 },
        { "phi-3-mini-4k-instruct.json", 3'821'079'552 },
        { "deepseek-v3.json", 671'026'419'200 },
    };
    for (const HfCase& c : cases) {
        SCOPED_TRACE(c.file);
        const std::string text = readConfig(c.file);
        ASSERT_FALSE(text.empty());
        const auto arch = importHfConfig(text);
        ASSERT_TRUE(arch.ok()) << arch.error().toString();
        EXPECT_EQ(countParameters(*arch).total, c.published);
    }
}

TEST(HfImport, FieldsMapToTheArchitecture)
{
    const auto gpt2 = importHfConfig(readConfig("gpt2.json"));
    ASSERT_TRUE(gpt2.ok());
    EXPECT_EQ(gpt2->ffnHidden, 3072); // n_inner absent: 4 x n_embd
    EXPECT_EQ(gpt2->ffn, FfnKind::Plain);
    EXPECT_EQ(gpt2->norm, NormKind::LayerNorm);
    EXPECT_TRUE(gpt2->learnedPositions);
    EXPECT_EQ(gpt2->maxPositions, 1024);
    EXPECT_TRUE(gpt2->tiedEmbeddings);

    const auto neox = importHfConfig(readConfig("pythia-160m.json"));
    ASSERT_TRUE(neox.ok());
    EXPECT_FALSE(neox->tiedEmbeddings); // embed_in and embed_out are separate
    EXPECT_FALSE(neox->learnedPositions); // rotary
    EXPECT_TRUE(neox->linearBias);

    const auto gemma = importHfConfig(readConfig("gemma-7b.json"));
    ASSERT_TRUE(gemma.ok());
    EXPECT_EQ(gemma->headDim, 256);
    EXPECT_TRUE(gemma->tiedEmbeddings);
    EXPECT_EQ(gemma->ffn, FfnKind::Gated);

    const auto qwen = importHfConfig(readConfig("qwen2.5-7b.json"));
    ASSERT_TRUE(qwen.ok());
    EXPECT_TRUE(qwen->qkvBias);
    EXPECT_FALSE(qwen->linearBias);
    EXPECT_EQ(qwen->kvHeads, 4);
    EXPECT_EQ(qwen->slidingWindow, 0); // use_sliding_window false

    const auto mistral = importHfConfig(readConfig("mistral-7b-v0.1.json"));
    ASSERT_TRUE(mistral.ok());
    EXPECT_EQ(mistral->slidingWindow, 4096);

    const auto mixtral = importHfConfig(readConfig("mixtral-8x7b.json"));
    ASSERT_TRUE(mixtral.ok());
    ASSERT_TRUE(mixtral->moe.has_value());
    EXPECT_EQ(mixtral->moe->experts, 8);
    EXPECT_EQ(mixtral->moe->topK, 2);
    // Two of eight experts per token: Mixtral paper's "13B active" (12,879,925,248 by hand in
    // test_model_params.cpp).
    EXPECT_EQ(countParameters(*mixtral).active, 12'879'925'248.0);

    const auto ds = importHfConfig(readConfig("deepseek-v3.json"));
    ASSERT_TRUE(ds.ok());
    ASSERT_TRUE(ds->moe && ds->mla);
    EXPECT_EQ(ds->moe->denseLayers, 3);
    EXPECT_EQ(ds->moe->sharedExperts, 1);
    EXPECT_TRUE(ds->moe->routerBias);
    EXPECT_EQ(ds->mla->qLoraRank, 1536);
    EXPECT_EQ(ds->mla->kvLoraRank, 512);
    EXPECT_NEAR(countParameters(*ds).active / 1e9, 37.0, 1.0); // paper: 37B activated
}

TEST(HfImport, UnknownModelTypeListsTheSupportedOnes)
{
    const auto a = importHfConfig(R"({"model_type": "bert", "hidden_size": 768})");
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().path, "model_type");
    EXPECT_NE(a.error().message.find("\"bert\""), std::string::npos);
    EXPECT_NE(a.error().message.find(supportedHfModelTypes()), std::string::npos);
    for (const char* type : { "llama", "mistral", "mixtral", "qwen2", "gemma", "gpt2", "gpt_neox",
             "phi3", "deepseek_v3" })
        EXPECT_NE(supportedHfModelTypes().find(type), std::string::npos) << type;
}

TEST(HfImport, MissingOrBadFieldsAreNamed)
{
    const auto missing = importHfConfig(
        R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "vocab_size": 32000})");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().toString(), "intermediate_size: is required for this model_type");

    const auto gpt2 = importHfConfig(R"({"model_type": "gpt2", "n_embd": 768, "n_head": 12,
        "n_positions": 1024, "vocab_size": 50257})");
    ASSERT_FALSE(gpt2.ok());
    EXPECT_EQ(gpt2.error().path, "n_layer");

    const auto wrongType = importHfConfig(R"({"model_type": "llama", "hidden_size": "4096",
        "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 11008,
        "vocab_size": 32000})");
    ASSERT_FALSE(wrongType.ok());
    EXPECT_EQ(
        wrongType.error().toString(), "hidden_size: must be an integer in 1..1000000, got \"4096\"");

    const auto notJson = importHfConfig("{model_type: llama");
    ASSERT_FALSE(notJson.ok());
    EXPECT_EQ(notJson.error().message.rfind("not valid JSON: parse error at line 1, column 2", 0), 0u)
        << notJson.error().message;

    const auto noType = importHfConfig(R"({"hidden_size": 4096})");
    ASSERT_FALSE(noType.ok());
    EXPECT_EQ(noType.error().path, "model_type");

    const auto badHeads = importHfConfig(R"({"model_type": "llama", "hidden_size": 4096,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 5,
        "intermediate_size": 11008, "vocab_size": 32000})");
    ASSERT_FALSE(badHeads.ok());
    // The config's own key names (issue 26), not Envelope's kv_heads / heads.
    EXPECT_EQ(badHeads.error().toString(),
        "num_key_value_heads: must divide num_attention_heads (32), got 5 (from config.json)");
}

// Issue 25: the rotary positions as each config states them, for the engine exports (Megatron
// defaults --rotary-base to 10000). The values are the files' own (tests/data/hf); where a config
// leaves rope_theta out, transformers' class default applies (LlamaConfig 10000).
TEST(HfImport, RotaryPositionsAsTheConfigStatesThem)
{
    const auto deepseek = importHfConfig(readConfig("deepseek-v3.json"));
    ASSERT_TRUE(deepseek.ok()) << deepseek.error().toString();
    EXPECT_EQ(deepseek->ropeTheta, 10000.0);
    ASSERT_TRUE(deepseek->ropeScaling.has_value());
    EXPECT_EQ(deepseek->ropeScaling->kind, RopeScalingKind::Yarn);
    EXPECT_EQ(deepseek->ropeScaling->factor, 40.0);
    EXPECT_EQ(deepseek->ropeScaling->originalPositions, 4096);
    EXPECT_EQ(deepseek->ropeScaling->betaFast, 32.0);
    EXPECT_EQ(deepseek->ropeScaling->betaSlow, 1.0);
    EXPECT_EQ(deepseek->ropeScaling->mscale, 1.0);
    EXPECT_EQ(deepseek->ropeScaling->mscaleAllDim, 1.0);

    EXPECT_EQ(importHfConfig(readConfig("qwen2.5-7b.json"))->ropeTheta, 1'000'000.0);
    EXPECT_EQ(importHfConfig(readConfig("mixtral-8x7b.json"))->ropeTheta, 1'000'000.0);
    EXPECT_FALSE(importHfConfig(readConfig("qwen2.5-7b.json"))->ropeScaling.has_value());
    EXPECT_EQ(importHfConfig(readConfig("llama-2-7b.json"))->ropeTheta, 10000.0);  // not stated
    // GPT-NeoX rotates a quarter of each head (rotary_pct 0.25) at rotary_emb_base 10000.
    const auto pythia = importHfConfig(readConfig("pythia-160m.json"));
    EXPECT_EQ(pythia->ropeTheta, 10000.0);
    EXPECT_EQ(pythia->ropeFraction, 0.25);
    // Learned positions: no rotary at all.
    EXPECT_EQ(importHfConfig(readConfig("gpt2.json"))->ropeTheta, 0.0);

    // Llama 3.1 8B's published rope block (meta-llama/Llama-3.1-8B config.json), and the same
    // in transformers 5's rope_parameters form.
    const std::string shape = R"("model_type": "llama", "hidden_size": 4096,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072)";
    const std::string rope = R"("factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192, "rope_type": "llama3")";
    const auto v4 = importHfConfig("{" + shape + R"(, "rope_theta": 500000.0, "rope_scaling": {)"
        + rope + "}}");
    const auto v5 = importHfConfig(
        "{" + shape + R"(, "rope_parameters": {"rope_theta": 500000.0, )" + rope + "}}");
    ASSERT_TRUE(v4.ok()) << v4.error().toString();
    ASSERT_TRUE(v5.ok()) << v5.error().toString();
    EXPECT_EQ(v4->ropeTheta, 500000.0);
    EXPECT_EQ(v4->ropeScaling->kind, RopeScalingKind::Llama3);
    EXPECT_EQ(v4->ropeScaling->factor, 8.0);
    EXPECT_EQ(v4->ropeScaling->lowFreqFactor, 1.0);
    EXPECT_EQ(v4->ropeScaling->highFreqFactor, 4.0);
    EXPECT_EQ(v4->ropeScaling->originalPositions, 8192);
    EXPECT_EQ(*v4, *v5);
    // A scaling no engine export passes on (Phi-3's longrope) is left unstated, not refused; a
    // bad value names its key.
    EXPECT_FALSE(importHfConfig("{" + shape + R"(, "rope_scaling": {"type": "longrope",
        "short_factor": [1.0], "long_factor": [4.0]}})")->ropeScaling.has_value());
    const auto bad = importHfConfig("{" + shape + R"(, "rope_scaling": {"rope_type": "yarn",
        "factor": -4}})");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "rope_scaling.factor");
    const auto badTheta = importHfConfig("{" + shape + R"(, "rope_theta": "1e6"})");
    ASSERT_FALSE(badTheta.ok());
    EXPECT_EQ(badTheta.error().path, "rope_theta");
}

} // namespace
} // namespace envelope
