// The "Find a plan" table: one row per candidate of a training, serving or RL search, in rank
// order, sortable by the number behind each cell. Used for the streamed partial results and the
// final ones alike; at most the panel's 200 rows, so a refill stays well within a frame.
#pragma once

#include <QString>

#include <vector>

#include "base/units.h"
#include "search/search.h"

QT_BEGIN_NAMESPACE
class QTableWidget;
QT_END_NAMESPACE

namespace envelope::ui {

// Column 0 holds the rank (1-based) in Qt::UserRole, column 1 the GPUs, for every kind.
void fillPlanTable(
    QTableWidget* table, const Plan& searched, const std::vector<Candidate>& rows, ByteUnits units);
void fillPlanTable(QTableWidget* table, const Plan& searched,
    const std::vector<ServingCandidate>& rows, ByteUnits units);
void fillPlanTable(QTableWidget* table, const Plan& searched, const std::vector<RlCandidate>& rows,
    ByteUnits units);

// One line for a tooltip or the status: the changes in words and the ranked figures.
QString describeCandidate(const Plan& searched, const Candidate& c, ByteUnits units);
QString describeCandidate(const Plan& searched, const ServingCandidate& c, ByteUnits units);
QString describeCandidate(const Plan& searched, const RlCandidate& c, ByteUnits units);

} // namespace envelope::ui
