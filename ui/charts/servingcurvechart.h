// Max concurrent sequences (log10 axis) against context length (log2 axis, 256..1M tokens), the
// points from the core's servingContextSweep; the plan's context marked, the plan's concurrency as
// a line.
#pragma once

#include <vector>

#include "charts/chartwidget.h"
#include "serving/sweep.h"

QT_BEGIN_NAMESPACE
class QCategoryAxis;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QScatterSeries;
class QLogValueAxis;
QT_END_NAMESPACE

namespace envelope::ui {

class ServingCurveChart : public ChartWidget {
    Q_OBJECT
public:
    // The log y axis' floor, half a sequence: a context where nothing fits (0 sequences) is
    // drawn there, below the "1" line.
    static constexpr double kLogFloor = 0.5;

    explicit ServingCurveChart(QWidget* parent = nullptr);

    // `currentContext`, `currentSequences`: the plan's own point (the estimate's figures).
    void setPoints(const std::vector<ServingSweepPoint>& points, double currentContext,
        double currentSequences, double concurrency);

    QLineSeries* curve() const { return m_curve; } // x = log2(context), y = max sequences
    QScatterSeries* marker() const { return m_marker; }

protected:
    void placeOverlays() override;

private:
    void setContextLabelStep(int step); // label every `step`-th power of two
    int m_labelStep = 2;
    QLineSeries* m_curve;
    QScatterSeries* m_points;
    QScatterSeries* m_marker;
    QLineSeries* m_contextLine;
    QLineSeries* m_concurrencyLine;
    QCategoryAxis* m_xAxis;
    QLogValueAxis* m_yAxis;
    QGraphicsSimpleTextItem* m_markerLabel;
    QGraphicsSimpleTextItem* m_concurrencyLabel;
    double m_concurrency = 1; // as drawn, on the log axis (never 0)
};

} // namespace envelope::ui
