#include "charts/interactivitychart.h"

#include <QAreaSeries>
#include <QChart>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>

#include "charts/chartlegend.h"
#include "charts/chartstyle.h"
#include "charts/tenantpalette.h"

namespace envelope::ui {
namespace {

// From the decade below the lowest value to 30% above the highest (room for the labels): a log
// axis needs positive ends, and its grid lines stay on the decades.
std::pair<double, double> logRange(double lo, double hi)
{
    lo = std::max(lo, 1e-3);
    hi = std::max(hi, lo * 10);
    // The lower end sits below the decade, so that the x and y axes' first labels ("10", "10")
    // do not meet in the corner.
    return { std::pow(10.0, std::floor(std::log10(lo))) / 1.6, hi * 1.3 };
}

} // namespace

InteractivityChart::InteractivityChart(QWidget* parent)
    : ChartWidget(parent)
    , m_curve(new QLineSeries)
    , m_points(new QScatterSeries)
    , m_plain(new QLineSeries)
    // The area's bounds are not series of the chart, and QAreaSeries does not own them.
    , m_sloUpper(new QLineSeries(this))
    , m_sloLower(new QLineSeries(this))
    , m_slo(new QAreaSeries(m_sloUpper, m_sloLower))
    , m_marker(new QScatterSeries)
    , m_xAxis(new QLogValueAxis)
    , m_yAxis(new QLogValueAxis)
{
    QChart* chart = this->chart();
    chart->setTitle(tr("Throughput vs interactivity"));
    const QColor line = tenantColor(Tenant::KvCache).darker(130);
    m_curve->setName(tr("this layout"));
    m_curve->setPen(QPen(line, 2.5));
    m_points->setColor(line);
    m_points->setMarkerSize(6);
    m_points->setBorderColor(Qt::transparent);
    m_plain->setName(tr("without speculation"));
    m_plain->setPen(QPen(tenantColor(Tenant::Weights), 1.6, Qt::DashLine));
    QColor meets = fitsColor();
    meets.setAlpha(40);
    m_slo->setName(tr("meets TPOT"));
    m_slo->setBrush(meets);
    m_slo->setPen(Qt::NoPen);
    m_marker->setName(tr("this plan"));
    m_marker->setColor(capacityLineColor());
    m_marker->setMarkerSize(13);

    for (QLogValueAxis* axis : { m_xAxis, m_yAxis }) {
        axis->setBase(10);
        axis->setLabelFormat(QStringLiteral("%g"));
        axis->setMinorTickCount(-1);
    }
    m_xAxis->setTitleText(tr("tokens/s per user (log)"));
    m_yAxis->setTitleText(tr("tokens/s per GPU (log)"));

    for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*> {
             m_slo, m_plain, m_curve, m_points, m_marker })
        chart->addSeries(s);
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    chart->addAxis(m_yAxis, Qt::AlignLeft);
    for (QAbstractSeries* s : chart->series()) {
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }

    m_markerLabel = new QGraphicsSimpleTextItem(chart);
    m_markerLabel->setBrush(capacityLineColor().darker(110));
    m_markerLabel->setZValue(101);
    QFont bold = m_markerLabel->font();
    bold.setBold(true);
    m_markerLabel->setFont(bold);
    m_sloLabel = new QGraphicsSimpleTextItem(chart);
    m_sloLabel->setBrush(fitsColor().darker(130));
    m_sloLabel->setZValue(101);

    finishChart(true);
}

