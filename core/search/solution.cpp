// writeSolutionJson / Csv / Text: the planner's result for scripts and people.
#include "search/solution.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "result/tenants.h"
#include "plan/planio.h"
#include "search/solutiondetail.h"

namespace envelope {
namespace solutiondetail {

ordered_json integer(double v)
{
    if (!std::isfinite(v) || std::fabs(v) > 9e18)
        return nullptr;
    return static_cast<std::int64_t>(std::llround(v));
}

ordered_json real(double v)
{
    return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}

ordered_json changesJson(const std::vector<FieldChange>& changes)
{
    ordered_json j = ordered_json::object();
    for (const FieldChange& c : changes)
        j[c.path] = ordered_json::parse(c.json);
    return j;
}

ordered_json tallyJson(const SearchTally& r)
{
    ordered_json j;
    j["format"] = "envelope.solution";
    j["version"] = 1;
    j["goal"] = std::string(searchGoalId(r.goal));
    j["searched"] = r.searched;
    j["evaluated"] = r.evaluated;
    j["feasible"] = r.feasible;
    ordered_json rejected = ordered_json::object();
    for (const RejectCount& c : r.rejected)
        rejected[c.reason] = c.count;
    j["rejected"] = rejected;
    j["elapsed_s"] = r.elapsedS;
    return j;
}

void stopFlags(ordered_json& j, const SearchTally& r)
{
    if (r.capped)
        j["capped"] = true;
    if (r.cancelled)
        j["cancelled"] = true;
}

std::string dump(const ordered_json& j)
{
    return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string tallyText(const SearchTally& r, bool markdown)
{
    std::string out = markdown ? fmt::format("## Planner: {}\n\n", searchGoalId(r.goal))
                               : fmt::format("Planner: {}\n", searchGoalId(r.goal));
    std::string rejected;
    for (const RejectCount& c : r.rejected)
        rejected += fmt::format("{}{} {}", rejected.empty() ? "" : ", ", c.count, c.reason);
    out += fmt::format("Searched {} layouts in {:.3f} s: {} fit; rejected: {}.\n", r.searched,
        r.elapsedS, r.feasible, rejected.empty() ? "none" : rejected);
    if (r.capped)
        out += "The search stopped at its evaluation cap: layouts were left unsearched.\n";
    return out;
}

std::string table(const std::vector<std::string>& header,
    const std::vector<std::vector<std::string>>& rows, bool markdown)
{
    std::string out;
    if (markdown) {
        const auto line = [&](const std::vector<std::string>& cells) {
            for (const std::string& c : cells)
                out += "| " + c + " ";
            out += "|\n";
        };
        line(header);
        for (size_t i = 0; i < header.size(); ++i)
            out += "|---";
        out += "|\n";
        for (const auto& row : rows)
            line(row);
        return out;
    }
    std::vector<size_t> width(header.size());
    for (size_t i = 0; i < header.size(); ++i)
        width[i] = header[i].size();
    for (const auto& row : rows)
        for (size_t i = 0; i < row.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    const auto line = [&](const std::vector<std::string>& cells) {
        for (size_t i = 0; i < cells.size(); ++i)
            out += fmt::format("{}{:>{}}", i ? "  " : "", cells[i], width[i]);
        out += "\n";
    };
    line(header);
    for (const auto& row : rows)
        line(row);
    return out;
}

} // namespace solutiondetail

namespace {

using namespace solutiondetail;

ordered_json changesJson(const Plan& input, const Layout& layout)
{
    return solutiondetail::changesJson(layoutChanges(input, layout));
}

ordered_json candidateJson(const Plan& input, const Candidate& c)
{
    ordered_json j;
    j["changes"] = changesJson(input, c.layout);
    j["description"] = describeChanges(input, c.layout);
    j["gpus"] = c.layout.gpus;
    j["per_gpu_bytes_total"] = integer(c.perGpuBytes);
    j["verdict"] = std::string(fitVerdictId(c.verdict));
    j["step_time_s"] = real(c.stepTimeS);
    j["tokens_per_s"] = real(c.tokensPerS);
    j["train_time_s"] = real(c.trainTimeS);
    j["cost"] = real(c.cost);
    return j;
}

// The best plan's own figures, straight from estimate(): what `envelope-cli estimate` prints.
ordered_json summaryJson(const Plan& plan, double usableFraction)
{
    const Estimate e = estimate(plan);
    const TrainingMemory& m = e.training;
    const TrainingCompute& c = e.compute;
    ordered_json j;
    j["gpus"] = c.gpus;
    // The training tenants as the result JSON lists them (result/tenants.h), so LoRA adapters
    // are named and the parts add up to the total.
    ordered_json perGpu = ordered_json::object();
    for (const TenantInfo& tenant : kTenantTable)
        if (tenant.training)
            perGpu[std::string(tenant.key)] = integer(m.perGpu.*tenant.bytes);
    perGpu["total"] = integer(m.perGpu.total());
    j["per_gpu_bytes"] = std::move(perGpu);
    j["gpu_memory_bytes"] = integer(m.gpuMemoryBytes);
    j["usable_fraction"] = usableFraction;
    j["verdict"]
        = std::string(fitVerdictId(fitVerdict(m.perGpu.total(), m.gpuMemoryBytes, usableFraction)));
    j["host_bytes_per_node"] = integer(m.hostBytesPerNode);
    j["step_time_s"] = real(c.stepTimeS);
    j["tokens_per_s"] = real(c.tokensPerS);
    j["train_time_s"] = real(c.trainTimeS);
    j["gpu_hours"] = real(c.gpuHours);
    j["cost"] = real(c.cost);
    j["bottleneck"] = c.bottleneck;
    return j;
}

std::string csvRow(const Candidate& c)
{
    const Layout& l = c.layout;
    return fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0f},{},{:.6g},{:.6g},{:.6g},{:.6g}\n",
        l.gpus, l.gpusPerNode, l.tp, l.pp, l.cp, l.ep, l.virtualStages, l.zeroStage, l.microBatch,
        l.gradAccum, l.seqLen, recomputeId(l.recompute), l.recomputeEvery,
        l.sequenceParallel ? "true" : "false", l.offloadOptimizer ? "true" : "false",
        l.offloadParams ? "true" : "false", c.perGpuBytes, fitVerdictId(c.verdict), c.stepTimeS,
        c.tokensPerS, c.trainTimeS, c.cost);
}

std::string layoutCell(const Layout& l)
{
    std::string text = fmt::format("tp {} pp {}", l.tp, l.pp);
    if (l.virtualStages > 1)
        text += fmt::format("x{}", l.virtualStages);
    text += fmt::format(" cp {} ep {} dp {}", l.cp, l.ep, l.gpus / std::max(1, l.tp * l.pp * l.cp));
    return text;
}

std::string settingsCell(const Layout& l)
{
    std::string text = fmt::format("ZeRO-{} {}", l.zeroStage,
        l.recompute == Recompute::EveryK ? fmt::format("every-{}", l.recomputeEvery)
                                         : std::string(recomputeId(l.recompute)));
    if (l.sequenceParallel)
        text += " SP";
    if (l.offloadOptimizer)
        text += l.offloadParams ? " offload opt+params" : " offload opt";
    return text + fmt::format(" mb {}x{}", l.microBatch, l.gradAccum);
}

// When the best layout's pipeline idles a quarter of its step or more, the plan's fixed global
// batch cannot use that many GPUs well (issue 28: at 8,192 GPUs the best was a 4-stage
// interleaved pipeline with one micro-batch, 43 % bubble). Empty otherwise.
constexpr double kBatchLimitedBubble = 0.25;

std::string batchNote(const Plan& best)
{
    const Estimate e = estimate(best);
    const double bubble = e.compute.communication.ppBubbleFraction;
    if (!(bubble >= kBatchLimitedBubble))
        return {};
    const TrainingConfig& t = best.training;
    const long long replicas = best.cluster.gpus / std::max(1LL, 1LL * t.tp * t.pp * t.cp);
    return fmt::format("the plan's global batch of {} sequences gives each of the {} pipelines {} "
                       "micro-batch{} per step, so the {}-stage pipeline idles {:.0f} % of it: "
                       "this batch cannot use {} GPUs well; fewer GPUs or a larger global batch "
                       "(training.grad_accum) would",
        1LL * t.microBatch * t.gradAccum * replicas, replicas, t.gradAccum,
        t.gradAccum == 1 ? "" : "es", t.pp, 100 * bubble, best.cluster.gpus);
}

} // namespace

std::string writeSolutionJson(const Plan& input, const SearchResult& r)
{
    ordered_json j = tallyJson(r);
    j["usable_fraction"] = r.usableFraction;
    if (r.candidates.empty()) {
        j["best"] = nullptr;
    } else {
        const Plan best = applyLayout(input, r.candidates.front().layout);
        ordered_json b;
        b["plan"] = ordered_json::parse(writePlan(best));
        b["changes"] = changesJson(input, r.candidates.front().layout);
        b["description"] = describeChanges(input, r.candidates.front().layout);
        b["summary"] = summaryJson(best, r.usableFraction);
        if (const std::string note = batchNote(best); !note.empty())
            b["batch_note"] = note;
        if (!r.headroomNote.empty())
            b["headroom_note"] = r.headroomNote;
        j["best"] = b;
    }
    ordered_json candidates = ordered_json::array();
    for (const Candidate& c : r.candidates)
        candidates.push_back(candidateJson(input, c));
    j["candidates"] = candidates;
    j["pareto_x"] = r.paretoX;
    ordered_json pareto = ordered_json::array();
    for (const Candidate& c : r.pareto)
        pareto.push_back(candidateJson(input, c));
    j["pareto"] = pareto;
    if (r.nearestConstraintMiss)
        j["nearest_constraint_miss"] = candidateJson(input, *r.nearestConstraintMiss);
    if (r.nearestMiss) {
        ordered_json miss = candidateJson(input, *r.nearestMiss);
        miss["over_usable_bytes"] = integer(
            r.nearestMiss->perGpuBytes - r.usableFraction * r.nearestMiss->gpuMemoryBytes);
        j["nearest_miss"] = miss;
    }
    stopFlags(j, r);
    return dump(j);
}

std::string writeSolutionCsv(const SearchResult& r)
{
    std::string out = "gpus,gpus_per_node,tp,pp,cp,ep,virtual_stages,zero_stage,micro_batch,"
                      "grad_accum,seq_len,recompute,recompute_every,sequence_parallel,"
                      "offload_optimizer,offload_params,per_gpu_bytes_total,verdict,step_time_s,"
                      "tokens_per_s,train_time_s,cost\n";
    const std::vector<Candidate>& rows = r.feasibleList.empty() ? r.candidates : r.feasibleList;
    for (const Candidate& c : rows)
        out += csvRow(c);
    return out;
}

std::string writeSolutionText(
    const Plan& input, const SearchResult& r, ByteUnits units, bool markdown)
{
    std::string out = tallyText(r, markdown);
    if (r.candidates.empty()) {
        out += noSolutionMessage(input, r, units) + "\n";
        return out;
    }
    out += fmt::format(
        "{}Best: {}\n", markdown ? "\n" : "", describeChanges(input, r.candidates.front().layout));
    if (const std::string note = batchNote(applyLayout(input, r.candidates.front().layout));
        !note.empty())
        out += fmt::format("{}Note: {}\n", markdown ? "\n" : "", note);
    if (!r.headroomNote.empty())
        out += fmt::format("{}Note: {}\n", markdown ? "\n" : "", r.headroomNote);
    if (markdown)
        out += "\n| # | GPUs | layout | settings | per GPU | tokens/s | step | cost |\n"
               "|---|---|---|---|---|---|---|---|\n";
    else
        out += fmt::format("\n{:>3} {:>6}  {:<30} {:<40} {:>10} {:>12} {:>9} {:>12}\n", "#", "GPUs",
            "layout", "settings", "per GPU", "tokens/s", "step", "cost");
    int rank = 1;
    for (const Candidate& c : r.candidates) {
        const std::string cost = fmt::format("${:.0f}", c.cost);
        const std::string tokens = fmt::format("{:.0f}", c.tokensPerS);
        if (markdown)
            out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", rank, c.layout.gpus,
                layoutCell(c.layout), settingsCell(c.layout), formatBytes(c.perGpuBytes, units),
                tokens, formatDuration(c.stepTimeS), cost);
        else
            out += fmt::format("{:>3} {:>6}  {:<30} {:<40} {:>10} {:>12} {:>9} {:>12}\n", rank,
                c.layout.gpus, layoutCell(c.layout), settingsCell(c.layout),
                formatBytes(c.perGpuBytes, units), tokens, formatDuration(c.stepTimeS), cost);
        ++rank;
    }
    return out;
}

