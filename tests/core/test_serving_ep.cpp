// Expert parallelism, data-parallel attention and disaggregated prefill / decode in serving
// (issue 27: serving.ep, serving.dp_attention, serving.disaggregation). Every expected figure
// is worked out in the comments from the published configs, or taken from DeepSeek-AI's
// published inference-system figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "export/export.h"
#include "ops/ops.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "search/search.h"
#include "serving/load.h"
#include "serving/serving.h"

namespace envelope {
namespace {

const PresetLibrary& presets()
{
    static const PresetLibrary library = builtinPresets().value();
    return library;
}

Expected<Plan> read(const std::string& text) { return readPlan(text, presets()); }

Plan readOrDie(const std::string& text)
{
    Expected<Plan> plan = read(text);
    EXPECT_TRUE(bool(plan)) << (plan ? "" : plan.error().toString());
    return plan ? *plan : Plan {};
}

std::string plan(const std::string& model, const std::string& gpu, int gpus, const std::string& serving)
{
    return R"({"format": "envelope.plan", "version": 1, "model": ")" + model + R"(", "gpu": ")" + gpu
        + R"(", "cluster": {"gpus": )" + std::to_string(gpus)
        + R"(, "gpus_per_node": 8}, "serving": )" + serving + "}";
}

const Op* findOp(const std::vector<Op>& ops, std::string_view name)
{
    for (const Op& op : ops)
        if (name == op.name)
            return &op;
    return nullptr;
}

// DeepSeek-V3's routed experts (config.json: hidden_size 7168, moe_intermediate_size 2048,
// n_routed_experts 256, 61 layers of which first_k_dense_replace = 3 dense): each expert is
// gate, up and down, 3 x 7168 x 2048 = 44,040,192 weights; 256 of them in each of 58 layers:
// 58 x 256 x 44,040,192 = 653,932,371,968 routed-expert weights.
constexpr double kV3ExpertWeights = 58.0 * 256 * 3 * 7168 * 2048;
// 8-bit weights with an fp16 scale and an 8-bit zero per 128 (serving.quant_group_size):
// 1 + 3 / 128 bytes each.
constexpr double kBytesPerWeight8 = 1.0 + 3.0 / 128;

// Data-parallel attention (SGLang --enable-dp-attention; DeepSeek's EP32 / EP144) puts whole
// experts on each GPU: ceil(256 / ep) of them. Against one GPU holding everything (tp 1, no
// EP) the difference is the experts it no longer holds.
TEST(ServingEp, DataParallelAttentionHoldsWholeExpertsPerGpu)
{
    const Plan one = readOrDie(plan("deepseek-v3", "h800", 8, R"({"tp": 1, "weight_bits": 8})"));
    const Plan ep32 = readOrDie(
        plan("deepseek-v3", "h800", 32, R"({"tp": 1, "ep": 32, "dp_attention": true, "weight_bits": 8})"));
    const Plan ep144 = readOrDie(
        plan("deepseek-v3", "h800", 144, R"({"tp": 1, "ep": 144, "dp_attention": true, "weight_bits": 8})"));
    const double all = estimate(one).serving.weightsBytesPerGpu;
    const ServingEstimate s32 = estimate(ep32).serving;
    const ServingEstimate s144 = estimate(ep144).serving;
    // EP 32: 8 of 256 experts stay; EP 144: ceil(256 / 144) = 2 stay (the fullest GPU).
    EXPECT_NEAR(all - s32.weightsBytesPerGpu, kV3ExpertWeights * (1 - 8.0 / 256) * kBytesPerWeight8, 1e3);
    EXPECT_NEAR(all - s144.weightsBytesPerGpu, kV3ExpertWeights * (1 - 2.0 / 256) * kBytesPerWeight8, 1e3);
    EXPECT_EQ(s32.attentionRanks, 32);
    EXPECT_EQ(s32.engineGpus, 32);
    EXPECT_EQ(s144.ep, 144);
    // 144 does not divide 256: the plan says how the engines even it out.
    const std::vector<std::string> warnings = planWarnings(ep144);
    EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
        return w.find("does not divide the model's 256 routed experts: the fullest GPU holds 2")
            != std::string::npos;
    }));
}

