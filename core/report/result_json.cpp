// writeResult: the "envelope.result" version 1 document that `envelope-cli estimate` prints.
// Every key design.md lists is always present (bytes as integers, times in seconds); the
// observed MFU/HFU and the budget solver's answers only when the plan asked for them. Values
// that are not finite (a time with zero throughput) are written as null; finite values never.
#include <cmath>
#include <cstdint>

#include "plan/planio.h"

#include <nlohmann/json.hpp>

namespace envelope {
namespace {

using ordered_json = nlohmann::ordered_json;

// One rule for every figure (docs/plan-format.md, "Numbers in the result"): null means not
// finite (no answer, e.g. a time at zero throughput), never "too large". Bytes and counts are
// integers while they fit in a signed 64-bit integer, beyond that a JSON number in exponent form,
// the same figure the text output shows.
ordered_json bytes(double v)
{
    if (!std::isfinite(v))
        return nullptr;
    if (std::fabs(v) >= 9.2e18)
        return v;
    return static_cast<std::int64_t>(std::llround(v));
}

ordered_json real(double v)
{
    if (!std::isfinite(v))
        return nullptr;
    return v;
}

ordered_json count(double v)
{
    return bytes(v);
}

ordered_json breakdown(const MemoryBreakdown& m, bool withKv)
{
    ordered_json j = ordered_json::object();
    j["weights"] = bytes(m.weights);
    j["gradients"] = bytes(m.gradients);
    j["optimizer"] = bytes(m.optimizer);
    j["activations"] = bytes(m.activations);
    if (withKv)
        j["kv_cache"] = bytes(m.kvCache);
    j["overhead"] = bytes(m.overhead);
    j["total"] = bytes(m.total());
    return j;
}

ordered_json communication(const Communication& c)
{
    ordered_json j = ordered_json::object();
    j["dp_s"] = real(c.dpS);
    j["tp_s"] = real(c.tpS);
    j["pp_s"] = real(c.ppS);
    j["cp_s"] = real(c.cpS);
    j["ep_s"] = real(c.epS);
    j["exposed_s"] = real(c.exposedS);
    j["pp_bubble_fraction"] = real(c.ppBubbleFraction);
    j["pp_bubble_s"] = real(c.ppBubbleS);
    j["dp_bytes"] = bytes(c.dpBytes);
    j["tp_bytes"] = bytes(c.tpBytes);
    return j;
}

ordered_json training(const Estimate& e)
{
    const TrainingMemory& m = e.training;
    const TrainingCompute& c = e.compute;
    ordered_json j = ordered_json::object();
    j["per_gpu_bytes"] = breakdown(m.perGpu, false);
    j["gpu_memory_bytes"] = bytes(m.gpuMemoryBytes);
    j["fits"] = m.fits;
    j["min_gpus"] = m.minGpus;
    j["host_bytes_per_node"] = bytes(m.hostBytesPerNode);
    j["data_parallel"] = m.dataParallel;
    j["worst_stage"] = m.worstStage;
    j["activation_bytes_per_layer"] = bytes(m.activationBytesPerLayer);
    j["embedding_activation_bytes"] = bytes(m.embeddingActivationBytes);
    j["logits_bytes"] = bytes(m.logitsBytes);
    j["micro_batches_in_flight"] = m.microBatchesInFlight;
    j["params_on_worst_gpu"] = count(m.paramsOnWorstGpu);

    j["flops_per_token"] = real(c.flopsPerToken);
    j["hardware_flops_per_token"] = real(c.hardwareFlopsPerToken);
    j["forward_flops_per_token"] = real(c.forwardFlopsPerToken);
    j["global_batch_tokens"] = count(c.globalBatchTokens);
    j["peak_flops_per_gpu"] = real(c.peakFlopsPerGpu);
    j["compute_time_s"] = real(c.computeTimeS);
    j["step_time_s"] = real(c.stepTimeS);
    j["tokens_per_s"] = real(c.tokensPerS);
    j["tokens_per_s_per_gpu"] = real(c.tokensPerSPerGpu);
    j["train_time_s"] = real(c.trainTimeS);
    j["gpu_hours"] = real(c.gpuHours);
    j["cost"] = real(c.cost);
    j["mfu"] = real(c.effectiveMfu); // over the whole step, communication and bubble included
    j["hfu"] = real(c.hfu);
    j["step_flops"] = real(c.stepFlops);
    j["communication"] = communication(c.communication);
    j["bottleneck"] = c.bottleneck;
    if (c.observedMfu)
        j["observed_mfu"] = real(*c.observedMfu);
    if (c.observedHfu)
        j["observed_hfu"] = real(*c.observedHfu);
    if (c.affordableGpus)
        j["affordable_gpus"] = *c.affordableGpus;
    if (c.requiredMfu)
        j["required_mfu"] = real(*c.requiredMfu);
    if (c.achievableDeadlineS)
        j["achievable_deadline_s"] = real(*c.achievableDeadlineS);
    return j;
}

ordered_json serving(const ServingEstimate& s)
{
    ordered_json j = ordered_json::object();
    j["kv_bytes_per_token"] = bytes(s.kvBytesPerToken);
    j["weights_bytes_per_gpu"] = bytes(s.weightsBytesPerGpu);
    j["activation_peak_bytes"] = bytes(s.activationPeakBytes);
    j["overhead_bytes"] = bytes(s.overheadBytes);
    j["kv_budget_bytes"] = bytes(s.kvBudgetBytes);
    j["max_tokens"] = count(s.maxTokens);
    j["blocks"] = count(s.blocks);
    j["max_sequences"] = count(s.maxSequences);
    j["contiguous_waste_bytes"] = bytes(s.contiguousWasteBytes);
    j["decode_tokens_per_s"] = real(s.decodeTokensPerS);
    j["prefill_time_s"] = real(s.prefillTimeS);
    j["ttft_s"] = real(s.ttftS);
    j["itl_s"] = real(s.itlS);
    j["compute_bound_concurrency"] = real(s.computeBoundConcurrency);
    j["fits"] = s.fits;
    j["per_gpu_bytes"] = breakdown(s.perGpu, true);
    return j;
}

ordered_json rl(const RlEstimate& r)
{
    ordered_json roles = ordered_json::array();
    for (const RoleEstimate& role : r.perRole) {
        ordered_json j = ordered_json::object();
        j["role"] = role.role;
        j["gpus"] = role.gpus;
        j["per_gpu_bytes"] = breakdown(role.perGpu, true);
        j["fits"] = role.fits;
        roles.push_back(std::move(j));
    }
    ordered_json j = ordered_json::object();
    j["per_role"] = std::move(roles);
    j["rollout_tokens"] = count(r.rolloutTokens);
    j["rollout_s"] = real(r.rolloutS);
    j["reference_s"] = real(r.referenceS);
    j["train_s"] = real(r.trainS);
    j["step_s"] = real(r.stepS);
    j["steps_per_hour"] = real(r.stepsPerHour);
    j["bottleneck"] = r.bottleneck;
    j["suggested_rollout_gpus"] = r.suggestedRolloutGpus;
    j["suggested_trainer_gpus"] = r.suggestedTrainerGpus;
    j["suggestion_fits"] = r.suggestionFits; // false: no split of these GPUs lets the trainer fit
    return j;
}

} // namespace

std::string writeResult(const Plan& plan, const Estimate& e)
{
    ordered_json j = ordered_json::object();
    j["format"] = "envelope.result";
    j["version"] = 1;
    j["name"] = plan.name;

    ordered_json model = ordered_json::object();
    model["name"] = plan.model.arch.name;
    if (!plan.model.presetId.empty())
        model["preset"] = plan.model.presetId;
    model["params"] = count(e.params);
    model["active_params"] = count(e.activeParams);
    j["model"] = std::move(model);

    ordered_json gpu = ordered_json::object();
    gpu["name"] = plan.gpu.gpu.name;
    if (!plan.gpu.presetId.empty())
        gpu["preset"] = plan.gpu.presetId;
    gpu["memory_bytes"] = bytes(plan.gpu.gpu.memoryBytes);
    gpu["count"] = plan.cluster.gpus;
    gpu["per_node"] = plan.cluster.gpusPerNode;
    j["gpu"] = std::move(gpu);

    j["training"] = training(e);
    j["serving"] = serving(e.serving);
    j["rl"] = rl(e.rl);
    j["warnings"] = e.warnings;

    ordered_json explain = ordered_json::array();
    for (const Explanation& x : e.explain)
        explain.push_back(ordered_json { { "figure", x.figure }, { "formula", x.formula },
            { "value", real(x.value) }, { "unit", x.unit }, { "source", x.source } });
    j["explain"] = std::move(explain);
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

} // namespace envelope
