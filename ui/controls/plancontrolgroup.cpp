#include "controls/plancontrolgroup.h"

#include <QCheckBox>
#include <QFormLayout>

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

QCheckBox* PlanControlGroup::addSwitch(const QString& text, const QString& tip,
    std::function<void(Plan&, bool)> set, const QString& undoName)
{
    auto* check = new QCheckBox(text, this);
    check->setToolTip(tip);
    m_form->addRow(QString(), check);
    const QString name = undoName.isEmpty() ? QString(text).remove(QLatin1Char('&')) : undoName;
    connect(check, &QCheckBox::toggled, this, [this, name, set](bool on) {
        edit(on ? tr("%1 on").arg(name) : tr("%1 off").arg(name),
            [&set, on](Plan& p) { set(p, on); });
    });
    return check;
}

void PlanControlGroup::edit(
    const QString& description, const std::function<void(Plan&)>& change, int mergeId)
{
    Plan plan = m_document->plan();
    change(plan);
    m_document->edit(plan, description, mergeId);
}

} // namespace envelope::ui
