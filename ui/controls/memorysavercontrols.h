// Memory savers group: precision recipe, optimizer, recompute (with k), flash attention, offload
// (optimizer, parameters, activations) and the optimizer step in the backward.
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
    QCheckBox* optimizerInBackwardCheck() const { return m_optimizerInBackward; }
    QCheckBox* activationOffloadCheck() const { return m_activationOffload; }
    QSpinBox* activationOffloadLayersSpin() const { return m_activationOffloadLayers; }

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
    QCheckBox* m_optimizerInBackward;
    QCheckBox* m_activationOffload;
    QSpinBox* m_activationOffloadLayers;
};

} // namespace envelope::ui
