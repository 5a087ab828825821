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

// A section whose plan does not fit runs nothing: it says so (throughput_valid, and why in
// throughput_note) and its times and rates, passed through the returned function, are null
// (issue 11: no real-looking figures for an infeasible plan; docs/plan-format.md).
auto withheldUnless(ordered_json& j, bool valid, const std::string& note)
{
    j["throughput_valid"] = valid;
    if (!valid)
        j["throughput_note"] = note;
    return [valid](double v) { return valid ? real(v) : ordered_json(nullptr); };
}

// A tight training plan runs its figures, marked: throughput_valid true with a note saying the
// memory is above the usable line (issue 24: only `over` withholds them).
void markTight(ordered_json& j, Verdict verdict)
{
    if (verdict == Verdict::Tight)
        j["throughput_note"] = "tight: per-GPU memory above the usable line but within HBM; the "
                               "step time and rates assume the run fits";
}

ordered_json count(double v)
{
    return bytes(v);
}

// The tenants in the table's order (result/tenants.h); a training step holds no KV cache.
ordered_json breakdown(const MemoryBreakdown& m, bool withKv)
{
    ordered_json j = ordered_json::object();
    for (const TenantInfo& tenant : kTenantTable)
        if (withKv || tenant.training)
            j[std::string(tenant.key)] = bytes(m.*tenant.bytes);
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
    j["offload_bytes"] = bytes(c.offloadBytes);
    j["offload_s"] = real(c.offloadS);
    j["cpu_optimizer_s"] = real(c.cpuOptimizerS);
    j["activation_offload_bytes"] = bytes(c.activationOffloadBytes);
    j["activation_offload_s"] = real(c.activationOffloadS);
    j["activation_offload_exposed_s"] = real(c.activationOffloadExposedS);
    return j;
}

