#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/textreport.h"

namespace envelope::report {
namespace {

enum class Section { Training, Serving, Rl };

struct Figure {
    const char* key;
    const char* label;
    FigureUnit unit;
    std::function<double(const Estimate&)> value;
    std::function<std::string(const Estimate&)> text = {};
};

Section sectionOf(const Figure& f)
{
    const std::string_view key = f.key;
    if (key.starts_with("serving."))
        return Section::Serving;
    if (key.starts_with("rl."))
        return Section::Rl;
    return Section::Training;
}

bool hasSection(const ReportSections& s, Section section)
{
    switch (section) {
    case Section::Serving:
        return s.serving;
    case Section::Rl:
        return s.rl;
    case Section::Training:
        break;
    }
    return s.training || s.compute;
}

// Rates, times and costs stand only for a plan that runs: the training tab withholds them when
// the memory is over HBM, serving when the requested concurrency does not fit, RL when a pool
// overflows or cannot be laid out (the result JSON's throughput_valid).
std::string withheldReason(const Figure& f, const Estimate& e)
{
    const std::string_view key = f.key;
    const bool rate = f.unit == FigureUnit::Seconds || f.unit == FigureUnit::PerSecond
        || f.unit == FigureUnit::PerHour || f.unit == FigureUnit::Usd
        || key == "training.gpu_hours" || key.ends_with("bottleneck");
    if (!rate)
        return {};
    switch (sectionOf(f)) {
    case Section::Training:
        return e.training.verdict == Verdict::Over ? "n/a: does not fit" : "";
    case Section::Serving:
        return e.serving.fits ? "" : "n/a: does not fit";
    case Section::Rl:
        return e.rl.fits ? "" : "n/a: does not fit";
    }
    return {};
}

const std::vector<Figure>& figures()
{
    static const std::vector<Figure> all {
        { "training.per_gpu_bytes.weights", "memory per GPU: weights", FigureUnit::Bytes,
            [](const Estimate& e) { return e.training.perGpu.weights; } },
        { "training.per_gpu_bytes.gradients", "memory per GPU: gradients", FigureUnit::Bytes,
            [](const Estimate& e) { return e.training.perGpu.gradients; } },
        { "training.per_gpu_bytes.optimizer", "memory per GPU: optimizer", FigureUnit::Bytes,
            [](const Estimate& e) { return e.training.perGpu.optimizer; } },
        { "training.per_gpu_bytes.activations", "memory per GPU: activations", FigureUnit::Bytes,
            [](const Estimate& e) { return e.training.perGpu.activations; } },
        { "training.per_gpu_bytes.overhead", "memory per GPU: overhead", FigureUnit::Bytes,
            [](const Estimate& e) { return e.training.perGpu.overhead; } },
        { "training.per_gpu_bytes.total", "memory per GPU: total", FigureUnit::Bytes,
            [](const Estimate& e) { return e.training.perGpu.total(); } },
        { "training.fits", "training fits", FigureUnit::Verdict,
            [](const Estimate& e) { return e.training.fits ? 1.0 : 0.0; } },
        { "training.min_gpus", "minimum GPUs", FigureUnit::Count,
            [](const Estimate& e) { return static_cast<double>(e.training.minGpus); } },
        { "training.step_time_s", "step time", FigureUnit::Seconds,
            [](const Estimate& e) { return e.compute.stepTimeS; } },
        { "training.tokens_per_s", "training tokens/s", FigureUnit::PerSecond,
            [](const Estimate& e) { return e.compute.tokensPerS; } },
        { "training.train_time_s", "time to train", FigureUnit::Seconds,
            [](const Estimate& e) { return e.compute.trainTimeS; } },
        { "training.gpu_hours", "GPU-hours", FigureUnit::Count,
            [](const Estimate& e) { return e.compute.gpuHours; } },
        { "training.cost", "cost", FigureUnit::Usd,
            [](const Estimate& e) { return e.compute.cost; } },
        { "training.bottleneck", "training bottleneck", FigureUnit::Text,
            [](const Estimate&) { return 0.0; },
            [](const Estimate& e) { return e.compute.bottleneck; } },
        { "serving.kv_budget_bytes", "serving KV budget per GPU", FigureUnit::Bytes,
            [](const Estimate& e) { return e.serving.kvBudgetBytes; } },
        { "serving.max_sequences", "serving max sequences", FigureUnit::Count,
            [](const Estimate& e) { return std::floor(e.serving.maxSequences); } },
        { "serving.fits", "serving concurrency fits", FigureUnit::Verdict,
            [](const Estimate& e) { return e.serving.fits ? 1.0 : 0.0; } },
        { "serving.decode_tokens_per_s", "serving decode tokens/s", FigureUnit::PerSecond,
            [](const Estimate& e) { return e.serving.decodeTokensPerS; } },
        { "rl.steps_per_hour", "RL steps/hour", FigureUnit::PerHour,
            [](const Estimate& e) { return e.rl.stepsPerHour; } },
        { "rl.step_s", "RL step time", FigureUnit::Seconds,
            [](const Estimate& e) { return e.rl.stepS; } },
        { "rl.bottleneck", "RL bottleneck", FigureUnit::Text, [](const Estimate&) { return 0.0; },
            [](const Estimate& e) { return e.rl.bottleneck; } },
    };
    return all;
}

std::string plain(const CompareRow& row, double v, ByteUnits units)
{
    if (!std::isfinite(v))
        return "n/a";
    switch (row.unit) {
    case FigureUnit::Bytes:
        return humanBytes(v, units);
    case FigureUnit::Count:
        return formatCount(v);
    case FigureUnit::Seconds:
        return v > 0 ? formatDuration(v) : "n/a";
    case FigureUnit::Usd:
        return fmt::format("USD {:.0f}", v);
    case FigureUnit::PerSecond:
        return formatCount(v) + "/s";
    case FigureUnit::PerHour:
        return fmt::format("{:.3g}/h", v);
    case FigureUnit::Verdict:
        return v > 0.5 ? "fits" : "does not fit";
    case FigureUnit::Text:
        return {};
    }
    return {};
}

std::string signedDelta(const CompareRow& row, double d, ByteUnits units)
{
    const std::string magnitude = row.unit == FigureUnit::Seconds ? formatDuration(std::fabs(d))
                                                                  : plain(row, std::fabs(d), units);
    return (d < 0 ? "-" : "+") + magnitude;
}

} // namespace

std::vector<CompareRow> compareRows(const std::vector<ComparedPlan>& plans)
{
    std::vector<CompareRow> rows;
    for (const Figure& f : figures()) {
        const Section section = sectionOf(f);
        if (std::none_of(plans.begin(), plans.end(),
                [&](const ComparedPlan& p) { return hasSection(p.sections, section); }))
            continue;
        CompareRow row { f.key, f.label, f.unit, {}, {}, {} };
        for (const ComparedPlan& p : plans) {
            const std::string why = !hasSection(p.sections, section)
                ? std::string("not in the plan")
                : withheldReason(f, *p.estimate);
            row.withheld.push_back(why);
            row.values.push_back(
                why.empty() ? f.value(*p.estimate) : std::numeric_limits<double>::quiet_NaN());
            if (f.text)
                row.texts.push_back(why.empty() ? f.text(*p.estimate) : std::string());
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

double rowDelta(const CompareRow& row, std::size_t column)
{
    return row.values.at(column) - row.values.at(0);
}

double rowDeltaPercent(const CompareRow& row, std::size_t column)
{
    const double first = row.values.at(0);
    if (first == 0 || !std::isfinite(first))
        return std::numeric_limits<double>::quiet_NaN();
    return 100.0 * rowDelta(row, column) / first;
}

std::string formatCell(const CompareRow& row, std::size_t column, ByteUnits units)
{
    if (column < row.withheld.size() && !row.withheld[column].empty())
        return row.withheld[column] == "not in the plan" ? "-" : row.withheld[column];
    if (row.unit == FigureUnit::Text)
        return row.texts.at(column).empty() ? "n/a" : row.texts.at(column);
    const std::string value = plain(row, row.values.at(column), units);
    if (column == 0 || row.unit == FigureUnit::Verdict)
        return value;
    const double d = rowDelta(row, column);
    if (!std::isfinite(d))
        return value; // the first plan's figure is withheld: no delta to show
    if (d == 0)
        return value + " (=)";
    const double pct = rowDeltaPercent(row, column);
    if (std::isfinite(pct))
        return fmt::format("{} ({}, {:+.0f}%)", value, signedDelta(row, d, units), pct);
    return fmt::format("{} ({})", value, signedDelta(row, d, units));
}

std::string formatComparison(
    const std::vector<ComparedPlan>& plans, CompareFormat format, ByteUnits units)
{
    const std::vector<CompareRow> rows = compareRows(plans);
    if (format == CompareFormat::Json) {
        nlohmann::ordered_json j;
        j["format"] = "envelope.compare";
        j["version"] = 1;
        j["plans"] = nlohmann::ordered_json::array();
        for (const ComparedPlan& p : plans)
            j["plans"].push_back({ { "label", p.label }, { "name", p.plan->name } });
        j["rows"] = nlohmann::ordered_json::array();
        for (const CompareRow& row : rows) {
            nlohmann::ordered_json r;
            r["figure"] = row.key;
            r["label"] = row.label;
            nlohmann::ordered_json values = nlohmann::ordered_json::array();
            nlohmann::ordered_json deltas = nlohmann::ordered_json::array();
            nlohmann::ordered_json withheld = nlohmann::ordered_json::array();
            bool anyWithheld = false;
            for (std::size_t c = 0; c < row.values.size(); ++c) {
                const std::string& why = row.withheld[c];
                anyWithheld = anyWithheld || !why.empty();
                withheld.push_back(why.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(why));
                if (!why.empty()) {
                    values.push_back(nullptr);
                    if (c > 0 && row.unit != FigureUnit::Text && row.unit != FigureUnit::Verdict)
                        deltas.push_back(nullptr);
                } else if (row.unit == FigureUnit::Text) {
                    values.push_back(row.texts[c]);
                } else if (row.unit == FigureUnit::Verdict) {
                    values.push_back(row.values[c] > 0.5);
                } else {
                    const double v = row.values[c];
                    values.push_back(std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr);
                    const double d = rowDelta(row, c);
                    if (c > 0)
                        deltas.push_back(std::isfinite(d) ? nlohmann::ordered_json(d) : nullptr);
                }
            }
            r["values"] = values;
            if (anyWithheld)
                r["withheld"] = withheld; // per plan: why the value is null, or null
            if (row.unit != FigureUnit::Text && row.unit != FigureUnit::Verdict)
                r["deltas"] = deltas; // against the first plan, one per further plan
            j["rows"].push_back(std::move(r));
        }
        return j.dump(2) + "\n";
    }

    std::vector<std::vector<std::string>> table;
    std::vector<std::string> header { "figure" };
    for (const ComparedPlan& p : plans)
        header.push_back(p.label);
    table.push_back(header);
    for (const CompareRow& row : rows) {
        std::vector<std::string> line { row.label };
        for (std::size_t c = 0; c < row.values.size(); ++c)
            line.push_back(formatCell(row, c, units));
        table.push_back(std::move(line));
    }
    std::string out;
    if (format == CompareFormat::Markdown) {
        for (std::size_t r = 0; r < table.size(); ++r) {
            out += "|";
            for (const std::string& cell : table[r])
                out += " " + cell + " |";
            out += "\n";
            if (r == 0) {
                out += "|";
                for (std::size_t c = 0; c < table[r].size(); ++c)
                    out += c == 0 ? " --- |" : " ---: |";
                out += "\n";
            }
        }
        return out + fmt::format("\nDeltas are against the first plan ({}).\n", plans[0].label);
    }
    std::vector<std::size_t> width(header.size(), 0);
    for (const auto& line : table)
        for (std::size_t c = 0; c < line.size(); ++c)
            width[c] = std::max(width[c], line[c].size());
    for (const auto& line : table) {
        std::string text;
        for (std::size_t c = 0; c < line.size(); ++c)
            text += fmt::format("{:<{}}", line[c], c + 1 < line.size() ? width[c] + 2 : 0);
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out += text + "\n";
    }
    return out + fmt::format("\nDeltas are against the first plan ({}).\n", plans[0].label);
}

} // namespace envelope::report
