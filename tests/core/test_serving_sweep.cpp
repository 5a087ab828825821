// The serving panel's capacity curve: max concurrent sequences against context length, pinned
// by hand at a few contexts from a KV budget built by hand (seed 002's 60 GB for Llama-3 8B).
#include <gtest/gtest.h>

#include <cmath>

#include "serving/sweep.h"
#include "fixtures.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// Llama-3 8B on a GPU sized so that exactly 60 GB is left for the KV cache.
Plan sixtyGbKvPlan()
{
    Plan plan;
    plan.model.arch = llama3_8b();
    plan.gpu.gpu = h100();
    plan.serving = ServingConfig {};
    plan.serving.engine = ServingEngine::Generic; // seed 002's 60 GB budget arithmetic
    plan.serving.gpuMemoryUtilization = 1.0;
    plan.serving.runtimeOverheadBytes = 0;
    plan.serving.concurrency = 64;
    plan.serving.maxBatchedTokens = 8192;
    // Weights, bf16, tp 1: 2 B x 8,030,261,248 params (Llama-3 8B model card; by part:
    // 2 x 128256 x 4096 embedding + head, 32 x (41,943,040 attention + 176,160,768 SwiGLU
    // + 8192 norms), 4096 final norm).
    const double weights = 2.0 * 8030261248.0;
    // Forward peak at 8192 batched tokens: per token 2 x 4096 (residual + norm out) + the widest
    // of attention (2 x 32 + 2 x 8) x 128 = 10240 and SwiGLU 3 x 14336 = 43008, in bf16:
    // 8192 x (8192 + 43008) x 2 = 838,860,800; + fp32 logits of 64 sequences:
    // 64 x 128256 x 4 = 32,833,536.
    const double activations = 838860800.0 + 32833536.0;
    plan.gpu.gpu.memoryBytes = 60e9 + weights + activations;
    return plan;
}

double pointAt(const std::vector<ServingSweepPoint>& points, double context)
{
    for (const ServingSweepPoint& p : points)
        if (p.context == context)
            return p.maxSequences;
    ADD_FAILURE() << "no point at context " << context;
    return -1;
}

TEST(ServingContextSweep, CoversPowersOfTwoFrom256To1M)
{
    const auto points = servingContextSweep(sixtyGbKvPlan());
    ASSERT_EQ(points.size(), 13u); // 2^8 .. 2^20
    for (std::size_t i = 0; i < points.size(); ++i)
        EXPECT_EQ(points[i].context, std::ldexp(1.0, 8 + int(i)));
    EXPECT_EQ(points.front().context, 256);
    EXPECT_EQ(points.back().context, 1048576);
}

TEST(ServingContextSweep, MaxSequencesAreWholeBlocksOfTheHandBuiltBudget)
{
    const auto points = servingContextSweep(sixtyGbKvPlan());
    // KV per token: 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B; a 16-token block is
    // 2,097,152 B; blocks = floor(60e9 / 2,097,152) = floor(28610.2) = 28610 (seed 002).
    for (const ServingSweepPoint& p : points)
        EXPECT_NEAR(p.kvBudgetBytes, 60e9, 1.0) << "context " << p.context;
    // max sequences = floor(28610 / ceil(context / 16)):
    EXPECT_EQ(pointAt(points, 256), 1788); // 28610 / 16    = 1788.1
    EXPECT_EQ(pointAt(points, 4096), 111); // 28610 / 256   = 111.8
    EXPECT_EQ(pointAt(points, 32768), 13); // 28610 / 2048  = 13.97
    EXPECT_EQ(pointAt(points, 262144), 1); // 28610 / 16384 = 1.75
    EXPECT_EQ(pointAt(points, 1048576), 0); // 28610 / 65536 = 0.44
}

TEST(ServingContextSweep, CapacityNeverGrowsWithContext)
{
    const auto points = servingContextSweep(sixtyGbKvPlan());
    for (std::size_t i = 1; i < points.size(); ++i)
        EXPECT_LE(points[i].maxSequences, points[i - 1].maxSequences);
}

TEST(ServingContextSweep, ConcurrencyFitsOnlyWhereTheBudgetHoldsIt)
{
    // 64 sequences fit while floor(28610 / ceil(n / 16)) >= 64 in contiguous bytes:
    // 64 x n x 131,072 <= 60e9 -> n <= 7152.6, so 4096 fits and 8192 does not.
    const auto points = servingContextSweep(sixtyGbKvPlan());
    for (const ServingSweepPoint& p : points)
        EXPECT_EQ(p.fitsConcurrency, p.context <= 4096) << "context " << p.context;
}

