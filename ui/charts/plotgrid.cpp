#include "charts/plotgrid.h"

#include <QCategoryAxis>
#include <QChart>
#include <QLogValueAxis>
#include <QPainter>
#include <QPalette>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace envelope::ui {

namespace {

// Qt Charts stacks its grid just above the plot background and below axes and series.
constexpr qreal kGridZ = 2;

// The colour a translucent `over` shows on an opaque `base`, in 8-bit channels.
QColor flatten(const QColor& over, const QColor& base)
{
    const double a = over.alphaF();
    auto mix = [a](int top, int bottom) { return int(std::lround(top * a + bottom * (1 - a))); };
    return QColor(mix(over.red(), base.red()), mix(over.green(), base.green()),
        mix(over.blue(), base.blue()));
}

QValueAxis* verticalValueAxis(const QChart* chart)
{
    for (QAbstractAxis* axis : chart->axes(Qt::Vertical))
        if (auto* value = qobject_cast<QValueAxis*>(axis))
            return value;
    return nullptr;
}

QLogValueAxis* verticalLogAxis(const QChart* chart)
{
    for (QAbstractAxis* axis : chart->axes(Qt::Vertical))
        if (auto* log = qobject_cast<QLogValueAxis*>(axis))
            return log;
    return nullptr;
}

QCategoryAxis* horizontalCategoryAxis(const QChart* chart)
{
    for (QAbstractAxis* axis : chart->axes(Qt::Horizontal))
        if (auto* category = qobject_cast<QCategoryAxis*>(axis))
            return category;
    return nullptr;
}

// The value axis's major tick values, as Qt Charts places them.
QList<double> majorTicks(QValueAxis* axis)
{
    QList<double> ticks;
    const double min = axis->min();
    const double max = axis->max();
    if (!(max > min))
        return ticks;
    if (axis->tickType() == QValueAxis::TicksDynamic && axis->tickInterval() > 0) {
        const double interval = axis->tickInterval();
        double v = axis->tickAnchor() + std::ceil((min - axis->tickAnchor()) / interval) * interval;
        for (; v <= max + 1e-9 * (max - min) && ticks.size() < 1000; v += interval)
            ticks.append(v);
        return ticks;
    }
    const int count = std::max(2, axis->tickCount());
    for (int i = 0; i < count; ++i)
        ticks.append(min + (max - min) * i / (count - 1));
    return ticks;
}

} // namespace

PlotGrid::PlotGrid(QChart* chart)
    : QGraphicsObject(chart)
    , m_chart(chart)
{
    setZValue(kGridZ);
    setAcceptedMouseButtons(Qt::NoButton);
    setAcceptHoverEvents(false);
    connect(chart, &QChart::plotAreaChanged, this, [this] { relayout(); });
}

PlotGrid* PlotGrid::of(const QChart* chart)
{
    for (QGraphicsItem* child : chart->childItems())
        if (auto* grid = qobject_cast<PlotGrid*>(child->toGraphicsObject()))
            return grid;
    return nullptr;
}

PlotGrid* PlotGrid::install(QChart* chart, const QPalette& palette)
{
    PlotGrid* grid = of(chart);
    if (!grid)
        grid = new PlotGrid(chart);
    grid->adoptAxes();
    grid->setPalette(palette);
    grid->relayout();
    return grid;
}

void PlotGrid::adoptAxes()
{
    for (QAbstractAxis* axis : m_chart->axes()) {
        // Connections are unique: installing again (palette change) adds none.
        if (auto* value = qobject_cast<QValueAxis*>(axis)) {
            connect(
                value, &QValueAxis::rangeChanged, this, &PlotGrid::relayout, Qt::UniqueConnection);
            connect(value, &QValueAxis::tickCountChanged, this, &PlotGrid::relayout,
                Qt::UniqueConnection);
            connect(value, &QValueAxis::minorTickCountChanged, this, &PlotGrid::relayout,
                Qt::UniqueConnection);
            connect(value, &QValueAxis::tickIntervalChanged, this, &PlotGrid::relayout,
                Qt::UniqueConnection);
        }
        if (auto* log = qobject_cast<QLogValueAxis*>(axis))
            connect(
                log, &QLogValueAxis::rangeChanged, this, &PlotGrid::relayout, Qt::UniqueConnection);
        if (auto* category = qobject_cast<QCategoryAxis*>(axis))
            connect(category, &QCategoryAxis::categoriesChanged, this, &PlotGrid::relayout,
                Qt::UniqueConnection);
        axis->setGridLineVisible(false);
        axis->setMinorGridLineVisible(false);
        axis->setLineVisible(false);
    }
}

