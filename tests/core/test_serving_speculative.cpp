// Speculative decoding (issue 27, serving.speculative): the mean accepted length, the draft's
// weights and KV, the verify + draft step, the simulation's tokens per step, the plan keys and
// their refusals, and DeepSeek-V3's published MTP gain. Every expected figure is worked out in
// the comments or taken from a paper.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "export/export.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "report/textreport.h"
#include "serving/load.h"
#include "serving/serving.h"

namespace envelope {
namespace {

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

Plan readOrDie(const std::string& text)
{
    Expected<Plan> plan = readPlan(text, presets());
    EXPECT_TRUE(bool(plan)) << (plan ? "" : plan.error().toString());
    return plan ? *plan : Plan {};
}

std::string servingPlan(const std::string& model, const std::string& gpu, const std::string& serving)
{
    return R"({"format": "envelope.plan", "version": 1, "model": ")" + model + R"(", "gpu": ")" + gpu
        + R"(", "cluster": {"gpus": 8, "gpus_per_node": 8}, "serving": )" + serving + "}";
}

// Leviathan et al. 2023, eq. 1: E = (1 - a^(k+1)) / (1 - a).
//   k = 4, a = 0.8: (1 - 0.32768) / 0.2 = 3.3616
//   k = 1, a = 0.85: (1 - 0.7225) / 0.15 = 1.85 (DeepSeek-V3's MTP: one token and the next)
//   a = 1: every draft accepted, k + 1; a = 0: none, 1.
TEST(Speculative, MeanAcceptedLengthIsLeviathansFormula)
{
    EXPECT_NEAR(speculativeTokensPerStep(4, 0.8), 3.3616, 1e-12);
    EXPECT_NEAR(speculativeTokensPerStep(1, 0.85), 1.85, 1e-12);
    EXPECT_DOUBLE_EQ(speculativeTokensPerStep(3, 1.0), 4.0);
    EXPECT_DOUBLE_EQ(speculativeTokensPerStep(5, 0.0), 1.0);
    ServingConfig plain;
    EXPECT_DOUBLE_EQ(decodeTokensPerStep(plain), 1.0);
}

// DeepSeek-V3's MTP module (DeepSeek-AI 2024, sec. 2.2) is one MoE Transformer block of the main
// model's shape behind a 2h x h projection, the embedding and head shared. Its parameters, by
// hand from the config (hidden 7168, 128 heads, q_lora 1536, kv_lora 512, rope 64, nope 128,
// v 128, 256 experts + 1 shared of 2048, router with bias):
//   attention: q_a 7168 x 1536 = 11,010,048; q_b 1536 x 128 x 192 = 37,748,736;
//              kv_a 7168 x 576 = 4,128,768; kv_b 512 x 128 x 256 = 16,777,216;
//              o 128 x 128 x 7168 = 117,440,512; norms 1536 + 512 = 2,048 -> 187,107,328
//   experts:   257 x 3 x 7168 x 2048 = 11,318,329,344; router 256 x 7168 + 256 = 1,835,264
//   block norms 2 x 7168 = 14,336; eh_proj 2 x 7168 x 7168 = 102,760,448
//   total 11,610,046,720 -> at bf16 over tp 8: 2,902,511,680 bytes per GPU.
// With the embedding and head it shares (2 x 129,280 x 7,168 = 1,853,358,080) that is 13.46 B,
// the "14B" of the MTP module the report gives (685B checkpoint = 671B + 14B).
TEST(Speculative, DeepSeekMtpDraftIsOneMoeLayerSharingTheHead)
{
    const Plan plan = readOrDie(servingPlan("deepseek-v3", "h200",
        R"({"tp": 8, "weight_bits": 16, "kv_bits": 16, "context": 4096, "concurrency": 8,
            "speculative": {"kind": "mtp", "tokens": 1, "acceptance": 0.85}})"));
    const SpeculativeDraft draft = speculativeDraft(plan.model.arch, *plan.serving.speculative);
    EXPECT_EQ(draft.layers, 1);
    EXPECT_EQ(draft.arch.layers, 1);
    ASSERT_TRUE(draft.arch.moe.has_value());
    EXPECT_EQ(draft.arch.moe->denseLayers, 0);
    const double perGpu = speculativeDraftWeightsBytesPerGpu(draft, plan.serving);
    EXPECT_NEAR(perGpu, 2'902'511'680.0, 0.002 * 2'902'511'680.0);
    const double withShared = perGpu * 8 / 2 + 2.0 * 129'280 * 7'168;
    EXPECT_NEAR(withShared / 14e9, 1.0, 0.05);
    // MLA caches one 512 + 64 latent per token and layer, 2 bytes each, whole on every rank:
    // the MTP layer adds 1,152 B per token to the model's 61 x 1,152 = 70,272.
    EXPECT_DOUBLE_EQ(speculativeDraftKvBytesPerTokenPerGpu(draft, plan.serving), 1152.0);
    const Estimate e = estimate(plan);
    EXPECT_DOUBLE_EQ(e.serving.kvBytesPerTokenPerGpu, 62 * 1152.0);
    ASSERT_TRUE(e.serving.speculative.has_value());
    EXPECT_DOUBLE_EQ(e.serving.speculative->draftWeightsBytesPerGpu, perGpu);
}

