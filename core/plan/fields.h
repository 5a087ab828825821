// The plan's scalar fields as one table per section, walked by three visitors: reading
// (planio_read.cpp), range checking of plans built in code (planio_validate.cpp) and canonical
// writing (planio_write.cpp). One table means one key name, one range and one order for all
// three. Internal to the core. docs/plan-format.md lists the same keys, ranges and defaults.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "plan/plan.h"

namespace envelope::planfields {

// Bounds that catch unit mistakes and typos rather than limit real jobs.
inline constexpr int kMaxGpus = 1'000'000;
inline constexpr int kMaxParallel = 65'536;
inline constexpr int kMaxTokens = 100'000'000; // sequence / context length
inline constexpr int kMaxBatch = 1'000'000; // training.micro_batch and training.grad_accum
inline constexpr double kMaxBytes = 1e13; // one GPU's allowance (10 TB)
// Lower bounds that catch unit slips instead of "> 0", which let 1e-300 through and turned
// every time and cost into infinity (docs/reliability.md, defect 8): no real MFU or efficiency is
// below 0.1 %, no measured rate below one token per thousand seconds.
inline constexpr double kMinFraction = 0.001;
inline constexpr double kMinRate = 1e-3;

template <class E> struct EnumIds {
    std::string_view (*idOf)(E);
    bool (*parse)(std::string_view, E&);
    const char* allowed; // for messages
};

inline const EnumIds<OptimizerKind> kOptimizerIds { optimizerId, parseOptimizer,
    "\"adamw\", \"adam\", \"lion\", \"sgd-momentum\", \"sgd\", \"adafactor\", \"adamw-8bit\", "
    "\"paged-adamw\" or \"paged-adamw-8bit\"" };
inline const EnumIds<Recompute> kRecomputeIds { recomputeId, parseRecompute,
    "\"none\", \"selective\", \"full\" or \"every-k\"" };
inline const EnumIds<ServingEngine> kEngineIds { servingEngineId, parseServingEngine,
    "\"vllm\", \"sglang\", \"trtllm\" or \"generic\"" };
inline const EnumIds<KvCacheFormat> kKvFormatIds { kvCacheFormatId, parseKvCacheFormat,
    "\"auto\", \"bf16\", \"fp8\", \"int8\", \"int4\" or \"nvfp4\"" };
inline const EnumIds<WeightFormat> kWeightFormatIds { weightFormatId, parseWeightFormat,
    "\"auto\", \"bf16\", \"fp8\", \"fp8-block\", \"int8\", \"nvfp4\", \"mxfp4\" or \"int4\"" };
// serving.attention_weight_format / expert_weight_format: a stored format, or "same".
inline constexpr std::string_view kWeightGroupFormatsAllowed
    = "\"same\" (serving.weight_format), \"bf16\", \"fp8\", \"fp8-block\", \"int8\", "
      "\"nvfp4\", \"mxfp4\" or \"int4\"";
inline const EnumIds<SpeculativeKind> kSpeculativeKindIds { speculativeKindId,
    parseSpeculativeKind, "\"mtp\", \"eagle\" or \"draft\"" };
inline const EnumIds<RlAlgorithm> kAlgorithmIds { rlAlgorithmId, parseRlAlgorithm,
    "\"ppo\", \"grpo\" or \"dpo\"" };
inline const EnumIds<RlPlacement> kPlacementIds { rlPlacementId, parseRlPlacement,
    "\"disjoint\" or \"colocated\"" };

template <class V> void visitCluster(Cluster& c, V& v)
{
    v.integer("gpus", c.gpus, 1, kMaxGpus);
    v.integer("gpus_per_node", c.gpusPerNode, 1, 1024);
}

// training: everything after "recipe" and before "activation_model".
template <class V> void visitTrainingSetup(TrainingConfig& c, V& v)
{
    v.enumeration("optimizer", c.optimizer, kOptimizerIds);
    v.integer("zero_stage", c.zeroStage, 0, 3);
    v.integer("tp", c.tp, 1, kMaxParallel);
    v.integer("pp", c.pp, 1, kMaxParallel);
    v.integer("cp", c.cp, 1, kMaxParallel);
    v.integer("ep", c.ep, 1, kMaxParallel);
    v.boolean("sequence_parallel", c.sequenceParallel);
    v.integer("virtual_stages", c.virtualStages, 1, 1024);
    v.integer("mtp_layers", c.mtpLayers, 0, kMaxMtpLayers);
    v.integer("micro_batch", c.microBatch, 1, kMaxBatch);
    v.integer("grad_accum", c.gradAccum, 1, kMaxBatch);
    v.integer("seq_len", c.seqLen, 1, kMaxTokens);
    v.enumeration("recompute", c.recompute, kRecomputeIds);
    v.integer("recompute_every", c.recomputeEvery, 1, 100'000);
    v.boolean("flash_attention", c.flashAttention);
    v.boolean("offload_optimizer", c.offloadOptimizer);
    v.boolean("offload_params", c.offloadParams);
    v.number("mfu", c.mfu, Range::closed(kMinFraction, 1));
    v.number("efficiency_scale", c.efficiencyScale, Range::closed(0.05, 20));
    v.number("train_tokens", c.trainTokens, Range::closed(1, 1e17));
    v.number("comm_overlap", c.commOverlap, Range::closed(0, 1));
    v.number("usable_fraction", c.usableFraction, Range::above(0, 1));
}

// training: after "activation_model".
template <class V> void visitTrainingObserved(TrainingConfig& c, V& v)
{
    v.number("activation_calibration", c.activationModel.calibration, Range::closed(0.01, 100));
    v.optionalNumber("observed_step_time_s", c.observedStepTimeS, Range::closed(1e-6, 1e9));
    v.optionalNumber("observed_tokens_per_s", c.observedTokensPerS, Range::closed(kMinRate, 1e15));
    v.optionalNumber("budget_usd", c.budgetUsd, Range::closed(0.01, 1e13));
    v.optionalNumber("deadline_s", c.deadlineS, Range::closed(1, 1e11));
}

template <class V> void visitOverhead(OverheadConfig& o, V& v)
{
    v.number("fixed_bytes", o.fixedBytes, Range::closed(0, kMaxBytes));
    // A fraction of everything else; 0.9 would already mean "nearly double".
    v.number("fragmentation", o.fragmentation, Range::closed(0, 0.9));
}

template <class V> void visitServing(ServingConfig& c, V& v)
{
    v.integer("weight_bits", c.weightBits, 4, 16);
    v.integer("kv_bits", c.kvBits, 4, 16);
    v.integer("quant_group_size", c.quantGroupSize, 1, 1'000'000);
    v.integer("tp", c.tp, 1, kMaxParallel);
    v.integer("context", c.context, 1, kMaxTokens);
    v.integer("concurrency", c.concurrency, 1, 10'000'000);
    v.integer("block_size", c.blockSize, 1, 65'536);
    v.number("gpu_memory_utilization", c.gpuMemoryUtilization, Range::closed(0.01, 1));
    v.integer("max_batched_tokens", c.maxBatchedTokens, 1, kMaxTokens);
    v.integer("average_length", c.averageLength, 0, kMaxTokens);
    v.number("runtime_overhead_bytes", c.runtimeOverheadBytes, Range::closed(0, kMaxBytes));
    v.number("decode_efficiency", c.decodeEfficiency, Range::closed(kMinFraction, 1));
}

// serving.disaggregation.prefill / .decode.
template <class V> void visitServingPool(ServingPool& c, V& v)
{
    v.integer("workers", c.workers, 1, kMaxGpus);
    v.integer("tp", c.tp, 1, kMaxParallel);
    v.integer("ep", c.ep, 1, kMaxParallel);
    v.integer("dp", c.dp, 1, kMaxParallel);
}

// serving.speculative (its draft_model is read and written as a model is).
inline constexpr int kMaxSpeculativeTokens = 16;
template <class V> void visitSpeculative(ServingSpeculative& c, V& v)
{
    v.enumeration("kind", c.kind, kSpeculativeKindIds);
    v.integer("tokens", c.tokens, 1, kMaxSpeculativeTokens);
    v.number("acceptance", c.acceptance, Range::closed(0, 1));
}

template <class V> void visitRl(RlConfig& c, V& v)
{
    v.enumeration("algorithm", c.algorithm, kAlgorithmIds);
    v.enumeration("placement", c.placement, kPlacementIds);
    v.integer("trainer_gpus", c.trainerGpus, 1, kMaxGpus);
    v.integer("reference_gpus", c.referenceGpus, 0, kMaxGpus);
    v.integer("rollout_gpus", c.rolloutGpus, 0, kMaxGpus);
    v.integer("critic_gpus", c.criticGpus, 0, kMaxGpus);
    v.integer("reward_gpus", c.rewardGpus, 0, kMaxGpus);
    v.integer("prompts_per_step", c.prompts, 1, 10'000'000);
    v.integer("group_size", c.groupSize, 1, 1'000'000);
    v.integer("prompt_len", c.promptLen, 1, kMaxTokens);
    v.integer("response_len", c.responseLen, 1, kMaxTokens);
    v.number("old_policy_bytes_per_param", c.oldPolicyBytesPerParam, Range::closed(0, 4));
    v.boolean("kl", c.kl);
    v.optionalNumber("rollout_tokens_per_s", c.rolloutTokensPerS, Range::closed(kMinRate, 1e15));
    v.optionalNumber("train_tokens_per_s", c.trainTokensPerS, Range::closed(kMinRate, 1e15));
    v.boolean("off_policy_pipeline", c.offPolicyPipeline);
    v.optionalNumber("response_len_mean", c.responseLenMean, Range::closed(1, kMaxTokens));
    v.boolean("old_log_prob_forward", c.oldLogProbForward);
    v.optionalNumber("staleness", c.staleness, Range::closed(0, kMaxStaleness));
    v.boolean("partial_rollouts", c.partialRollouts);
    v.integer("update_epochs", c.updateEpochs, 1, 100);
    v.integer("updates_per_sync", c.updatesPerSync, 1, 1'000'000);
}

// Reads through a FieldReader (types, ranges, unknown keys).
struct ReadVisitor {
    FieldReader& f;

    void integer(const char* key, int& out, int min, int max) { f.integer(key, out, min, max); }
    void number(const char* key, double& out, Range range) { f.number(key, out, range); }
    void optionalNumber(const char* key, std::optional<double>& out, Range range)
    {
        f.optionalNumber(key, out, range);
    }
    void boolean(const char* key, bool& out) { f.boolean(key, out); }
    template <class E> void enumeration(const char* key, E& out, const EnumIds<E>& ids)
    {
        const nlohmann::json* v = f.get(key);
        if (v && (!v->is_string() || !ids.parse(v->get<std::string>(), out)))
            f.fail(f.pathOf(key), fmt::format("must be {}, got {}", ids.allowed, describeJson(*v)));
    }
};

// Checks the ranges of values already in a Plan (built in code); same messages as reading.
struct CheckVisitor {
    std::string path;
    std::optional<Error> error;

    void fail(const char* key, std::string message)
    {
        if (!error)
            error = Error { childPath(path, key), std::move(message) };
    }
    void integer(const char* key, int& value, int min, int max)
    {
        if (value < min || value > max)
            fail(key, fmt::format("must be {}..{}, got {}", min, max, value));
    }
    void number(const char* key, double& value, Range range)
    {
        if (!range.contains(value))
            fail(key, fmt::format("must be {}, got {}", range.describe(), formatNumber(value)));
    }
    void optionalNumber(const char* key, std::optional<double>& value, Range range)
    {
        if (value && !range.contains(*value))
            fail(key,
                fmt::format(
                    "must be {}, got {} (or null)", range.describe(), formatNumber(*value)));
    }
    void boolean(const char*, bool&) { }
    template <class E> void enumeration(const char* key, E& value, const EnumIds<E>& ids)
    {
        if (ids.idOf(value).empty())
            fail(key, fmt::format("must be {}", ids.allowed));
    }
};

// A number the way the canonical plan writes it: whole numbers without ".0".
inline nlohmann::ordered_json canonicalNumber(double v)
{
    if (std::isfinite(v) && v > -9e15 && v < 9e15 && v == std::floor(v))
        return static_cast<std::int64_t>(v);
    return v;
}

// Writes every key, in table order.
struct WriteVisitor {
    nlohmann::ordered_json& j;

    void integer(const char* key, int& value, int, int) { j[key] = value; }
    void number(const char* key, double& value, Range) { j[key] = canonicalNumber(value); }
    void optionalNumber(const char* key, std::optional<double>& value, Range)
    {
        j[key] = value ? canonicalNumber(*value) : nlohmann::ordered_json(nullptr);
    }
    void boolean(const char* key, bool& value) { j[key] = value; }
    template <class E> void enumeration(const char* key, E& value, const EnumIds<E>& ids)
    {
        j[key] = std::string(ids.idOf(value));
    }
};

// serving.disaggregation's value as the canonical plan writes it: {"prefill": {"workers", "tp",
// "ep", "dp"}, "decode": {...}} (also a planner candidate's pools and its change).
inline nlohmann::ordered_json disaggregationJson(ServingDisaggregation d)
{
    nlohmann::ordered_json pools = nlohmann::ordered_json::object();
    for (auto [key, pool] : { std::pair { "prefill", &d.prefill }, std::pair { "decode", &d.decode } }) {
        nlohmann::ordered_json one = nlohmann::ordered_json::object();
        WriteVisitor v { one };
        visitServingPool(*pool, v);
        pools[key] = one;
    }
    return pools;
}

} // namespace envelope::planfields
