#include "controls/sliderspin.h"
#include "controls/showvalue.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QSignalBlocker>
#include <QSlider>

#include <algorithm>
#include <cmath>

namespace envelope::ui {
namespace {
constexpr int kLogSteps = 1000;
}

SliderSpin::SliderSpin(Scale scale, double minimum, double maximum, int decimals, QWidget* parent)
    : QWidget(parent)
    , m_scale(scale)
    , m_minimum(minimum)
    , m_maximum(maximum)
    , m_slider(new QSlider(Qt::Horizontal, this))
    , m_spin(new QDoubleSpinBox(this))
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_slider, 3);
    layout->addWidget(m_spin, 2);
    setFocusProxy(m_spin);

    switch (scale) {
    case Scale::Linear:
        m_slider->setRange(static_cast<int>(minimum), static_cast<int>(maximum));
        break;
    case Scale::PowersOfTwo:
        m_slider->setRange(static_cast<int>(std::round(std::log2(minimum))),
            static_cast<int>(std::round(std::log2(maximum))));
        m_slider->setPageStep(1);
        break;
    case Scale::TokenLengths:
        m_slider->setRange(toSlider(minimum), toSlider(maximum));
        m_slider->setSingleStep(1);
        m_slider->setPageStep(2); // an octave
        break;
    case Scale::Log:
        m_slider->setRange(0, kLogSteps);
        m_slider->setSingleStep(5);
        m_slider->setPageStep(50);
        break;
    }
    m_spin->setRange(minimum, maximum);
    m_spin->setDecimals(decimals);
    m_spin->setKeyboardTracking(false); // commit on Enter / focus out, not per keystroke
    m_spin->setGroupSeparatorShown(true);
    m_spin->setAlignment(Qt::AlignRight);

    connect(m_slider, &QSlider::valueChanged, this, &SliderSpin::onSliderMoved);
    connect(m_spin, &QDoubleSpinBox::valueChanged, this, &SliderSpin::onSpinChanged);
}

double SliderSpin::value() const
{
    return m_spin->value();
}

void SliderSpin::setValue(double value)
{
    const QSignalBlocker blockSpin(m_spin);
    const QSignalBlocker blockSlider(m_slider);
    showValue(m_spin, value);
    m_slider->setValue(toSlider(value)); // QAbstractSlider repaints only on a new position
}

void SliderSpin::setSuffix(const QString& suffix)
{
    m_spin->setSuffix(suffix);
}

void SliderSpin::setSpinRange(double minimum, double maximum)
{
    const QSignalBlocker block(m_spin);
    m_spin->setRange(minimum, maximum);
}

void SliderSpin::setSingleStep(double step)
{
    m_spin->setSingleStep(step);
}

int SliderSpin::toSlider(double value) const
{
    switch (m_scale) {
    case Scale::Linear:
        return static_cast<int>(std::lround(value));
    case Scale::PowersOfTwo:
        return static_cast<int>(std::lround(std::log2(std::max(value, 1.0))));
    case Scale::TokenLengths: {
        // Position 2k is 2^k and 2k + 1 is 1.5 x 2^k: the nearest of the two around the value,
        // in log space.
        const double l = std::log2(std::max(value, 1.0));
        const double octave = std::floor(l);
        const double steps[] = { 0.0, std::log2(1.5), 1.0 };
        int best = 0;
        for (int i = 1; i < 3; ++i)
            if (std::fabs(l - octave - steps[i]) < std::fabs(l - octave - steps[best]))
                best = i;
        return static_cast<int>(2 * octave) + best;
    }
    case Scale::Log: {
        const double lo = std::log10(m_minimum);
        const double hi = std::log10(m_maximum);
        const double t = (std::log10(std::max(value, m_minimum)) - lo) / (hi - lo);
        return static_cast<int>(std::lround(t * kLogSteps));
    }
    }
    return 0;
}

double SliderSpin::fromSlider(int position) const
{
    switch (m_scale) {
    case Scale::Linear:
        return position;
    case Scale::PowersOfTwo:
        return std::ldexp(1.0, position);
    case Scale::TokenLengths:
        return std::ldexp(position % 2 == 0 ? 1.0 : 1.5, position / 2);
    case Scale::Log: {
        const double lo = std::log10(m_minimum);
        const double hi = std::log10(m_maximum);
        const double raw = std::pow(10.0, lo + (hi - lo) * position / kLogSteps);
        // Round to the spin box's precision, three significant digits: "13.0B", not "12.97B".
        const double magnitude = std::pow(10.0, std::floor(std::log10(raw)) - 2);
        return std::clamp(std::round(raw / magnitude) * magnitude, m_minimum, m_maximum);
    }
    }
    return 0;
}

void SliderSpin::onSliderMoved(int position)
{
    if (m_syncing)
        return;
    const double value = fromSlider(position);
    {
        const QSignalBlocker block(m_spin);
        m_spin->setValue(value);
    }
    emit valueEdited(m_spin->value());
}

void SliderSpin::onSpinChanged(double value)
{
    m_syncing = true;
    m_slider->setValue(toSlider(value));
    m_syncing = false;
    emit valueEdited(value);
}

} // namespace envelope::ui
