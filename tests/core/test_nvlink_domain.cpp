// cluster.nvlink_domain (issue 23): collectives whose ranks fit one NVLink domain run at
// NVLink bandwidth, larger ones at the NIC's. A GB200 / GB300 NVL72 rack is one domain of 72
// GPUs in trays of 4; an HGX H100 system is a domain of 8.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope {
namespace {

using namespace envelope::testing;

// A MoE model as ExpertParallelAllToAllsPerMoeLayer builds it: 32 MoE layers, 8 experts.
CountedModel moeModel()
{
    CountedModel m = gptModel(32, 4096, 32, 32000);
    m.arch.moe = MoeConfig { 8, 2, 0, 14336, 0, false };
    m.counts.moeLayers = 32;
    return m;
}

TEST(NvlinkDomain, Nvl72PricesTp8TimesEp8AtNvlinkAndHgxNodesAcrossTheNetwork)
{
    // TP 8 x EP 8 = 64 ranks laid out tp, cp, ep: the EP all-to-all spans 64 consecutive
    // ranks. In an NVL72 rack (trays of 4, domain 72) 64 <= 72: NVLink, 900 GB/s here. On
    // 8-GPU H100 nodes (domain 8) 64 > 8: the NIC, 50 GB/s. Same bytes, so the EP time grows
    // by 900 / 50 = 18; TP (8 ranks) stays on NVLink in both.
    TrainingConfig c = computeConfig();
    c.tp = 8;
    c.ep = 8;
    Gpu nvl72 = seed001H100();
    nvl72.nvlinkDomain = 72;
    const TrainingCompute rack = estimateCompute(
        moeModel().arch, moeModel().counts, c, Cluster { 64, 4 }, nvl72, nullptr);
    const TrainingCompute nodes = estimateCompute(
        moeModel().arch, moeModel().counts, c, Cluster { 64, 8 }, seed001H100(), nullptr);
    ASSERT_GT(rack.communication.epS, 0);
    EXPECT_NEAR(nodes.communication.epS / rack.communication.epS, 900.0 / 50.0, 1e-9);
    EXPECT_NEAR(rack.communication.tpS, nodes.communication.tpS, 1e-12);
    EXPECT_NEAR(rack.communication.tpS, rack.communication.tpBytes / 900e9, 1e-12);
}

TEST(NvlinkDomain, TheClusterKeyOverridesTheGpuAndTheNodeIsTheDefault)
{
    // Without a domain anywhere, trays of 4 put an 8-way TP group across the NIC (8 > 4);
    // cluster.nvlink_domain 72 brings it back onto NVLink; the GPU's own 72 does the same.
    TrainingConfig c = computeConfig();
    c.tp = 8;
    const CountedModel m = gptModel(80, 8192, 64, 32000);
    const Gpu plain = seed001H100();
    const TrainingCompute trays
        = estimateCompute(m.arch, m.counts, c, Cluster { 8, 4 }, plain, nullptr);
    EXPECT_NEAR(trays.communication.tpS, trays.communication.tpBytes / 50e9, 1e-12);
    Cluster domain { 8, 4 };
    domain.nvlinkDomain = 72;
    const TrainingCompute rack = estimateCompute(m.arch, m.counts, c, domain, plain, nullptr);
    EXPECT_NEAR(rack.communication.tpS, rack.communication.tpBytes / 900e9, 1e-12);
    EXPECT_EQ(nvlinkDomainGpus(Cluster { 8, 4 }, plain), 4);
    EXPECT_EQ(nvlinkDomainGpus(domain, plain), 72);
}

TEST(NvlinkDomain, PlanKeyReadsWritesAndNamesItsRange)
{
    // cluster.nvlink_domain is whole nodes: 72 = 18 trays of 4 reads back as written; 70 is
    // refused naming the key and the rule; a plan without it keeps its canonical form.
    const Expected<PresetLibrary> lib = builtinPresets();
    ASSERT_TRUE(lib.ok());
    const Expected<Plan> rack = readPlan(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "cluster": {"gpus": 72, "gpus_per_node": 4, "nvlink_domain": 72}})", *lib);
    ASSERT_TRUE(rack.ok()) << rack.error().toString();
    EXPECT_EQ(rack->cluster.nvlinkDomain, 72);
    EXPECT_NE(writePlan(*rack).find("\"nvlink_domain\": 72"), std::string::npos);
    const Expected<Plan> bad = readPlan(R"({"model": "llama-2-7b", "gpu": "h100-sxm",
        "cluster": {"gpus": 72, "gpus_per_node": 4, "nvlink_domain": 70}})", *lib);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().toString(),
        "cluster.nvlink_domain: must be 0 (the node) or a multiple of gpus_per_node (4), got 70");
    const Expected<Plan> plain
        = readPlan(R"({"model": "llama-2-7b", "gpu": "h100-sxm"})", *lib);
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(writePlan(*plain).find("nvlink_domain"), std::string::npos);
}

TEST(NvlinkDomain, Gb200AndGb300PresetsAreNvl72Racks)
{
    const Expected<PresetLibrary> lib = builtinPresets();
    ASSERT_TRUE(lib.ok());
    for (const char* id : { "gb200", "gb300" }) {
        const GpuPreset* g = lib->findGpu(id);
        ASSERT_NE(g, nullptr) << id;
        EXPECT_EQ(g->gpu.nvlinkDomain, 72) << id;
        // NVLink 5: 1.8 TB/s bidirectional per GPU = 900 GB/s per direction.
        EXPECT_EQ(g->gpu.intraNodeBytesPerS, 900e9) << id;
    }
    EXPECT_EQ(lib->findGpu("h100-sxm")->gpu.nvlinkDomain, 0);
}

} // namespace
} // namespace envelope
