// The tenant table (result/tenants.h) and the writers that read it: the result JSON keys and
// order of design.md's contract, the stacking order the charts draw, a total that is the plain
// sum, and the app's Markdown summary (report/textreport.h) written out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "estimate/estimate.h"
#include "result/tenants.h"
#include "fixtures.h"
#include "report/textreport.h"

namespace envelope {
namespace {

TEST(Tenants, EveryTenantHasOneRow)
{
    for (Tenant t : { Tenant::Weights, Tenant::Gradients, Tenant::Optimizer, Tenant::Activations,
             Tenant::KvCache, Tenant::Overhead, Tenant::Lora })
        EXPECT_EQ(tenantInfo(t).id, t);
    EXPECT_EQ(kTenantTable.size(), 7u);
}

// design.md "Result JSON": per_gpu_bytes.{weights,gradients,optimizer,activations,overhead,total}
// for training; docs/cli.md adds kv_cache before overhead for serving and RL roles.
TEST(Tenants, ResultJsonKeysFollowTheContract)
{
    const std::vector<std::string> training { "weights", "gradients", "optimizer", "activations",
        "overhead", "lora", "total" };
    const std::vector<std::string> serving { "weights", "gradients", "optimizer", "activations",
        "kv_cache", "overhead", "lora", "total" };
    Plan plan = testing::seedGrpoPlan();
    plan.name = "tenants";
    const nlohmann::ordered_json j
        = nlohmann::ordered_json::parse(writeResult(plan, estimate(plan)));
    std::vector<std::string> keys;
    for (const auto& [key, value] : j["training"]["per_gpu_bytes"].items())
        keys.push_back(key);
    EXPECT_EQ(keys, training);
    keys.clear();
    for (const auto& [key, value] : j["serving"]["per_gpu_bytes"].items())
        keys.push_back(key);
    EXPECT_EQ(keys, serving);
}

// The charts stack the model's states first, then the KV cache, then the per-step activations
// and the overhead on top; a training step has no KV cache.
TEST(Tenants, StackingOrder)
{
    EXPECT_EQ(kStackedTenants,
        (std::array { Tenant::Weights, Tenant::Gradients, Tenant::Optimizer, Tenant::Lora,
            Tenant::KvCache, Tenant::Activations, Tenant::Overhead }));
    EXPECT_EQ(kTrainingTenants,
        (std::array { Tenant::Weights, Tenant::Gradients, Tenant::Optimizer, Tenant::Lora,
            Tenant::Activations, Tenant::Overhead }));
}

// Two rows at one stack position would stack in an unspecified order (std::ranges::sort).
TEST(Tenants, StackPositionsAreDistinct)
{
    std::set<int> positions;
    for (const TenantInfo& row : kTenantTable)
        EXPECT_TRUE(positions.insert(row.stack).second) << row.key;
}

TEST(Tenants, TotalIsTheSumOfEveryTenant)
{
    const MemoryBreakdown m { 1, 2, 4, 8, 16, 32 };
    EXPECT_EQ(m.total(), 63); // 1 + 2 + 4 + 8 + 16 + 32, each tenant counted once
    EXPECT_EQ(m.*tenantInfo(Tenant::KvCache).bytes, 16);
}

// The app's copied summary, written out by hand for a made-up breakdown (GB = 1e9).
TEST(Tenants, SummaryMarkdownListsEveryTrainingTenant)
{
    Plan plan;
    plan.name = "Sum";
    plan.model.arch.name = "M";
    plan.gpu.gpu.name = "G";
    plan.cluster.gpus = 8;
    plan.training.zeroStage = 1;
    plan.training.microBatch = 2;
    plan.training.seqLen = 4096;
    Estimate e;
    e.params = 7e9;
    e.training.perGpu = { 14e9, 14e9, 28e9, 5e9, 0, 1e9 };
    e.training.gpuMemoryBytes = 80e9;
    e.training.fits = true;
    e.training.verdict = Verdict::Fits;
    e.training.usableBytes = 72e9;
    e.training.minGpus = 4;
    const std::string md = report::formatSummaryMarkdown(plan, e, ByteUnits::GB, "tp 2");
    // The configuration table first (its rows: tests/core/test_report.cpp), then the tenants.
    EXPECT_EQ(md.rfind("### Sum\n\n#### Configuration\n\n| Setting | Value |\n", 0), 0u) << md;
    const std::string tenants = "| Per GPU | GB |\n|---|---:|\n"
                                "| Weights | 14.0 GB |\n| Gradients | 14.0 GB |\n"
                                "| Optimizer | 28.0 GB |\n"
                                "| Activations | 5.0 GB |\n| Overhead | 1.0 GB |\n"
                                "| **Total** | **62.0 GB** |\n| HBM | 80.0 GB |\n\n"
                                "**Fits**, 18.0 GB headroom. Min GPUs to fit below the usable "
                                "line: 4. What makes it fit: tp 2.\n";
    ASSERT_GE(md.size(), tenants.size());
    EXPECT_EQ(md.substr(md.size() - tenants.size()), tenants) << md;
    e.training.fits = false;
    e.training.verdict = Verdict::Over;
    e.training.gpuMemoryBytes = 60e9;
    e.training.minGpus = 0;
    const std::string over = report::formatSummaryMarkdown(plan, e, ByteUnits::GB);
    EXPECT_NE(over.find("**Does not fit**: 2.0 GB over. No GPU count fits below the usable line "
                        "at this parallelism.\n"),
        std::string::npos)
        << over;
}

} // namespace
} // namespace envelope
