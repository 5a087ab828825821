// Parallelism group: ZeRO stage, TP, PP, CP, EP, sequence parallel.
#pragma once

#include "controls/plancontrolgroup.h"

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace envelope::ui {

class ParallelismControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit ParallelismControls(PlanDocument* document, QWidget* parent = nullptr);

    QComboBox* zeroCombo() const { return m_zero; }
    QSpinBox* tpControl() const { return m_tp; }
    QSpinBox* ppControl() const { return m_pp; }

protected:
    void refresh() override;

private:
    QSpinBox* addDegree(
        const QString& label, const QString& tip, int mergeId, int TrainingConfig::*field);

    QComboBox* m_zero;
    QSpinBox* m_tp;
    QSpinBox* m_pp;
    QSpinBox* m_cp;
    QSpinBox* m_ep;
    QCheckBox* m_sequenceParallel;
};

} // namespace envelope::ui
