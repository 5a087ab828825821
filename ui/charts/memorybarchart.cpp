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
constexpr int kLineLabelGap = 5; // px between the plot's right edge and a line's label

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

QStringList MemoryBarChart::drawnTotals() const
{
    QStringList texts;
    for (const QGraphicsSimpleTextItem* item : m_totalLabels)
        if (item->isVisible())
            texts.push_back(item->text());
    return texts;
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
    m_shortTotalTexts.clear();
    for (const MemoryBarColumn& c : columns) {
        QString text = bytesText(c.bytes.total(), units);
        const QString mark
            = c.fits ? (*c.fits ? QStringLiteral(" ✓") : QStringLiteral(" ✗")) : QString();
        m_totalTexts.push_back(text + mark);
        // "218.4 GB" -> "218.4": the figure without its unit, for narrow columns, only when
        // that unit is the axis's ("12.0 TB" on a GB axis would read as 12 GB).
        const bool axisUnit
            = text.section(QLatin1Char(' '), 1, 1) == QString::fromLatin1(unitLabel(units).data());
        m_shortTotalTexts.push_back(
            (axisUnit ? text.section(QLatin1Char(' '), 0, 0) : text) + mark);
    }
    QFont bold = font();
    bold.setBold(true);
    const QFontMetricsF totalMetrics(bold);
    m_totalWidths.clear();
    for (const QString& text : m_totalTexts)
        m_totalWidths.push_back(totalMetrics.horizontalAdvance(text));

    // The category labels are set in placeOverlays(), which knows the plot's width.

    m_hbm = finite(toDisplayUnits(hbmBytes, units));
    m_limit = limit ? finite(toDisplayUnits(limit->bytes, units)) : 0.0;
    const double highest
        = m_totals.empty() ? 0.0 : *std::max_element(m_totals.begin(), m_totals.end());
    // At least 1 unit: an empty plan (all zeros) still gets a valid axis.
    // The limit line too (a colocated peak above HBM must stay on the chart).
    setNiceRange(m_yAxis, std::max({ highest, m_hbm, m_limit, 1.0 }) * 1.12);
    const QString yTitle
        = tr("per-GPU memory (%1)").arg(QString::fromLatin1(unitLabel(units).data()));
    if (m_yAxis->titleText() != yTitle)
        m_yAxis->setTitleText(yTitle);

    const double left = -0.5;
    const double right = std::max(n, 1) - 0.5;
    replaceIfChanged(m_hbmLine, QList<QPointF> { { left, m_hbm }, { right, m_hbm } });
    const QString hbmText = tr("HBM %1").arg(bytesText(hbmBytes, units));
    m_hbmLine->setName(hbmText);
    m_hbmLabel->setText(tr("HBM\n%1").arg(bytesText(hbmBytes, units)));
    legend.push_back({ tr("HBM"), capacityLineColor(), ChartLegend::Marker::DashLine });
    m_limitLine->setVisible(limit.has_value());
    m_limitLabel->setVisible(limit.has_value());
    if (limit) {
        replaceIfChanged(m_limitLine, QList<QPointF> { { left, m_limit }, { right, m_limit } });
        m_limitLine->setName(limit->name);
        m_limitLabel->setText(tr("%1\n%2").arg(limit->name, bytesText(limit->bytes, units)));
        legend.push_back({ limit->name, usableLineColor(), ChartLegend::Marker::DotLine });
    }
    this->legend()->setEntries(legend);
    placeOverlays();
}

namespace {
// "ZeRO-3" -> {"ZeRO-", "3"}, "GPU 0" -> {"GPU", "0"}: where a category label breaks in two.
// At the space nearest the middle; a label without one ("ZeRO-0", "GPU 3 … 7" aside) stays
// whole: broken at its hyphen it read "ZeRO-" over "0" (issue 23), so it stands upright instead.
QStringList breakInTwo(const QString& label)
{
    qsizetype best = -1;
    for (qsizetype i = label.indexOf(QLatin1Char(' ')); i > 0; i = label.indexOf(QLatin1Char(' '), i + 1))
        if (best < 0 || std::abs(2 * i - label.size()) < std::abs(2 * best - label.size()))
            best = i;
    if (best > 0)
        return { label.left(best), label.mid(best + 1) };
    return { label };
}
} // namespace