// SGLang's DeepSeek-V3 guide (docs, "Multi-token Prediction"): with the MTP module drafting one
// token (--speculative-num-steps 1, --speculative-num-draft-tokens 2), "the decoding speed can
// be improved by 1.8x for batch size 1 and 1.5x for batch size 32 respectively on H200 TP8",
// with DeepSeek's reported second-token acceptance of 85-90% (DeepSeek-V3 report sec. 5.4.3).
// At batch 1 the verify step over 2 tokens runs the same latency-bound kernels as a plain step;
// at batch 32 its 512 expert draws reach 256 (1 - (255/256)^512) = 221 experts a layer where a
// plain step's 256 reach 162, so it reads ~1.37x the expert weights and the gain falls.
TEST(Speculative, DeepSeekV3MtpOnH200Tp8GivesSglangsGains)
{
    const auto run = [](int batch, double acceptance) {
        const Plan plan = readOrDie(servingPlan("deepseek-v3", "h200",
            R"({"tp": 8, "weight_bits": 8, "kv_bits": 16, "context": 2048, "concurrency": )"
                + std::to_string(batch) + R"(, "speculative": {"kind": "mtp", "tokens": 1, "acceptance": )"
                + std::to_string(acceptance) + "}}"));
        const Estimate e = estimate(plan);
        EXPECT_TRUE(e.serving.fits);
        EXPECT_TRUE(e.serving.speculative.has_value());
        return e;
    };
    for (const double acceptance : { 0.85, 0.90 }) {
        const Estimate one = run(1, acceptance), many = run(32, acceptance);
        const SpeculativeEstimate& s1 = *one.serving.speculative;
        const SpeculativeEstimate& s32 = *many.serving.speculative;
        EXPECT_NEAR(s1.meanTokensPerStep, 1 + acceptance, 1e-12);
        EXPECT_NEAR(s1.speedup / 1.8, 1.0, 0.10) << "batch 1, acceptance " << acceptance;
        EXPECT_NEAR(s32.speedup / 1.5, 1.0, 0.10) << "batch 32, acceptance " << acceptance;
        EXPECT_LT(s32.speedup, s1.speedup);
        // The step is the verify forward and one draft pass; the draft is a few % of it.
        for (const SpeculativeEstimate* s : { &s1, &s32 }) {
            EXPECT_NEAR(s->stepS, s->verifyStepS + s->draftStepS, 1e-15);
            EXPECT_GT(s->draftStepS, 0.0);
            EXPECT_LT(s->draftStepS, 0.10 * s->plainStepS);
            EXPECT_GE(s->verifyStepS, s->plainStepS);
        }
        EXPECT_NEAR(one.serving.itlS, s1.stepS / s1.meanTokensPerStep, 1e-15);
    }
}

