#include "document/planeditcommand.h"

#include "document/plandocument.h"

namespace envelope::ui {

PlanEditCommand::PlanEditCommand(
    PlanDocument* document, Plan before, Plan after, const QString& text, int mergeId)
    : QUndoCommand(text)
    , m_document(document)
    , m_before(std::move(before))
    , m_after(std::move(after))
    , m_mergeId(mergeId)
{ }

void PlanEditCommand::undo()
{
    m_document->setPlan(m_before);
}

void PlanEditCommand::redo()
{
    m_document->setPlan(m_after);
}

bool PlanEditCommand::mergeWith(const QUndoCommand* other)
{
    const auto* edit = static_cast<const PlanEditCommand*>(other);
    if (edit->m_mergeId != m_mergeId || edit->m_document != m_document)
        return false;
    m_after = edit->m_after;
    setObsolete(m_after == m_before); // dragged back to where it started: no step at all
    return true;
}

} // namespace envelope::ui