std::string noSolutionMessage(const Plan& input, const SearchResult& r, ByteUnits units)
{
    if (r.cancelled)
        return "the search was cancelled before a layout fitted";
    // describeChanges names the GPU count when it changed.
    const auto onGpus = [&](const Candidate& c) {
        return c.layout.gpus == input.cluster.gpus ? fmt::format(" on {} GPUs", c.layout.gpus)
                                                   : std::string();
    };
    if (const std::optional<Candidate>& c = r.nearestConstraintMiss) {
        const std::string what = describeChanges(input, c->layout) + onGpus(*c);
        if (r.goal == SearchGoal::MinCost && input.training.deadlineS)
            return fmt::format("no layout fits the deadline: the fastest that fits in memory, {}"
                               ", takes {}, {} over the {} deadline",
                what, formatDuration(c->trainTimeS),
                formatDuration(c->trainTimeS - *input.training.deadlineS),
                formatDuration(*input.training.deadlineS));
        if (input.training.budgetUsd)
            return fmt::format("no layout fits the budget: the cheapest that fits in memory, {}"
                               ", costs ${:.0f}, ${:.0f} over the ${:.0f} budget",
                what, c->cost, c->cost - *input.training.budgetUsd, *input.training.budgetUsd);
    }
    if (!r.nearestMiss)
        return fmt::format("no layout fits: none of the {} layouts could be evaluated ({})",
            r.searched,
            r.rejected.empty() ? std::string("the constraints leave none") : "see rejected counts");
    const Candidate& m = *r.nearestMiss;
    const double usable = r.usableFraction * m.gpuMemoryBytes;
    const std::string where = onGpus(m);
    return fmt::format("no layout fits: nearest miss is {}{}, {} per GPU, {} over the "
                       "usable {} ({:.0f}% of {})",
        describeChanges(input, m.layout), where, formatBytes(m.perGpuBytes, units),
        formatBytes(m.perGpuBytes - usable, units), formatBytes(usable, units),
        r.usableFraction * 100, formatBytes(m.gpuMemoryBytes, units));
}

} // namespace envelope
