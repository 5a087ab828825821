#include "charts/memorybarchart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "charts/chartlegend.h"
#include "charts/chartstyle.h"
#include "charts/memoryview.h"
#include "document/trainingresults.h"

namespace envelope::ui {
namespace {
QString bytesText(double bytes, ByteUnits units)
{
    return QString::fromStdString(formatBytes(bytes, units));
}
} // namespace

MemoryBarChart::MemoryBarChart(QWidget* parent)
    : QWidget(parent)
    , m_compareCombo(new QComboBox(this))
    , m_chart(new QChart)
    , m_series(new QStackedBarSeries)
    , m_xAxis(new QBarCategoryAxis)
    , m_yAxis(new QValueAxis)
    , m_hbmLine(new QLineSeries)
    , m_usableLine(new QLineSeries)
{
    m_compareCombo->addItem(tr("ZeRO stages"));
    m_compareCombo->addItem(tr("Recompute modes"));
    auto* compareLabel = new QLabel(tr("Compare &bars with:"), this);
    compareLabel->setBuddy(m_compareCombo);
    auto* header = new QHBoxLayout;
    header->addStretch(1);
    header->addWidget(compareLabel);
    header->addWidget(m_compareCombo);
    connect(m_compareCombo, &QComboBox::activated, this, [this](int index) {
        setCompare(index == 0 ? Compare::ZeroStages : Compare::RecomputeModes);
    });

    for (std::size_t i = 0; i < kTenants.size(); ++i) {
        m_sets[i] = new QBarSet(tenantName(kTenants[i]));
        m_sets[i]->setColor(tenantColor(kTenants[i]));
        m_sets[i]->setBorderColor(tenantColor(kTenants[i]).darker(125));
        m_series->append(m_sets[i]);
    }
    m_series->setBarWidth(0.62);
    connect(m_series, &QStackedBarSeries::hovered, this, &MemoryBarChart::onHovered);

    m_chart->setTitle(tr("Memory per GPU"));
    m_chart->addSeries(m_series);
    m_chart->addAxis(m_xAxis, Qt::AlignBottom);
    m_chart->addAxis(m_yAxis, Qt::AlignLeft);
    m_series->attachAxis(m_xAxis);
    m_series->attachAxis(m_yAxis);
    for (QLineSeries* line : { m_hbmLine, m_usableLine }) {
        m_chart->addSeries(line);
        line->attachAxis(m_xAxis);
        line->attachAxis(m_yAxis);
    }
    QPen hbmPen(capacityLineColor(), 2.0, Qt::DashLine);
    m_hbmLine->setPen(hbmPen);
    QPen usablePen(usableLineColor(), 1.6, Qt::DotLine);
    m_usableLine->setPen(usablePen);
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_yAxis->setMinorTickCount(1);

    m_hbmBox = new QGraphicsRectItem(m_chart);
    m_usableBox = new QGraphicsRectItem(m_chart);
    for (QGraphicsRectItem* box : { m_hbmBox, m_usableBox }) {
        box->setPen(Qt::NoPen);
        box->setZValue(100.5);
    }
    m_hbmLabel = new QGraphicsSimpleTextItem(m_chart);
    m_usableLabel = new QGraphicsSimpleTextItem(m_chart);
    m_hbmLabel->setBrush(capacityLineColor());
    m_usableLabel->setBrush(usableLineColor().darker(115));
    m_highlight = new QGraphicsRectItem(m_chart);
    m_highlight->setZValue(100);
    m_highlight->setBrush(Qt::NoBrush);
    for (QGraphicsItem* item : std::initializer_list<QGraphicsItem*> { m_hbmLabel, m_usableLabel })
        item->setZValue(101);

    styleChart(m_chart, palette());
    // The wrapping legend under the plot replaces Qt's one-row legend, which elides labels.
    m_chart->legend()->setVisible(false);
    m_legend = new ChartLegend(this);
    m_legend->setBackgroundRole(QPalette::Base);
    m_legend->setAutoFillBackground(true);
    m_view = new QChartView(m_chart, this);
    // Axis-aligned bars and horizontal lines need no antialiasing; skipping it halves the paint.
    m_view->setRenderHint(QPainter::Antialiasing, false);
    m_view->setFrameShape(QFrame::NoFrame);
    connect(m_chart, &QChart::plotAreaChanged, this, [this] { placeOverlays(); });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(header);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_legend);
}

QBarSet* MemoryBarChart::barSet(Tenant tenant) const
{
    return m_sets[std::size_t(
        std::find(kTenants.begin(), kTenants.end(), tenant) - kTenants.begin())];
}

int MemoryBarChart::columnCount() const
{
    return int(m_columnBytes.size());
}

QString MemoryBarChart::columnLabel(int column) const
{
    return m_plainLabels.value(column);
}