void MemoryBarChart::placeCategoryLabels(const QRectF& plot)
{
    // Category labels Qt would elide ("ZeR...") break onto two lines at a space instead
    // ("ZeRO-3" / "offload"), and stand upright when even that is too wide. A mode more compact than the current one is
    // taken with less room to spare than it takes to go back, so that the small change of plot
    // size a change of mode brings cannot flip it.
    // The labels' widths are measured once per set of labels (text shaping dominates).
    QStringList names;
    for (const MemoryBarColumn& column : m_columns)
        names.push_back(column.label);
    if (names != m_measuredLabels) {
        const QFontMetricsF metrics(m_xAxis->labelsFont());
        m_oneLineWidth = 0;
        m_twoLineWidth = 0;
        for (const QString& name : names) {
            m_oneLineWidth = std::max(m_oneLineWidth, metrics.horizontalAdvance(name));
            for (const QString& part : breakInTwo(name))
                m_twoLineWidth = std::max(m_twoLineWidth, metrics.horizontalAdvance(part));
        }
        m_measuredLabels = names;
    }
    const double oneLine = m_oneLineWidth;
    const double twoLines = m_twoLineWidth;
    const double category = plot.width() / std::max(1, columnCount());
    auto fits = [&](LabelMode mode, double needed) {
        // Qt gives the first and last labels only the half of their category inside the plot
        // (a 45 px "Decode" under a two-bar chart's 83 px category read "Deco..." at 1280x800);
        // going back to a wider mode asks for more room than leaving it.
        return needed * (int(mode) >= int(m_labelMode) ? 1.0 : 1.1) + 4 <= category / 2;
    };
    m_labelMode = fits(LabelMode::OneLine, oneLine) ? LabelMode::OneLine
        : fits(LabelMode::TwoLines, twoLines)       ? LabelMode::TwoLines
                                                    : LabelMode::Upright;
    QStringList labels;
    for (const MemoryBarColumn& column : m_columns) {
        if (m_labelMode != LabelMode::TwoLines) {
            labels.push_back(column.label.toHtmlEscaped());
            continue;
        }
        QStringList parts = breakInTwo(column.label);
        for (QString& part : parts)
            part = part.toHtmlEscaped();
        labels.push_back(parts.join(QStringLiteral("<br>")));
    }
    const int angle = m_labelMode == LabelMode::Upright ? -90 : 0;
    if (m_xAxis->labelsAngle() != angle)
        m_xAxis->setLabelsAngle(angle);
    if (m_xAxis->categories() != labels)
        m_xAxis->setCategories(labels);
}

void MemoryBarChart::placeLineLabels(const QRectF& plot)
{
    // The HBM and limit labels sit in the chart's right margin at their line's height, never on
    // the bars: the margin is made as wide as the wider label (two lines: name, figure).
    QChart* chart = this->chart();
    const bool limitShown = m_limitLabel->isVisible();
    double widest = m_hbmLabel->boundingRect().width();
    if (limitShown)
        widest = std::max(widest, m_limitLabel->boundingRect().width());
    const int margin = int(std::ceil(widest)) + 2 * kLineLabelGap;
    QMargins margins = chart->margins();
    if (margins.right() != margin) {
        margins.setRight(margin);
        chart->setMargins(margins); // lays the chart out again: placeOverlays() runs once more
    }
    const QRectF area = chart->rect();
    const double x = plot.right() + kLineLabelGap;
    const double hbmY = chart->mapToPosition(QPointF(0, m_hbm), m_hbmLine).y();
    const double limitY = chart->mapToPosition(QPointF(0, m_limit), m_hbmLine).y();
    const double hbmH = m_hbmLabel->boundingRect().height();
    const double limitH = m_limitLabel->boundingRect().height();
    // Each label centred on its line; when the two would touch, the upper line's label moves up
    // and the lower's down until they clear each other.
    double hbmTop = hbmY - hbmH / 2;
    double limitTop = limitY - limitH / 2;
    if (limitShown) {
        const bool hbmAbove = hbmY <= limitY;
        double& upperTop = hbmAbove ? hbmTop : limitTop;
        double& lowerTop = hbmAbove ? limitTop : hbmTop;
        const double upperH = hbmAbove ? hbmH : limitH;
        const double overlap = upperTop + upperH + 2 - lowerTop;
        if (overlap > 0) {
            upperTop -= overlap / 2;
            lowerTop += overlap / 2;
        }
    }
    auto clampTop = [&](double top, double height) {
        return std::clamp(top, area.top(), std::max(area.top(), area.bottom() - height));
    };
    m_hbmLabel->setPos(x, clampTop(hbmTop, hbmH));
    m_limitLabel->setPos(x, clampTop(limitTop, limitH));
}