TEST(ServingContextSweep, DecodeRunsNothingWhereNoSequenceFits)
{
    const auto points = servingContextSweep(sixtyGbKvPlan());
    EXPECT_EQ(points.back().decodeTokensPerS, 0.0); // 1M tokens: 0 sequences
    EXPECT_GT(points.front().decodeTokensPerS, 0.0);
}

// The throughput-interactivity curve of the same plan at its 2,048-token context. Batch 1 reads
// the 16.06 GB of weights (2 x 8,030,261,248) for each token, so one user gets at most
// 3.35e12 / 16.06e9 = 208.6 tokens/s (the H100's HBM roofline) and, at decode_efficiency 0.8,
// about 0.8 x that = 167. The largest batch is what the 60 GB pool holds at 2,048 tokens:
// floor(60e9 / (16 x 131,072 B)) = 28,610 blocks, 128 a sequence -> 223 sequences. Points at
// 1, 2, 4, ..., 128 and 223; per GPU = batch x per user (tp 1).
TEST(ServingInteractivity, TheCurveRunsFromOneUserToTheFullPool)
{
    Plan plan = sixtyGbKvPlan();
    plan.serving.context = 2048;
    const InteractivityCurve curve = servingInteractivityCurve(plan);
    EXPECT_EQ(curve.kvTokens, 2048);
    EXPECT_EQ(curve.maxBatch, 223);
    ASSERT_EQ(curve.points.size(), 9u);
    EXPECT_TRUE(curve.plainPoints.empty());
    EXPECT_EQ(curve.points.front().batch, 1);
    EXPECT_EQ(curve.points.back().batch, 223);
    EXPECT_LE(curve.points.front().tokensPerSPerUser, 208.6);
    EXPECT_GT(curve.points.front().tokensPerSPerUser, 0.75 * 208.6);
    for (std::size_t i = 0; i < curve.points.size(); ++i) {
        const InteractivityPoint& p = curve.points[i];
        EXPECT_NEAR(p.tokensPerSPerGpu, p.batch * p.tokensPerSPerUser, 1e-9 * p.tokensPerSPerGpu);
        if (i > 0) {
            EXPECT_LT(p.tokensPerSPerUser, curve.points[i - 1].tokensPerSPerUser);
            EXPECT_GT(p.tokensPerSPerGpu, curve.points[i - 1].tokensPerSPerGpu);
        }
    }
}

// With speculative decoding the curve is drawn twice: the plan's (E tokens a step) and the
// plain one at the same batches. At batch 1 speculation is well ahead (E = (1 - 0.8^4) / 0.2 =
// 2.95 tokens for a step that reads the same weights); at the full batch its verify GEMMs over
// 4 tokens a sequence (m ~ 860) are compute-bound while the plain step's are not, so its lead
// shrinks (the cache read, the same for both, keeps it above 1 at 2,048 tokens).
TEST(ServingInteractivity, SpeculationLeadsMostAtOneUser)
{
    Plan plan = sixtyGbKvPlan();
    plan.serving.context = 2048;
    plan.serving.speculative = ServingSpeculative { SpeculativeKind::Eagle, 3, 0.8, std::nullopt };
    const InteractivityCurve curve = servingInteractivityCurve(plan);
    ASSERT_FALSE(curve.points.empty());
    ASSERT_EQ(curve.plainPoints.size(), curve.points.size());
    const double atOne = curve.points.front().tokensPerSPerUser / curve.plainPoints.front().tokensPerSPerUser;
    const double atFull = curve.points.back().tokensPerSPerGpu / curve.plainPoints.back().tokensPerSPerGpu;
    EXPECT_GT(atOne, 2.0);
    EXPECT_LT(atOne, 2.95);
    EXPECT_LT(atFull, 0.8 * atOne);
}

TEST(ServingInteractivity, NoPoolNoCurve)
{
    Plan plan = sixtyGbKvPlan();
    plan.gpu.gpu.memoryBytes = 8e9; // less than the 16 GB of weights
    const InteractivityCurve curve = servingInteractivityCurve(plan);
    EXPECT_TRUE(curve.points.empty());
}

} // namespace
} // namespace envelope
