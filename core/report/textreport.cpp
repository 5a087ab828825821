#include "report/textreport.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace envelope::report {
namespace {

struct Table {
    std::string title;
    std::vector<std::string> header; // printed in text only when more than two columns
    std::vector<std::vector<std::string>> rows;

    void add(std::string label, std::string value)
    {
        rows.push_back({ std::move(label), std::move(value) });
    }
};

std::string yesNo(bool b)
{
    return b ? "yes" : "no";
}

std::string number(double v, int decimals = 1)
{
    if (!std::isfinite(v))
        return "n/a";
    // Fixed notation of 1e300 is 300 digits; past 1e15 nothing but the magnitude is news.
    if (std::fabs(v) >= 1e15)
        return fmt::format("{:.3g}", v);
    return fmt::format("{:.{}f}", v, decimals);
}

std::string duration(double s)
{
    return std::isfinite(s) && s > 0 ? formatDuration(s) : "n/a";
}

std::string flops(double f)
{
    return std::isfinite(f) ? fmt::format("{:.3g} FLOPs", f) : "n/a";
}

std::string usd(double v)
{
    if (!std::isfinite(v))
        return "n/a";
    return std::fabs(v) >= 1e15 ? fmt::format("USD {:.3g}", v) : fmt::format("USD {:.0f}", v);
}

Table header(const Plan& plan, const Estimate& e, ByteUnits units)
{
    Table t { "Plan", {}, {} };
    t.add("name", plan.name);
    t.add("model",
        fmt::format("{} — {} parameters ({} active)", plan.model.arch.name, formatCount(e.params),
            formatCount(e.activeParams)));
    t.add("GPU",
        fmt::format("{} x {} ({} per node), {} each", plan.cluster.gpus, plan.gpu.gpu.name,
            plan.cluster.gpusPerNode, humanBytes(plan.gpu.gpu.memoryBytes, units)));
    t.add("units", units == ByteUnits::GB ? "GB = 10^9 bytes" : "GiB = 2^30 bytes");
    return t;
}

Table trainingMemory(const Estimate& e, ByteUnits units)
{
    const TrainingMemory& m = e.training;
    Table t { "Training memory per GPU (most-loaded GPU)", {}, {} };
    t.add("weights", humanBytes(m.perGpu.weights, units));
    t.add("gradients", humanBytes(m.perGpu.gradients, units));
    t.add("optimizer state", humanBytes(m.perGpu.optimizer, units));
    t.add("activations", humanBytes(m.perGpu.activations, units));
    t.add("overhead", humanBytes(m.perGpu.overhead, units));
    t.add("total", humanBytes(m.perGpu.total(), units));
    t.add("GPU memory", humanBytes(m.gpuMemoryBytes, units));
    t.add("fits",
        fmt::format("{} ({} headroom)", yesNo(m.fits),
            humanBytes(m.gpuMemoryBytes - m.perGpu.total(), units)));
    t.add("min GPUs", m.minGpus > 0 ? std::to_string(m.minGpus) : "none fits");
    t.add("data parallel", std::to_string(m.dataParallel));
    t.add("host memory per node", humanBytes(m.hostBytesPerNode, units));
    return t;
}

Table trainingCompute(const Estimate& e)
{
    const TrainingCompute& c = e.compute;
    Table t { "Training compute", {}, {} };
    t.add("FLOPs per token (model)", flops(c.flopsPerToken));
    t.add("FLOPs per token (hardware)", flops(c.hardwareFlopsPerToken));
    t.add("global batch", fmt::format("{} tokens", formatCount(c.globalBatchTokens)));
    t.add("step time", duration(c.stepTimeS));
    t.add("throughput",
        fmt::format("{} tokens/s ({} per GPU)", formatCount(c.tokensPerS),
            formatCount(c.tokensPerSPerGpu)));
    t.add("time to train", duration(c.trainTimeS));
    t.add("GPU-hours", formatCount(c.gpuHours));
    t.add("cost", usd(c.cost));
    t.add("DP communication", duration(c.communication.dpS));
    t.add("TP communication", duration(c.communication.tpS));
    t.add("pipeline bubble", number(100 * c.communication.ppBubbleFraction) + " %");
    t.add("bottleneck", c.bottleneck.empty() ? "n/a" : c.bottleneck);
    if (c.observedMfu)
        t.add("observed MFU", number(100 * *c.observedMfu) + " %");
    if (c.observedHfu)
        t.add("observed HFU", number(100 * *c.observedHfu) + " %");
    return t;
}

Table serving(const Plan& plan, const Estimate& e, ByteUnits units)
{
    const ServingEstimate& s = e.serving;
    Table t { fmt::format("Serving ({}-bit weights, {}-bit KV, tp {})", plan.serving.weightBits,
                  plan.serving.kvBits, plan.serving.tp),
        {}, {} };
    t.add("weights per GPU", humanBytes(s.weightsBytesPerGpu, units));
    t.add("KV cache per token", humanBytes(s.kvBytesPerToken, units));
    t.add("KV budget per GPU", humanBytes(s.kvBudgetBytes, units));
    t.add("max tokens in cache", formatCount(s.maxTokens));
    t.add(fmt::format("max sequences at {} tokens", plan.serving.context),
        formatCount(s.maxSequences));
    t.add(fmt::format("decode at {} sequences", plan.serving.concurrency),
        fmt::format("{} tokens/s", formatCount(s.decodeTokensPerS)));
    t.add("time to first token", duration(s.ttftS));
    t.add("inter-token latency", duration(s.itlS));
    t.add("fits", yesNo(s.fits));
    return t;
}

std::vector<Table> rl(const Plan& plan, const Estimate& e, ByteUnits units)
{
    const RlEstimate& r = e.rl;
    Table roles { fmt::format("RL ({}, {} placement)", rlAlgorithmId(plan.rl.algorithm),
                      rlPlacementId(plan.rl.placement)),
        { "role", "GPUs", "per-GPU memory", "fits" }, {} };
    for (const RoleEstimate& role : r.perRole)
        roles.rows.push_back({ role.role, std::to_string(role.gpus),
            humanBytes(role.perGpu.total(), units), yesNo(role.fits) });
    Table timing { "RL step", {}, {} };
    timing.add("rollout", duration(r.rolloutS));
    timing.add("training", duration(r.trainS));
    timing.add("step", duration(r.stepS));
    timing.add("steps per hour", number(r.stepsPerHour));
    timing.add("bottleneck", r.bottleneck.empty() ? "n/a" : r.bottleneck);
    if (r.suggestedRolloutGpus > 0 || r.suggestedTrainerGpus > 0)
        timing.add("balanced split",
            fmt::format(
                "{} rollout / {} trainer GPUs", r.suggestedRolloutGpus, r.suggestedTrainerGpus));
    return { roles, timing };
}

std::string renderText(const std::vector<Table>& tables)
{
    std::string out;
    for (const Table& t : tables) {
        out += t.title + "\n";
        std::vector<std::vector<std::string>> rows = t.rows;
        if (t.header.size() > 2)
            rows.insert(rows.begin(), t.header);
        std::vector<std::size_t> widths;
        for (const auto& row : rows)
            for (std::size_t i = 0; i < row.size(); ++i) {
                widths.resize(std::max(widths.size(), row.size()));
                widths[i] = std::max(widths[i], row[i].size());
            }
        for (const auto& row : rows) {
            std::string line = " ";
            for (std::size_t i = 0; i < row.size(); ++i)
                line += " "
                    + (i + 1 < row.size() ? fmt::format("{:<{}}", row[i], widths[i] + 1) : row[i]);
            out += line + "\n";
        }
        out += "\n";
    }
    return out;
}

std::string escapeCell(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += '\\';
        out += c;
    }
    return out;
}