ordered_json training(const Plan& plan, const Estimate& e)
{
    const TrainingMemory& m = e.training;
    const TrainingCompute& c = e.compute;
    ordered_json j = ordered_json::object();
    j["per_gpu_bytes"] = breakdown(m.perGpu, false);
    j["gpu_memory_bytes"] = bytes(m.gpuMemoryBytes);
    j["fits"] = m.fits;
    j["verdict"] = std::string(verdictId(m.verdict));
    // The planner's smallest change that makes it fit (the GUI's summary line): null when the
    // plan fits or nothing fits within the planner's budget (then the note says which).
    if (e.whatMakesItFitSearched) {
        if (const std::optional<FitChangeSummary>& fit = e.whatMakesItFit) {
            ordered_json changes = ordered_json::object();
            for (const auto& [path, value] : fit->changes)
                changes[path] = ordered_json::parse(value);
            j["what_makes_it_fit"] = { { "changes", std::move(changes) }, { "gpus", fit->gpus },
                { "description", fit->description } };
        } else {
            j["what_makes_it_fit"] = nullptr;
            if (!e.whatMakesItFitNote.empty())
                j["what_makes_it_fit_note"] = e.whatMakesItFitNote;
        }
    }
    j["usable_bytes"] = bytes(m.usableBytes);
    j["min_gpus"] = m.minGpus;
    j["host_bytes_per_node"] = bytes(m.hostBytesPerNode);
    j["data_parallel"] = m.dataParallel;
    j["worst_stage"] = m.worstStage;
    j["activation_bytes_per_layer"] = bytes(m.activationBytesPerLayer);
    j["embedding_activation_bytes"] = bytes(m.embeddingActivationBytes);
    j["logits_bytes"] = bytes(m.logitsBytes);
    j["allocated_bytes"] = bytes(m.allocatedBytes);
    j["allocator_reserved_bytes"] = bytes(m.reservedBytes);
    j["buffer_bytes"] = bytes(m.bufferBytes);
    j["optimizer_temp_bytes"] = bytes(m.optimizerTempBytes);
    j["lora_trainable_params"] = count(m.loraTrainableParams);
    j["paged_optimizer_bytes"] = bytes(m.pagedOptimizerBytes);
    j["activation_offload_bytes"] = bytes(m.activationOffloadBytes);
    j["activation_offload_buffer_bytes"] = bytes(m.activationOffloadBufferBytes);
    j["micro_batches_in_flight"] = m.microBatchesInFlight;
    j["params_on_worst_gpu"] = count(m.paramsOnWorstGpu);

    j["flops_per_token"] = real(c.flopsPerToken);
    j["hardware_flops_per_token"] = real(c.hardwareFlopsPerToken);
    j["forward_flops_per_token"] = real(c.forwardFlopsPerToken);
    j["global_batch_tokens"] = count(c.globalBatchTokens);
    j["peak_flops_per_gpu"] = real(c.peakFlopsPerGpu);
    const auto ifRuns = withheldUnless(j, m.verdict != Verdict::Over,
        "does not fit: per-GPU memory exceeds HBM, so no step time, throughput or cost");
    markTight(j, m.verdict);
    j["compute_time_s"] = ifRuns(c.computeTimeS);
    j["step_time_s"] = ifRuns(c.stepTimeS);
    j["tokens_per_s"] = ifRuns(c.tokensPerS);
    j["tokens_per_s_per_gpu"] = ifRuns(c.tokensPerSPerGpu);
    j["train_time_s"] = ifRuns(c.trainTimeS);
    j["gpu_hours"] = ifRuns(c.gpuHours);
    j["cost"] = ifRuns(c.cost);
    j["mfu"] = ifRuns(c.effectiveMfu); // over the whole step, communication and bubble included
    j["hfu"] = ifRuns(c.hfu);
    // The plan's mfu is the kernel efficiency while computing; achieved_mfu (= mfu above) is
    // what the whole step delivers after recompute, communication and the bubble.
    // Only an `mfu` override sets a kernel efficiency: op-timed plans have none to report.
    if (plan.training.mfuOverride)
        j["kernel_efficiency"] = real(plan.training.mfu);
    j["achieved_mfu"] = ifRuns(c.effectiveMfu);
    j["timing_source"] = c.timingSource;
    j["stage_layers"] = pipelineStageLayers(plan.training, plan.model.arch.layers);
    j["slowest_stage"] = c.slowestStage;
    j["uncertainty"] = real(c.uncertainty);
    // The step by op class (docs/formulas-compute.md, "Step time from ops"); the communication is below.
    // Withheld like the step itself when the plan does not fit (its own throughput_valid).
    ordered_json ops = ordered_json::object();
    const auto opsIfRuns = withheldUnless(ops, m.verdict != Verdict::Over,
        "does not fit: per-GPU memory exceeds HBM, so no step time, throughput or cost");
    ops["gemm_s"] = opsIfRuns(c.gemmS);
    ops["attention_s"] = opsIfRuns(c.attentionS);
    ops["elementwise_s"] = opsIfRuns(c.elementwiseS);
    ops["recompute_s"] = opsIfRuns(c.recomputeS);
    ops["optimizer_s"] = opsIfRuns(c.optimizerS);
    ops["measured_share"] = real(c.measuredShare);
    j["time_breakdown"] = ops;
    j["step_flops"] = real(c.stepFlops);
    j["communication"] = communication(c.communication);
    j["bottleneck"] = c.bottleneck;
    j["bottleneck_share"] = real(c.bottleneckShare);
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
    if (c.gpusForDeadline)
        j["gpus_for_deadline"] = *c.gpusForDeadline;
    if (c.budgetTokens)
        j["budget_tokens"] = count(*c.budgetTokens);
    return j;
}

