// Known answers for the planner: layouts practitioners and papers arrived at, and the figures
// they measured, each worked out by hand here rather than read back from the code.
#include <gtest/gtest.h>

#include <cmath>

#include "estimate/estimate.h"
#include "search/search.h"
#include "test_search_fixtures.h"

namespace envelope {
namespace {

using testing::searchPlan;

TEST(SearchKnown, OneBillionParametersOnEightGpusIsPureDataParallel)
{
    // 1B params x 16 B = 16 GB of states: one GPU holds a replica, so any model split only adds
    // communication (TP all-reduces every layer, a pipeline bubble) to the same compute.
    const Plan plan = searchPlan(R"({"format": "envelope.plan", "version": 1,
        "model": {"params": 1e9}, "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8},
        "training": {"zero_stage": 0, "tp": 8, "micro_batch": 1, "grad_accum": 8,
                     "seq_len": 4096}})");
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    const SearchResult r = search(plan, o);
    ASSERT_FALSE(r.candidates.empty());
    const Layout& best = r.candidates.front().layout;
    EXPECT_EQ(best.tp, 1);
    EXPECT_EQ(best.pp, 1);
    EXPECT_EQ(best.cp, 1);
    EXPECT_EQ(best.gpus / (best.tp * best.pp * best.cp), 8);
    // The plan's 8 sequences of 4096 tokens stay the global batch: 1 per replica.
    EXPECT_EQ(best.microBatch * best.gradAccum, 1);
    EXPECT_FALSE(best.offloadOptimizer);
}

TEST(SearchKnown, TensorParallelNeverCrossesASlowerNodeLink)
{
    // Llama-2-70B on nodes of 4 GPUs whose NIC (50 GB/s) is 9x slower than NVLink (450 GB/s).
    const Plan plan = searchPlan("llama-2-70b", "h100-sxm", 64, 4,
        R"({"zero_stage": 1, "tp": 4, "pp": 1, "micro_batch": 1, "grad_accum": 16,
            "seq_len": 4096})");
    ASSERT_LT(plan.gpu.gpu.interNodeBytesPerS, plan.gpu.gpu.intraNodeBytesPerS);
    for (SearchGoal goal : { SearchGoal::MaxThroughput, SearchGoal::MinGpus }) {
        SearchOptions o;
        o.goal = goal;
        o.top = 50;
        const SearchResult r = search(plan, o);
        ASSERT_FALSE(r.candidates.empty());
        for (const Candidate& c : r.candidates)
            EXPECT_LE(c.layout.tp, 4);
        for (const Candidate& c : r.pareto)
            EXPECT_LE(c.layout.tp, 4);
    }
}

