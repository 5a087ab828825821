#include "charts/servingcurvechart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QFontMetricsF>
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
    , m_yAxis(new QLogValueAxis)
{
    QChart* chart = this->chart();
    chart->setTitle(tr("Max sequences vs context"));
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
    // Every other power of two is labelled (every fourth when the plot is narrow: placeOverlays).
    setContextLabelStep(2);
    m_xAxis->setRange(kServingSweepMinLog2, kServingSweepMaxLog2);
    m_xAxis->setTitleText(tr("context (tokens, log2 scale)"));
    // Log y: the curve spans thousands of sequences at 256 tokens and a handful at 1M, and the
    // plan's point must read wherever it lies on it.
    m_yAxis->setBase(10);
    m_yAxis->setLabelFormat(QStringLiteral("%g"));
    m_yAxis->setMinorTickCount(-1); // 2..9 between decades
    m_yAxis->setTitleText(tr("sequences (log scale)"));

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

void ServingCurveChart::setContextLabelStep(int step)
{
    m_labelStep = step;
    for (const QString& label : m_xAxis->categoriesLabels())
        m_xAxis->remove(label);
    for (int k = kServingSweepMinLog2; k <= kServingSweepMaxLog2; k += step)
        m_xAxis->append(contextLabel(k), k);
}

void ServingCurveChart::setPoints(const std::vector<ServingSweepPoint>& points,
    double currentContext, double currentSequences, double concurrency)
{
    auto finite = [](double v) { return std::isfinite(v) ? v : 0.0; };
    // Zero sequences (nothing fits) has no place on a log axis: drawn on its floor, half a
    // sequence, below the "1" line; the label says 0.
    auto onAxis = [](double v) { return std::max(v, kLogFloor); };
    currentSequences = finite(currentSequences);
    m_concurrency = onAxis(concurrency); // before any relayout: placeOverlays() maps it
    QList<QPointF> xy;
    double top = std::max({ currentSequences, concurrency, 1.0 });
    for (const ServingSweepPoint& p : points) {
        xy.append(QPointF(std::log2(p.context), onAxis(finite(p.maxSequences))));
        top = std::max(top, finite(p.maxSequences));
    }
    replaceIfChanged(m_curve, xy);
    replaceIfChanged(m_points, xy);
    const double x = std::log2(std::max(currentContext, 1.0));
    replaceIfChanged(m_marker, QList<QPointF> { { x, onAxis(currentSequences) } });
    // Up to the next decade with room for the labels above the highest point.
    const double yTop = std::pow(10.0, std::ceil(std::log10(top * 1.3)));
    if (m_yAxis->min() != kLogFloor || m_yAxis->max() != yTop)
        m_yAxis->setRange(kLogFloor, yTop);
    replaceIfChanged(m_contextLine, QList<QPointF> { { x, kLogFloor }, { x, yTop } });
    replaceIfChanged(m_concurrencyLine,
        QList<QPointF> { { double(kServingSweepMinLog2) - 1, m_concurrency },
            { double(kServingSweepMaxLog2) + 1, m_concurrency } });
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
    // The first and last context labels are centred on the plot's edges: widen the x range by
    // half a label so that "256" clears the y axis' labels and "1M" the chart's edge.
    const double perPower = plot.width() / (kServingSweepMaxLog2 - kServingSweepMinLog2 + 1.0);
    const double pad = perPower > 0
        ? std::max(0.2,
            (0.5 * QFontMetricsF(m_xAxis->labelsFont()).horizontalAdvance(QStringLiteral("256K"))
                + 4)
                / perPower)
        : 0.5;
    // A label needs "256K" and a gap between it and the next: every other power of two where
    // that fits, else every fourth (a narrow panel).
    const double labelWidth = QFontMetricsF(m_xAxis->labelsFont()).horizontalAdvance(QStringLiteral("256K")) + 10;
    const int step = 2 * perPower >= labelWidth * (m_labelStep == 2 ? 1.0 : 1.15) ? 2 : 4;
    if (step != m_labelStep)
        setContextLabelStep(step);
    const double left = kServingSweepMinLog2 - pad;
    const double right = kServingSweepMaxLog2 + pad;
    if (std::abs(m_xAxis->min() - left) > 0.02 || std::abs(m_xAxis->max() - right) > 0.02)
        m_xAxis->setRange(left, right);

    // The concurrency line's label at its right end, above the line (below it when the line is
    // near the top).
    const QPointF c = chart()->mapToPosition(QPointF(right, m_concurrency), m_marker);
    const QRectF cbox = m_concurrencyLabel->boundingRect();
    double cTop = c.y() - cbox.height() - 1;
    if (cTop < plot.top())
        cTop = c.y() + 2;
    m_concurrencyLabel->setPos(plot.right() - cbox.width() - 4, cTop);
    const QRectF taken = m_concurrencyLabel->mapRectToParent(cbox);

    // The plan's label beside its point: the first corner (above right, above left, below right,
    // below left) that stays in the plot and clears the concurrency label.
    const QPointF at = chart()->mapToPosition(m_marker->at(0), m_marker);
    const QRectF box = m_markerLabel->boundingRect();
    std::optional<QPointF> chosen = freeCornerBeside(at, box.size(), plot, taken, 8);
    if (!chosen) {
        // No corner is free: the label goes to the plot's top, clear of the concurrency label.
        chosen
            = QPointF(std::clamp(at.x() - box.width() / 2, plot.left(), plot.right() - box.width()),
                plot.top() + 2);
        if (QRectF(*chosen, box.size()).intersects(taken))
            chosen->setY(taken.bottom() + 2);
    }
    m_markerLabel->setPos(*chosen);
}

} // namespace envelope::ui
