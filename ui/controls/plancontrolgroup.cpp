#include "controls/plancontrolgroup.h"

#include <QFormLayout>
#include <QLabel>

#include "document/plandocument.h"

namespace envelope::ui {

PlanControlGroup::PlanControlGroup(const QString& title, PlanDocument* document, QWidget* parent)
    : QGroupBox(title, parent)
    , m_document(document)
    , m_form(new QFormLayout(this))
{
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    // The document recomputes before it emits planChanged, so one signal carries both.
    connect(document, &PlanDocument::planChanged, this, [this] { refresh(); });
}

void PlanControlGroup::addWideRow(const QString& label, QWidget* field)
{
    auto* caption = new QLabel(label, this);
    caption->setBuddy(field);
    m_form->addRow(caption);
    m_form->addRow(field);
}

void PlanControlGroup::edit(
    const QString& description, const std::function<void(Plan&)>& change, int mergeId)
{
    Plan plan = m_document->plan();
    change(plan);
    m_document->edit(plan, description, mergeId);
}

} // namespace envelope::ui