// EP inside one TP group (vLLM --enable-expert-parallel at tp 8) moves whole experts between
// the group's ranks: each GPU still holds 1/8 of the expert weights, so memory does not change;
// every rank holds every token, so there is no all-to-all (the TP all-reduce combines).
TEST(ServingEp, ExpertParallelInsideTheTpGroupMovesNoBytes)
{
    const Plan tp8 = readOrDie(plan("mixtral-8x7b", "h100-sxm", 8, R"({"tp": 8})"));
    const Plan ep8 = readOrDie(plan("mixtral-8x7b", "h100-sxm", 8, R"({"tp": 8, "ep": 8})"));
    EXPECT_DOUBLE_EQ(estimate(tp8).serving.weightsBytesPerGpu, estimate(ep8).serving.weightsBytesPerGpu);

    const ModelArch& arch = ep8.model.arch; // Mixtral: hidden 4096, 8 experts of 14336, top 2
    InferenceLayout l;
    l.tp = 8;
    l.ep = 8;
    const std::vector<Op> ops = decodeStepOps(arch, l, 64, 4096);
    EXPECT_EQ(findOp(ops, "ep dispatch"), nullptr);
    EXPECT_NE(findOp(ops, "tp all-reduce"), nullptr);
    // Each rank runs its one expert whole (tp / ep = 1 rank to an expert): 2 x 14336 wide up.
    const Op* up = findOp(ops, "experts up");
    ASSERT_NE(up, nullptr);
    EXPECT_DOUBLE_EQ(up->n, 2 * 14336.0);
    // Without EP the same experts are split 8 ways: 2 x 14336 / 8 wide.
    l.ep = 1;
    const std::vector<Op> splitOps = decodeStepOps(arch, l, 64, 4096);
    const Op* split = findOp(splitOps, "experts up");
    ASSERT_NE(split, nullptr);
    EXPECT_DOUBLE_EQ(split->n, 2 * 14336.0 / 8);
}

// Under data-parallel attention each rank decodes its own sequences and the MoE layers
// exchange them: the dispatch sends each of the rank's b tokens to its top-8 experts,
// b x 8 x 7168 x 2 bytes; 8 ranks of b = 64 bring 64 x 8 x 8 = 4,096 assignments to 256
// experts, 16 tokens to each of the 32 experts a GPU holds (every expert is hit:
// 1 - (255/256)^4096 = 1 - 1.1e-7).
TEST(ServingEp, DataParallelAttentionExchangesTokensAcrossRanks)
{
    const ModelArch arch = readOrDie(plan("deepseek-v3", "h800", 8, "{}")).model.arch;
    InferenceLayout l;
    l.tp = 1;
    l.ep = 8;
    l.dp = 8;
    const std::vector<Op> ops = decodeStepOps(arch, l, 64, 4096);
    const Op* dispatch = findOp(ops, "ep dispatch");
    ASSERT_NE(dispatch, nullptr);
    EXPECT_DOUBLE_EQ(dispatch->bytes, 64.0 * 8 * 7168 * 2);
    EXPECT_EQ(dispatch->group, 8);
    EXPECT_NE(findOp(ops, "ep combine"), nullptr);
    const Op* up = findOp(ops, "experts up");
    ASSERT_NE(up, nullptr);
    EXPECT_NEAR(up->batch, 32.0, 32.0 * 2e-7);
    EXPECT_NEAR(up->m, 16.0, 16.0 * 2e-7);
    EXPECT_DOUBLE_EQ(up->n, 2 * 2048.0); // whole experts: no TP split
    // Block-scaled FP8 weights (the checkpoint's 128 x 128 scales): the tokens are quantized
    // before the dispatch and travel in FP8 with one fp32 scale per 128 values, 64 x 8 x 7168 x
    // (1 + 4 / 128) = 3,784,704 B; the combine returns BF16 (DeepSeek-V3 report sec. 3.3.3).
    InferenceLayout fp8 = l;
    fp8.weightDtype = GemmDtype::Fp8Block;
    const std::vector<Op> fp8Ops = decodeStepOps(arch, fp8, 64, 4096);
    EXPECT_DOUBLE_EQ(findOp(fp8Ops, "ep dispatch")->bytes, 3784704.0);
    EXPECT_DOUBLE_EQ(findOp(fp8Ops, "ep combine")->bytes, 64.0 * 8 * 7168 * 2);
    // An engine wider than the NVLink domain sends across the network.
    l.ep = 16;
    l.dp = 16;
    l.epIntraNode = false;
    l.epRanksPerNode = 8;
    const std::vector<Op> wideOps = decodeStepOps(arch, l, 64, 4096);
    const Op* wide = findOp(wideOps, "ep dispatch");
    ASSERT_NE(wide, nullptr);
    EXPECT_FALSE(wide->intraNode);
    EXPECT_EQ(wide->ranksPerNode, 8);
}

// The plan's concurrency spreads over the attention ranks, each with its own KV pool: the
// engine admits ranks x what one rank holds.
TEST(ServingEp, EachAttentionRankHoldsItsShareOfTheSequences)
{
    const Plan p = readOrDie(plan("deepseek-v3", "h800", 32,
        R"({"tp": 1, "ep": 32, "dp_attention": true, "weight_bits": 8, "context": 4096, "concurrency": 2048})"));
    const ServingEstimate s = estimate(p).serving;
    // MLA caches (kv_lora_rank 512 + rope 64) x 2 bytes per layer and token: 61 x 576 x 2 = 70,272 B.
    EXPECT_DOUBLE_EQ(s.kvBytesPerTokenPerGpu, 61.0 * 576 * 2);
    // 2,048 sequences over 32 ranks: 64 of 4,096 tokens on each GPU.
    EXPECT_DOUBLE_EQ(s.perGpu.kvCache, 64.0 * 4096 * 61 * 576 * 2);
    const double perRank = std::floor(s.blocks / (4096.0 / 16));
    EXPECT_DOUBLE_EQ(s.maxSequences, 32 * perRank);
    EXPECT_TRUE(s.fits);
}

