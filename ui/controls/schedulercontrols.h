// Engine-scheduler group of the Serving tab (issue 27, docs/plan-format.md): whether a step
// carries decodes and prompt tokens together (serving.mixed_batches), whether a prompt may
// split over steps (serving.chunked_prefill), the overlap scheduler
// (serving.overlap_scheduler) and vLLM V0's multi-step bursts (serving.scheduler_steps). Each
// choice is the engine version's default, or on, or off; the default's item names what the
// engine does and why (the core's engineScheduler), and choices the engine does not have are
// greyed out rather than written and refused. Every change is one undoable PlanDocument edit.
#pragma once

#include "controls/plancontrolgroup.h"

class QComboBox;
class QSpinBox;

namespace envelope::ui {

// Merge ids (after the speculative controls').
enum SchedulerControlId {
    kSchedulerStepsControl = 150,
};

class SchedulerControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit SchedulerControls(PlanDocument* document, QWidget* parent = nullptr);

    // Items: the engine's default (data -1), on (1), off (0).
    QComboBox* mixedCombo() const { return m_mixed; }
    QComboBox* chunkedCombo() const { return m_chunked; }
    QComboBox* overlapCombo() const { return m_overlap; }
    QSpinBox* stepsSpin() const { return m_steps; }

protected:
    void refresh() override;

private:
    QComboBox* m_mixed;
    QComboBox* m_chunked;
    QComboBox* m_overlap;
    QSpinBox* m_steps;
};

} // namespace envelope::ui
