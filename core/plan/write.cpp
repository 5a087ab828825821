// writePlan: the canonical plan JSON. Every section and key is written, in the order of
// docs/plan-format.md, so that a saved plan documents every choice, and
// readPlan(writePlan(p)) == p for any plan readPlan produced.
#include <initializer_list>
#include <utility>

#include "model/arch_json.h"
#include "plan/planio.h"
#include "plan/fields.h"
#include "plan/preset_json.h"

namespace envelope {
namespace {

using namespace planfields;
using ordered_json = nlohmann::ordered_json;

ordered_json toOrdered(const nlohmann::json& j)
{
    return ordered_json::parse(j.dump());
}

ordered_json modelToJson(const ModelChoice& model)
{
    switch (model.form) {
    case ModelChoice::Form::Preset:
        return model.presetId;
    case ModelChoice::Form::PresetOverrides: {
        ordered_json j = ordered_json::object();
        j["preset"] = model.presetId;
        if (!model.overridesJson.empty()) {
            const ordered_json overrides = ordered_json::parse(model.overridesJson, nullptr, false);
            if (overrides.is_object())
                for (const auto& [key, value] : overrides.items())
                    j[key] = value;
        }
        return j;
    }
    case ModelChoice::Form::HfConfig:
        return ordered_json { { "hf_config", model.hfConfigPath } };
    case ModelChoice::Form::HubId:
        return ordered_json { { "hf_id", model.hubId } };
    case ModelChoice::Form::Params:
        return toOrdered(paramsModelToJson(model.arch));
    case ModelChoice::Form::Architecture:
        break;
    }
    return toOrdered(archToJson(model.arch));
}

ordered_json activationModelToJson(const ActivationModel& model)
{
    if (model.kind == ActivationModel::Kind::Tensors)
        return "tensors";
    return ordered_json { { "bytes_per_sbh_per_layer",
        canonicalNumber(model.bytesPerSbhPerLayer) } };
}

ordered_json trainingToJson(TrainingConfig t)
{
    ordered_json j = ordered_json::object();
    if (!t.recipe.presetId.empty())
        j["recipe"] = t.recipe.presetId;
    else
        j["recipe"] = toOrdered(customRecipeToJson(t.recipe.recipe));
    WriteVisitor v { j };
    visitTrainingSetup(t, v);
    // `mfu` is written only as the override it is; without it the ops time the step, and a
    // read-back plan must stay op-timed. efficiency_scale only when calibrated.
    if (!t.mfuOverride)
        j.erase("mfu");
    if (t.efficiencyScale == 1.0)
        j.erase("efficiency_scale");
    j["activation_model"] = activationModelToJson(t.activationModel);
    ordered_json overhead = ordered_json::object();
    WriteVisitor ov { overhead };
    visitOverhead(t.overhead, ov);
    j["overhead"] = overhead;
    visitTrainingObserved(t, v);
    // Written only when set, so plans that never name a framework keep their canonical form.
    if (t.framework.id != "generic")
        j["framework"] = t.framework.id;
    if (!t.framework.version.empty())
        j["framework_version"] = t.framework.version;
    if (t.compile)
        j["compile"] = true;
    if (t.ppSchedule != PpSchedule::OneFOneB)
        j["pp_schedule"] = t.ppSchedule == PpSchedule::DualPipe ? "dualpipe" : "zb1p";
    const auto flags = [&](const char* key, unsigned value,
                           std::initializer_list<std::pair<unsigned, const char*>> table) {
        if (value == 0)
            return;
        ordered_json names = ordered_json::array();
        for (const auto& [flag, name] : table)
            if (value & flag)
                names.push_back(name);
        j[key] = names;
    };
    flags("recompute_ops", t.recomputeOps,
        { { RecomputeNorm, "norm" }, { RecomputeMlaUp, "mla_up" }, { RecomputeSwiglu, "swiglu" } });
    flags("fp8_activations", t.fp8Activations,
        { { Fp8MoeInputs, "moe_inputs" }, { Fp8SwigluInputs, "swiglu_inputs" },
            { Fp8AttentionOutput, "attention_output" } });
    if (t.expandableSegments != t.framework.expandableSegments)
        j["expandable_segments"] = t.expandableSegments;
    if (t.loss != LossKind::Default)
        j["loss"] = std::string(lossKindId(t.loss));
    if (t.asyncTp)
        j["async_tp"] = true;
    if (t.overlapGradReduce)
        j["overlap_grad_reduce"] = *t.overlapGradReduce;
    if (t.overlapParamGather)
        j["overlap_param_gather"] = *t.overlapParamGather;
    if (t.hsdpShard > 0)
        j["hsdp_shard"] = t.hsdpShard;
    if (!t.stageLayers.empty())
        j["stage_layers"] = t.stageLayers;
    if (t.hfuConvention == HfuConvention::Korthikanti)
        j["hfu_convention"] = "korthikanti";
    if (t.optimizerInBackward)
        j["optimizer_in_backward"] = true;
    if (t.activationOffload) {
        if (t.activationOffloadLayers > 0)
            j["activation_offload"] = t.activationOffloadLayers;
        else
            j["activation_offload"] = true;
    }
    if (t.lora.enabled) {
        ordered_json lora = ordered_json::object();
        lora["rank"] = t.lora.rank;
        lora["alpha"] = canonicalNumber(t.lora.alpha);
        ordered_json targets = ordered_json::array();
        const char* names[] = { "q", "k", "v", "o", "gate", "up", "down" };
        for (unsigned i = 0; i < 7; ++i)
            if (t.lora.targets & (1u << i))
                targets.push_back(names[i]);
        lora["targets"] = targets;
        lora["base_bits"] = t.lora.baseBits;
        lora["double_quant"] = t.lora.doubleQuant;
        j["lora"] = lora;
    }
    return j;
}

// serving.workload's lengths in the form they were written (read.cpp, readLength).
ordered_json lengthToJson(const LengthDistribution& d)
{
    switch (d.form) {
    case LengthDistribution::Form::Fixed:
        return canonicalNumber(d.fixed);
    case LengthDistribution::Form::MeanP90: {
        ordered_json j = ordered_json::object();
        j["mean"] = canonicalNumber(d.mean);
        j["p90"] = canonicalNumber(d.p90);
        return j;
    }
    case LengthDistribution::Form::Histogram: {
        ordered_json bins = ordered_json::array();
        for (const auto& [tokens, weight] : d.histogram)
            bins.push_back(ordered_json::array({ canonicalNumber(tokens), canonicalNumber(weight) }));
        ordered_json j = ordered_json::object();
        j["histogram"] = bins;
        return j;
    }
    }
    return nullptr;
}

ordered_json workloadToJson(const ServingWorkload& w)
{
    ordered_json j = ordered_json::object();
    j["input_tokens"] = lengthToJson(w.input);
    j["output_tokens"] = lengthToJson(w.output);
    if (w.concurrency)
        j["concurrency"] = *w.concurrency;
    if (w.requestRate)
        j["request_rate"] = canonicalNumber(*w.requestRate);
    j["prefix_hit_rate"] = canonicalNumber(w.prefixHitRate);
    return j;
}

ordered_json sloToJson(const ServingSlo& slo)
{
    ordered_json j = ordered_json::object();
    const auto put = [&](const char* key, const std::optional<double>& v) {
        if (v)
            j[key] = canonicalNumber(*v);
    };
    put("ttft_p50_s", slo.ttftP50S);
    put("ttft_p90_s", slo.ttftP90S);
    put("ttft_p99_s", slo.ttftP99S);
    put("tpot_p50_s", slo.tpotP50S);
    put("tpot_p90_s", slo.tpotP90S);
    put("tpot_p99_s", slo.tpotP99S);
    return j;
}

} // namespace

std::string writePlan(const Plan& input)
{
    Plan plan = input; // the visitors take non-const references (shared with the reader)
    ordered_json j = ordered_json::object();
    j["format"] = "envelope.plan";
    j["version"] = 1;
    j["name"] = plan.name;
    j["model"] = modelToJson(plan.model);
    if (!plan.gpu.presetId.empty())
        j["gpu"] = plan.gpu.presetId;
    else
        j["gpu"] = toOrdered(gpuToJson(plan.gpu.gpu));

    ordered_json cluster = ordered_json::object();
    WriteVisitor cv { cluster };
    visitCluster(plan.cluster, cv);
    // Written only when set, so existing plans keep their canonical form.
    if (plan.cluster.nvlinkDomain > 0)
        cluster["nvlink_domain"] = plan.cluster.nvlinkDomain;
    j["cluster"] = cluster;

    j["training"] = trainingToJson(plan.training);

    ordered_json serving = ordered_json::object();
    WriteVisitor sv { serving };
    visitServing(plan.serving, sv);
    // Written only when not the default, so existing plans keep their canonical form.
    if (plan.serving.engine != ServingEngine::Vllm)
        serving["engine"] = std::string(servingEngineId(plan.serving.engine));
    if (!plan.serving.engineVersion.empty())
        serving["engine_version"] = plan.serving.engineVersion;
    if (plan.serving.memFractionStatic)
        serving["mem_fraction_static"] = *plan.serving.memFractionStatic;
    if (plan.serving.freeGpuMemoryFraction)
        serving["free_gpu_memory_fraction"] = *plan.serving.freeGpuMemoryFraction;
    if (plan.serving.maxNumSeqs != ServingConfig {}.maxNumSeqs)
        serving["max_num_seqs"] = plan.serving.maxNumSeqs;
    if (plan.serving.kvFormat != KvCacheFormat::Auto)
        serving["kv_format"] = std::string(kvCacheFormatId(plan.serving.kvFormat));
    if (plan.serving.weightFormat != WeightFormat::Auto)
        serving["weight_format"] = std::string(weightFormatId(plan.serving.weightFormat));
    if (plan.serving.attentionWeightFormat)
        serving["attention_weight_format"] = std::string(weightFormatId(*plan.serving.attentionWeightFormat));
    if (plan.serving.expertWeightFormat)
        serving["expert_weight_format"] = std::string(weightFormatId(*plan.serving.expertWeightFormat));
    if (plan.serving.ep != 1)
        serving["ep"] = plan.serving.ep;
    if (plan.serving.dpAttention)
        serving["dp_attention"] = true;
    if (plan.serving.redundantExperts != 0)
        serving["redundant_experts"] = plan.serving.redundantExperts;
    if (plan.serving.disaggregation)
        serving["disaggregation"] = disaggregationJson(*plan.serving.disaggregation);
    // The planner's latency limits, only when given.
    if (plan.serving.maxTtftS)
        serving["max_ttft_s"] = canonicalNumber(*plan.serving.maxTtftS);
    if (plan.serving.maxItlS)
        serving["max_itl_s"] = canonicalNumber(*plan.serving.maxItlS);
    if (plan.serving.workload)
        serving["workload"] = workloadToJson(*plan.serving.workload);
    if (plan.serving.slo)
        serving["slo"] = sloToJson(*plan.serving.slo);
    if (plan.serving.mixedBatches)
        serving["mixed_batches"] = *plan.serving.mixedBatches;
    if (plan.serving.chunkedPrefill)
        serving["chunked_prefill"] = *plan.serving.chunkedPrefill;
    if (plan.serving.overlapScheduler)
        serving["overlap_scheduler"] = *plan.serving.overlapScheduler;
    if (plan.serving.schedulerSteps != 1)
        serving["scheduler_steps"] = plan.serving.schedulerSteps;
    if (plan.serving.speculative) {
        ordered_json spec = ordered_json::object();
        WriteVisitor specv { spec };
        visitSpeculative(*plan.serving.speculative, specv);
        if (plan.serving.speculative->draftModel)
            spec["draft_model"] = modelToJson(*plan.serving.speculative->draftModel);
        serving["speculative"] = spec;
    }
    j["serving"] = serving;

    ordered_json rl = ordered_json::object();
    WriteVisitor rv { rl };
    visitRl(plan.rl, rv);
    j["rl"] = rl;
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string writeArchitecture(const ModelArch& arch)
{
    return archToJson(arch).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace envelope
