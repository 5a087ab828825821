#include "charts/memorybarchart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "charts/chartlegend.h"
#include "charts/chartstyle.h"
#include "charts/memoryview.h"

namespace envelope::ui {
namespace {

double finite(double v)
{
    return std::isfinite(v) ? v : 0.0; // an empty plan's 0/0
}
} // namespace

MemoryBarChart::MemoryBarChart(
    const QString& title, std::vector<Tenant> tenants, double barWidth, QWidget* parent)
    : ChartWidget(parent)
    , m_tenants(std::move(tenants))
    , m_barWidth(barWidth)
    , m_series(new QStackedBarSeries)
    , m_xAxis(new QBarCategoryAxis)
    , m_yAxis(new QValueAxis)
    , m_hbmLine(new QLineSeries)
    , m_limitLine(new QLineSeries)
{
    for (Tenant t : m_tenants) {
        auto* set = new QBarSet(tenantName(t));
        set->setColor(tenantColor(t));
        set->setBorderColor(tenantColor(t).darker(125));
        m_series->append(set);
        m_sets.push_back(set);
    }
    m_series->setBarWidth(m_barWidth);
    connect(m_series, &QStackedBarSeries::hovered, this, &MemoryBarChart::onHovered);

    QChart* chart = this->chart();
    chart->setTitle(title);
    chart->addSeries(m_series);
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    chart->addAxis(m_yAxis, Qt::AlignLeft);
    m_series->attachAxis(m_xAxis);
    m_series->attachAxis(m_yAxis);
    for (QLineSeries* line : { m_hbmLine, m_limitLine }) {
        chart->addSeries(line);
        line->attachAxis(m_xAxis);
        line->attachAxis(m_yAxis);
    }
    m_hbmLine->setPen(QPen(capacityLineColor(), 2.0, Qt::DashLine));
    m_limitLine->setPen(QPen(usableLineColor(), 1.6, Qt::DotLine));
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_yAxis->setMinorTickCount(1);

    m_hbmBox = new QGraphicsRectItem(chart);
    m_limitBox = new QGraphicsRectItem(chart);
    for (QGraphicsRectItem* box : { m_hbmBox, m_limitBox }) {
        box->setPen(Qt::NoPen);
        box->setZValue(100.5);
    }
    m_hbmLabel = new QGraphicsSimpleTextItem(chart);
    m_limitLabel = new QGraphicsSimpleTextItem(chart);
    m_hbmLabel->setBrush(capacityLineColor());
    m_limitLabel->setBrush(usableLineColor().darker(115));
    m_hbmLabel->setZValue(101);
    m_limitLabel->setZValue(101);
    m_highlight = new QGraphicsRectItem(chart);
    m_highlight->setZValue(100);
    m_highlight->setBrush(Qt::NoBrush);
    m_highlight->setVisible(false);

    finishChart(false);
}

QBarSet* MemoryBarChart::barSet(Tenant tenant) const
{
    const auto it = std::find(m_tenants.begin(), m_tenants.end(), tenant);
    return it == m_tenants.end() ? nullptr : m_sets[std::size_t(it - m_tenants.begin())];
}

QString MemoryBarChart::columnLabel(int column) const
{
    return column >= 0 && column < columnCount() ? m_columns[std::size_t(column)].label : QString();
}

QString MemoryBarChart::totalText(int column) const
{
    return m_totalTexts.value(column);
}

void MemoryBarChart::setColumns(const std::vector<MemoryBarColumn>& columns, double hbmBytes,
    std::optional<MemoryLimitLine> limit, ByteUnits units, int highlighted)
{
    m_columns = columns;
    m_units = units;
    m_highlighted = highlighted >= 0 && highlighted < columnCount() ? highlighted : -1;
    const int n = columnCount();
    m_totals.assign(std::size_t(n), 0.0);
    QList<ChartLegend::Entry> legend;
    for (std::size_t t = 0; t < m_tenants.size(); ++t) {
        QList<qreal> values;
        values.reserve(n);
        bool any = false;
        for (int c = 0; c < n; ++c) {
            const double v = finite(
                toDisplayUnits(tenantBytes(columns[std::size_t(c)].bytes, m_tenants[t]), units));
            values.append(v);
            m_totals[std::size_t(c)] += v;
            any = any || v > 0;
        }
        QBarSet* set = m_sets[t];
        if (set->count() == n) {
            for (int c = 0; c < n; ++c)
                set->replace(c, values[c]);
        } else {
            set->remove(0, set->count());
            set->append(values);
        }
        // Only the tenants present get a legend entry (serving has no optimizer state).
        if (any)
            legend.push_back(
                { tenantName(m_tenants[t]), tenantColor(m_tenants[t]), ChartLegend::Marker::Box });
    }

    // Ghost columns (pinned plans) keep the tenant colours, faded: QBarSet's per-bar selection.
    for (std::size_t t = 0; t < m_tenants.size(); ++t) {
        QColor ghost = tenantColor(m_tenants[t]);
        ghost.setAlphaF(0.35f);
        m_sets[t]->setSelectedColor(ghost);
        m_sets[t]->deselectAllBars();
        for (int c = 0; c < n; ++c)
            if (columns[std::size_t(c)].ghost)
                m_sets[t]->selectBar(c);
    }

    m_totalTexts.clear();
    for (const MemoryBarColumn& c : columns) {
        QString text = bytesText(c.bytes.total(), units);
        if (c.fits)
            text += *c.fits ? QStringLiteral(" ✓") : QStringLiteral(" ✗");
        m_totalTexts.push_back(text);
    }

    // The category labels are set in placeOverlays(), which knows the plot's width.

    m_hbm = finite(toDisplayUnits(hbmBytes, units));
    m_limit = limit ? finite(toDisplayUnits(limit->bytes, units)) : 0.0;
    const double highest
        = m_totals.empty() ? 0.0 : *std::max_element(m_totals.begin(), m_totals.end());
    // At least 1 unit: an empty plan (all zeros) still gets a valid axis.
    setNiceRange(m_yAxis, std::max({ highest, m_hbm, 1.0 }) * 1.12);
    const QString yTitle
        = tr("per-GPU memory (%1)").arg(QString::fromLatin1(unitLabel(units).data()));
    if (m_yAxis->titleText() != yTitle)
        m_yAxis->setTitleText(yTitle);

    const double left = -0.5;
    const double right = std::max(n, 1) - 0.5;
    replaceIfChanged(m_hbmLine, QList<QPointF> { { left, m_hbm }, { right, m_hbm } });
    const QString hbmText = tr("HBM %1").arg(bytesText(hbmBytes, units));
    m_hbmLine->setName(hbmText);
    m_hbmLabel->setText(hbmText);
    legend.push_back({ tr("HBM"), capacityLineColor(), ChartLegend::Marker::DashLine });
    m_limitLine->setVisible(limit.has_value());
    m_limitLabel->setVisible(limit.has_value());
    m_limitBox->setVisible(limit.has_value());
    if (limit) {
        replaceIfChanged(m_limitLine, QList<QPointF> { { left, m_limit }, { right, m_limit } });
        m_limitLine->setName(limit->name);
        m_limitLabel->setText(tr("%1: %2").arg(limit->name, bytesText(limit->bytes, units)));
        legend.push_back({ limit->name, usableLineColor(), ChartLegend::Marker::DotLine });
    }
    this->legend()->setEntries(legend);
    placeOverlays();
}

void MemoryBarChart::placeCategoryLabels(const QRectF& plot)
{
    // Category labels Qt would elide ("ZeR...") break onto two lines instead ("ZeRO-" / "3").
    // The margins differ so that the small change of plot size a break brings cannot flip it.
    const QFontMetricsF metrics(m_xAxis->labelsFont());
    double widest = 0;
    for (const MemoryBarColumn& column : m_columns)
        widest = std::max(widest, metrics.horizontalAdvance(column.label));
    const double category = plot.width() / std::max(1, columnCount());
    if (!m_twoLineLabels && widest + 8 > category)
        m_twoLineLabels = true;
    else if (m_twoLineLabels && widest + 20 < category)
        m_twoLineLabels = false;
    QStringList labels;
    for (const MemoryBarColumn& column : m_columns) {
        QString text = column.label.toHtmlEscaped();
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
    if (m_xAxis->categories() != labels)
        m_xAxis->setCategories(labels);
}

void MemoryBarChart::placeOverlays()
{
    if (m_columns.empty())
        return;
    QChart* chart = this->chart();
    placeCategoryLabels(chart->plotArea());
    const QRectF plot = chart->plotArea(); // the labels' height may have moved the plot
    const QPointF hbmAt = chart->mapToPosition(QPointF(0, m_hbm), m_hbmLine);
    const QPointF limitAt = chart->mapToPosition(QPointF(0, m_limit), m_hbmLine);
    const qreal right = plot.right() - 4;
    m_hbmLabel->setPos(right - m_hbmLabel->boundingRect().width(),
        hbmAt.y() - m_hbmLabel->boundingRect().height() - 1);
    m_limitLabel->setPos(right - m_limitLabel->boundingRect().width(), limitAt.y() + 1);
    QColor boxColor = palette().color(QPalette::Base);
    boxColor.setAlphaF(0.85f);
    for (auto [box, label] :
        { std::pair { m_hbmBox, m_hbmLabel }, std::pair { m_limitBox, m_limitLabel } }) {
        box->setBrush(boxColor);
        box->setRect(label->mapRectToParent(label->boundingRect()).adjusted(-3, 0, 3, 0));
    }

    // Each column's total above its bar, so the figure reads without hovering.
    while (m_totalLabels.size() < m_totalTexts.size()) {
        auto* item = new QGraphicsSimpleTextItem(chart);
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
        const bool overflows = m_columns[std::size_t(c)].fits == false;
        item->setBrush(overflows ? overflowColor() : palette().color(QPalette::Text));
        item->setText(m_totalTexts[c]);
        const QPointF top
            = chart->mapToPosition(QPointF(double(c), m_totals[std::size_t(c)]), m_hbmLine);
        const QRectF box = item->boundingRect();
        item->setPos(top.x() - box.width() / 2, std::max(plot.top(), top.y() - box.height() - 6));
    }

    if (m_highlighted < 0) {
        m_highlight->setVisible(false);
        return;
    }
    const double half = 0.5 * m_barWidth + 0.06;
    const double total = m_totals[std::size_t(m_highlighted)];
    const QPointF topLeft = chart->mapToPosition(QPointF(m_highlighted - half, total), m_hbmLine);
    const QPointF bottomRight = chart->mapToPosition(QPointF(m_highlighted + half, 0), m_hbmLine);
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
    const auto it = std::find(m_sets.begin(), m_sets.end(), set);
    if (it == m_sets.end())
        return;
    const Tenant tenant = m_tenants[std::size_t(it - m_sets.begin())];
    const MemoryBarColumn& column = m_columns[std::size_t(index)];
    QString text = QStringLiteral("<b>%1</b> — %2<br>%3")
                       .arg(tenantName(tenant),
                           (column.tooltipLabel.isEmpty() ? column.label : column.tooltipLabel)
                               .toHtmlEscaped(),
                           bytesText(tenantBytes(column.bytes, tenant), m_units));
    if (m_formulaProvider) {
        const QString formula = m_formulaProvider(index, tenant);
        if (!formula.isEmpty())
            text += QStringLiteral("<hr>") + formula;
    }
    QToolTip::showText(QCursor::pos(), text, chartView());
}

} // namespace envelope::ui