// Disaggregated prefill / decode: the prompt's KV (Llama-3-70B: 2 x 80 layers x 8 KV heads x
// 128 x 2 B = 327,680 B per token; 8,192 tokens: 2,684,354,560 B) crosses from the prefill
// worker to the decode worker over min(4, 8) = 4 NICs of 50 GB/s: 13.42 ms, added to TTFT.
TEST(Disaggregation, TtftIsThePrefillPlusTheKvTransfer)
{
    const Plan p = readOrDie(plan("llama-3-70b", "h100-sxm", 12,
        R"({"context": 8192, "concurrency": 32, "disaggregation": {"prefill": {"workers": 1, "tp": 4},
            "decode": {"workers": 1, "tp": 8}}})"));
    const ServingEstimate s = estimate(p).serving;
    ASSERT_TRUE(s.disaggregation);
    const DisaggregationEstimate& g = *s.disaggregation;
    EXPECT_DOUBLE_EQ(g.kvTransferBytes, 8192.0 * 327680);
    EXPECT_NEAR(g.kvTransferS, 8192.0 * 327680 / (4 * 50e9), 1e-9);
    EXPECT_NEAR(s.ttftS, g.prefillTimeS + g.kvTransferS, 1e-12);
    EXPECT_EQ(g.prefill.gpus, 4);
    EXPECT_EQ(g.decode.gpus, 8);
    // The decode pool's engine is the plan's headline: its weights are a tp-8 engine's, the
    // prefill pool's a tp-4 engine's (half the GPUs: twice the linear weights per GPU).
    EXPECT_GT(g.prefill.weightsBytesPerGpu, 1.9 * g.decode.weightsBytesPerGpu);
    EXPECT_DOUBLE_EQ(s.weightsBytesPerGpu, g.decode.weightsBytesPerGpu);
    // Rates: the prefill pool computes context / prefill time tokens/s; the decode pool emits
    // concurrency / ITL; requests need context / 2 of each.
    EXPECT_NEAR(g.prefillTokensPerS, 8192 / g.prefillTimeS, 1e-6 * g.prefillTokensPerS);
    EXPECT_NEAR(g.decodeTokensPerS, 32 / s.itlS, 1e-6 * g.decodeTokensPerS);
    EXPECT_NEAR(g.requestsPerS,
        std::min(g.prefillTokensPerS / 4096, g.decodeTokensPerS / 4096), 1e-9 * g.requestsPerS);
    EXPECT_TRUE(s.fits);
}

TEST(Disaggregation, PlanKeysRoundTripAndBadLayoutsNameTheirField)
{
    const std::string serving = R"({"tp": 1, "ep": 32, "dp_attention": true, "weight_bits": 8,
        "disaggregation": {"prefill": {"workers": 1, "tp": 1, "ep": 32, "dp": 32},
                           "decode": {"workers": 2, "tp": 1, "ep": 144, "dp": 144}}})";
    const Plan p = readOrDie(plan("deepseek-v3", "h800", 320, serving));
    ASSERT_TRUE(p.serving.disaggregation);
    EXPECT_EQ(p.serving.disaggregation->decode.workers, 2);
    EXPECT_EQ(p.serving.disaggregation->decode.gpus(), 2 * 144);
    EXPECT_EQ(p.serving.ep, 32);
    EXPECT_TRUE(p.serving.dpAttention);
    const Expected<Plan> back = read(writePlan(p));
    ASSERT_TRUE(bool(back)) << back.error().toString();
    EXPECT_EQ(*back, p);

    const auto error = [](const std::string& text) {
        const Expected<Plan> r = read(text);
        return r ? std::string("accepted") : r.error().toString();
    };
    // EP inside a TP group must divide it.
    EXPECT_NE(error(plan("mixtral-8x7b", "h100-sxm", 8, R"({"tp": 8, "ep": 3})"))
                  .find("serving.ep: must divide tp = 8"),
        std::string::npos);
    // A dense model has no experts to spread.
    EXPECT_NE(error(plan("llama-3-70b", "h100-sxm", 8, R"({"tp": 8, "ep": 2})")).find("serving.ep: must be 1"),
        std::string::npos);
    EXPECT_NE(error(plan("llama-3-70b", "h100-sxm", 8, R"({"tp": 1, "ep": 1, "dp_attention": true})"))
                  .find("serving.dp_attention"),
        std::string::npos);
    // With dp attention the engine is ep GPUs: ep a multiple of tp.
    EXPECT_NE(error(plan("deepseek-v3", "h800", 8, R"({"tp": 4, "ep": 6, "dp_attention": true})"))
                  .find("serving.ep: must be a multiple of serving.tp = 4"),
        std::string::npos);
    // A pool with dp ranks spreads its experts over every GPU of the worker.
    EXPECT_NE(error(plan("deepseek-v3", "h800", 64, R"({"disaggregation": {"prefill": {"tp": 1, "ep": 32, "dp": 32},
        "decode": {"tp": 1, "ep": 16, "dp": 32}}})"))
                  .find("serving.disaggregation.decode.ep: must be tp x dp = 32"),
        std::string::npos);
    EXPECT_NE(error(plan("deepseek-v3", "h800", 64, R"({"disaggregation": {"prefill": {"tp": 1}}})"))
                  .find("serving.disaggregation.decode"),
        std::string::npos);
    EXPECT_NE(error(plan("deepseek-v3", "h800", 64, R"({"disaggregation": {"prefill": {"tp": 1, "workers": 0},
        "decode": {"tp": 1}}})"))
                  .find("serving.disaggregation.prefill.workers"),
        std::string::npos);
}