void MemoryBarChart::setCompare(Compare compare)
{
    if (compare == m_compare)
        return;
    m_compare = compare;
    m_compareCombo->setCurrentIndex(compare == Compare::ZeroStages ? 0 : 1);
    emit compareChanged(compare);
}

void MemoryBarChart::setResults(const TrainingResults& results, ByteUnits units)
{
    m_units = units;
    const auto& variants
        = m_compare == Compare::ZeroStages ? results.zeroVariants : results.recomputeVariants;
    const TrainingMemory& own = results.estimate.training;

    m_columnBytes.clear();
    m_plainLabels.clear();
    m_highlighted = -1;
    auto addColumn = [&](const MemoryBreakdown& breakdown, const QString& label) {
        std::array<double, kTenants.size()> bytes {};
        for (std::size_t i = 0; i < kTenants.size(); ++i)
            bytes[i] = tenantBytes(breakdown, kTenants[i]);
        m_columnBytes.push_back(bytes);
        m_plainLabels.push_back(label);
    };
    addColumn(own.perGpu, tr("This plan"));
    for (const Variant& v : variants) {
        if (v.current)
            m_highlighted = columnCount();
        // "ZeRO-3 / FSDP" -> "ZeRO-3": category labels must fit under a bar.
        addColumn(
            v.memory.perGpu, QString::fromStdString(v.label).section(QStringLiteral(" / "), 0, 0));
    }

    m_hbm = toDisplayUnits(own.gpuMemoryBytes, units);
    m_totals.assign(m_columnBytes.size(), 0.0);
    const int columns = columnCount();
    for (std::size_t t = 0; t < kTenants.size(); ++t) {
        QList<qreal> values;
        values.reserve(columns);
        for (int c = 0; c < columns; ++c) {
            double v = toDisplayUnits(m_columnBytes[std::size_t(c)][t], units);
            if (!std::isfinite(v))
                v = 0;
            values.append(v);
            m_totals[std::size_t(c)] += v;
        }
        if (m_sets[t]->count() == columns) {
            for (int c = 0; c < columns; ++c)
                m_sets[t]->replace(c, values[c]);
        } else {
            m_sets[t]->remove(0, m_sets[t]->count());
            m_sets[t]->append(values);
        }
    }

    m_totalTexts.clear();
    for (int c = 0; c < columns; ++c) {
        const double bytes
            = c == 0 ? own.perGpu.total() : variants[std::size_t(c - 1)].memory.perGpu.total();
        m_totalTexts.push_back(bytesText(bytes, units));
    }
    // The category labels are set in placeOverlays(), which knows the plot's width.

    // At least 1 unit: an empty plan (all zeros) still gets a valid axis.
    const double top
        = std::max({ *std::max_element(m_totals.begin(), m_totals.end()), m_hbm, 1.0 });
    setNiceRange(m_yAxis, top * 1.12);
    m_yAxis->setTitleText(
        tr("per-GPU memory (%1)").arg(QString::fromLatin1(unitLabel(units).data())));

    const double left = -0.5;
    const double right = columns - 0.5;
    // The core's line between "fits" and "tight" (training.usable_fraction).
    m_usableFraction
        = own.gpuMemoryBytes > 0 ? own.usableBytes / own.gpuMemoryBytes : kUsableFraction;
    const double usable = m_hbm * m_usableFraction;
    replaceIfChanged(m_hbmLine, QList<QPointF> { { left, m_hbm }, { right, m_hbm } });
    replaceIfChanged(m_usableLine, QList<QPointF> { { left, usable }, { right, usable } });
    m_hbmLine->setName(tr("HBM %1").arg(bytesText(own.gpuMemoryBytes, units)));
    m_usableLine->setName(tr("%1% usable").arg(m_usableFraction * 100, 0, 'f', 0));
    QList<ChartLegend::Entry> legend;
    for (Tenant tenant : kTenants)
        legend.push_back({ tenantName(tenant), tenantColor(tenant), ChartLegend::Marker::Box });
    legend.push_back({ tr("HBM"), capacityLineColor(), ChartLegend::Marker::DashLine });
    legend.push_back({ m_usableLine->name(), usableLineColor(), ChartLegend::Marker::DotLine });
    m_legend->setEntries(legend);
    m_hbmLabel->setText(tr("HBM %1").arg(bytesText(own.gpuMemoryBytes, units)));
    m_usableLabel->setText(tr("%1% usable: %2")
                               .arg(m_usableFraction * 100, 0, 'f', 0)
                               .arg(bytesText(own.usableBytes, units)));
    placeOverlays();
}