ordered_json serving(const ServingEstimate& s)
{
    ordered_json j = ordered_json::object();
    // The engine whose accounting sized the KV pool, at its modelled version (issue 27).
    if (!s.engine.empty())
        j["engine"] = s.engine;
    if (!s.engineVersion.empty())
        j["engine_version"] = s.engineVersion;
    if (!s.engineVersionNote.empty())
        j["engine_version_note"] = s.engineVersionNote;
    j["memory_fraction"] = s.memoryFraction;
    j["kv_bytes_per_token"] = bytes(s.kvBytesPerToken);
    // A quantized cache names its format (serving.kv_format: its scales are in the bytes).
    if (!s.kvFormat.empty() && s.kvFormat != "bf16")
        j["kv_format"] = s.kvFormat;
    j["weights_bytes_per_gpu"] = bytes(s.weightsBytesPerGpu);
    j["activation_peak_bytes"] = bytes(s.activationPeakBytes);
    j["overhead_bytes"] = bytes(s.overheadBytes);
    j["kv_budget_bytes"] = bytes(s.kvBudgetBytes);
    j["max_tokens"] = count(s.maxTokens);
    j["blocks"] = count(s.blocks);
    j["max_sequences"] = count(s.maxSequences);
    // A hybrid model's linear-attention layers keep a fixed state per sequence (per GPU).
    if (s.linearStateBytesPerSequence > 0)
        j["linear_state_bytes_per_sequence"] = bytes(s.linearStateBytesPerSequence);
    j["contiguous_waste_bytes"] = bytes(s.contiguousWasteBytes);
    // Rates at `concurrency` only when that concurrency fits (issue 11: no "decode 77 tok/s"
    // for a plan that cannot hold its batch).
    const auto ifFits = withheldUnless(j, s.fits,
        "does not fit: the requested concurrency exceeds max_sequences, so no decode rate or "
        "latency");
    j["decode_tokens_per_s"] = ifFits(s.decodeTokensPerS);
    j["prefill_time_s"] = ifFits(s.prefillTimeS);
    // Under a workload (issue 27) ttft_s and itl_s are its means; without one, the static batch's
    // (a `context`-token prompt, a decode step at `concurrency`). One request alone: *_min_s.
    const bool underLoad = s.load && !s.load->latencyKind.empty();
    const bool loadValid = underLoad && s.fitsWeights && s.load->requests > 0;
    const auto ifServes = [&](double v) { return loadValid ? real(v) : ordered_json(nullptr); };
    const auto ttftIfServes = [&](double v) {
        return loadValid && !s.load->saturated ? real(v) : ordered_json(nullptr);
    };
    if (underLoad) {
        j["ttft_s"] = ttftIfServes(s.load->ttftMeanS);
        j["itl_s"] = ifServes(s.load->itlMeanS);
    } else {
        j["ttft_s"] = ifFits(s.ttftS);
        j["itl_s"] = ifFits(s.itlS);
    }
    j["ttft_min_s"] = s.fitsWeights ? real(s.ttftMinS) : ordered_json(nullptr);
    j["itl_min_s"] = s.fitsWeights ? real(s.itlMinS) : ordered_json(nullptr);
    j["latency_kind"] = underLoad ? s.load->latencyKind : std::string("closed form");
    // Above capacity the queue grows without bound: every TTFT figure is withheld (null), and
    // the objects that hold them say so, as throughput_valid does for a plan that does not fit.
    const auto markLatency = [&](ordered_json& object) {
        if (!loadValid || !s.load->saturated)
            return;
        object["latency_valid"] = false;
        object["latency_note"] = "above capacity: the queue grows without bound, so no TTFT";
    };
    if (underLoad) {
        const ServingLoad& l = *s.load;
        markLatency(j);
        j["ttft_p90_s"] = ttftIfServes(l.ttftP90S);
        j["tpot_p90_s"] = ifServes(l.tpotP90S);
        // Searched by `envelope-cli estimate` (attachServingGoodput); absent where it was not
        // (a slider step's estimate), never a null that could read as "no rate meets it".
        if (l.goodputRps && loadValid)
            j["goodput_rps"] = real(*l.goodputRps);
        j["output_tokens_per_s_per_gpu"] = ifServes(l.outputTokensPerSPerGpu);
        j["output_tokens_per_s_per_user"] = ifServes(l.outputTokensPerSPerUser);
        ordered_json d = ordered_json::object();
        d["throughput_valid"] = loadValid;
        if (!loadValid)
            d["throughput_note"] = "no request was served: no rate, latency or percentile";
        markLatency(d);
        d["replicas"] = l.replicas;
        d["scheduler"] = l.scheduler;
        d["requests_simulated"] = l.requests;
        d["offered_rate_rps"] = ifServes(l.offeredRateRps);
        d["request_rate_rps"] = ifServes(l.requestRateRps);
        d["capacity_rps"] = ifServes(l.capacityRps);
        d["saturated"] = l.saturated;
        d["mean_concurrency"] = ifServes(l.meanConcurrency);
        d["mean_batch"] = ifServes(l.meanBatch);
        d["ttft_mean_s"] = ttftIfServes(l.ttftMeanS);
        d["ttft_p50_s"] = ttftIfServes(l.ttftP50S);
        d["ttft_p90_s"] = ttftIfServes(l.ttftP90S);
        d["ttft_p99_s"] = ttftIfServes(l.ttftP99S);
        d["tpot_mean_s"] = ifServes(l.tpotMeanS);
        d["tpot_p50_s"] = ifServes(l.tpotP50S);
        d["tpot_p90_s"] = ifServes(l.tpotP90S);
        d["tpot_p99_s"] = ifServes(l.tpotP99S);
        d["e2e_mean_s"] = ttftIfServes(l.e2eMeanS);
        d["mean_input_tokens"] = real(l.meanInputTokens);
        d["mean_output_tokens"] = real(l.meanOutputTokens);
        d["output_tokens_per_s"] = ifServes(l.outputTokensPerS);
        if (l.meetsSlo)
            d["meets_slo"] = *l.meetsSlo && loadValid;
        if (!l.sloMiss.empty())
            d["slo_miss"] = l.sloMiss;
        if (!l.sloNote.empty())
            d["slo_note"] = l.sloNote;
        d["notes"] = l.notes;
        j["load"] = d;
    }
    // How the step was timed (issue 22) and its parts: the decode step's GEMMs, attention,
    // elementwise work and TP / EP collectives.
    j["timing_source"] = s.timingSource;
    j["uncertainty"] = real(s.uncertainty);
    j["ttft_uncertainty"] = real(s.ttftUncertainty);
    ordered_json decode = ordered_json::object();
    const auto decodeIfFits = withheldUnless(decode, s.fits,
        "does not fit: the requested concurrency exceeds max_sequences, so no decode step");
    decode["gemm_s"] = decodeIfFits(s.decodeGemmS);
    decode["attention_s"] = decodeIfFits(s.decodeAttentionS);
    decode["elementwise_s"] = decodeIfFits(s.decodeElementwiseS);
    decode["communication_s"] = decodeIfFits(s.decodeCommS);
    j["decode_breakdown"] = decode;
    // Speculative decoding (issue 27): the draft, its acceptance, and one engine step's parts.
    if (s.speculative) {
        const SpeculativeEstimate& p = *s.speculative;
        ordered_json spec = ordered_json::object();
        spec["kind"] = p.kind;
        spec["draft"] = p.draftName;
        spec["tokens"] = p.tokens;
        spec["acceptance"] = real(p.acceptance);
        spec["mean_tokens_per_step"] = real(p.meanTokensPerStep);
        spec["draft_acceptance_rate"] = real(p.draftAcceptanceRate);
        spec["draft_layers"] = p.draftLayers;
        spec["draft_weights_bytes_per_gpu"] = bytes(p.draftWeightsBytesPerGpu);
        spec["draft_kv_bytes_per_token_per_gpu"] = bytes(p.draftKvBytesPerTokenPerGpu);
        const auto specIfFits = withheldUnless(spec, s.fits,
            "does not fit: the requested concurrency exceeds max_sequences, so no step time");
        spec["verify_step_s"] = specIfFits(p.verifyStepS);
        spec["draft_step_s"] = specIfFits(p.draftStepS);
        spec["step_s"] = specIfFits(p.stepS);
        spec["plain_step_s"] = specIfFits(p.plainStepS);
        spec["speedup"] = specIfFits(p.speedup);
        spec["draft_prefill_s"] = specIfFits(p.draftPrefillS);
        j["speculative"] = spec;
    }
    // The engine's expert-parallel layout (serving.ep, serving.dp_attention), when it has one.
    if (s.ep > 1 || s.attentionRanks > 1) {
        j["ep"] = s.ep;
        j["attention_ranks"] = s.attentionRanks;
        j["engine_gpus"] = s.engineGpus;
    }
    // Disaggregated prefill and decode: both pools, the KV transfer and each pool's rate.
    if (s.disaggregation) {
        const DisaggregationEstimate& g = *s.disaggregation;
        ordered_json d = ordered_json::object();
        const auto pool = [&](const ServingPoolEstimate& p) {
            ordered_json o = ordered_json::object();
            o["workers"] = p.workers;
            o["tp"] = p.tp;
            o["ep"] = p.ep;
            o["dp"] = p.dp;
            o["gpus"] = p.gpus;
            o["weights_bytes_per_gpu"] = bytes(p.weightsBytesPerGpu);
            o["kv_budget_bytes"] = bytes(p.kvBudgetBytes);
            o["max_tokens"] = count(p.maxTokens);
            o["max_sequences"] = count(p.maxSequences);
            o["fits"] = p.fits;
            o["per_gpu_bytes"] = breakdown(p.perGpu, true);
            return o;
        };
        d["prefill"] = pool(g.prefill);
        d["decode"] = pool(g.decode);
        d["kv_transfer_bytes"] = bytes(g.kvTransferBytes);
        const auto dIfFits = withheldUnless(d, s.fits,
            "does not fit: a pool cannot hold its work, so no rate or transfer time");
        d["kv_transfer_s"] = dIfFits(g.kvTransferS);
        d["prefill_time_s"] = dIfFits(g.prefillTimeS);
        d["prefill_tokens_per_s"] = dIfFits(g.prefillTokensPerS);
        d["decode_tokens_per_s"] = dIfFits(g.decodeTokensPerS);
        d["requests_per_s"] = dIfFits(g.requestsPerS);
        d["bottleneck"] = s.fits ? ordered_json(g.bottleneck) : ordered_json(nullptr);
        j["disaggregation"] = d;
    }
    j["compute_bound_concurrency"] = real(s.computeBoundConcurrency);
    j["fits"] = s.fits; // the requested concurrency fits
    j["fits_weights"] = s.fitsWeights;
    j["per_gpu_bytes"] = breakdown(s.perGpu, true);
    return j;
}

