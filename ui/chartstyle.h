// Shared look of the charts: follows the widget palette (light or dark), no animations
// (redraws must land within a frame, and screenshots must be deterministic).
#pragma once

#include <QtGlobal>

class QPalette;
class QFont;
class QString;

QT_BEGIN_NAMESPACE
class QChart;
class QAbstractAxis;
QT_END_NAMESPACE

namespace envelope::ui {

void styleChart(QChart* chart, const QPalette& palette);
void styleAxis(QAbstractAxis* axis, const QPalette& palette);

} // namespace envelope::ui
