// RL group: algorithm, placement, GPUs per role, batch shape (prompts, group size, prompt and
// response length), KL to the reference, the off-policy pipeline (staleness bound, partial
// rollouts, updates per weight sync). Every change is one undoable PlanDocument edit.
#pragma once

#include "controls/plancontrolgroup.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace envelope::ui {

class SliderSpin;

// Merge ids of the RL controls (after the serving ones).
enum RlControlId {
    kRlTrainerGpusControl = 200,
    kRlReferenceGpusControl,
    kRlRolloutGpusControl,
    kRlCriticGpusControl,
    kRlRewardGpusControl,
    kRlPromptsControl,
    kRlGroupSizeControl,
    kRlPromptLenControl,
    kRlResponseLenControl,
    kRlStalenessControl,
    kRlUpdatesPerSyncControl,
};

class RlControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit RlControls(PlanDocument* document, QWidget* parent = nullptr);

    QComboBox* algorithmCombo() const { return m_algorithm; }
    QComboBox* placementCombo() const { return m_placement; }
    QSpinBox* trainerGpusControl() const { return m_trainerGpus; }
    QSpinBox* referenceGpusControl() const { return m_referenceGpus; }
    QSpinBox* rolloutGpusControl() const { return m_rolloutGpus; }
    QSpinBox* criticGpusControl() const { return m_criticGpus; }
    QSpinBox* rewardGpusControl() const { return m_rewardGpus; }
    SliderSpin* promptsControl() const { return m_prompts; }
    QSpinBox* groupSizeControl() const { return m_groupSize; }
    SliderSpin* promptLenControl() const { return m_promptLen; }
    SliderSpin* responseLenControl() const { return m_responseLen; }
    QCheckBox* klCheck() const { return m_kl; }
    QCheckBox* offPolicyCheck() const { return m_offPolicy; }
    QDoubleSpinBox* stalenessControl() const { return m_staleness; }
    QSpinBox* updatesPerSyncControl() const { return m_updatesPerSync; }
    QCheckBox* partialRolloutsCheck() const { return m_partial; }

protected:
    void refresh() override;

private:
    QSpinBox* addGpus(
        const QString& label, const QString& tip, int minimum, int mergeId, int RlConfig::*field);
    SliderSpin* addLength(
        const QString& label, const QString& tip, int mergeId, int RlConfig::*field);

    QComboBox* m_algorithm;
    QComboBox* m_placement;
    QSpinBox* m_trainerGpus;
    QSpinBox* m_referenceGpus;
    QSpinBox* m_rolloutGpus;
    QSpinBox* m_criticGpus;
    QSpinBox* m_rewardGpus;
    SliderSpin* m_prompts;
    QSpinBox* m_groupSize;
    SliderSpin* m_promptLen;
    SliderSpin* m_responseLen;
    QCheckBox* m_kl;
    QCheckBox* m_offPolicy;
    QDoubleSpinBox* m_staleness;
    QCheckBox* m_partial;
    QSpinBox* m_updatesPerSync;
};

} // namespace envelope::ui
