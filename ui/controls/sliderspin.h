// A slider paired with a spin box for the exact value. The slider may run on a log scale
// (model size 0.1B..2T), on powers of two (micro-batch 1..512) or on token lengths (context
// 256, 384, 512, ... 1M); the spin box always holds the
// exact value. `valueEdited` fires only for the user's changes, never for setValue().
#pragma once

#include <QWidget>

class QSlider;
class QDoubleSpinBox;

namespace envelope::ui {

class SliderSpin : public QWidget {
    Q_OBJECT
public:
    enum class Scale {
        Linear, // slider position == value
        PowersOfTwo, // slider position == log2(value)
        // Powers of two with 1.5 x each between (4K, 6K, 8K, 12K, 16K, ...): token lengths,
        // two slider steps an octave so a drag does not leap from 8K to 1M (issue 23).
        TokenLengths,
        Log // continuous log10 scale, 1000 steps
    };

    SliderSpin(
        Scale scale, double minimum, double maximum, int decimals = 0, QWidget* parent = nullptr);

    double value() const;
    void setValue(double value); // no valueEdited
    void setSuffix(const QString& suffix);
    void setSingleStep(double step);
    // The values the box accepts and shows, wider than the slider's span: the slider then rests
    // at its end while the box shows the plan's value (issue 26 item 13: a context of 1e8 read
    // "1,048,576" while the figures used 1e8).
    void setSpinRange(double minimum, double maximum);

    QSlider* slider() const { return m_slider; }
    QDoubleSpinBox* spinBox() const { return m_spin; }

signals:
    void valueEdited(double value);

private:
    int toSlider(double value) const;
    double fromSlider(int position) const;
    void onSliderMoved(int position);
    void onSpinChanged(double value);

    Scale m_scale;
    double m_minimum;
    double m_maximum;
    QSlider* m_slider;
    QDoubleSpinBox* m_spin;
    bool m_syncing = false;
};

} // namespace envelope::ui