// The engines' own spellings of the layout. SGLang's large-EP launch (LMSYS, "Deploying
// DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs", 2025):
// `--tp-size` is the engine's GPUs, `--dp-size` its attention ranks, `--enable-dp-attention`,
// `--moe-dense-tp-size 1`; vLLM: `--data-parallel-size` with `--enable-expert-parallel`, each
// rank its own `--max-num-seqs`.
TEST(ServingEp, ExportsSpellTheLayoutAsEachEngineDoes)
{
    const Plan p = readOrDie(plan("deepseek-v3", "h100-sxm", 32,
        R"({"tp": 1, "ep": 32, "dp_attention": true, "weight_bits": 8, "concurrency": 1024})"));
    const Estimate e = estimate(p);
    const std::string sglang = exportPlan(p, e, Engine::Sglang, "deepseek-ai/DeepSeek-V3").text;
    for (const char* f : { "--tp-size 32", "--dp-size 32", "--enable-dp-attention", "--ep-size 32",
             "--moe-dense-tp-size 1" })
        EXPECT_NE(sglang.find(f), std::string::npos) << f << " in\n" << sglang;
    const std::string vllm = exportPlan(p, e, Engine::Vllm, "deepseek-ai/DeepSeek-V3").text;
    for (const char* f : { "--tensor-parallel-size 1", "--data-parallel-size 32",
             "--enable-expert-parallel", "--max-num-seqs 32" })
        EXPECT_NE(vllm.find(f), std::string::npos) << f << " in\n" << vllm;
}

// TensorRT-LLM's prefill / decode disaggregation (docs/source/features/disagg-serving.md):
// context and generation `trtllm-serve` workers, each pool's LLM API options a companion file
// with its cache_transceiver_config (the context servers without the overlap scheduler), and
// `trtllm-serve disaggregated -c disagg_config.yaml` in front, the YAML written by the script
// from the hosts it is given. Llama-3 70B: prefill TP 4, decode TP 8, one of each.
TEST(ServingEp, TrtllmWritesTheDisaggregatedDeploymentAsOneScript)
{
    const Plan d = readOrDie(plan("llama-3-70b", "h100-sxm", 12,
        R"({"context": 4096, "disaggregation": {"prefill": {"tp": 4}, "decode": {"tp": 8}}})"));
    const EngineConfig c = exportPlan(d, estimate(d), Engine::Trtllm, "meta-llama/Meta-Llama-3-70B");
    const std::string& t = c.text;
    const std::size_t prefill = t.find("prefill)\n");
    const std::size_t decode = t.find("decode)\n");
    const std::size_t server = t.find("server)\n");
    ASSERT_NE(prefill, std::string::npos) << t;
    ASSERT_NE(decode, std::string::npos) << t;
    ASSERT_NE(server, std::string::npos) << t;
    const std::string p1 = t.substr(prefill, decode - prefill);
    const std::string d1 = t.substr(decode, server - decode);
    for (const char* f : { "--tp_size 4", "--port 8001",
             "--extra_llm_api_options ctx_extra_llm_api_options.yaml" })
        EXPECT_NE(p1.find(f), std::string::npos) << f << " in\n" << p1;
    for (const char* f : { "--tp_size 8", "--port 8002",
             "--extra_llm_api_options gen_extra_llm_api_options.yaml" })
        EXPECT_NE(d1.find(f), std::string::npos) << f << " in\n" << d1;
    EXPECT_NE(t.find("exec trtllm-serve disaggregated -c disagg_config.yaml"), std::string::npos);
    ASSERT_EQ(c.companions.size(), 2u);
    EXPECT_EQ(c.companions[0].fileName, "ctx_extra_llm_api_options.yaml");
    EXPECT_NE(c.companions[0].text.find("disable_overlap_scheduler: true\ncache_transceiver_config:\n"
                                        "  backend: UCX\n  max_tokens_in_buffer: 4096\n"),
        std::string::npos)
        << c.companions[0].text;
    EXPECT_EQ(c.companions[1].fileName, "gen_extra_llm_api_options.yaml");
    EXPECT_EQ(c.companions[1].text.find("disable_overlap_scheduler"), std::string::npos);
    EXPECT_EQ(c.launch, "ROLE=prefill sh trtllm_serve.sh");
    EXPECT_FALSE(std::any_of(c.warnings.begin(), c.warnings.end(), [](const std::string& w) {
        return w.find("is not written") != std::string::npos;
    }));
    if (std::system("command -v sh > /dev/null 2>&1") != 0)
        return;
    // The server part writes disagg_config.yaml from the hosts: one URL a host, its port.
    const std::string dir = ::testing::TempDir() + "envelope_trtllm_pd/";
    std::filesystem::create_directories(dir);
    {
        std::string server = t;
        const std::string exec = "exec trtllm-serve disaggregated -c disagg_config.yaml";
        server.replace(server.find(exec), exec.size(), "true");
        std::ofstream(dir + "serve.sh") << server;
    }
    ASSERT_EQ(std::system(("cd " + dir + " && ROLE=server PREFILL_HOSTS='p1 p2' DECODE_HOSTS=d1 sh serve.sh")
                              .c_str()),
        0);
    std::ifstream in(dir + "disagg_config.yaml");
    const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(yaml,
        "hostname: 0.0.0.0\nport: 8000\nbackend: pytorch\ncontext_servers:\n  num_instances: 2\n"
        "  urls:\n    - \"p1:8001\"\n    - \"p2:8001\"\ngeneration_servers:\n  num_instances: 1\n"
        "  urls:\n    - \"d1:8002\"\n");
    EXPECT_EQ(std::system(("bash -n " + dir + "serve.sh").c_str()), 0);
}