std::string renderMarkdown(const std::vector<Table>& tables)
{
    std::string out;
    for (const Table& t : tables) {
        out += "## " + t.title + "\n\n";
        const std::vector<std::string> head
            = t.header.empty() ? std::vector<std::string> { "Figure", "Value" } : t.header;
        std::string line = "|", rule = "|";
        for (const std::string& h : head) {
            line += " " + escapeCell(h) + " |";
            rule += " --- |";
        }
        out += line + "\n" + rule + "\n";
        for (const auto& row : t.rows) {
            line = "|";
            for (const std::string& cell : row)
                line += " " + escapeCell(cell) + " |";
            out += line + "\n";
        }
        out += "\n";
    }
    return out;
}

} // namespace

std::string humanBytes(double bytes, ByteUnits units)
{
    if (!std::isfinite(bytes))
        return "n/a";
    // Below a kilobyte (a zero, in practice) reads best in the table's unit: "0.0 GB".
    const double k = units == ByteUnits::GB ? kKB : kKiB;
    if (std::fabs(bytes) < k)
        return formatBytes(bytes, units, 1);
    return formatBytesScaled(bytes, units);
}

std::string formatReport(const Plan& plan, const Estimate& e, ByteUnits units, ReportFormat format)
{
    std::vector<Table> tables { header(plan, e, units), trainingMemory(e, units),
        trainingCompute(e), serving(plan, e, units) };
    for (Table& t : rl(plan, e, units))
        tables.push_back(std::move(t));
    if (!e.warnings.empty()) {
        Table w { "Warnings", {}, {} };
        for (std::size_t i = 0; i < e.warnings.size(); ++i)
            w.add(std::to_string(i + 1), e.warnings[i]);
        tables.push_back(std::move(w));
    }
    if (format == ReportFormat::Markdown)
        return "# " + escapeCell(plan.name) + "\n\n" + renderMarkdown(tables);
    return renderText(tables);
}

std::string formatExplanations(const Plan& plan, const Estimate& e, ByteUnits units)
{
    std::string out = plan.name + "\n\n";
    for (const Explanation& x : e.explain) {
        const bool whole
            = std::isfinite(x.value) && x.value == std::floor(x.value) && std::fabs(x.value) < 1e15;
        std::string value = whole ? fmt::format("{:.0f}", x.value) : fmt::format("{:.6g}", x.value);
        if (x.unit == "bytes")
            value = fmt::format("{} bytes ({})", value, humanBytes(x.value, units));
        else if (!x.unit.empty())
            value += " " + x.unit;
        out += fmt::format("{} = {}\n  formula: {}\n", x.figure, value, x.formula);
        if (!x.source.empty())
            out += "  source:  " + x.source + "\n";
        out += "\n";
    }
    return out;
}

} // namespace envelope::report