// A verify step is one forward over k + 1 tokens per sequence. At a small batch it reads the
// same weights as a decode step and costs about as much; at 256 sequences of Llama-3-8B on an
// H100 its GEMMs run at m = 256 x 5 = 1,280, past the ridge (2 x 1,280 x 8e9 = 20 TFLOP, ~29 ms
// at 700 TFLOP/s, against ~5 ms to read the 16 GB of weights), so the five-token step costs
// about twice the plain one (the cache read, ~10 ms, stays) and the gain falls well under E =
// (1 - 0.7^5) / 0.3 = 2.77: the reason engines turn speculation off under load.
TEST(Speculative, TheGainShrinksAsTheBatchGrows)
{
    const auto gainAt = [](int batch) {
        const Plan plan = readOrDie(servingPlan("llama-3-8b", "h100-sxm",
            R"({"tp": 1, "context": 1024, "concurrency": )" + std::to_string(batch)
                + R"(, "speculative": {"kind": "eagle", "tokens": 4, "acceptance": 0.7}})"));
        const Estimate e = estimate(plan);
        EXPECT_TRUE(e.serving.fits) << batch;
        return e.serving.speculative->speedup;
    };
    const double small = gainAt(1), medium = gainAt(16), large = gainAt(256);
    EXPECT_GT(small, 1.5);
    EXPECT_LT(small, 2.77);
    EXPECT_GT(medium, 1.5);
    EXPECT_LT(large, 0.7 * std::min(small, medium));
}

// The simulation advances each sequence tokensPerStep tokens a step. Closed loop of 8 users,
// 100 input + 201 output tokens, tokens per step 2, a 5 ms + 0.1 ms/sequence step and prompts
// at 10 us/token (the hand-made steps of test_serving_load.cpp):
//   decode steps per request = 200 / 2 = 100, prefill chunks k = ceil(100 / 2040) = 1,
//   cycle = 101 steps, batch = 8 x 100 / 101 = 7.921,
//   step = 5 ms + 0.7921 ms + (8 / 101) x 1 ms = 5.871 ms, TPOT = step / 2 = 2.936 ms.
TEST(Speculative, TheSimulationAdvancesTokensPerStep)
{
    StepTimes steps;
    steps.decodeS = [](double batch, double) { return batch > 0 ? 5e-3 + 1e-4 * batch : 0.0; };
    steps.prefillS = [](double tokens) { return 1e-5 * tokens; };
    steps.tokensPerStep = 2;
    EngineLimits limits;
    limits.kvTokens = 1e7;
    limits.maxBatchedTokens = 2048;
    ServingWorkload w;
    w.input.fixed = 100;
    w.output.fixed = 201;
    w.concurrency = 8;
    const ClosedFormLoad closed = closedFormLoad(100, 201, 8, 0, limits, steps);
    EXPECT_NEAR(closed.tpotS, 2.936e-3, 0.002e-3);
    const EngineRun run = simulateEngine(w, limits, steps, 4096, 2000, 1);
    ASSERT_GT(run.requests, 0);
    EXPECT_NEAR(run.tpotMeanS / closed.tpotS, 1.0, 0.02);
    // Each request takes 100 decode steps, not 200.
    EXPECT_NEAR(run.tpotMeanS, 2.936e-3, 0.06e-3);
}

TEST(Speculative, TheLoadSimulationUsesTheSpeculativeStep)
{
    const std::string workload
        = R"("workload": {"input_tokens": 512, "output_tokens": 256, "concurrency": 4})";
    const Plan plain = readOrDie(servingPlan("llama-3-8b", "h100-sxm",
        R"({"tp": 1, "context": 2048, )" + workload + "}"));
    const Plan spec = readOrDie(servingPlan("llama-3-8b", "h100-sxm",
        R"({"tp": 1, "context": 2048, )" + workload
            + R"(, "speculative": {"kind": "eagle", "tokens": 3, "acceptance": 0.8}})"));
    const Estimate a = estimate(plain), b = estimate(spec);
    ASSERT_TRUE(a.serving.load && b.serving.load);
    // E = (1 - 0.8^4) / 0.2 = 2.952 tokens a step at a few % more per step: TPOT falls by
    // well over half, not by the full 2.952x.
    const double ratio = a.serving.load->tpotMeanS / b.serving.load->tpotMeanS;
    EXPECT_GT(ratio, 2.0);
    EXPECT_LT(ratio, 2.952);
}