// vLLM's prefill / decode disaggregation (its NixlConnector guide,
// docs/features/nixl_connector_usage.md): every worker a `vllm serve` with
// --kv-transfer-config's NixlConnector (kv_producer / kv_consumer), the NIXL side channel on
// the node's own address, and the proxy from vLLM's source tree in front. DeepSeek's published
// layout (prefill EP32 on 4 nodes, decode EP144 on 18): a data-parallel-attention worker wider
// than a node runs vLLM's multi-node data parallel, 8 ranks a node (--data-parallel-size-local
// 8), the nodes after the first --headless from rank 8 x NODE_RANK.
TEST(ServingEp, VllmWritesTheDisaggregatedDeploymentAsOneScript)
{
    const Plan p = readOrDie(plan("deepseek-v3", "h800", 176,
        R"({"tp": 1, "weight_bits": 8, "context": 4096, "concurrency": 128,
            "disaggregation": {"prefill": {"workers": 1, "tp": 1, "ep": 32, "dp": 32},
                               "decode": {"workers": 1, "tp": 1, "ep": 144, "dp": 144}}})"));
    const EngineConfig c = exportPlan(p, estimate(p), Engine::Vllm, "deepseek-ai/DeepSeek-V3");
    const std::string& t = c.text;
    const std::size_t prefill = t.find("prefill)\n");
    const std::size_t decode = t.find("decode)\n");
    const std::size_t proxy = t.find("proxy)\n");
    ASSERT_NE(prefill, std::string::npos) << t;
    ASSERT_NE(decode, std::string::npos) << t;
    ASSERT_NE(proxy, std::string::npos) << t;
    const std::string p1 = t.substr(prefill, decode - prefill);
    const std::string d1 = t.substr(decode, proxy - decode);
    for (const char* f : { "--tensor-parallel-size 1", "--data-parallel-size 32",
             "--enable-expert-parallel", "--port 8000",
             R"(--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer"}')",
             "--data-parallel-size-local 8", "--data-parallel-rpc-port 13345",
             "--headless --data-parallel-start-rank $((NODE_RANK * 8))",
             "VLLM_NIXL_SIDE_CHANNEL_PORT=5600" })
        EXPECT_NE(p1.find(f), std::string::npos) << f << " in\n" << p1;
    for (const char* f : { "--data-parallel-size 144",
             R"(--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_consumer"}')",
             "${NODE_RANK:?0 .. 17}" })
        EXPECT_NE(d1.find(f), std::string::npos) << f << " in\n" << d1;
    EXPECT_NE(t.find("/tests/v1/kv_connector/nixl_integration/toy_proxy_server.py"),
        std::string::npos)
        << t;
    EXPECT_NE(t.find("--prefiller-hosts $PREFILL_HOSTS --prefiller-ports $prefill_ports"),
        std::string::npos)
        << t;
    EXPECT_EQ(c.launch, "ROLE=prefill HOST_IP=<this node's address> sh serve.sh");
    EXPECT_FALSE(std::any_of(c.warnings.begin(), c.warnings.end(), [](const std::string& w) {
        return w.find("is not written") != std::string::npos;
    }));
    // The script parses as POSIX sh and as bash.
    if (std::system("command -v bash > /dev/null 2>&1") == 0) {
        const std::string path = ::testing::TempDir() + "envelope_vllm_pd.sh";
        {
            std::ofstream out(path);
            out << t;
        }
        EXPECT_EQ(std::system(("bash -n " + path).c_str()), 0) << t;
        EXPECT_EQ(std::system(("sh -n " + path).c_str()), 0) << t;
    }
}

