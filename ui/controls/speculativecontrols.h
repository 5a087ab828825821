// Speculative-decoding group of the Serving tab (issue 27, serving.speculative): the draft
// (the checkpoint's MTP module, an EAGLE head, or the plan's draft model), the tokens it drafts
// per step and their acceptance rate. Every change is one undoable PlanDocument edit; the note
// under the controls shows the core's figures for them (tokens per step, the gain, the draft's
// weights), never a figure of its own.
#pragma once

#include "controls/plancontrolgroup.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace envelope::ui {

// Merge ids (after the workload controls').
enum SpeculativeControlId {
    kSpeculativeTokensControl = 140,
    kSpeculativeAcceptanceControl,
};

class SpeculativeControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit SpeculativeControls(PlanDocument* document, QWidget* parent = nullptr);

    QCheckBox* enabledBox() const { return m_enabled; }
    QComboBox* kindCombo() const { return m_kind; }
    QSpinBox* tokensSpin() const { return m_tokens; }
    QDoubleSpinBox* acceptanceSpin() const { return m_acceptance; }
    QLabel* note() const { return m_note; }

    // What the switch turns on for `arch`: its MTP module with 1 token when it ships one, else
    // an EAGLE head drafting 3; acceptance 0.7 until the user enters the workload's.
    static ServingSpeculative defaultSpeculative(const ModelArch& arch);

protected:
    void refresh() override;

private:
    QCheckBox* m_enabled;
    QLabel* m_kindCaption;
    QComboBox* m_kind;
    QSpinBox* m_tokens;
    QDoubleSpinBox* m_acceptance;
    QLabel* m_note;
};

} // namespace envelope::ui