void InteractivityChart::setCurve(const InteractivityCurve& curve, QPointF planPoint, bool simulated)
{
    const auto finite = [](double v) { return std::isfinite(v) && v > 0; };
    QList<QPointF> xy, plain;
    double xLo = 1e30, xHi = 0, yLo = 1e30, yHi = 0;
    const auto extend = [&](double x, double y) {
        xLo = std::min(xLo, x);
        xHi = std::max(xHi, x);
        yLo = std::min(yLo, y);
        yHi = std::max(yHi, y);
    };
    for (const InteractivityPoint& p : curve.points)
        if (finite(p.tokensPerSPerUser) && finite(p.tokensPerSPerGpu)) {
            xy.append(QPointF(p.tokensPerSPerUser, p.tokensPerSPerGpu));
            extend(p.tokensPerSPerUser, p.tokensPerSPerGpu);
        }
    for (const InteractivityPoint& p : curve.plainPoints)
        if (finite(p.tokensPerSPerUser) && finite(p.tokensPerSPerGpu)) {
            plain.append(QPointF(p.tokensPerSPerUser, p.tokensPerSPerGpu));
            extend(p.tokensPerSPerUser, p.tokensPerSPerGpu);
        }
    const bool hasPoint = finite(planPoint.x()) && finite(planPoint.y());
    if (hasPoint)
        extend(planPoint.x(), planPoint.y());
    m_sloX = finite(curve.sloTokensPerSPerUser) ? curve.sloTokensPerSPerUser : 0;
    if (m_sloX > 0)
        extend(m_sloX, yLo);
    if (xy.isEmpty() && !hasPoint) {
        xLo = 1;
        xHi = 100;
        yLo = 1;
        yHi = 100;
    }
    const auto [x0, x1] = logRange(xLo, xHi);
    const auto [y0, y1] = logRange(yLo, yHi);
    if (m_xAxis->min() != x0 || m_xAxis->max() != x1)
        m_xAxis->setRange(x0, x1);
    if (m_yAxis->min() != y0 || m_yAxis->max() != y1)
        m_yAxis->setRange(y0, y1);
    replaceIfChanged(m_curve, xy);
    replaceIfChanged(m_points, xy);
    replaceIfChanged(m_plain, plain);
    m_plain->setVisible(!plain.isEmpty());
    // The SLO's region: every per-user rate at or above what the TPOT objective asks.
    if (m_sloX > 0) {
        replaceIfChanged(m_sloUpper, QList<QPointF> { { m_sloX, y1 }, { x1, y1 } });
        replaceIfChanged(m_sloLower, QList<QPointF> { { m_sloX, y0 }, { x1, y0 } });
    }
    m_slo->setVisible(m_sloX > 0);
    m_sloLabel->setVisible(m_sloX > 0);
    m_sloLabel->setText(m_sloX > 0 ? tr("TPOT objective: ≥ %1 tok/s per user").arg(m_sloX, 0, 'g', 3)
                                   : QString());
    replaceIfChanged(m_marker, hasPoint ? QList<QPointF> { planPoint } : QList<QPointF> {});
    m_markerLabel->setVisible(hasPoint);
    m_markerLabel->setText(hasPoint ? (simulated ? tr("under the workload (simulated)")
                                                 : tr("%L1 sequences").arg(qlonglong(curve.current.batch)))
                                    : QString());

    QList<ChartLegend::Entry> entries {
        { tr("decode at each batch (upper bound)"), m_curve->pen().color(), ChartLegend::Marker::Line },
    };
    if (!plain.isEmpty())
        entries.append({ m_plain->name(), tenantColor(Tenant::Weights), ChartLegend::Marker::DashLine });
    if (hasPoint)
        entries.append({ m_marker->name(), capacityLineColor(), ChartLegend::Marker::Dot });
    if (m_sloX > 0)
        entries.append({ m_slo->name(), fitsColor(), ChartLegend::Marker::Box });
    legend()->setEntries(entries);
    placeOverlays();
}

void InteractivityChart::placeOverlays()
{
    const QRectF plot = chart()->plotArea();
    if (m_sloX > 0) {
        const QPointF at = chart()->mapToPosition(QPointF(m_sloX, m_yAxis->max()), m_curve);
        const QRectF box = m_sloLabel->boundingRect();
        m_sloLabel->setPos(std::clamp(at.x() + 4, plot.left(), plot.right() - box.width()), plot.top() + 2);
    }
    if (m_marker->count() == 0)
        return;
    const QPointF at = chart()->mapToPosition(m_marker->at(0), m_marker);
    const QRectF box = m_markerLabel->boundingRect();
    const QRectF taken = m_sloLabel->isVisible() ? m_sloLabel->mapRectToParent(m_sloLabel->boundingRect())
                                                 : QRectF();
    // No corner free: above right, pulled back inside the plot.
    QPointF chosen = freeCornerBeside(at, box.size(), plot, taken, 6)
                         .value_or(QPointF(at.x() + 10, at.y() - box.height() - 6));
    chosen.setX(std::clamp(chosen.x(), plot.left(), std::max(plot.left(), plot.right() - box.width())));
    chosen.setY(std::clamp(chosen.y(), plot.top(), std::max(plot.top(), plot.bottom() - box.height())));
    m_markerLabel->setPos(chosen);
}

} // namespace envelope::ui