// SGLang's prefill / decode disaggregation (its docs, "PD Disaggregation"; LMSYS's 96-H100 and
// DeepSeek's own layouts): one script, ROLE choosing the part. DeepSeek's published layout
// (V3 report sec. 3.4 and its inference-system post): prefill EP32 on 4 nodes, decode EP144
// on 18, 32 redundant experts. Each worker wider than an 8-GPU node runs one command a node:
// 32 / 8 = 4 and 144 / 8 = 18 (--nnodes), and the router pairs prefill URLs with the
// bootstrap port 8998 (SGLang's default) and lists the decode URLs.
TEST(ServingEp, SglangWritesTheDisaggregatedDeploymentAsOneScript)
{
    const Plan p = readOrDie(plan("deepseek-v3", "h800", 176,
        R"({"engine": "sglang", "tp": 1, "weight_bits": 8, "context": 4096, "concurrency": 128,
            "redundant_experts": 32,
            "disaggregation": {"prefill": {"workers": 1, "tp": 1, "ep": 32, "dp": 32},
                               "decode": {"workers": 1, "tp": 1, "ep": 144, "dp": 144}}})"));
    const EngineConfig c = exportPlan(p, estimate(p), Engine::Sglang, "deepseek-ai/DeepSeek-V3");
    const std::string& t = c.text;
    const std::size_t prefill = t.find("prefill)\n");
    const std::size_t decode = t.find("decode)\n");
    const std::size_t router = t.find("router)\n");
    ASSERT_NE(prefill, std::string::npos) << t;
    ASSERT_NE(decode, std::string::npos) << t;
    ASSERT_NE(router, std::string::npos) << t;
    const std::string p1 = t.substr(prefill, decode - prefill);
    const std::string d1 = t.substr(decode, router - decode);
    for (const char* f : { "--tp-size 32", "--dp-size 32", "--ep-size 32", "--enable-eplb",
             "--ep-num-redundant-experts 32", "--disaggregation-mode prefill",
             "--disaggregation-transfer-backend mooncake", "--disaggregation-bootstrap-port 8998",
             "--nnodes 4", "--node-rank \"${NODE_RANK:?0 .. 3}\"" })
        EXPECT_NE(p1.find(f), std::string::npos) << f << " in\n" << p1;
    for (const char* f : { "--tp-size 144", "--dp-size 144", "--ep-size 144",
             "--disaggregation-mode decode", "--nnodes 18" })
        EXPECT_NE(d1.find(f), std::string::npos) << f << " in\n" << d1;
    EXPECT_EQ(d1.find("--disaggregation-bootstrap-port"), std::string::npos) << d1;
    EXPECT_NE(t.find("python3 -m sglang_router.launch_router --pd-disaggregation $args"),
        std::string::npos)
        << t;
    EXPECT_NE(t.find("args=\"$args --prefill $url 8998\""), std::string::npos) << t;
    EXPECT_EQ(c.launch, "ROLE=prefill sh sglang_serve.sh");
    EXPECT_FALSE(std::any_of(c.warnings.begin(), c.warnings.end(), [](const std::string& w) {
        return w.find("is not written") != std::string::npos;
    }));
    // The script parses as POSIX sh and as bash.
    if (std::system("command -v bash > /dev/null 2>&1") == 0) {
        const std::string path = ::testing::TempDir() + "envelope_sglang_pd.sh";
        {
            std::ofstream out(path);
            out << t;
        }
        EXPECT_EQ(std::system(("bash -n " + path).c_str()), 0) << t;
        EXPECT_EQ(std::system(("sh -n " + path).c_str()), 0) << t;
    }
}

// The planner searches data-parallel attention for a MoE model (issue 27: "search TP x DP x
// EP"): DeepSeek-V3 on 32 H200s at 2,048 sequences of 8k. With TP 8 each GPU keeps the whole
// MLA latent of every sequence (70.3 KB a token, 8 x replicated) and runs 1/8 of every expert;
// every published large deployment of it (DeepSeek's own, SGLang's, vLLM's wide-EP) runs
// attention data-parallel with the experts spread. The best layout does too, and every
// candidate it offers is one estimate() reproduces (test_search_fixtures.h).
TEST(ServingEp, ThePlannerPicksDataParallelAttentionForDeepSeek)
{
    const Plan p = readOrDie(plan("deepseek-v3", "h200", 32,
        R"({"engine": "sglang", "tp": 8, "weight_bits": 8, "context": 8192, "concurrency": 2048})"));
    SearchOptions o;
    o.goal = SearchGoal::ServingMaxThroughput;
    const ServingSearchResult r = searchServing(p, o);
    ASSERT_FALSE(r.candidates.empty());
    const ServingLayout& best = r.candidates.front().layout;
    EXPECT_TRUE(best.dpAttention);
    EXPECT_GE(best.ep, 8);
    // A dense model gets no EP candidates.
    const Plan dense = readOrDie(plan("llama-3-70b", "h100-sxm", 8, R"({"tp": 8, "concurrency": 64})"));
    const ServingSearchResult d = searchServing(dense, o);
    for (const ServingCandidate& c : d.candidates)
        EXPECT_FALSE(c.layout.dpAttention);
}

