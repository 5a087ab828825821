#include "charts/servingcurvechart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "charts/chartlegend.h"
#include "charts/chartstyle.h"
#include "charts/tenantpalette.h"

namespace envelope::ui {
namespace {
QString contextLabel(int log2)
{
    if (log2 >= 20)
        return QStringLiteral("%1M").arg(1 << (log2 - 20));
    if (log2 >= 10)
        return QStringLiteral("%1K").arg(1 << (log2 - 10));
    return QString::number(1 << log2);
}
} // namespace

ServingCurveChart::ServingCurveChart(QWidget* parent)
    : ChartWidget(parent)
    , m_curve(new QLineSeries)
    , m_points(new QScatterSeries)
    , m_marker(new QScatterSeries)
    , m_contextLine(new QLineSeries)
    , m_concurrencyLine(new QLineSeries)
    , m_xAxis(new QCategoryAxis)
    , m_yAxis(new QValueAxis)
{
    QChart* chart = this->chart();
    chart->setTitle(tr("Max concurrent sequences vs context"));
    m_curve->setName(tr("max sequences (KV budget)"));
    m_curve->setPen(QPen(tenantColor(Tenant::KvCache).darker(130), 2.5));
    m_points->setColor(tenantColor(Tenant::KvCache).darker(130));
    m_points->setMarkerSize(7);
    m_points->setBorderColor(Qt::transparent);
    m_marker->setName(tr("this plan"));
    m_marker->setColor(capacityLineColor());
    m_marker->setMarkerSize(13);
    m_contextLine->setPen(QPen(capacityLineColor(), 1.2, Qt::DashLine));
    m_concurrencyLine->setName(tr("concurrency"));
    m_concurrencyLine->setPen(QPen(tenantColor(Tenant::Weights), 1.6, Qt::DotLine));

    // x is log2(context): a category axis puts "256", "1K", ... "1M" at each power of two.
    m_xAxis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    // Every other power of two is labelled, so "256K" has room at any panel width.
    for (int k = kServingSweepMinLog2; k <= kServingSweepMaxLog2; k += 2)
        m_xAxis->append(contextLabel(k), k);
    m_xAxis->setRange(kServingSweepMinLog2, kServingSweepMaxLog2);
    m_xAxis->setTitleText(tr("context length (tokens, log2 scale)"));
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_yAxis->setTitleText(tr("sequences"));

    for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*> {
             m_curve, m_points, m_concurrencyLine, m_contextLine, m_marker }) {
        chart->addSeries(s);
    }
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    chart->addAxis(m_yAxis, Qt::AlignLeft);
    for (QAbstractSeries* s : chart->series()) {
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    // The dots on the curve and the plan's context line need no entry of their own.
    legend()->setEntries({
        { m_curve->name(), m_curve->pen().color(), ChartLegend::Marker::Line },
        { m_marker->name(), capacityLineColor(), ChartLegend::Marker::Dot },
        { m_concurrencyLine->name(), tenantColor(Tenant::Weights), ChartLegend::Marker::DotLine },
    });

    m_markerLabel = new QGraphicsSimpleTextItem(chart);
    m_markerLabel->setBrush(capacityLineColor().darker(110));
    m_markerLabel->setZValue(101);
    QFont bold = m_markerLabel->font();
    bold.setBold(true);
    m_markerLabel->setFont(bold);
    m_concurrencyLabel = new QGraphicsSimpleTextItem(chart);
    m_concurrencyLabel->setBrush(tenantColor(Tenant::Weights));
    m_concurrencyLabel->setZValue(101);

    finishChart(true);
}

void ServingCurveChart::setPoints(const std::vector<ServingSweepPoint>& points,
    double currentContext, double currentSequences, double concurrency)
{
    auto finite = [](double v) { return std::isfinite(v) ? v : 0.0; };
    currentSequences = finite(currentSequences);
    QList<QPointF> xy;
    double top = std::max({ currentSequences, concurrency, 1.0 });
    for (const ServingSweepPoint& p : points) {
        xy.append(QPointF(std::log2(p.context), finite(p.maxSequences)));
        top = std::max(top, finite(p.maxSequences));
    }
    replaceIfChanged(m_curve, xy);
    replaceIfChanged(m_points, xy);
    const double x = std::log2(std::max(currentContext, 1.0));
    replaceIfChanged(m_marker, QList<QPointF> { { x, currentSequences } });
    setNiceRange(m_yAxis, top * 1.1);
    const double yTop = m_yAxis->max();
    replaceIfChanged(m_contextLine, QList<QPointF> { { x, 0 }, { x, yTop } });
    m_concurrency = concurrency;
    replaceIfChanged(m_concurrencyLine,
        QList<QPointF> { { double(kServingSweepMinLog2), concurrency },
            { double(kServingSweepMaxLog2), concurrency } });
    m_markerLabel->setText(tr("%L1 tokens: %L2 sequences")
                               .arg(qlonglong(currentContext))
                               .arg(qlonglong(currentSequences)));
    m_concurrencyLabel->setText(tr("concurrency %1").arg(concurrency));
    placeOverlays();
}

void ServingCurveChart::placeOverlays()
{
    if (m_marker->count() == 0)
        return;
    const QRectF plot = chart()->plotArea();
    const QPointF at = chart()->mapToPosition(m_marker->at(0), m_marker);
    const QRectF box = m_markerLabel->boundingRect();
    double left = at.x() + 10;
    if (left + box.width() > plot.right())
        left = at.x() - 10 - box.width();
    m_markerLabel->setPos(left, std::max(plot.top(), at.y() - box.height() - 8));
    const QPointF c
        = chart()->mapToPosition(QPointF(kServingSweepMaxLog2, m_concurrency), m_marker);
    const QRectF cbox = m_concurrencyLabel->boundingRect();
    m_concurrencyLabel->setPos(plot.right() - cbox.width() - 4, c.y() - cbox.height() - 1);
}

} // namespace envelope::ui
