#include "chartstyle.h"

#include <QAbstractAxis>
#include <QChart>
#include <QLegend>
#include <QPalette>

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

} // namespace envelope::ui
