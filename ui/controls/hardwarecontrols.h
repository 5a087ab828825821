// Hardware group: GPU preset and GPU count.
#pragma once

#include "controls/choicecombo.h"
#include "controls/plancontrolgroup.h"

class QComboBox;
class QLabel;
class QSpinBox;

namespace envelope::ui {

class HardwareControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit HardwareControls(PlanDocument* document, QWidget* parent = nullptr);

    QComboBox* gpuCombo() const { return m_gpu; }
    QSpinBox* gpuCountControl() const { return m_gpus; }

protected:
    void refresh() override;

private:
    ChoiceCombo* m_gpu;
    QLabel* m_gpuNote;
    QSpinBox* m_gpus;
};

} // namespace envelope::ui
