#include "charts/sweepchart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QComboBox>
#include <QFontMetricsF>
#include <QGraphicsEllipseItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "charts/chartlegend.h"
#include "charts/chartstyle.h"
#include "charts/memoryview.h"
#include "charts/tenantpalette.h"
#include "document/trainingresults.h"

namespace envelope::ui {

SweepChart::SweepChart(QWidget* parent)
    : ChartWidget(parent)
    , m_axisCombo(new QComboBox(this))
    , m_total(new QLineSeries)
    , m_hbmLine(new QLineSeries)
    , m_usableLine(new QLineSeries)
    , m_positionsLine(new QLineSeries)
    , m_xAxis(new QCategoryAxis)
    , m_yAxis(new QValueAxis)
{
    m_axisCombo->addItem(tr("Context length"));
    m_axisCombo->addItem(tr("Micro-batch"));
    auto* axisLabel = new QLabel(tr("S&weep:"), this);
    axisLabel->setBuddy(m_axisCombo);
    // The "largest that fits" figure heads the chart beside the toggle, so the chart's own
    // title stays short enough never to be elided.
    m_largestLabel = new QLabel(this);
    m_largestLabel->setWordWrap(true);
    QFont largestFont = m_largestLabel->font();
    largestFont.setBold(true);
    m_largestLabel->setFont(largestFont);
    header()->addWidget(m_largestLabel, 1);
    header()->addWidget(axisLabel);
    header()->addWidget(m_axisCombo);
    connect(m_axisCombo, &QComboBox::activated, this,
        [this](int index) { setAxis(index == 0 ? Axis::Context : Axis::MicroBatch); });

    QChart* chart = this->chart();
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    chart->addAxis(m_yAxis, Qt::AlignLeft);
    for (QXYSeries* series :
        std::initializer_list<QXYSeries*> { m_hbmLine, m_usableLine, m_positionsLine, m_total }) {
        chart->addSeries(series);
        series->attachAxis(m_xAxis);
        series->attachAxis(m_yAxis);
    }
    m_total->setName(tr("Total per GPU"));
    m_total->setPen(QPen(tenantColor(Tenant::Weights), 2.5));
    m_total->setPointsVisible(true);
    m_hbmLine->setPen(QPen(capacityLineColor(), 2.0, Qt::DashLine));
    m_usableLine->setPen(QPen(usableLineColor(), 1.6, Qt::DotLine));
    m_positionsLine->setPen(QPen(overflowColor(), 1.4, Qt::DashDotLine));
    constexpr double kMarker = 13;
    m_current = new QGraphicsEllipseItem(-kMarker / 2, -kMarker / 2, kMarker, kMarker, chart);
    m_current->setBrush(tenantColor(Tenant::Gradients));
    m_current->setPen(QPen(Qt::black, 1.0));
    m_current->setZValue(50); // above the series, below the chart's tooltips
    m_current->setToolTip(tr("This plan"));
    m_xAxis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_yAxis->setMinorTickCount(1);

    finishChart(true);
}

QString SweepChart::shortCount(double value)
{
    if (value >= 1 << 20 && std::fmod(value, 1 << 20) == 0)
        return QStringLiteral("%1M").arg(value / (1 << 20));
    if (value >= 1024 && std::fmod(value, 1024) == 0)
        return QStringLiteral("%1K").arg(value / 1024);
    return QString::number(value);
}

void SweepChart::setAxis(Axis axis)
{
    if (axis == m_axis)
        return;
    m_axis = axis;
    m_axisCombo->setCurrentIndex(axis == Axis::Context ? 0 : 1);
    emit axisChanged(axis);
}

void SweepChart::setResults(const TrainingResults& results, int seqLen, int microBatch,
    ByteUnits units, double maxPositions)
{
    const bool context = m_axis == Axis::Context;
    const auto& points = context ? results.seqLenSweep : results.microBatchSweep;
    const double largest = context ? results.largestSeqLen : results.largestMicroBatch;
    const double hbmBytes = results.estimate.training.gpuMemoryBytes;
    const double hbm = toDisplayUnits(hbmBytes, units);

    QList<QPointF> line;
    line.reserve(points.size());
    double top = hbm;
    for (const SweepPoint& p : points) {
        const double y = toDisplayUnits(p.totalBytes, units);
        line.append({ std::log2(p.x), y });
        top = std::max(top, y);
    }
    replaceIfChanged(m_total, line);
    const double own = toDisplayUnits(results.estimate.training.perGpu.total(), units);
    const double ownX = std::log2(std::max(1, context ? seqLen : microBatch));
    m_currentValue = { ownX, own };
    top = std::max(top, own);

    const double first = line.isEmpty() ? 0 : line.front().x();
    const double last = line.isEmpty() ? 1 : line.back().x();
    m_first = first;
    m_last = last;
    m_ownX = ownX;
    const auto [left, right] = xRange();
    // The lines run past both ends (the plot clips them): the range widens with the plot.
    replaceIfChanged(m_hbmLine, QList<QPointF> { { left - 4, hbm }, { right + 4, hbm } });
    // The plan's own line between "fits" and "tight" (training.usable_fraction), as the memory
    // chart beside it draws it.
    const double usableBytes = results.estimate.training.usableBytes;
    const double usable = toDisplayUnits(usableBytes, units);
    replaceIfChanged(
        m_usableLine, QList<QPointF> { { left - 4, usable }, { right + 4, usable } });
    m_hbmLine->setName(tr("HBM %1").arg(bytesText(hbmBytes, units)));
    m_usableLine->setName(tr("%1% usable")
            .arg(hbmBytes > 0 ? usableBytes / hbmBytes * 100 : 0.0, 0, 'f', 0));

    updateXLabels();
    if (m_xAxis->min() != left || m_xAxis->max() != right)
        m_xAxis->setRange(left, right);
    // Short: the 256, 1K, 4K labels already say the scale is logarithmic.
    const QString xTitle = context ? tr("context, tokens") : tr("micro-batch, sequences");
    if (m_xAxis->titleText() != xTitle)
        m_xAxis->setTitleText(xTitle);

    // Above a few times HBM the curve only says "does not fit"; keep HBM near the middle.
    const double yMax = std::min(top, std::max(hbm * 2.0, own * 1.15)) * 1.08;
    setNiceRange(m_yAxis, yMax);
    m_yAxis->setTitleText(
        tr("per-GPU memory (%1)").arg(QString::fromLatin1(unitLabel(units).data())));

    // The model's positions on the context axis (issue 23: the curve ran past them unmarked):
    // contexts beyond it need RoPE scaling the model may not have been trained for.
    const bool marked = context && maxPositions > 0 && !line.isEmpty()
        && std::log2(maxPositions) <= right && std::log2(maxPositions) >= left;
    if (marked) {
        const double x = std::log2(maxPositions);
        replaceIfChanged(m_positionsLine, QList<QPointF> { { x, 0 }, { x, m_yAxis->max() * 2 } });
        m_positionsLine->setName(tr("model's %1 positions").arg(shortCount(maxPositions)));
    }
    m_positionsLine->setVisible(marked);

    placeCurrentMarker();

    const QString title = context ? tr("Memory vs context") : tr("Memory vs micro-batch");
    if (chart()->title() != title)
        chart()->setTitle(title);
    const QString unit = context ? tr("tokens") : tr("sequences");
    m_largestLabel->setText(largest > 0
            ? tr("Largest that fits: %1 %2").arg(QLocale().toString(qlonglong(largest)), unit)
            : tr("None fits"));
    QPalette largestPalette = m_largestLabel->palette();
    largestPalette.setColor(QPalette::WindowText, largest > 0 ? fitsColor() : overflowColor());
    m_largestLabel->setPalette(largestPalette);

    legend()->setEntries({
        { m_total->name(), tenantColor(Tenant::Weights), ChartLegend::Marker::Line },
        { m_current->toolTip(), tenantColor(Tenant::Gradients), ChartLegend::Marker::Dot },
        { tr("HBM"), capacityLineColor(), ChartLegend::Marker::DashLine },
        { m_usableLine->name(), usableLineColor(), ChartLegend::Marker::DotLine },
    });
    if (marked)
        legend()->setEntries(legend()->entries()
            + QList<ChartLegend::Entry> { { m_positionsLine->name(), overflowColor(), ChartLegend::Marker::DashLine } });
}

std::pair<double, double> SweepChart::xRange() const
{
    // Room beyond the first and last power of two for half a label, so that the first label,
    // centred on its value, clears the y axis' "0" in the corner (at least 0.3 of a power).
    const double span = std::max(m_last - m_first, 1.0);
    const double width = chart()->plotArea().width();
    const double half
        = 0.5 * QFontMetricsF(m_xAxis->labelsFont()).horizontalAdvance(QStringLiteral("256K")) + 4;
    const double pad = width > 0 ? std::max(0.3, half * (span + 0.6) / width) : 0.3;
    return { std::min(m_first, m_ownX) - pad, std::max(m_last, m_ownX) + pad };
}

void SweepChart::updateXLabels()
{
    // Every power of two when the plot has room for its labels, else every 2nd, 4th, ...: the
    // axis never elides a label ("2..."). Rebuilt only on a change: each rebuild re-lays out.
    const QRectF plot = chart()->plotArea();
    m_labelledWidth = plot.width();
    const double span = std::max(m_last - m_first, 1.0);
    const QFontMetricsF metrics(m_xAxis->labelsFont());
    // Qt elides a label wider than about half the gap to its neighbours: keep a margin.
    const double labelWidth = 1.6 * metrics.horizontalAdvance(QStringLiteral("256K")) + 8;
    const double perPower = plot.width() > 0 ? plot.width() / (span + 0.6) : 0;
    int step = 1;
    while (step < 20 && perPower * step < labelWidth)
        ++step;
    QStringList wanted;
    QList<double> positions;
    for (int e = int(std::ceil(m_first)); e <= int(std::floor(m_last)); e += step) {
        wanted.push_back(shortCount(std::ldexp(1.0, e)));
        positions.push_back(e);
    }
    if (m_xAxis->categoriesLabels() == wanted)
        return;
    for (const QString& label : m_xAxis->categoriesLabels())
        m_xAxis->remove(label);
    for (qsizetype i = 0; i < wanted.size(); ++i)
        m_xAxis->append(wanted[i], positions[i]);
}

void SweepChart::placeCurrentMarker()
{
    const QPointF at = chart()->mapToPosition(m_currentValue, m_total);
    if (m_current->pos() != at)
        m_current->setPos(at);
}

void SweepChart::placeOverlays()
{
    // The label spacing depends on the plot's width: re-pick it when the width changes.
    if (std::abs(chart()->plotArea().width() - m_labelledWidth) > 0.5) {
        updateXLabels();
        const auto [left, right] = xRange();
        if (m_xAxis->min() != left || m_xAxis->max() != right)
            m_xAxis->setRange(left, right);
    }
    placeCurrentMarker();
}

} // namespace envelope::ui