TEST(Speculative, ResultAndTextSayWhatTheDraftCosts)
{
    const Plan plan = readOrDie(servingPlan("llama-3-8b", "h100-sxm",
        R"({"tp": 1, "context": 2048, "concurrency": 4,
            "speculative": {"kind": "eagle", "tokens": 4, "acceptance": 0.8}})"));
    const Estimate e = estimate(plan);
    const nlohmann::json j = nlohmann::json::parse(writeResult(plan, e));
    const nlohmann::json& s = j.at("serving").at("speculative");
    EXPECT_EQ(s.at("kind"), "eagle");
    EXPECT_EQ(s.at("tokens"), 4);
    EXPECT_NEAR(s.at("mean_tokens_per_step").get<double>(), 3.3616, 1e-9);
    // vLLM's logged rate: (3.3616 - 1) / 4 = 0.5904.
    EXPECT_NEAR(s.at("draft_acceptance_rate").get<double>(), 0.5904, 1e-9);
    EXPECT_NEAR(j.at("serving").at("itl_s").get<double>(),
        s.at("step_s").get<double>() / 3.3616, 1e-12);
    const std::string text = report::formatReport(plan, e, ByteUnits::GB, report::ReportFormat::Text);
    EXPECT_NE(text.find("speculative decoding"), std::string::npos);
    EXPECT_NE(text.find("3.36 tokens per step"), std::string::npos) << text;
}

TEST(Speculative, RefusalsNameTheFieldAndWhy)
{
    const auto error = [](const std::string& model, const std::string& speculative) {
        Expected<Plan> p = readPlan(servingPlan(model, "h100-sxm",
                                        R"({"tp": 1, "context": 2048, "speculative": )" + speculative + "}"),
            presets());
        return p ? std::string("accepted") : p.error().toString();
    };
    // Llama 3 ships no MTP module.
    const std::string mtp = error("llama-3-8b", R"({"kind": "mtp", "tokens": 1, "acceptance": 0.8})");
    EXPECT_NE(mtp.find("serving.speculative.kind"), std::string::npos) << mtp;
    EXPECT_NE(mtp.find("eagle"), std::string::npos) << mtp;
    const std::string missing = error("llama-3-8b", R"({"kind": "eagle", "tokens": 2})");
    EXPECT_NE(missing.find("serving.speculative.acceptance"), std::string::npos) << missing;
    const std::string tooMany = error("llama-3-8b", R"({"kind": "eagle", "tokens": 17, "acceptance": 0.8})");
    EXPECT_NE(tooMany.find("serving.speculative.tokens"), std::string::npos) << tooMany;
    EXPECT_NE(tooMany.find("16"), std::string::npos) << tooMany;
    const std::string badRate = error("llama-3-8b", R"({"kind": "eagle", "tokens": 2, "acceptance": 1.5})");
    EXPECT_NE(badRate.find("serving.speculative.acceptance"), std::string::npos) << badRate;
    const std::string noDraft = error("llama-3-70b", R"({"kind": "draft", "tokens": 4, "acceptance": 0.7})");
    EXPECT_NE(noDraft.find("serving.speculative.draft_model"), std::string::npos) << noDraft;
    // Llama 2's 32,000-token vocabulary is not Llama 3's 128,256.
    const std::string tokenizer = error("llama-3-70b",
        R"({"kind": "draft", "tokens": 4, "acceptance": 0.7, "draft_model": "llama-2-7b"})");
    EXPECT_NE(tokenizer.find("tokenizer"), std::string::npos) << tokenizer;
    const std::string unknown = error("llama-3-70b",
        R"({"kind": "draft", "tokens": 4, "acceptance": 0.7, "draft_model": "no-such-model"})");
    EXPECT_NE(unknown.find("serving.speculative.draft_model"), std::string::npos) << unknown;
    const std::string stray = error("llama-3-70b",
        R"({"kind": "eagle", "tokens": 4, "acceptance": 0.7, "draft_model": "llama-3-8b"})");
    EXPECT_NE(stray.find("only for kind"), std::string::npos) << stray;
}

