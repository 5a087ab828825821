#include "charts/latencyratechart.h"

#include <QChart>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "charts/chartlegend.h"
#include "charts/chartstyle.h"
#include "charts/tenantpalette.h"

namespace envelope::ui {
namespace {

QColor ttftColor() { return tenantColor(Tenant::Weights); }
QColor tpotColor() { return tenantColor(Tenant::KvCache).darker(130); }

} // namespace

LatencyRateChart::LatencyRateChart(QWidget* parent)
    : ChartWidget(parent)
    , m_ttft(new QLineSeries)
    , m_tpot(new QLineSeries)
    , m_ttftSlo(new QLineSeries)
    , m_tpotSlo(new QLineSeries)
    , m_capacity(new QLineSeries)
    , m_goodput(new QLineSeries)
    , m_plan(new QScatterSeries)
    , m_xAxis(new QValueAxis)
    , m_yAxis(new QLogValueAxis)
{
    QChart* chart = this->chart();
    chart->setTitle(tr("Latency vs request rate"));
    m_ttft->setName(tr("TTFT p90"));
    m_ttft->setPen(QPen(ttftColor(), 2.5));
    m_ttft->setPointsVisible(true);
    m_tpot->setName(tr("TPOT p90"));
    m_tpot->setPen(QPen(tpotColor(), 2.5));
    m_tpot->setPointsVisible(true);
    m_ttftSlo->setPen(QPen(ttftColor(), 1.4, Qt::DashLine));
    m_tpotSlo->setPen(QPen(tpotColor(), 1.4, Qt::DashLine));
    m_capacity->setPen(QPen(overflowColor(), 1.4, Qt::DashLine));
    m_goodput->setPen(QPen(fitsColor(), 2, Qt::DashDotLine));
    m_plan->setName(tr("this plan"));
    m_plan->setColor(capacityLineColor());
    m_plan->setBorderColor(Qt::transparent);
    m_plan->setMarkerSize(12);

    m_yAxis->setBase(10);
    m_yAxis->setLabelFormat(QStringLiteral("%g"));
    m_yAxis->setMinorTickCount(-1);
    m_yAxis->setTitleText(tr("p90 latency (ms, log)"));
    m_xAxis->setTitleText(tr("requests/s (Poisson)"));
    m_xAxis->setLabelFormat(QStringLiteral("%g"));

    for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*> { m_capacity, m_goodput,
             m_ttftSlo, m_tpotSlo, m_ttft, m_tpot, m_plan })
        chart->addSeries(s);
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    chart->addAxis(m_yAxis, Qt::AlignLeft);
    for (QAbstractSeries* s : chart->series()) {
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    const auto label = [chart](QColor color) {
        auto* item = new QGraphicsSimpleTextItem(chart);
        item->setBrush(color);
        item->setZValue(101);
        return item;
    };
    m_capacityLabel = label(overflowColor().darker(110));
    m_goodputLabel = label(fitsColor().darker(130));
    m_status = label(palette().color(QPalette::WindowText));
    finishChart(true);
}

void LatencyRateChart::setCurve(const ServingRateCurve& curve, const ServingLoad* load,
    const std::optional<ServingSlo>& slo, bool pending)
{
    const auto finite = [](double v) { return std::isfinite(v) && v > 0; };
    QList<QPointF> ttft, tpot, plan;
    double yLo = 1e30, yHi = 0, xHi = curve.capacityRps;
    const auto extend = [&](double ms) {
        yLo = std::min(yLo, ms);
        yHi = std::max(yHi, ms);
    };
    for (const ServingRatePoint& p : curve.points) {
        // Past the capacity the queue, and TTFT, grow without bound: no point to draw.
        if (p.saturated)
            continue;
        if (finite(p.ttftP90S)) {
            ttft.append(QPointF(p.rateRps, 1e3 * p.ttftP90S));
            extend(1e3 * p.ttftP90S);
        }
        if (finite(p.tpotP90S)) {
            tpot.append(QPointF(p.rateRps, 1e3 * p.tpotP90S));
            extend(1e3 * p.tpotP90S);
        }
    }
    if (load && load->requests > 0 && !load->saturated && load->offeredRateRps > 0) {
        for (double s : { load->ttftP90S, load->tpotP90S })
            if (finite(s)) {
                plan.append(QPointF(load->offeredRateRps, 1e3 * s));
                extend(1e3 * s);
            }
        xHi = std::max(xHi, load->offeredRateRps);
    }
    const double ttftObjective = slo && slo->ttftP90S ? 1e3 * *slo->ttftP90S : 0;
    const double tpotObjective = slo && slo->tpotP90S ? 1e3 * *slo->tpotP90S : 0;
    for (double ms : { ttftObjective, tpotObjective })
        if (ms > 0)
            extend(ms);
    if (yHi <= 0) {
        yLo = 1;
        yHi = 1000;
    }
    if (!(xHi > 0))
        xHi = 1;
    const double y0 = std::pow(10.0, std::floor(std::log10(std::max(yLo, 1e-3))));
    const double y1 = std::pow(10.0, std::ceil(std::log10(std::max(yHi * 1.5, y0 * 10))));
    if (m_yAxis->min() != y0 || m_yAxis->max() != y1)
        m_yAxis->setRange(y0, y1);
    setNiceRange(m_xAxis, xHi * 1.08);

    replaceIfChanged(m_ttft, ttft);
    replaceIfChanged(m_tpot, tpot);
    replaceIfChanged(m_plan, plan);
    const double x1 = m_xAxis->max();
    const auto horizontal = [&](QLineSeries* series, double ms) {
        replaceIfChanged(series, ms > 0 ? QList<QPointF> { { 0, ms }, { x1, ms } } : QList<QPointF> {});
        series->setVisible(ms > 0);
    };
    horizontal(m_ttftSlo, ttftObjective);
    horizontal(m_tpotSlo, tpotObjective);
    const auto vertical = [&](QLineSeries* series, double rps) {
        replaceIfChanged(series, rps > 0 ? QList<QPointF> { { rps, y0 }, { rps, y1 } } : QList<QPointF> {});
        series->setVisible(rps > 0);
    };
    vertical(m_capacity, curve.capacityRps);
    const double goodput = load && load->goodputRps ? *load->goodputRps : 0;
    vertical(m_goodput, goodput);
    m_capacityLabel->setVisible(curve.capacityRps > 0);
    m_capacityLabel->setText(tr("capacity %1/s").arg(curve.capacityRps, 0, 'g', 3));
    m_goodputLabel->setVisible(goodput > 0);
    m_goodputLabel->setText(tr("goodput %1/s").arg(goodput, 0, 'g', 3));
    m_status->setVisible(curve.points.empty());
    m_status->setText(pending ? tr("simulating the rates…")
                              : tr("needs a workload the KV pool holds"));

    QList<ChartLegend::Entry> entries {
        { tr("TTFT p90 (simulated)"), ttftColor(), ChartLegend::Marker::Line },
        { tr("TPOT p90 (simulated)"), tpotColor(), ChartLegend::Marker::Line },
    };
    if (ttftObjective > 0 || tpotObjective > 0)
        entries.append({ tr("p90 objectives"), palette().color(QPalette::WindowText),
            ChartLegend::Marker::DashLine });
    if (!plan.isEmpty())
        entries.append({ m_plan->name(), capacityLineColor(), ChartLegend::Marker::Dot });
    if (goodput > 0)
        entries.append({ tr("goodput (meets the SLO)"), fitsColor(), ChartLegend::Marker::DashLine });
    legend()->setEntries(entries);
    placeOverlays();
}

void LatencyRateChart::placeOverlays()
{
    const QRectF plot = chart()->plotArea();
    const auto atTop = [&](QGraphicsSimpleTextItem* item, QLineSeries* line, double dy) {
        if (!item->isVisible() || line->count() == 0)
            return;
        const QPointF at = chart()->mapToPosition(line->at(0), line);
        const QRectF box = item->boundingRect();
        // Left of the line, inside the plot.
        item->setPos(std::clamp(at.x() - box.width() - 4, plot.left() + 2,
                         std::max(plot.left() + 2, plot.right() - box.width())),
            plot.top() + dy);
    };
    atTop(m_capacityLabel, m_capacity, 2);
    atTop(m_goodputLabel, m_goodput, 2 + m_capacityLabel->boundingRect().height());
    const QRectF box = m_status->boundingRect();
    m_status->setPos(plot.center() - QPointF(box.width() / 2, box.height() / 2));
}

} // namespace envelope::ui
