// The throughput-interactivity curve (issue 27): output tokens/s per GPU (log y) against tokens/s
// per user (log x) as the decode batch grows, from the core's servingInteractivityCurve. Under
// speculative decoding the plain curve is drawn too (dashed), so the batch where speculation
// stops paying shows. The plan's point: the simulated one under a workload, else its static
// batch; the SLO's TPOT objective shades the per-user rates that meet it.
#pragma once

#include "charts/chartwidget.h"
#include "serving/sweep.h"

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
QT_END_NAMESPACE

namespace envelope::ui {

class InteractivityChart : public ChartWidget {
    Q_OBJECT
public:
    explicit InteractivityChart(QWidget* parent = nullptr);

    // `planPoint`: x = tokens/s per user, y = tokens/s per GPU of the plan as the core reports
    // it (under a workload: the simulation's); `simulated` says which; `pointLabel` is its
    // caption. A point with x <= 0 is not drawn.
    void setCurve(const InteractivityCurve& curve, QPointF planPoint, bool simulated);

    QLineSeries* curveSeries() const { return m_curve; }     // x = per user, y = per GPU
    QLineSeries* plainSeries() const { return m_plain; }     // empty without speculation
    QScatterSeries* planMarker() const { return m_marker; }
    QAreaSeries* sloArea() const { return m_slo; }           // hidden without a TPOT objective

protected:
    void placeOverlays() override;

private:
    QLineSeries* m_curve;
    QScatterSeries* m_points;
    QLineSeries* m_plain;
    QLineSeries* m_sloUpper;
    QLineSeries* m_sloLower;
    QAreaSeries* m_slo;
    QScatterSeries* m_marker;
    QLogValueAxis* m_xAxis;
    QLogValueAxis* m_yAxis;
    QGraphicsSimpleTextItem* m_markerLabel;
    QGraphicsSimpleTextItem* m_sloLabel;
    double m_sloX = 0;
};

} // namespace envelope::ui
