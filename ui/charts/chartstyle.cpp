#include "charts/chartstyle.h"

#include <QAbstractAxis>
#include <QChart>
#include <QLegend>
#include <QPalette>
#include <QRectF>
#include <QValueAxis>
#include <QXYSeries>

#include <cmath>

#include "charts/plotgrid.h"

namespace envelope::ui {

void styleChart(QChart* chart, const QPalette& palette)
{
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setBackgroundBrush(palette.base());
    chart->setBackgroundPen(Qt::NoPen);
    chart->setBackgroundRoundness(0);
    chart->setPlotAreaBackgroundVisible(false);
    chart->setTitleBrush(palette.text());
    chart->setMargins(QMargins(4, 4, 4, 4));
    QFont title = chart->titleFont();
    title.setBold(true);
    title.setPointSizeF(title.pointSizeF() * 1.1);
    chart->setTitleFont(title);
    chart->legend()->setLabelBrush(palette.text());
    chart->legend()->setAlignment(Qt::AlignBottom);
    for (QAbstractAxis* axis : chart->axes())
        styleAxis(axis, palette);
    PlotGrid::install(chart, palette);
}

void styleAxis(QAbstractAxis* axis, const QPalette& palette)
{
    axis->setLabelsBrush(palette.text());
    axis->setTitleBrush(palette.text());
    QColor grid = palette.text().color();
    grid.setAlphaF(0.12f);
    axis->setGridLineColor(grid);
    grid.setAlphaF(0.06f);
    axis->setMinorGridLineColor(grid);
    QColor line = palette.text().color();
    line.setAlphaF(0.4f);
    axis->setLinePenColor(line);
    axis->setShadesVisible(false);
}

void setNiceRange(QValueAxis* axis, double top)
{
    if (!std::isfinite(top) || top <= 0)
        top = 1;
    const double rough = top / 4;
    const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
    double step = magnitude * 10;
    for (double m : { 1.0, 2.0, 2.5, 5.0, 10.0 })
        if (m * magnitude >= rough) {
            step = m * magnitude;
            break;
        }
    const double max = std::ceil(top / step - 1e-9) * step;
    const int ticks = int(std::lround(max / step)) + 1;
    if (axis->min() != 0 || std::abs(axis->max() - max) > 1e-9 * max)
        axis->setRange(0, max);
    if (axis->tickCount() != ticks)
        axis->setTickCount(ticks);
}

void replaceIfChanged(QXYSeries* series, const QList<QPointF>& points)
{
    if (series->points() != points)
        series->replace(points);
}

std::optional<QPointF> freeCornerBeside(
    const QPointF& at, const QSizeF& size, const QRectF& plot, const QRectF& taken, double gapY)
{
    const QPointF corners[] = {
        { at.x() + 10, at.y() - size.height() - gapY },
        { at.x() - 10 - size.width(), at.y() - size.height() - gapY },
        { at.x() + 10, at.y() + gapY },
        { at.x() - 10 - size.width(), at.y() + gapY },
    };
    for (const QPointF& corner : corners) {
        const QRectF r(corner, size);
        if (plot.contains(r) && !r.intersects(taken))
            return corner;
    }
    return std::nullopt;
}

} // namespace envelope::ui