// A draft model is a whole model: its weights (embedding and head included) and every layer's
// KV. Llama-3-8B drafting for Llama-3-70B on tp 4 at bf16: 8.03 B params x 2 B / 4 = 4.0 GB per
// GPU (the tp split of its matrices; norms replicated are negligible), and 32 layers x 8 KV
// heads x 128 x 2 x 2 B = 131,072 B per token, 8 heads over tp 4 -> 32,768 B per GPU.
TEST(Speculative, ADraftModelBringsItsWeightsAndCacheAndRoundTrips)
{
    const std::string text = servingPlan("llama-3-70b", "h100-sxm",
        R"({"tp": 4, "context": 4096, "concurrency": 8,
            "speculative": {"kind": "draft", "tokens": 4, "acceptance": 0.7, "draft_model": "llama-3-8b"}})");
    const Plan plan = readOrDie(text);
    const Estimate e = estimate(plan);
    ASSERT_TRUE(e.serving.speculative.has_value());
    EXPECT_NEAR(e.serving.speculative->draftWeightsBytesPerGpu / 4.015e9, 1.0, 0.01);
    EXPECT_DOUBLE_EQ(e.serving.speculative->draftKvBytesPerTokenPerGpu, 32768.0);
    EXPECT_EQ(e.serving.speculative->draftLayers, 32);
    // Written back with the draft as it was given, and read again to the same plan.
    const std::string written = writePlan(plan);
    EXPECT_NE(written.find("\"draft_model\": \"llama-3-8b\""), std::string::npos) << written;
    const Plan again = readOrDie(written);
    EXPECT_EQ(again, plan);
}

// vLLM's SpeculativeConfig as --speculative-config: "mtp" with num_speculative_tokens for the
// checkpoint's module; "eagle" / "draft_model" name the draft, which the export cannot know for
// an EAGLE head, so it writes a placeholder and says so.
TEST(Speculative, TheVllmExportWritesTheSpeculativeConfig)
{
    const Plan mtp = readOrDie(servingPlan("deepseek-v3", "h200",
        R"({"tp": 8, "weight_bits": 8, "context": 4096, "concurrency": 16,
            "speculative": {"kind": "mtp", "tokens": 2, "acceptance": 0.8}})"));
    const EngineConfig a = exportPlan(mtp, estimate(mtp), Engine::Vllm, "deepseek-ai/DeepSeek-V3");
    EXPECT_NE(a.text.find(R"(--speculative-config '{"method": "mtp", "num_speculative_tokens": 2}')"),
        std::string::npos)
        << a.text;
    EXPECT_NE(a.text.find("speculative decoding (mtp, 2 draft tokens at acceptance 0.80)"),
        std::string::npos)
        << a.text;

    const Plan eagle = readOrDie(servingPlan("llama-3-8b", "h100-sxm",
        R"({"tp": 1, "context": 4096, "concurrency": 16,
            "speculative": {"kind": "eagle", "tokens": 3, "acceptance": 0.7}})"));
    const EngineConfig b = exportPlan(eagle, estimate(eagle), Engine::Vllm, "meta-llama/Meta-Llama-3-8B");
    EXPECT_NE(b.text.find(R"({"method": "eagle", "model": "EAGLE_HEAD", "num_speculative_tokens": 3})"),
        std::string::npos)
        << b.text;
    EXPECT_TRUE(std::any_of(b.warnings.begin(), b.warnings.end(),
        [](const std::string& w) { return w.find("EAGLE_HEAD") != std::string::npos; }));

    const Plan draft = readOrDie(servingPlan("llama-3-70b", "h100-sxm",
        R"({"tp": 4, "context": 4096, "concurrency": 8,
            "speculative": {"kind": "draft", "tokens": 4, "acceptance": 0.7, "draft_model": "llama-3-8b"}})"));
    const EngineConfig c = exportPlan(draft, estimate(draft), Engine::Vllm, "meta-llama/Meta-Llama-3-70B");
    EXPECT_NE(c.text.find(R"({"method": "draft_model", "model": "llama-3-8b", "num_speculative_tokens": 4})"),
        std::string::npos)
        << c.text;
}

} // namespace
} // namespace envelope
