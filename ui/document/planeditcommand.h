// One user edit of the plan as an undo step (Tiled's change commands). The whole Plan is a small
// value, so the command keeps the plan before and after.
#pragma once

#include <QUndoCommand>

#include "plan/plan.h"

namespace envelope::ui {

class PlanDocument;

class PlanEditCommand : public QUndoCommand {
public:
    // `mergeId` >= 0 merges consecutive edits of the same control into one step.
    PlanEditCommand(
        PlanDocument* document, Plan before, Plan after, const QString& text, int mergeId);

    void undo() override;
    void redo() override;
    int id() const override { return m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override;

private:
    PlanDocument* m_document;
    Plan m_before;
    Plan m_after;
    int m_mergeId;
};

} // namespace envelope::ui
