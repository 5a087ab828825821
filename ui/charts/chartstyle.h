// Shared look of the charts: follows the widget palette (light or dark), no animations
// (redraws must land within a frame, and screenshots must be deterministic).
#pragma once

#include <QtGlobal>

#include <optional>

class QPalette;
class QFont;
class QString;

QT_BEGIN_NAMESPACE
class QChart;
class QAbstractAxis;
class QValueAxis;
class QXYSeries;
class QPointF;
class QRectF;
class QSizeF;
template <typename T> class QList;
QT_END_NAMESPACE

namespace envelope::ui {

void styleChart(QChart* chart, const QPalette& palette);
void styleAxis(QAbstractAxis* axis, const QPalette& palette);

// Sets 0..top rounded up to a 1-2-2.5-5 step (about five ticks), touching the axis only when
// the range or ticks change: every change re-lays out the chart, which dominates a redraw.
void setNiceRange(QValueAxis* axis, double top);

// Replaces the series' points only when they differ (a replace repaints the whole series).
void replaceIfChanged(QXYSeries* series, const QList<QPointF>& points);

// Where a label of `size` goes beside a marker at `at`: the first corner (above right, above
// left, below right, below left; 10 px aside, `gapY` above or below) that stays inside `plot`
// and clear of `taken`, or nothing when none is free (the caller then picks its own place).
std::optional<QPointF> freeCornerBeside(
    const QPointF& at, const QSizeF& size, const QRectF& plot, const QRectF& taken, double gapY);

} // namespace envelope::ui