// DeepSeek-AI, "DeepSeek-V3 / R1 Inference System Overview" (2025-03-01): prefill on units of
// 4 nodes (routed experts EP32, attention and shared expert DP32), decode on units of 18 nodes
// (EP144, DP144), H800s, FP8 weights (128 x 128 block scales, as the checkpoint); "each H800 node delivers an average ... output throughput
// of ~14.8k tokens/s during decoding", with an "average output speed of 20-22 tokens per
// second" per user and "the average kvcache length per output token was 4,989 tokens"; MTP's
// second token accepted 85-90% of the time (DeepSeek-V3 report, sec. 5.4.3).
// The decode pool at those figures: 14.8k / 8 = 1,850 tokens/s per GPU at ~21 tokens/s per
// user is 1,850 / 21 = 88 users per GPU, 88 x 144 = 12,672 per decode unit.
TEST(Disaggregation, DeepSeekInferenceSystemDecodesWithin25PercentPerNode)
{
    const Plan p = readOrDie(plan("deepseek-v3", "h800", 176,
        R"({"weight_format": "fp8-block", "context": 4989, "concurrency": 12672,
            "speculative": {"kind": "mtp", "tokens": 1, "acceptance": 0.875},
            "disaggregation": {"prefill": {"workers": 1, "tp": 1, "ep": 32, "dp": 32},
                               "decode": {"workers": 1, "tp": 1, "ep": 144, "dp": 144}}})"));
    const ServingEstimate s = estimate(p).serving;
    ASSERT_TRUE(s.disaggregation);
    EXPECT_TRUE(s.fits) << "88 sequences of 4,989 tokens per H800";
    const double perNode = s.disaggregation->decodeTokensPerS / 18;
    EXPECT_NEAR(perNode, 14.8e3, 0.25 * 14.8e3) << "decode tokens/s per node: " << perNode;
    // Prefill: "~73.7k tokens/s (including cache hits)" per node, and 342B of the day's 608B
    // input tokens (56.3%) hit the on-disk KV cache, so a node computes 73.7k x (1 - 0.563) =
    // 32.2k prompt tokens/s. The post gives no prompt length; the estimate computes prompts of
    // the mean KV length (4,989 tokens), a 4-node EP32 unit.
    const double prefillPerNode = s.disaggregation->prefillTokensPerS / 4;
    EXPECT_NEAR(prefillPerNode, 73.7e3 * (1 - 0.563), 0.25 * 73.7e3 * (1 - 0.563))
        << "computed prompt tokens/s per node: " << prefillPerNode;
    // The MTP module's experts spread like the model's: 2 of 256 on a decode GPU.
    ASSERT_TRUE(s.speculative);
    EXPECT_LT(s.speculative->draftWeightsBytesPerGpu, 1e9);
}

// Under a workload each attention rank is an engine of the simulation: a closed loop of 1,024
// users over one engine of 32 ranks keeps all 1,024 in the deployment (Little's law: a closed
// loop's users are always somewhere in it), 32 per rank.
TEST(ServingEp, TheWorkloadSpreadsOverTheAttentionRanks)
{
    const Plan p = readOrDie(plan("deepseek-v3", "h100-sxm", 32,
        R"({"tp": 1, "ep": 32, "dp_attention": true, "weight_bits": 8, "context": 4096,
            "workload": {"input_tokens": 1000, "output_tokens": 200, "concurrency": 1024}})"));
    const ServingEstimate s = estimate(p).serving;
    ASSERT_TRUE(s.load);
    EXPECT_EQ(s.load->replicas, 1);
    EXPECT_NEAR(s.load->meanConcurrency, 1024, 0.05 * 1024);
    EXPECT_LE(s.load->meanBatch, 32.0);
    // Tokens/s per GPU: a rank's rate over its tp = 1 GPU, the deployment's over its 32.
    EXPECT_NEAR(s.load->outputTokensPerSPerGpu, s.load->outputTokensPerS / 32,
        1e-9 * s.load->outputTokensPerS);
}

// A disaggregated deployment under a Poisson load: TTFT holds at least the prefill of a prompt
// and its transfer (the prefill pool's queue and the wait for a decode slot come on top), the
// tokens/s per GPU count both pools, and the SLO's goodput is searched through both.
TEST(Disaggregation, UnderLoadTtftAddsThePoolsAndGoodputIsSearched)
{
    Plan p = readOrDie(plan("llama-3-70b", "h100-sxm", 12,
        R"({"context": 4096, "disaggregation": {"prefill": {"workers": 1, "tp": 4}, "decode": {"workers": 1, "tp": 8}},
            "workload": {"input_tokens": 2000, "output_tokens": 200, "request_rate": 1},
            "slo": {"ttft_p90_s": 2, "tpot_p90_s": 0.1}})"));
    Estimate e = estimate(p);
    ASSERT_TRUE(e.serving.load);
    const ServingLoad& l = *e.serving.load;
    ASSERT_GT(l.requests, 0);
    const DisaggregationEstimate& g = *e.serving.disaggregation;
    // 2,000 of the 4,096 tokens the static figures use: the transfer scales with the tokens.
    const double transfer = g.kvTransferS * 2000 / 4096;
    EXPECT_GE(l.ttftP50S, transfer);
    EXPECT_NEAR(l.outputTokensPerSPerGpu, l.outputTokensPerS / 12, 1e-9 * l.outputTokensPerS);
    // 1 request/s of 200 output tokens: 200 tokens/s when the pools keep up.
    EXPECT_NEAR(l.outputTokensPerS, 200, 0.1 * 200);
    attachServingGoodput(p, e);
    ASSERT_TRUE(e.serving.load->goodputRps);
    EXPECT_GT(*e.serving.load->goodputRps, 0.0);
    EXPECT_LE(*e.serving.load->goodputRps, e.serving.load->capacityRps);
}

