// Base of the control groups of the training panel: a titled group that edits one document.
// Each subclass builds its controls, turns user input into PlanDocument::edit() calls and
// refreshes its widgets (signals blocked) whenever the plan changes.
#pragma once

#include <QGroupBox>

#include <functional>

#include "plan/plan.h"

class QCheckBox;
class QLabel;
class QFormLayout;
class QSpinBox;

namespace envelope::ui {

class PlanDocument;

// Merge ids: consecutive edits of the same control become one undo step.
enum ControlId {
    kModelSizeControl = 1,
    kContextControl,
    kMicroBatchControl,
    kGradAccumControl,
    kGpuCountControl,
    kTpControl,
    kPpControl,
    kCpControl,
    kEpControl,
    kRecomputeEveryControl,
    kActivationOffloadLayersControl,
};

class PlanControlGroup : public QGroupBox {
    Q_OBJECT
public:
    PlanControlGroup(const QString& title, PlanDocument* document, QWidget* parent = nullptr);

protected:
    // Rebuilds the widgets from the document's plan; called with the group's signals handled by
    // each subclass (QSignalBlocker on the widgets it touches).
    virtual void refresh() = 0;

    // Applies `change` to a copy of the plan and records it as one undoable edit.
    void edit(
        const QString& description, const std::function<void(Plan&)>& change, int mergeId = -1);

    // A check box row; each toggle records "<undoName> on|off" as one edit through `set`.
    // `undoName` defaults to the box's text without its mnemonic.
    QCheckBox* addSwitch(const QString& text, const QString& tip,
        std::function<void(Plan&, bool)> set, const QString& undoName = QString());

    // A spin box row in minimum..maximum; each value records "<label> <value>" as an edit
    // through `set` (consecutive ones merge under `mergeId`).
    QSpinBox* addSpin(const QString& label, const QString& tip, int minimum, int maximum,
        int mergeId, std::function<void(Plan&, int)> set);

    // A row label as undo text: "Pipeline p&arallel:" -> "Pipeline parallel".
    static QString undoName(const QString& label);

    PlanDocument* document() const { return m_document; }
    QFormLayout* form() const { return m_form; }
    // A row whose field takes the column's whole width under its label: a combo box whose
    // choices ("bf16 mixed, fp32 master (16 B/param)") would be cut beside a label.
    // Returns the caption, for a group that shows and hides the pair.
    QLabel* addWideRow(const QString& label, QWidget* field);

private:
    PlanDocument* m_document;
    QFormLayout* m_form;
};

} // namespace envelope::ui
