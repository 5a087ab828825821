#include "charts/servingcurvechart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

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
    : QWidget(parent)
    , m_chart(new QChart)
    , m_curve(new QLineSeries)
    , m_points(new QScatterSeries)
    , m_marker(new QScatterSeries)
    , m_contextLine(new QLineSeries)
    , m_concurrencyLine(new QLineSeries)
    , m_xAxis(new QCategoryAxis)
    , m_yAxis(new QValueAxis)
{
    m_chart->setTitle(tr("Max concurrent sequences vs context"));
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
        m_chart->addSeries(s);
    }
    m_chart->addAxis(m_xAxis, Qt::AlignBottom);
    m_chart->addAxis(m_yAxis, Qt::AlignLeft);
    for (QAbstractSeries* s : m_chart->series()) {
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    styleChart(m_chart, palette());
    const auto markers = m_chart->legend()->markers(m_points);
    for (auto* m : markers)
        m->setVisible(false);
    for (auto* m : m_chart->legend()->markers(m_contextLine))
        m->setVisible(false);

    m_markerLabel = new QGraphicsSimpleTextItem(m_chart);
    m_markerLabel->setBrush(capacityLineColor().darker(110));
    m_markerLabel->setZValue(101);
    QFont bold = m_markerLabel->font();
    bold.setBold(true);
    m_markerLabel->setFont(bold);
    m_concurrencyLabel = new QGraphicsSimpleTextItem(m_chart);
    m_concurrencyLabel->setBrush(tenantColor(Tenant::Weights));
    m_concurrencyLabel->setZValue(101);

    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setFrameShape(QFrame::NoFrame);
    connect(m_chart, &QChart::plotAreaChanged, this, [this] { placeOverlays(); });
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view, 1);
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
    m_curve->replace(xy);
    m_points->replace(xy);
    const double x = std::log2(std::max(currentContext, 1.0));
    m_marker->replace(QList<QPointF> { { x, currentSequences } });
    m_yAxis->setRange(0, top * 1.1);
    m_yAxis->applyNiceNumbers();
    const double yTop = m_yAxis->max();
    m_contextLine->replace(QList<QPointF> { { x, 0 }, { x, yTop } });
    m_concurrency = concurrency;
    m_concurrencyLine->replace(QList<QPointF> { { double(kServingSweepMinLog2), concurrency },
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
    const QRectF plot = m_chart->plotArea();
    const QPointF at = m_chart->mapToPosition(m_marker->at(0), m_marker);
    const QRectF box = m_markerLabel->boundingRect();
    double left = at.x() + 10;
    if (left + box.width() > plot.right())
        left = at.x() - 10 - box.width();
    m_markerLabel->setPos(left, std::max(plot.top(), at.y() - box.height() - 8));
    const QPointF c
        = m_chart->mapToPosition(QPointF(kServingSweepMaxLog2, m_concurrency), m_marker);
    const QRectF cbox = m_concurrencyLabel->boundingRect();
    m_concurrencyLabel->setPos(plot.right() - cbox.width() - 4, c.y() - cbox.height() - 1);
}

void ServingCurveChart::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        styleChart(m_chart, palette());
        placeOverlays();
    }
    QWidget::changeEvent(event);
}

} // namespace envelope::ui
