// The report table's two renderings (aligned text, Markdown) and the cell formatters the
// report files share (detail.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/detail.h"

namespace envelope::report::detail {

std::string yesNo(bool b)
{
    return b ? "yes" : "no";
}

std::string number(double v, int decimals)
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

std::string usd(double v)
{
    if (!std::isfinite(v))
        return "n/a";
    return std::fabs(v) >= 1e15 ? fmt::format("USD {:.3g}", v) : fmt::format("USD {:.0f}", v);
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
        if (c == '\n' || c == '\r') { // a line break ends a table row (or a heading)
            out += ' ';
            continue;
        }
        if (c == '|')
            out += '\\';
        out += c;
    }
    return out;
}

std::string renderMarkdown(const std::vector<Table>& tables, int headingLevel)
{
    std::string out;
    for (const Table& t : tables) {
        out += std::string(static_cast<std::size_t>(std::max(headingLevel, 1)), '#') + " "
            + escapeCell(t.title) + "\n\n";
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

} // namespace envelope::report::detail
