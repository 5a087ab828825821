// Latency against request rate (issue 27): the workload's p90 TTFT and p90 TPOT (log ms) as the
// Poisson rate rises from 5% to 95% of the deployment's capacity, from the core's
// servingRateCurve (each point an event simulation, run on the document's worker). The SLO's
// objectives are dashed lines in their series' colours, the capacity a vertical line the queue
// grows past, the plan's own rate its simulated points, and the goodput (the highest rate that
// meets every objective, serving.goodput_rps) a green vertical line.
#pragma once

#include <optional>

#include "charts/chartwidget.h"
#include "serving/sweep.h"

QT_BEGIN_NAMESPACE
class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace envelope::ui {

class LatencyRateChart : public ChartWidget {
    Q_OBJECT
public:
    explicit LatencyRateChart(QWidget* parent = nullptr);

    // `load`: the plan's own run (its rate's points, the goodput when searched); `slo`: the
    // objectives drawn, when the plan has them. `pending`: the curve is still being simulated.
    void setCurve(const ServingRateCurve& curve, const ServingLoad* load,
        const std::optional<ServingSlo>& slo, bool pending);

    QLineSeries* ttftSeries() const { return m_ttft; }   // x = requests/s, y = ms
    QLineSeries* tpotSeries() const { return m_tpot; }
    QScatterSeries* planMarker() const { return m_plan; } // the plan's TTFT and TPOT p90
    QLineSeries* goodputLine() const { return m_goodput; } // empty without a searched goodput
    QLineSeries* capacityLine() const { return m_capacity; }

protected:
    void placeOverlays() override;

private:
    QLineSeries* m_ttft;
    QLineSeries* m_tpot;
    QLineSeries* m_ttftSlo;
    QLineSeries* m_tpotSlo;
    QLineSeries* m_capacity;
    QLineSeries* m_goodput;
    QScatterSeries* m_plan;
    QValueAxis* m_xAxis;
    QLogValueAxis* m_yAxis;
    QGraphicsSimpleTextItem* m_capacityLabel;
    QGraphicsSimpleTextItem* m_goodputLabel;
    QGraphicsSimpleTextItem* m_status;
};

} // namespace envelope::ui
