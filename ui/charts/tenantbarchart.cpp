#include "charts/tenantbarchart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "charts/chartstyle.h"
#include "charts/memoryview.h"

namespace envelope::ui {
namespace {
constexpr double kBarWidth = 0.55;

QString bytesText(double bytes, ByteUnits units)
{
    return QString::fromStdString(formatBytes(bytes, units));
}
} // namespace

TenantBarChart::TenantBarChart(const QString& title, std::vector<Tenant> tenants, QWidget* parent)
    : QWidget(parent)
    , m_tenants(std::move(tenants))
    , m_chart(new QChart)
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
    m_series->setBarWidth(kBarWidth);
    connect(m_series, &QStackedBarSeries::hovered, this, &TenantBarChart::onHovered);

    m_chart->setTitle(title);
    m_chart->addSeries(m_series);
    m_chart->addAxis(m_xAxis, Qt::AlignBottom);
    m_chart->addAxis(m_yAxis, Qt::AlignLeft);
    m_series->attachAxis(m_xAxis);
    m_series->attachAxis(m_yAxis);
    for (QLineSeries* line : { m_hbmLine, m_limitLine }) {
        m_chart->addSeries(line);
        line->attachAxis(m_xAxis);
        line->attachAxis(m_yAxis);
    }
    m_hbmLine->setPen(QPen(capacityLineColor(), 2.0, Qt::DashLine));
    m_limitLine->setPen(QPen(usableLineColor(), 1.6, Qt::DotLine));
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_yAxis->setMinorTickCount(1);

    m_hbmLabel = new QGraphicsSimpleTextItem(m_chart);
    m_limitLabel = new QGraphicsSimpleTextItem(m_chart);
    m_hbmLabel->setBrush(capacityLineColor());
    m_limitLabel->setBrush(usableLineColor().darker(115));
    m_hbmLabel->setZValue(101);
    m_limitLabel->setZValue(101);

    styleChart(m_chart, palette());
    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setFrameShape(QFrame::NoFrame);
    connect(m_chart, &QChart::plotAreaChanged, this, [this] { placeOverlays(); });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view, 1);
}

QBarSet* TenantBarChart::barSet(Tenant tenant) const
{
    const auto it = std::find(m_tenants.begin(), m_tenants.end(), tenant);
    return it == m_tenants.end() ? nullptr : m_sets[std::size_t(it - m_tenants.begin())];
}

QString TenantBarChart::columnLabel(int column) const
{
    return column >= 0 && column < columnCount() ? m_columns[std::size_t(column)].label : QString();
}

QString TenantBarChart::totalText(int column) const
{
    return m_totalTexts.value(column);
}

