// Memory savers group: precision recipe, optimizer, recompute (with k), flash attention, offload.
#pragma once

#include "controls/plancontrolgroup.h"

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace envelope::ui {

class MemorySaverControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit MemorySaverControls(PlanDocument* document, QWidget* parent = nullptr);

    QComboBox* recipeCombo() const { return m_recipe; }
    QComboBox* optimizerCombo() const { return m_optimizer; }
    QComboBox* recomputeCombo() const { return m_recompute; }
    QSpinBox* recomputeEveryControl() const { return m_every; }
    QCheckBox* flashAttentionCheck() const { return m_flash; }
    QCheckBox* offloadOptimizerCheck() const { return m_offloadOptimizer; }

protected:
    void refresh() override;

private:
    QComboBox* m_recipe;
    QComboBox* m_optimizer;
    QComboBox* m_recompute;
    QSpinBox* m_every;
    QCheckBox* m_flash;
    QCheckBox* m_offloadOptimizer;
    QCheckBox* m_offloadParams;
};

} // namespace envelope::ui