// Redundant experts (serving.redundant_experts; DeepSeek-AI 2024, the V3 report sec. 3.4.1: in
// the EP32 prefill "besides the original 8 experts it hosts, [each GPU] will also host one
// additional redundant expert", 32 in all): ceil((256 + 32) / 32) = 9 experts a GPU, one more
// of each of the 58 MoE layers than without them: 58 x 44,040,192 weights at 1 + 3/128 bytes.
TEST(ServingEp, RedundantExpertsAddWholeExpertsToEveryGpu)
{
    const std::string layout = R"({"tp": 1, "ep": 32, "dp_attention": true, "weight_bits": 8)";
    const Plan plain = readOrDie(plan("deepseek-v3", "h800", 32, layout + "}"));
    const Plan redundant
        = readOrDie(plan("deepseek-v3", "h800", 32, layout + R"(, "redundant_experts": 32})"));
    EXPECT_EQ(redundant.serving.redundantExperts, 32);
    const ServingEstimate a = estimate(plain).serving;
    const ServingEstimate b = estimate(redundant).serving;
    EXPECT_NEAR(b.weightsBytesPerGpu - a.weightsBytesPerGpu,
        58.0 * 3 * 7168 * 2048 * kBytesPerWeight8, 1e3);
    // The KV pool gives up what the copies take (the engine's memory share is fixed).
    EXPECT_LT(b.kvBudgetBytes, a.kvBudgetBytes);
    // EP 320 with 64 copies (the V3 report's decode: "each GPU hosts only one expert, and 64
    // GPUs are responsible for hosting redundant experts"): ceil(320 / 320) = 1 a GPU.
    const Plan decode = readOrDie(plan("deepseek-v3", "h800", 320,
        R"({"tp": 1, "ep": 320, "dp_attention": true, "weight_bits": 8, "redundant_experts": 64})"));
    const Plan decodeAlone = readOrDie(plan("deepseek-v3", "h800", 8, R"({"tp": 1, "weight_bits": 8})"));
    EXPECT_NEAR(estimate(decodeAlone).serving.weightsBytesPerGpu
            - estimate(decode).serving.weightsBytesPerGpu,
        kV3ExpertWeights * (1 - 1.0 / 256) * kBytesPerWeight8, 1e3);
    // The plan round-trips, and the engines' launch lines carry the copies.
    const Expected<Plan> back = read(writePlan(redundant));
    ASSERT_TRUE(bool(back)) << back.error().toString();
    EXPECT_EQ(back->serving.redundantExperts, 32);
    const Estimate e = estimate(redundant);
    const std::string vllm
        = exportPlan(redundant, e, Engine::Vllm, "deepseek-ai/DeepSeek-V3").text;
    EXPECT_NE(vllm.find("--enable-eplb"), std::string::npos) << vllm;
    EXPECT_NE(vllm.find(R"(--eplb-config '{"num_redundant_experts": 32}')"), std::string::npos)
        << vllm;
    const std::string sglang
        = exportPlan(redundant, e, Engine::Sglang, "deepseek-ai/DeepSeek-V3").text;
    EXPECT_NE(sglang.find("--enable-eplb"), std::string::npos) << sglang;
    EXPECT_NE(sglang.find("--ep-num-redundant-experts 32"), std::string::npos) << sglang;
}

TEST(ServingEp, RedundantExpertsNeedExpertParallelism)
{
    const Expected<Plan> dense
        = read(plan("llama-3-8b", "h100-sxm", 8, R"({"tp": 1, "redundant_experts": 8})"));
    ASSERT_FALSE(bool(dense));
    EXPECT_EQ(dense.error().path, "serving.redundant_experts");
    EXPECT_NE(dense.error().message.find("no routed experts"), std::string::npos)
        << dense.error().message;
    const Expected<Plan> noEp
        = read(plan("deepseek-v3", "h800", 8, R"({"tp": 8, "redundant_experts": 8})"));
    ASSERT_FALSE(bool(noEp));
    EXPECT_EQ(noEp.error().path, "serving.redundant_experts");
    EXPECT_NE(noEp.error().message.find("serving.ep > 1"), std::string::npos)
        << noEp.error().message;
    const Expected<Plan> negative = read(
        plan("deepseek-v3", "h800", 32, R"({"tp": 1, "ep": 32, "dp_attention": true, "redundant_experts": -1})"));
    ASSERT_FALSE(bool(negative));
    EXPECT_EQ(negative.error().path, "serving.redundant_experts");
}

} // namespace
} // namespace envelope
