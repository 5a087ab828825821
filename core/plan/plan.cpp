#include "plan/plan.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

namespace envelope {
namespace {

template <class Enum, std::size_t N>
bool parseId(const std::array<std::pair<Enum, std::string_view>, N>& table, std::string_view id,
             Enum& out)
{
    for (const auto& [value, name] : table)
        if (name == id) {
            out = value;
            return true;
        }
    return false;
}

template <class Enum, std::size_t N>
std::string_view idOf(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value)
{
    for (const auto& [v, name] : table)
        if (v == value)
            return name;
    return {};
}

constexpr std::array<std::pair<Recompute, std::string_view>, 4> kRecompute{{
    {Recompute::None, "none"},
    {Recompute::Selective, "selective"},
    {Recompute::Full, "full"},
    {Recompute::EveryK, "every-k"},
}};
constexpr std::array<std::pair<RlAlgorithm, std::string_view>, 3> kAlgorithms{{
    {RlAlgorithm::Ppo, "ppo"},
    {RlAlgorithm::Grpo, "grpo"},
    {RlAlgorithm::Dpo, "dpo"},
}};
constexpr std::array<std::pair<RlPlacement, std::string_view>, 2> kPlacements{{
    {RlPlacement::Disjoint, "disjoint"},
    {RlPlacement::Colocated, "colocated"},
}};

constexpr std::array<std::pair<ServingEngine, std::string_view>, 4> kEngines{{
    {ServingEngine::Vllm, "vllm"},
    {ServingEngine::Sglang, "sglang"},
    {ServingEngine::Trtllm, "trtllm"},
    {ServingEngine::Generic, "generic"},
}};

constexpr std::array<std::pair<SpeculativeKind, std::string_view>, 3> kSpeculativeKinds{{
    {SpeculativeKind::Mtp, "mtp"},
    {SpeculativeKind::Eagle, "eagle"},
    {SpeculativeKind::Draft, "draft"},
}};

constexpr std::array<std::pair<KvCacheFormat, std::string_view>, 6> kKvFormats{{
    {KvCacheFormat::Auto, "auto"},
    {KvCacheFormat::Bf16, "bf16"},
    {KvCacheFormat::Fp8, "fp8"},
    {KvCacheFormat::Int8, "int8"},
    {KvCacheFormat::Int4, "int4"},
    {KvCacheFormat::Nvfp4, "nvfp4"},
}};
constexpr std::array<std::pair<WeightFormat, std::string_view>, 8> kWeightFormats{{
    {WeightFormat::Auto, "auto"},
    {WeightFormat::Bf16, "bf16"},
    {WeightFormat::Fp8, "fp8"},
    {WeightFormat::Fp8Block, "fp8-block"},
    {WeightFormat::Int8, "int8"},
    {WeightFormat::Nvfp4, "nvfp4"},
    {WeightFormat::Mxfp4, "mxfp4"},
    {WeightFormat::Int4, "int4"},
}};

}  // namespace

std::string_view kvCacheFormatId(KvCacheFormat f) { return idOf(kKvFormats, f); }
bool parseKvCacheFormat(std::string_view id, KvCacheFormat& out) { return parseId(kKvFormats, id, out); }
std::string_view weightFormatId(WeightFormat f) { return idOf(kWeightFormats, f); }
bool parseWeightFormat(std::string_view id, WeightFormat& out) { return parseId(kWeightFormats, id, out); }

int kvCacheFormatBits(KvCacheFormat f)
{
    switch (f) {
    case KvCacheFormat::Bf16:
        return 16;
    case KvCacheFormat::Fp8:
    case KvCacheFormat::Int8:
        return 8;
    case KvCacheFormat::Int4:
    case KvCacheFormat::Nvfp4:
        return 4;
    default:
        return 0;
    }
}

int weightFormatBits(WeightFormat f)
{
    switch (f) {
    case WeightFormat::Bf16:
        return 16;
    case WeightFormat::Fp8:
    case WeightFormat::Fp8Block:
    case WeightFormat::Int8:
        return 8;
    case WeightFormat::Nvfp4:
    case WeightFormat::Mxfp4:
    case WeightFormat::Int4:
        return 4;
    default:
        return 0;
    }
}

KvCacheFormat servingKvFormat(const ServingConfig& c)
{
    if (c.kvFormat != KvCacheFormat::Auto)
        return c.kvFormat;
    if (c.kvBits >= 16)
        return KvCacheFormat::Bf16;
    if (c.kvBits >= 8)
        // vLLM, SGLang and TensorRT-LLM cache 8-bit KV as FP8 with one scale per layer (vLLM
        // --kv-cache-dtype fp8, SGLang fp8_e5m2 / fp8_e4m3, TensorRT-LLM FP8 KV); the seeds'
        // generic engine keeps LMDeploy's per-token INT8.
        return c.engine == ServingEngine::Generic ? KvCacheFormat::Int8 : KvCacheFormat::Fp8;
    return KvCacheFormat::Int4;
}

std::string_view speculativeKindId(SpeculativeKind k) { return idOf(kSpeculativeKinds, k); }
bool parseSpeculativeKind(std::string_view id, SpeculativeKind& out)
{
    return parseId(kSpeculativeKinds, id, out);
}
std::string_view servingEngineId(ServingEngine e) { return idOf(kEngines, e); }
bool parseServingEngine(std::string_view id, ServingEngine& out) { return parseId(kEngines, id, out); }
std::string_view recomputeId(Recompute r) { return idOf(kRecompute, r); }
bool parseRecompute(std::string_view id, Recompute& out) { return parseId(kRecompute, id, out); }
std::string_view rlAlgorithmId(RlAlgorithm a) { return idOf(kAlgorithms, a); }
bool parseRlAlgorithm(std::string_view id, RlAlgorithm& out) { return parseId(kAlgorithms, id, out); }
std::string_view rlPlacementId(RlPlacement p) { return idOf(kPlacements, p); }
bool parseRlPlacement(std::string_view id, RlPlacement& out) { return parseId(kPlacements, id, out); }

bool servingHasExpertParallel(const ServingConfig& c)
{
    return c.ep > 1
        || (c.disaggregation && (c.disaggregation->prefill.ep > 1 || c.disaggregation->decode.ep > 1));
}

std::string rlStalenessName(double staleness)
{
    return staleness == 1 ? std::string("one step off-policy")
                          : fmt::format("staleness {:g}", staleness);
}

std::string servingWeightFormatText(const ServingConfig& serving)
{
    std::string text = serving.weightFormat != WeightFormat::Auto
        ? std::string(weightFormatId(serving.weightFormat))
        : fmt::format("{}-bit", serving.weightBits);
    text += " weights";
    const auto& a = serving.attentionWeightFormat;
    const auto& e = serving.expertWeightFormat;
    if (a && e)
        text += fmt::format(" with attention in {} and experts in {}", weightFormatId(*a), weightFormatId(*e));
    else if (a)
        text += fmt::format(" with attention in {}", weightFormatId(*a));
    else if (e)
        text += fmt::format(" with experts in {}", weightFormatId(*e));
    return text;
}

std::string rlAsyncText(double staleness, bool partialRollouts, int updatesPerSync)
{
    std::string out;
    if (staleness > 0)
        out = rlStalenessName(staleness) + (partialRollouts ? ", partial rollouts" : "");
    if (updatesPerSync > 1)
        out += fmt::format("{}{} updates per sync", out.empty() ? "" : ", ", updatesPerSync);
    return out;
}

namespace {

// Whether the plan's training.stage_layers is a whole split of `layers` at its pp.
bool ownSplit(const TrainingConfig& c, int layers)
{
    if (c.stageLayers.empty() || static_cast<int>(c.stageLayers.size()) != std::max(1, c.pp))
        return false;
    long long sum = 0;
    for (int n : c.stageLayers) {
        if (n < 0)
            return false;
        sum += n;
    }
    return sum == layers;
}

} // namespace

int pipelineStageStart(const TrainingConfig& c, int layers, int stage)
{
    const int pp = std::max(1, c.pp);
    layers = std::max(0, layers);
    stage = std::clamp(stage, 0, pp);
    if (ownSplit(c, layers)) {
        int start = 0;
        for (int k = 0; k < stage; ++k)
            start += c.stageLayers[static_cast<std::size_t>(k)];
        return start;
    }
    const int perStage = (layers + pp - 1) / pp;
    return static_cast<int>(std::min<long long>(static_cast<long long>(stage) * perStage, layers));
}

std::vector<int> pipelineStageLayers(const TrainingConfig& c, int layers)
{
    if (ownSplit(c, std::max(0, layers)))
        return c.stageLayers;
    const int pp = std::max(1, c.pp);
    std::vector<int> out(static_cast<std::size_t>(pp));
    for (int k = 0; k < pp; ++k)
        out[static_cast<std::size_t>(k)]
            = pipelineStageStart(c, layers, k + 1) - pipelineStageStart(c, layers, k);
    return out;
}

std::string stageLayersText(const std::vector<int>& stages)
{
    std::string out;
    for (std::size_t k = 0; k < stages.size();) {
        std::size_t end = k;
        while (end < stages.size() && stages[end] == stages[k])
            ++end;
        out += (out.empty() ? "" : ", ") + std::to_string(stages[k]);
        if (end - k > 1)
            out += " x " + std::to_string(end - k);
        k = end;
    }
    return out;
}

double rlStaleness(const RlConfig& c)
{
    if (c.staleness)
        return *c.staleness >= 0 && *c.staleness <= kMaxStaleness ? *c.staleness : 0.0;
    return c.offPolicyPipeline ? 1.0 : 0.0;
}

}  // namespace envelope

namespace envelope {

ServingParallel servingParallel(const ServingConfig& c)
{
    ServingParallel p;
    p.tp = std::max(c.tp, 1);
    p.ep = std::max(c.ep, 1);
    // Data-parallel attention: the engine is the expert-parallel group, ep / tp ranks of tp.
    p.dp = c.dpAttention && p.ep > p.tp ? p.ep / p.tp : 1;
    return p;
}

ServingConfig servingOfPlan(const Plan& plan)
{
    ServingConfig s = plan.serving;
    s.nvlinkDomainGpus = std::max(nvlinkDomainGpus(plan.cluster, plan.gpu.gpu), 0);
    return s;
}

ServingConfig servingPoolConfig(const ServingConfig& c, const ServingPool& pool)
{
    ServingConfig p = c;
    p.disaggregation.reset();
    p.tp = std::max(pool.tp, 1);
    p.dpAttention = pool.dp > 1;
    p.ep = p.dpAttention ? p.tp * pool.dp : std::max(pool.ep, 1);
    return p;
}

} // namespace envelope
