// The planner's Pareto front: per-GPU memory or cost (the goal's x) against tokens/s, from
// the core's SearchResult::pareto, with the top candidates behind it. Hovering a point shows its
// layout; clicking one asks to apply it.
#pragma once

#include <QWidget>

#include <vector>

#include "base/units.h"
#include "search/search.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace envelope::ui {

class ParetoChart : public QWidget {
    Q_OBJECT
public:
    explicit ParetoChart(QWidget* parent = nullptr);

    void setResult(const SearchResult& result, ByteUnits units);
    void clear();

    QChartView* chartView() const { return m_view; }
    QValueAxis* xAxis() const { return m_xAxis; }
    QScatterSeries* frontSeries() const { return m_front; }
    QScatterSeries* candidateSeries() const { return m_candidates; }
    // The candidate shown at a chart point of the front, or nullptr.
    const Candidate* frontCandidateAt(const QPointF& point) const;

signals:
    void candidateClicked(const envelope::Candidate& candidate);
    void candidateHovered(const envelope::Candidate& candidate, const QPoint& screenPos);

protected:
    void changeEvent(QEvent* event) override;

private:
    double xOf(const Candidate& c) const;
    const Candidate* nearest(const std::vector<Candidate>& list, const QPointF& point) const;

    QChart* m_chart;
    QChartView* m_view;
    QScatterSeries* m_front;
    QScatterSeries* m_candidates;
    QValueAxis* m_xAxis;
    QValueAxis* m_yAxis;
    std::vector<Candidate> m_frontItems;
    std::vector<Candidate> m_candidateItems;
    std::string m_paretoX;
    double m_costScale = 1; // the cost axis in USD, thousands or millions of USD
    ByteUnits m_units = ByteUnits::GB;
};

} // namespace envelope::ui
