// Shows a plan's value in a spin box without repainting a box that already shows it.
//
// QAbstractSpinBox repaints itself and its line edit on every setValue, equal or not, and the
// controls refresh every box from the plan after each edit: one slider step repainted every
// spin box of the Training tab, each frame and button gradient again (bench_ui's
// paints_per_step). Callers block the box's signals as before.
#pragma once

#include <QDoubleSpinBox>
#include <QSpinBox>

#include <algorithm>

namespace envelope::ui {

inline void showValue(QSpinBox* box, int value)
{
    if (box->value() != std::clamp(value, box->minimum(), box->maximum()))
        box->setValue(value);
}

inline void showValue(QDoubleSpinBox* box, double value)
{
    // The box keeps its value rounded to its decimals and bounded to its range.
    const double shown = std::clamp(
        QString::number(value, 'f', box->decimals()).toDouble(), box->minimum(), box->maximum());
    if (box->value() != shown)
        box->setValue(value);
}

} // namespace envelope::ui
