// The throughput assumptions of the plan: MFU, the token budget to train and how much of the
// communication hides behind compute. Each change is one undoable edit (a slider drag merges).
#pragma once

#include "controls/plancontrolgroup.h"

namespace envelope::ui {

class SliderSpin;

// Merge ids of the throughput panel's controls, after the training controls' ControlId values.
enum ThroughputControlId {
    kMfuControl = 100,
    kTrainTokensControl,
    kCommOverlapControl,
    kBudgetUsdControl,
    kDeadlineControl,
};

class ThroughputControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit ThroughputControls(PlanDocument* document, QWidget* parent = nullptr);

    SliderSpin* mfu() const { return m_mfu; } // percent
    SliderSpin* trainTokens() const { return m_trainTokens; } // billions of tokens
    SliderSpin* commOverlap() const { return m_overlap; } // percent

protected:
    void refresh() override;

private:
    SliderSpin* m_mfu;
    SliderSpin* m_trainTokens;
    SliderSpin* m_overlap;
};

} // namespace envelope::ui
