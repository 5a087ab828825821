// Plans side by side (`envelope-cli compare`, the app's pinned plan): one column per plan, one
// row per figure, each figure's change against the first plan. The rows name the result JSON's
// keys (design.md, "Result JSON") so a script can match them.
#pragma once

#include <string>
#include <vector>

#include "base/units.h"
#include "plan/plan.h"
#include "report/textreport.h"
#include "result/result.h"

namespace envelope::report {

enum class FigureUnit { Bytes, Count, Seconds, Usd, PerSecond, PerHour, Verdict, Text };

struct CompareRow {
    std::string key; // result JSON key: "training.per_gpu_bytes.total"
    std::string label; // "memory per GPU: total"
    FigureUnit unit = FigureUnit::Count;
    std::vector<double> values; // one per plan (Verdict: 1 fits, 0 does not)
    std::vector<std::string> texts; // Text rows (bottlenecks); empty otherwise
    // Per plan: why the figure is withheld ("does not fit", "not in the plan"), or "" when the
    // value stands. A withheld value is NaN: a plan that does not fit shows no rate or cost.
    std::vector<std::string> withheld;
};

struct ComparedPlan {
    std::string label; // the plan's name or its file
    const Plan* plan = nullptr;
    const Estimate* estimate = nullptr;
    // The sections the plan is about (report::planSections): a training-only plan has no
    // serving or RL rows to compare.
    ReportSections sections {};
};

// Every compared figure of the sections some plan has, in report order.
std::vector<CompareRow> compareRows(const std::vector<ComparedPlan>& plans);

// value - first; and the relative change in percent (nullopt-like NaN when the first is 0).
double rowDelta(const CompareRow& row, std::size_t column);
double rowDeltaPercent(const CompareRow& row, std::size_t column);

// One cell as text: "63.2 GB (+4.1 GB, +7%)" for columns after the first.
std::string formatCell(const CompareRow& row, std::size_t column, ByteUnits units);

enum class CompareFormat { Text, Markdown, Json };
std::string formatComparison(
    const std::vector<ComparedPlan>& plans, CompareFormat format, ByteUnits units);

} // namespace envelope::report