void MemoryBarChart::placeTotals(const QRectF& plot)
{
    // Each column's total above its bar, so the figure reads without hovering. A run of columns
    // with the same total (a TP group's ranks) gets one label over the run; when neighbouring
    // labels would still collide, they drop the unit (the axis title names it).
    QChart* chart = this->chart();
    struct Run {
        int first;
        int last;
    };
    std::vector<Run> runs;
    for (int c = 0; c < int(m_totalTexts.size()); ++c) {
        const MemoryBarColumn& column = m_columns[std::size_t(c)];
        if (!runs.empty()) {
            const MemoryBarColumn& previous = m_columns[std::size_t(runs.back().last)];
            if (m_totalTexts[c] == m_totalTexts[runs.back().last] && column.ghost == previous.ghost
                && column.fits == previous.fits) {
                runs.back().last = c;
                continue;
            }
        }
        runs.push_back({ c, c });
    }
    while (m_totalLabels.size() < qsizetype(runs.size())) {
        auto* item = new QGraphicsSimpleTextItem(chart);
        QFont font = item->font();
        font.setBold(true);
        item->setFont(font);
        item->setZValue(101);
        m_totalLabels.push_back(item);
    }
    auto centreOf = [&](const Run& run) {
        return chart->mapToPosition(QPointF(0.5 * (run.first + run.last), 0), m_hbmLine).x();
    };
    bool shortTexts = false;
    for (std::size_t r = 1; r < runs.size(); ++r) {
        const double room = centreOf(runs[r]) - centreOf(runs[r - 1]);
        const double needed = 0.5
                * (m_totalWidths[std::size_t(runs[r - 1].first)]
                    + m_totalWidths[std::size_t(runs[r].first)])
            + 4;
        shortTexts = shortTexts || needed > room;
    }
    for (qsizetype i = 0; i < m_totalLabels.size(); ++i) {
        QGraphicsSimpleTextItem* item = m_totalLabels[i];
        item->setVisible(i < qsizetype(runs.size()));
        if (i >= qsizetype(runs.size()))
            continue;
        const Run& run = runs[std::size_t(i)];
        const bool overflows = m_columns[std::size_t(run.first)].fits == false;
        item->setBrush(overflows ? overflowColor() : palette().color(QPalette::Text));
        QString text = shortTexts ? m_shortTotalTexts[run.first] : m_totalTexts[run.first];
        if (run.last > run.first)
            text = tr("%1 each").arg(text);
        item->setText(text);
        double top = plot.bottom();
        for (int c = run.first; c <= run.last; ++c)
            top = std::min(top,
                chart->mapToPosition(QPointF(double(c), m_totals[std::size_t(c)]), m_hbmLine).y());
        const QRectF box = item->boundingRect();
        const double x = std::clamp(centreOf(run) - box.width() / 2, chart->rect().left(),
            chart->rect().right() - box.width());
        item->setPos(x, std::max(plot.top(), top - box.height() - 6));
    }
}

void MemoryBarChart::placeOverlays()
{
    if (m_columns.empty())
        return;
    QChart* chart = this->chart();
    placeCategoryLabels(chart->plotArea());
    const QRectF plot = chart->plotArea(); // the labels' height may have moved the plot
    placeLineLabels(plot);
    placeTotals(plot);

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
