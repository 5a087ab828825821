// The serving and RL searches' answers: envelope.solution JSON, CSV, text and Markdown, and the
// message for a search that found nothing. Figures come from the search result; best.summary
// from estimate() of best.plan, so a script can check one against the other.
#include <fmt/format.h>

#include "estimate/estimate.h"
#include "plan/planio.h"
#include "plan/fields.h"
#include "search/detail.h"
#include "search/solution.h"
#include "search/solutiondetail.h"
#include "serving/load.h"

namespace envelope {
namespace {

using namespace solutiondetail;

ordered_json bytesJson(const MemoryBreakdown& m)
{
    return { { "weights", integer(m.weights) }, { "gradients", integer(m.gradients) },
        { "optimizer", integer(m.optimizer) }, { "activations", integer(m.activations) },
        { "kv_cache", integer(m.kvCache) }, { "overhead", integer(m.overhead) },
        { "total", integer(m.total()) } };
}

// ---- serving ----

ordered_json candidateJson(const Plan& input, const ServingCandidate& c)
{
    ordered_json j;
    j["changes"] = changesJson(layoutChanges(input, c.layout));
    j["description"] = describeChanges(input, c.layout);
    j["gpus"] = c.gpus;
    j["tp"] = c.layout.tp;
    if (c.layout.dpAttention) {
        j["ep"] = c.layout.ep;
        j["dp_attention"] = true;
    }
    j["replicas"] = c.layout.replicas;
    // xPyD: tp, ep, replicas above are the decode pool's.
    if (c.layout.disaggregation)
        j["disaggregation"] = planfields::disaggregationJson(*c.layout.disaggregation);
    j["weight_bits"] = c.layout.weightBits;
    j["kv_bits"] = c.layout.kvBits;
    j["concurrency_per_replica"] = c.layout.concurrency;
    j["per_gpu_bytes_total"] = integer(c.perGpuBytes);
    j["max_sequences"] = integer(c.maxSequences);
    j["fits"] = c.fits;
    j["ttft_s"] = real(c.ttftS);
    j["itl_s"] = real(c.itlS);
    j["tokens_per_s"] = real(c.tokensPerS);
    if (c.goodputRps) {
        // serving-max-goodput: tokens_per_s above is the output tokens/s at the goodput.
        j["goodput_rps"] = real(*c.goodputRps);
        j["capacity_rps"] = real(c.capacityRps);
        j["slo_note"] = c.sloNote;
    } else if (c.capacityRps > 0 || !c.sloNote.empty()) {
        // A layout the goodput search did not bisect (a nearest miss): what it sustains.
        j["capacity_rps"] = real(c.capacityRps);
        j["slo_note"] = c.sloNote;
    }
    return j;
}

// The best plan's serving figures from estimate() (one replica), and the fleet's.
ordered_json summaryJson(
    const Plan& plan, const ServingSearchResult& r, const ServingCandidate& best)
{
    Estimate full = estimate(plan);
    if (r.goal == SearchGoal::ServingMaxGoodput)
        attachServingGoodput(plan, full); // what `envelope-cli estimate` of best.plan reports
    const ServingEstimate& s = full.serving;
    ordered_json j;
    j["gpus"] = best.gpus;
    j["replicas"] = best.layout.replicas;
    j["per_gpu_bytes"] = bytesJson(s.perGpu);
    j["gpu_memory_bytes"] = integer(plan.gpu.gpu.memoryBytes);
    j["max_sequences"] = integer(s.maxSequences);
    j["fits"] = s.fits;
    j["ttft_s"] = real(s.ttftS);
    j["itl_s"] = real(s.itlS);
    j["decode_tokens_per_s"] = real(s.decodeTokensPerS); // one replica
    j["tokens_per_s"] = real(s.itlS > 0 ? r.targetConcurrency / s.itlS : 0); // the fleet
    if (s.load && s.load->goodputRps)
        j["goodput_rps"] = real(*s.load->goodputRps);
    return j;
}

std::vector<std::string> servingRow(int rank, const ServingCandidate& c, ByteUnits units)
{
    const ServingLayout& l = c.layout;
    return { std::to_string(rank), std::to_string(c.gpus), servingEngineCell(l),
        servingReplicasCell(l), fmt::format("{}/{}", l.weightBits, l.kvBits),
        std::to_string(l.concurrency), formatBytes(c.perGpuBytes, units), formatDuration(c.ttftS),
        formatDuration(c.itlS), fmt::format("{:.0f}", c.tokensPerS) };
}

// serving-max-goodput: the goodput and the capacity it is bounded by beside the same columns.
std::vector<std::string> goodputRow(int rank, const ServingCandidate& c, ByteUnits units)
{
    std::vector<std::string> row = servingRow(rank, c, units);
    row.push_back(fmt::format("{:.3g}", c.goodputRps.value_or(0)));
    row.push_back(fmt::format("{:.3g}", c.capacityRps));
    return row;
}

// ---- RL ----

ordered_json candidateJson(const Plan& input, const RlCandidate& c)
{
    ordered_json j;
    j["changes"] = changesJson(layoutChanges(input, c.layout));
    j["description"] = describeChanges(input, c.layout);
    j["gpus"] = c.gpus;
    j["placement"] = std::string(rlPlacementId(c.layout.placement));
    j["trainer_gpus"] = c.layout.trainerGpus;
    j["reference_gpus"] = c.layout.referenceGpus;
    j["rollout_gpus"] = c.layout.rolloutGpus;
    j["rollout_tp"] = c.layout.rolloutTp;
    j["gpu_memory_utilization"] = c.layout.gpuMemoryUtilization;
    j["peak_bytes_per_gpu"] = integer(c.peakBytesPerGpu);
    j["fits"] = c.fits;
    j["step_s"] = real(c.stepS);
    j["rollout_s"] = real(c.rolloutS);
    j["train_s"] = real(c.trainS);
    j["steps_per_hour"] = real(c.stepsPerHour);
    j["bottleneck"] = c.rolloutBound ? "rollout" : "training";
    return j;
}

ordered_json summaryJson(const Plan& plan)
{
    const RlEstimate e = estimate(plan).rl;
    ordered_json j;
    j["total_gpus"] = e.totalGpus;
    ordered_json roles = ordered_json::array();
    for (const RoleEstimate& role : e.perRole)
        roles.push_back({ { "role", role.role }, { "gpus", role.gpus },
            { "per_gpu_bytes", integer(role.perGpu.total()) }, { "fits", role.fits },
            { "verdict", std::string(verdictId(role.verdict)) } });
    j["per_role"] = roles;
    j["fits"] = e.fits;
    j["verdict"] = std::string(verdictId(e.verdict));
    j["rollout_s"] = real(e.rolloutS);
    j["reference_s"] = real(e.referenceS);
    j["train_s"] = real(e.trainS);
    j["step_s"] = real(e.stepS);
    j["steps_per_hour"] = real(e.stepsPerHour);
    j["bottleneck"] = e.bottleneck;
    return j;
}

std::vector<std::string> rlRow(int rank, const RlCandidate& c, ByteUnits units)
{
    const RlLayout& l = c.layout;
    const bool colocated = l.placement == RlPlacement::Colocated;
    const auto pool = [&](int n) { return colocated ? std::string("-") : std::to_string(n); };
    return { std::to_string(rank), std::to_string(c.gpus), std::string(rlPlacementId(l.placement)),
        pool(l.trainerGpus), pool(l.referenceGpus), pool(l.rolloutGpus),
        std::to_string(l.rolloutTp), fmt::format("{:g}", l.gpuMemoryUtilization),
        formatBytes(c.peakBytesPerGpu, units), formatDuration(c.stepS),
        fmt::format("{:.1f}", c.stepsPerHour), c.rolloutBound ? "rollout" : "training" };
}

// ---- shared shapes ----

template <class Result, class Apply, class Summary>
std::string solutionJson(const Plan& input, const Result& r, Apply apply, Summary summary)
{
    ordered_json j = tallyJson(r);
    j["kind"] = std::string(searchKindId(searchKind(r.goal)));
    if (r.candidates.empty()) {
        j["best"] = nullptr;
    } else {
        const auto& top = r.candidates.front();
        const Plan best = apply(input, top.layout);
        ordered_json b;
        b["plan"] = ordered_json::parse(writePlan(best));
        b["changes"] = changesJson(layoutChanges(input, top.layout));
        b["description"] = describeChanges(input, top.layout);
        b["summary"] = summary(best, top);
        j["best"] = b;
    }
    ordered_json candidates = ordered_json::array();
    for (const auto& c : r.candidates)
        candidates.push_back(candidateJson(input, c));
    j["candidates"] = candidates;
    j["pareto_x"] = searchdetail::paretoAxis(r.goal);
    ordered_json pareto = ordered_json::array();
    for (const auto& c : r.pareto)
        pareto.push_back(candidateJson(input, c));
    j["pareto"] = pareto;
    if (r.nearestMiss)
        j["nearest_miss"] = candidateJson(input, *r.nearestMiss);
    stopFlags(j, r);
    return dump(j);
}

template <class Result, class Row>
std::string solutionText(const Plan& input, const Result& r, const std::vector<std::string>& header,
    Row row, ByteUnits units, bool markdown)
{
    std::string out = tallyText(r, markdown);
    if (r.candidates.empty())
        return out + noSolutionMessage(input, r, units) + "\n";
    out += fmt::format("{}Best: {}\n\n", markdown ? "\n" : "",
        describeChanges(input, r.candidates.front().layout));
    std::vector<std::vector<std::string>> rows;
    int rank = 1;
    for (const auto& c : r.candidates)
        rows.push_back(row(rank++, c, units));
    return out + table(header, rows, markdown);
}

} // namespace

std::string writeSolutionJson(const Plan& input, const ServingSearchResult& r)
{
    return solutionJson(input, r, applyServingLayout,
        [&](const Plan& best, const ServingCandidate& c) { return summaryJson(best, r, c); });
}

std::string writeSolutionJson(const Plan& input, const RlSearchResult& r)
{
    return solutionJson(input, r, applyRlLayout,
        [](const Plan& best, const RlCandidate&) { return summaryJson(best); });
}

std::string writeSolutionCsv(const ServingSearchResult& r)
{
    const bool goodput = r.goal == SearchGoal::ServingMaxGoodput;
    std::string out = "gpus,tp,replicas,weight_bits,kv_bits,concurrency_per_replica,"
                      "per_gpu_bytes_total,max_sequences,fits,ttft_s,itl_s,tokens_per_s";
    // serving-max-goodput: an xPyD layout's prefill pool (tp and replicas are the decode pool's;
    // 0 workers: aggregated).
    out += goodput ? ",goodput_rps,capacity_rps,prefill_workers,prefill_tp,prefill_ep,prefill_dp\n"
                   : "\n";
    for (const ServingCandidate& c : r.feasibleList.empty() ? r.candidates : r.feasibleList) {
        const ServingLayout& l = c.layout;
        out += fmt::format("{},{},{},{},{},{},{:.0f},{:.0f},{},{:.6g},{:.6g},{:.6g}", c.gpus, l.tp,
            l.replicas, l.weightBits, l.kvBits, l.concurrency, c.perGpuBytes, c.maxSequences,
            c.fits ? "true" : "false", c.ttftS, c.itlS, c.tokensPerS);
        const ServingPool prefill
            = l.disaggregation ? l.disaggregation->prefill : ServingPool { 0, 0, 0, 0 };
        out += goodput ? fmt::format(",{:.6g},{:.6g},{},{},{},{}\n", c.goodputRps.value_or(0),
                             c.capacityRps, prefill.workers, prefill.tp, prefill.ep, prefill.dp)
                       : std::string("\n");
    }
    return out;
}

std::string writeSolutionCsv(const RlSearchResult& r)
{
    std::string out = "gpus,placement,trainer_gpus,reference_gpus,rollout_gpus,rollout_tp,"
                      "gpu_memory_utilization,peak_bytes_per_gpu,fits,step_s,rollout_s,train_s,"
                      "steps_per_hour,bottleneck\n";
    for (const RlCandidate& c : r.feasibleList.empty() ? r.candidates : r.feasibleList) {
        const RlLayout& l = c.layout;
        out += fmt::format("{},{},{},{},{},{},{:g},{:.0f},{},{:.6g},{:.6g},{:.6g},{:.6g},{}\n",
            c.gpus, rlPlacementId(l.placement), l.trainerGpus, l.referenceGpus, l.rolloutGpus,
            l.rolloutTp, l.gpuMemoryUtilization, c.peakBytesPerGpu, c.fits ? "true" : "false",
            c.stepS, c.rolloutS, c.trainS, c.stepsPerHour, c.rolloutBound ? "rollout" : "training");
    }
    return out;
}

std::string writeSolutionText(
    const Plan& input, const ServingSearchResult& r, ByteUnits units, bool markdown)
{
    if (r.goal == SearchGoal::ServingMaxGoodput)
        return solutionText(input, r,
            { "#", "GPUs", "TP", "replicas", "bits w/kv", "seqs each", "per GPU", "TTFT", "ITL",
                "output tokens/s at goodput", "goodput req/s", "capacity req/s" },
            goodputRow, units, markdown);
    return solutionText(input, r,
        { "#", "GPUs", "TP", "replicas", "bits w/kv", "seqs each", "per GPU", "TTFT", "ITL",
            "tokens/s" },
        servingRow, units, markdown);
}

std::string writeSolutionText(
    const Plan& input, const RlSearchResult& r, ByteUnits units, bool markdown)
{
    return solutionText(input, r,
        { "#", "GPUs", "placement", "trainer", "reference", "rollout", "rollout TP", "engine share",
            "peak/GPU", "step", "steps/h", "bottleneck" },
        rlRow, units, markdown);
}

std::string noSolutionMessage(const Plan& input, const ServingSearchResult& r, ByteUnits units)
{
    if (r.cancelled)
        return "the search was cancelled before a serving layout fitted";
    if (r.goal == SearchGoal::ServingMaxGoodput && !searchdetail::hasGoodputObjective(input))
        return "serving-max-goodput ranks layouts by the request rate they serve within an SLO: "
               "the plan needs serving.workload (input_tokens, output_tokens and a request_rate "
               "or concurrency) and serving.slo (ttft_p90_s and/or tpot_p90_s)";
    if (!r.nearestMiss)
        return fmt::format(
            "no serving layout fits: none of the {} layouts could be evaluated", r.searched);
    const ServingCandidate& m = *r.nearestMiss;
    std::string why;
    // describeChanges names the GPU count when it differs from the plan's (issue 26: "on 65528
    // GPUs on 65528 GPUs"); say it once.
    const bool named = m.layout.clusterGpus != input.cluster.gpus && m.gpus == m.layout.clusterGpus;
    const std::string where = describeChanges(input, m.layout)
        + (named ? std::string() : fmt::format(" on {} GPUs", m.gpus));
    if (r.goal == SearchGoal::ServingMinGpus && searchdetail::hasGoodputObjective(input)
        && !m.sloNote.empty())
        return fmt::format("no serving fleet meets the SLO at the workload's load: nearest miss "
                           "is {}: {}",
            where, m.sloNote);
    if (r.goal == SearchGoal::ServingMaxGoodput && (m.goodputRps || !m.sloNote.empty())) {
        // Its weights fit: it missed the SLO at every rate it was tried at.
        return fmt::format("no serving layout meets the SLO at any request rate: nearest miss is "
                           "{}: {}",
            where, m.sloNote.empty() ? std::string("no rate meets it") : m.sloNote);
    }
    if (!m.fits)
        why = fmt::format("holds {:.0f} of its {} sequences of {} tokens ({} per GPU)",
            m.maxSequences, m.layout.concurrency, input.serving.context,
            formatBytes(m.perGpuBytes, units));
    else if (r.maxTtftS && m.ttftS > *r.maxTtftS)
        why = fmt::format(
            "TTFT {} over the {} limit", formatDuration(m.ttftS), formatDuration(*r.maxTtftS));
    else if (r.maxItlS)
        why = fmt::format(
            "ITL {} over the {} limit", formatDuration(m.itlS), formatDuration(*r.maxItlS));
    return fmt::format("no serving layout fits: nearest miss is {}: {}", where, why);
}

std::string noSolutionMessage(const Plan& input, const RlSearchResult& r, ByteUnits units)
{
    if (r.cancelled)
        return "the search was cancelled before an RL layout fitted";
    if (!r.nearestMiss)
        return fmt::format(
            "no RL layout fits: none of the {} layouts could be evaluated (see rejected counts)",
            r.searched);
    const RlCandidate& m = *r.nearestMiss;
    return fmt::format("no RL layout fits: nearest miss is {}, {} on its fullest GPU of {} "
                       "(the rollout engine keeps to serving.gpu_memory_utilization of it)",
        describeChanges(input, m.layout), formatBytes(m.peakBytesPerGpu, units),
        formatBytes(m.gpuMemoryBytes, units));
}

} // namespace envelope