TEST(SearchKnown, Gpt3On1024A100sIsTp8InNodeAndPipelineAcrossNodesNearNarayanan2021)
{
    // Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters
    // Using Megatron-LM"), Table 1: GPT-3 175B on 1024 A100s, global batch 1536 x 2048 tokens,
    // t = 8, p = 16, measured 140 TFLOP/s per GPU counted by their eq. 3 (with activation
    // recomputation): F = 96 B s l h^2 (1 + s / 6h + V / 16 l h).
    const double l = 96, h = 12288, s = 2048, V = 51200;
    const double flopsPerToken = 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    const double measuredTokensPerS = 1024 * 140e12 / flopsPerToken; // = 99,972 tokens/s
    ASSERT_NEAR(measuredTokensPerS, 99972, 5);

    // The software the paper ran (Megatron-LM, 2021): no flash attention (Dao et al. 2022), no
    // sequence parallelism (Korthikanti et al. 2022) and no sharded optimizer (Megatron-LM's
    // distributed optimizer came later), so those are held; TP, PP, virtual stages, recompute
    // and the micro-batch split are searched. Left free as well, the planner takes the later
    // features (sequence parallel + flash attention remove the activation memory that made
    // recompute necessary) and runs +21% over the 2021 measurement: the comparison, not the
    // step-time model, was off (checked below).
    const Plan plan = searchPlan("gpt3-175b", "a100-80gb", 1024, 8,
        R"({"zero_stage": 0, "tp": 8, "pp": 16, "micro_batch": 1, "grad_accum": 192,
            "seq_len": 2048, "recompute": "full", "mfu": 0.45, "flash_attention": false})");
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    o.fixed.push_back(*parseFixedField("training.sequence_parallel=false"));
    o.fixed.push_back(*parseFixedField("training.zero_stage=0"));
    const SearchResult r = search(plan, o);
    ASSERT_FALSE(r.candidates.empty());
    const Candidate& best = r.candidates.front();
    EXPECT_EQ(best.layout.tp, 8); // fills an 8-GPU node's NVLink domain
    EXPECT_EQ(best.layout.pp, 16); // the paper's p = 16: the pipeline spans 16 nodes
    EXPECT_EQ(best.layout.cp, 1);
    EXPECT_NEAR(best.tokensPerS / measuredTokensPerS, 1.0, 0.20);
    // The paper recomputed every layer (its sec. 3.5); at t = 8, p = 16 the core finds the
    // activations fit without it (16 micro-batches in flight of 6 layers), and skipping the
    // recomputed forward (a quarter of the hardware FLOPs eq. 3 counts) is why the planner's
    // rate sits above the measurement. With recompute held at full it sits below (the plan's
    // 45% is the measured hardware-FLOP rate, and the step time adds the bubble and the
    // exposed TP all-reduces on top of it).
    SearchOptions full = o;
    full.fixed.push_back(*parseFixedField("training.recompute=full"));
    const SearchResult asRun = search(plan, full);
    ASSERT_FALSE(asRun.candidates.empty());
    EXPECT_EQ(asRun.candidates.front().layout.tp, 8);
    EXPECT_NEAR(asRun.candidates.front().tokensPerS / measuredTokensPerS, 1.0, 0.20);
    EXPECT_LT(asRun.candidates.front().tokensPerS, best.tokensPerS);

    // With today's features free, sequence parallelism replaces recompute: faster still.
    SearchOptions modern;
    modern.goal = SearchGoal::MaxThroughput;
    Plan withFlash = plan;
    withFlash.training.flashAttention = true;
    const SearchResult now = search(withFlash, modern);
    ASSERT_FALSE(now.candidates.empty());
    EXPECT_TRUE(now.candidates.front().layout.sequenceParallel);
    EXPECT_GT(now.candidates.front().tokensPerS, best.tokensPerS);
}

TEST(SearchKnown, DeepSeekV3FullFineTuningFitsOnAtMost163H100s)
{
    // 671B params x 16 B (bf16 weights and gradients, fp32 master and Adam moments) = 10.7 TB
    // of states. Without offload, 0.9 x 85.52 GB usable less the 2.5 GB fixed overhead and the
    // 10% fragmentation allowance leaves 67.7 GB for states and activations, so no layout fits
    // below 10.74e12 / 67.7e9 = 158.7 GPUs; with offload the host holds the optimizer.
    const Plan plan = searchPlan("deepseek-v3", "h100-sxm", 256, 8,
        R"({"zero_stage": 3, "tp": 1, "pp": 1, "ep": 8, "micro_batch": 1, "grad_accum": 1,
            "seq_len": 4096, "recompute": "full"})");
    const double params = estimate(plan).params;
    ASSERT_NEAR(params, 671e9, 1e9);
    SearchOptions o;
    o.goal = SearchGoal::MinGpus;
    const SearchResult r = search(plan, o);
    ASSERT_FALSE(r.candidates.empty());
    const Candidate& best = r.candidates.front();
    EXPECT_LE(best.layout.gpus, 163);
    EXPECT_EQ(best.layout.gpus % 8, 0);
    EXPECT_EQ(best.verdict, FitVerdict::Fits);
    // Host memory stays within a DGX node's 2 TB.
    EXPECT_LE(best.hostBytesPerNode, 2e12);

    SearchOptions onGpu = o;
    onGpu.allowOffload = false;
    const SearchResult g = search(plan, onGpu);
    ASSERT_FALSE(g.candidates.empty());
    const double room = (0.9 * plan.gpu.gpu.memoryBytes - 2.5e9) / 1.1;
    EXPECT_GE(g.candidates.front().layout.gpus, 16 * params / room);
    EXPECT_FALSE(g.candidates.front().layout.offloadOptimizer);
}