void MemoryBarChart::placeOverlays()
{
    if (m_columnBytes.empty())
        return;
    QRectF plot = m_chart->plotArea();
    // Category labels Qt would elide ("ZeR...") break onto two lines instead ("ZeRO-" / "3").
    // The margins differ so that the small change of plot size a break brings cannot flip it.
    const QFontMetricsF metrics(m_xAxis->labelsFont());
    double widest = 0;
    for (const QString& label : m_plainLabels)
        widest = std::max(widest, metrics.horizontalAdvance(label));
    const double category = plot.width() / std::max(1, columnCount());
    if (!m_twoLineLabels && widest + 8 > category)
        m_twoLineLabels = true;
    else if (m_twoLineLabels && widest + 20 < category)
        m_twoLineLabels = false;
    QStringList labels;
    for (const QString& label : m_plainLabels) {
        QString text = label.toHtmlEscaped();
        if (m_twoLineLabels) {
            const qsizetype space = text.indexOf(QLatin1Char(' '));
            const qsizetype dash = text.indexOf(QLatin1Char('-'));
            if (space > 0)
                text.replace(space, 1, QStringLiteral("<br>"));
            else if (dash > 0)
                text.insert(dash + 1, QStringLiteral("<br>"));
        }
        labels.push_back(text);
    }
    if (m_xAxis->categories() != labels) {
        m_xAxis->setCategories(labels);
        plot = m_chart->plotArea(); // the labels' height may have moved the plot
    }
    const QPointF hbmAt = m_chart->mapToPosition(QPointF(0, m_hbm), m_hbmLine);
    const QPointF usableAt
        = m_chart->mapToPosition(QPointF(0, m_hbm * m_usableFraction), m_hbmLine);
    const qreal right = plot.right() - 4;
    m_hbmLabel->setPos(right - m_hbmLabel->boundingRect().width(),
        hbmAt.y() - m_hbmLabel->boundingRect().height() - 1);
    m_usableLabel->setPos(right - m_usableLabel->boundingRect().width(), usableAt.y() + 1);
    QColor boxColor = palette().color(QPalette::Base);
    boxColor.setAlphaF(0.85f);
    for (auto [box, label] :
        { std::pair { m_hbmBox, m_hbmLabel }, std::pair { m_usableBox, m_usableLabel } }) {
        box->setBrush(boxColor);
        box->setRect(label->mapRectToParent(label->boundingRect()).adjusted(-3, 0, 3, 0));
    }

    // Each column's total above its bar, so the figure reads without hovering.
    while (m_totalLabels.size() < m_totalTexts.size()) {
        auto* item = new QGraphicsSimpleTextItem(m_chart);
        QFont font = item->font();
        font.setBold(true);
        item->setFont(font);
        item->setZValue(101);
        m_totalLabels.push_back(item);
    }
    for (qsizetype c = 0; c < m_totalLabels.size(); ++c) {
        QGraphicsSimpleTextItem* item = m_totalLabels[c];
        item->setVisible(c < m_totalTexts.size());
        if (c >= m_totalTexts.size())
            continue;
        item->setBrush(palette().color(QPalette::Text));
        item->setText(m_totalTexts[c]);
        const QPointF top
            = m_chart->mapToPosition(QPointF(double(c), m_totals[std::size_t(c)]), m_hbmLine);
        const QRectF box = item->boundingRect();
        item->setPos(top.x() - box.width() / 2, std::max(plot.top(), top.y() - box.height() - 6));
    }

    if (m_highlighted < 0) {
        m_highlight->setVisible(false);
        return;
    }
    const double half = 0.5 * 0.62 + 0.06;
    const double total = m_totals[std::size_t(m_highlighted)];
    const QPointF topLeft = m_chart->mapToPosition(QPointF(m_highlighted - half, total), m_hbmLine);
    const QPointF bottomRight = m_chart->mapToPosition(QPointF(m_highlighted + half, 0), m_hbmLine);
    QRectF rect(topLeft, bottomRight);
    rect.adjust(0, -4, 0, 0);
    m_highlight->setRect(rect.intersected(plot.adjusted(0, -2, 0, 0)));
    m_highlight->setPen(QPen(palette().color(QPalette::Text), 2.0));
    m_highlight->setVisible(true);
}

void MemoryBarChart::onHovered(bool status, int index, QBarSet* set)
{
    if (!status || index < 0 || index >= columnCount()) {
        QToolTip::hideText();
        return;
    }
    std::size_t t = 0;
    while (t < kTenants.size() && m_sets[t] != set)
        ++t;
    if (t == kTenants.size())
        return;
    const Tenant tenant = kTenants[t];
    QString text = QStringLiteral("<b>%1</b> — %2<br>%3")
                       .arg(tenantName(tenant), m_plainLabels[index],
                           bytesText(m_columnBytes[std::size_t(index)][t], m_units));
    if (index == 0 && m_formulaProvider) {
        const QString formula = m_formulaProvider(tenant);
        if (!formula.isEmpty())
            text += QStringLiteral("<hr>") + formula;
    }
    QToolTip::showText(QCursor::pos(), text, m_view);
}

void MemoryBarChart::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        styleChart(m_chart, palette());
        placeOverlays();
    }
    QWidget::changeEvent(event);
}

} // namespace envelope::ui
