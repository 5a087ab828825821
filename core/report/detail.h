// Internal to core/report: the table every text and Markdown report is built from, its two
// renderings, and the cell formatters the report files share. Only core/report .cpp files
// include this (tests/check_private_headers.cmake).
#pragma once

#include <string>
#include <vector>

#include "base/units.h"
#include "plan/plan.h"
#include "report/textreport.h"
#include "result/result.h"

namespace envelope::report::detail {

struct Table {
    std::string title;
    std::vector<std::string> header; // printed in text only when more than two columns
    std::vector<std::vector<std::string>> rows;

    void add(std::string label, std::string value)
    {
        rows.push_back({ std::move(label), std::move(value) });
    }
};

std::string yesNo(bool b);
std::string number(double v, int decimals = 1); // "n/a" when not finite
std::string duration(double s); // "n/a" unless finite and positive
std::string usd(double v);

// Aligned columns (text), or a "## title" heading (of `headingLevel` #s) and a pipe table
// (Markdown).
std::string renderText(const std::vector<Table>& tables);
std::string renderMarkdown(const std::vector<Table>& tables, int headingLevel = 2);
std::string escapeCell(const std::string& s);

// The report's opening table: what a reader needs to reproduce the plan, the rows of the
// chosen sections only (configuration.cpp).
Table configuration(
    const Plan& plan, const Estimate& e, ByteUnits units, const ReportSections& sections);

} // namespace envelope::report::detail