void TenantBarChart::setColumns(const std::vector<TenantBarColumn>& columns, double hbmBytes,
    std::optional<double> limitBytes, const QString& limitName, ByteUnits units)
{
    m_columns = columns;
    m_units = units;
    const int n = columnCount();
    m_totals.assign(std::size_t(n), 0.0);
    for (std::size_t t = 0; t < m_tenants.size(); ++t) {
        QList<qreal> values;
        bool any = false;
        for (int c = 0; c < n; ++c) {
            const double raw
                = toDisplayUnits(tenantBytes(columns[std::size_t(c)].bytes, m_tenants[t]), units);
            const double v = std::isfinite(raw) ? raw : 0.0; // an empty plan's 0/0
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
        const auto markers = m_chart->legend()->markers(m_series);
        if (qsizetype(t) < markers.size())
            markers[qsizetype(t)]->setVisible(any);
    }

    QStringList labels;
    m_totalTexts.clear();
    for (const TenantBarColumn& c : columns) {
        labels.push_back(c.label);
        m_totalTexts.push_back(bytesText(c.bytes.total(), units)
            + (c.fits ? QStringLiteral(" ✓") : QStringLiteral(" ✗")));
    }
    if (m_xAxis->categories() != labels) {
        m_xAxis->clear();
        m_xAxis->append(labels);
    }

    auto finite = [](double v) { return std::isfinite(v) ? v : 0.0; };
    m_hbm = finite(toDisplayUnits(hbmBytes, units));
    m_limit = limitBytes ? finite(toDisplayUnits(*limitBytes, units)) : 0.0;
    const double highest
        = m_totals.empty() ? 0.0 : *std::max_element(m_totals.begin(), m_totals.end());
    m_yAxis->setRange(0, std::max({ highest, m_hbm, 1.0 }) * 1.12);
    m_yAxis->applyNiceNumbers();
    m_yAxis->setTitleText(
        tr("per-GPU memory (%1)").arg(QString::fromLatin1(unitLabel(units).data())));

    const double left = -0.5;
    const double right = std::max(n, 1) - 0.5;
    m_hbmLine->replace(QList<QPointF> { { left, m_hbm }, { right, m_hbm } });
    m_hbmLine->setName(tr("HBM %1").arg(bytesText(hbmBytes, units)));
    m_hbmLabel->setText(tr("HBM %1").arg(bytesText(hbmBytes, units)));
    m_limitLine->setVisible(limitBytes.has_value());
    m_limitLabel->setVisible(limitBytes.has_value());
    if (limitBytes) {
        m_limitLine->replace(QList<QPointF> { { left, m_limit }, { right, m_limit } });
        m_limitLine->setName(limitName);
        m_limitLabel->setText(tr("%1: %2").arg(limitName, bytesText(*limitBytes, units)));
    }
    placeOverlays();
}

void TenantBarChart::placeOverlays()
{
    if (m_columns.empty())
        return;
    const QRectF plot = m_chart->plotArea();
    const qreal right = plot.right() - 4;
    const QPointF hbmAt = m_chart->mapToPosition(QPointF(0, m_hbm), m_hbmLine);
    m_hbmLabel->setPos(right - m_hbmLabel->boundingRect().width(),
        hbmAt.y() - m_hbmLabel->boundingRect().height() - 1);
    const QPointF limitAt = m_chart->mapToPosition(QPointF(0, m_limit), m_hbmLine);
    m_limitLabel->setPos(right - m_limitLabel->boundingRect().width(), limitAt.y() + 1);

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
        const bool fits = m_columns[std::size_t(c)].fits;
        item->setBrush(fits ? palette().color(QPalette::Text) : overflowColor());
        item->setText(m_totalTexts[c]);
        const QPointF top
            = m_chart->mapToPosition(QPointF(double(c), m_totals[std::size_t(c)]), m_hbmLine);
        const QRectF box = item->boundingRect();
        item->setPos(top.x() - box.width() / 2, std::max(plot.top(), top.y() - box.height() - 6));
    }
}

void TenantBarChart::onHovered(bool status, int index, QBarSet* set)
{
    if (!status || index < 0 || index >= columnCount()) {
        QToolTip::hideText();
        return;
    }
    const auto it = std::find(m_sets.begin(), m_sets.end(), set);
    if (it == m_sets.end())
        return;
    const Tenant tenant = m_tenants[std::size_t(it - m_sets.begin())];
    const TenantBarColumn& column = m_columns[std::size_t(index)];
    QString text = QStringLiteral("<b>%1</b> — %2<br>%3")
                       .arg(tenantName(tenant), column.label.toHtmlEscaped(),
                           bytesText(tenantBytes(column.bytes, tenant), m_units));
    if (m_formulaProvider) {
        const QString formula = m_formulaProvider(index, tenant);
        if (!formula.isEmpty())
            text += QStringLiteral("<hr>") + formula;
    }
    QToolTip::showText(QCursor::pos(), text, m_view);
}

void TenantBarChart::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        styleChart(m_chart, palette());
        placeOverlays();
    }
    QWidget::changeEvent(event);
}

} // namespace envelope::ui