TEST(SearchKnown, DeepSeekV3On2048H800sSpreadsItsExpertsAsDeepSeekDid)
{
    // DeepSeek-AI 2024 (DeepSeek-V3 technical report) sec. 3.2 and 4.2: 2,048 H800s, PP 16
    // (DualPipe), EP 64 across 8 nodes, ZeRO-1 over 128 data-parallel ranks, no TP, FP8, its own
    // memory savers (sec. 3.2.3, 3.3.3), sequences of 4,096, 15,360 a step.
    const Plan plan = searchPlan("deepseek-v3", "h800", 2048, 8,
        R"({"framework": "megatron", "recipe": "fp8-deepseek", "zero_stage": 1, "pp": 16,
            "ep": 64, "micro_batch": 1, "grad_accum": 120, "seq_len": 4096, "recompute": "none",
            "pp_schedule": "dualpipe", "recompute_ops": ["norm", "mla_up", "swiglu"],
            "fp8_activations": ["moe_inputs", "swiglu_inputs", "attention_output"]})");
    // The H800 times its GEMMs and attention from the H100's tables (presets/kernels/h800.json:
    // the same GH100 die, clocks and HBM) and its collectives from its 400 GB/s NVLink.
    ASSERT_NE(plan.gpu.gpu.kernels, nullptr);
    EXPECT_EQ(plan.gpu.gpu.kernels->gpu, "h800");
    EXPECT_TRUE(plan.gpu.gpu.kernels->collectives.empty());
    SearchOptions o;
    o.goal = SearchGoal::MaxThroughput;
    const SearchResult r = search(plan, o);
    ASSERT_FALSE(r.candidates.empty());
    const Candidate& best = r.candidates.front();
    // Every rank receives tokens x top-k = 32,768 expert rows a micro-batch whatever EP is;
    // EP sets how many experts share them: 64 experts of 512 rows at EP 4, 4 of 8,192 at EP 64,
    // and the measured grouped GEMMs run far faster at 8,192 rows. Before the H800 had tables
    // every GEMM ran at one spec efficiency, rows or not, and the planner picked EP 4 with TP 2.
    EXPECT_GE(best.layout.ep, 8);
    // DeepSeek's own layout is within 15% of the best candidate at its pipeline depth (it reads
    // faster: the planner ranks layouts that fit with room, and this one is tight, 83.5 GB of
    // 85.5). 61 layers on 16 stages pace at ceil(61 / 16) = 4 layers a micro-batch; at other
    // depths the planner may find a split that paces better (PP 32: 2 layers a stage, the LM
    // head on a last stage of its own, as Megatron's DeepSeek layouts also place the loss).
    SearchOptions atDepth = o;
    atDepth.fixed.push_back(parseFixedField("training.pp=16").value());
    const SearchResult d = search(plan, atDepth);
    ASSERT_FALSE(d.candidates.empty());
    const Estimate own = estimate(plan);
    ASSERT_NE(own.training.verdict, Verdict::Over);
    EXPECT_GE(own.compute.tokensPerS, 0.85 * d.candidates.front().tokensPerS)
        << own.compute.tokensPerS << " vs " << d.candidates.front().tokensPerS;
}

} // namespace
} // namespace envelope