ordered_json rl(const Plan& plan, const RlEstimate& r)
{
    ordered_json roles = ordered_json::array();
    for (const RoleEstimate& role : r.perRole) {
        ordered_json j = ordered_json::object();
        j["role"] = role.role;
        j["gpus"] = role.gpus;
        j["per_gpu_bytes"] = breakdown(role.perGpu, true);
        j["fits"] = role.fits;
        j["verdict"] = std::string(verdictId(role.verdict)); // training.verdict's rule
        if (!role.problem.empty())
            j["problem"] = role.problem; // cannot be laid out: per_gpu_bytes is a lower bound
        roles.push_back(std::move(j));
    }
    ordered_json j = ordered_json::object();
    const bool colocated = plan.rl.placement == RlPlacement::Colocated;
    j["placement"] = std::string(rlPlacementId(plan.rl.placement));
    j["total_gpus"] = r.totalGpus; // colocated: the cluster's GPUs, never the roles' sum
    j["fits"] = r.fits;
    j["verdict"] = std::string(verdictId(r.verdict));
    if (!r.problem.empty())
        j["problem"] = r.problem;
    if (colocated) {
        // What is resident together: the trainer's weights and optimizer stay on the GPUs in
        // every phase; the engine's weights and KV are released after generation.
        j["colocated_mode"] = "trainer states resident, rollout engine released after generation";
        j["colocated_peak_bytes"] = bytes(r.colocatedPeakBytes);
        j["rollout_phase_bytes"] = bytes(r.rolloutPhaseBytes);
        j["training_phase_bytes"] = bytes(r.trainingPhaseBytes);
    }
    j["per_role"] = std::move(roles);
    j["rollout_tokens"] = count(r.rolloutTokens);
    const auto ifFits = withheldUnless(j, r.fits,
        r.problem.empty() ? "does not fit: a pool's per-GPU memory exceeds HBM, so no step time "
                            "or rate"
                          : "a pool cannot be laid out (" + r.problem + "), so no step time or rate");
    j["rollout_s"] = ifFits(r.rolloutS);
    // The rollout engine as the serving engine accounts it: its KV pool per GPU, the prompt +
    // response sequences one engine runs at once, and the waves its share of the step takes.
    j["rollout_kv_pool_bytes"] = bytes(r.rolloutKvPoolBytes);
    j["rollout_max_sequences"] = count(r.rolloutMaxSequences);
    j["rollout_waves"] = count(r.rolloutWaves);
    j["reference_s"] = ifFits(r.referenceS);
    j["old_log_prob_s"] = ifFits(r.oldLogProbS);
    j["weight_sync_s"] = ifFits(r.weightSyncS);
    j["mean_response_tokens"] = count(r.meanResponseTokens);
    j["rollout_tail_steps"] = count(r.rolloutTailSteps);
    j["staleness"] = r.staleness;
    j["updates_per_sync"] = r.updatesPerSync;
    j["overlapped"] = r.overlapped;
    j["rollout_idle_s"] = ifFits(r.rolloutIdleS);
    j["trainer_idle_s"] = ifFits(r.trainerIdleS);
    j["partial_rollouts"] = r.partialRollouts;
    j["rollout_running_batch"] = count(r.rolloutRunningBatch);
    j["rollout_reprefill_s"] = ifFits(r.rolloutReprefillS);
    j["train_s"] = ifFits(r.trainS);
    j["step_s"] = ifFits(r.stepS);
    j["steps_per_hour"] = ifFits(r.stepsPerHour);
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

    j["training"] = training(plan, e);
    j["serving"] = serving(e.serving);
    j["rl"] = rl(plan, e.rl);
    j["warnings"] = e.warnings;

    ordered_json explain = ordered_json::array();
    for (const Explanation& x : e.explain)
        explain.push_back(ordered_json { { "figure", x.figure }, { "formula", x.formula },
            { "value", real(x.value) }, { "unit", x.unit }, { "source", x.source } });
    j["explain"] = std::move(explain);
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

} // namespace envelope