void PlotGrid::setPalette(const QPalette& palette)
{
    // styleAxis has given every axis the translucent colours Qt Charts would have drawn.
    const QList<QAbstractAxis*> axes = m_chart->axes();
    if (axes.isEmpty())
        return;
    QAbstractAxis* axis = axes.front();
    const QColor base = palette.base().color();
    m_majorColor = flatten(axis->gridLineColor(), base);
    m_minorColor = flatten(axis->minorGridLineColor(), base);
    m_axisColor = flatten(axis->linePenColor(), base);
    update();
}

void PlotGrid::relayout()
{
    const QRectF plot = m_chart->plotArea();
    QList<QRect> major;
    QList<QRect> minor;
    QList<QRect> axes;
    if (plot.width() >= 1 && plot.height() >= 1) {
        const int left = int(std::floor(plot.left()));
        const int right = int(std::ceil(plot.right()));
        const int top = int(std::floor(plot.top()));
        const int bottom = int(std::ceil(plot.bottom())) - 1; // the last row inside the plot
        auto row = [&](double y) { return std::clamp(int(std::floor(y)), top, bottom); };
        auto column = [&](double x) { return std::clamp(int(std::floor(x)), left, right - 1); };

        if (QValueAxis* y = verticalValueAxis(m_chart); y && y->max() > y->min()) {
            const double span = y->max() - y->min();
            auto yOf
                = [&](double v) { return plot.bottom() - (v - y->min()) / span * plot.height(); };
            const QList<double> ticks = majorTicks(y);
            for (double v : ticks)
                major.append(QRect(left, row(yOf(v)), right - left, 1));
            const int perGap = y->minorTickCount();
            for (qsizetype i = 0; i + 1 < ticks.size(); ++i)
                for (int j = 1; j <= perGap; ++j) {
                    const double v = ticks[i] + (ticks[i + 1] - ticks[i]) * j / (perGap + 1);
                    minor.append(QRect(left, row(yOf(v)), right - left, 1));
                }
        }
        if (QLogValueAxis* y = verticalLogAxis(m_chart); y && y->min() > 0 && y->max() > y->min()) {
            // A line at each power of the base (Qt's labelled ticks) and, for base 10, faint
            // ones at 2..9 times it.
            const double base = y->base();
            const double low = std::log(y->min()) / std::log(base);
            const double high = std::log(y->max()) / std::log(base);
            auto yOf = [&](double v) {
                return plot.bottom()
                    - (std::log(v) / std::log(base) - low) / (high - low) * plot.height();
            };
            for (int k = int(std::floor(low)); k <= int(std::ceil(high)); ++k) {
                const double decade = std::pow(base, k);
                if (decade >= y->min() && decade <= y->max())
                    major.append(QRect(left, row(yOf(decade)), right - left, 1));
                for (int m = 2; base == 10 && m < 10; ++m)
                    if (m * decade > y->min() && m * decade < y->max())
                        minor.append(QRect(left, row(yOf(m * decade)), right - left, 1));
            }
        }
        if (QCategoryAxis* x = horizontalCategoryAxis(m_chart); x && x->max() > x->min()) {
            const double span = x->max() - x->min();
            for (const QString& label : x->categoriesLabels()) {
                const double v = x->endValue(label);
                if (v <= x->min() || v > x->max())
                    continue;
                const double px = plot.left() + (v - x->min()) / span * plot.width();
                major.append(QRect(column(px), top, 1, bottom - top + 1));
            }
        }
        axes.append(QRect(left, top, 1, bottom - top + 1)); // the vertical axis
        axes.append(QRect(left, bottom, right - left, 1)); // the horizontal axis
    }
    const QRectF bounds = plot.adjusted(-1, -1, 1, 1);
    if (bounds != m_bounds) {
        prepareGeometryChange();
        m_bounds = bounds;
    }
    if (major != m_major || minor != m_minor || axes != m_axes) {
        m_major = std::move(major);
        m_minor = std::move(minor);
        m_axes = std::move(axes);
        update();
    }
}

QRectF PlotGrid::boundingRect() const
{
    return m_bounds;
}

void PlotGrid::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    for (const QRect& line : m_minor)
        painter->fillRect(line, m_minorColor);
    for (const QRect& line : m_major)
        painter->fillRect(line, m_majorColor);
    for (const QRect& line : m_axes)
        painter->fillRect(line, m_axisColor);
}

} // namespace envelope::ui
