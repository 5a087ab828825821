#include "controls/plancontrolgroup.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>

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

QSpinBox* PlanControlGroup::addSpin(const QString& label, const QString& tip, int minimum,
    int maximum, int mergeId, std::function<void(Plan&, int)> set)
{
    auto* spin = new QSpinBox(this);
    spin->setRange(minimum, maximum);
    spin->setKeyboardTracking(false);
    spin->setToolTip(tip);
    m_form->addRow(label, spin);
    const QString name = undoName(label);
    connect(spin, &QSpinBox::valueChanged, this, [this, name, mergeId, set](int v) {
        edit(
            tr("%1 %2").arg(name).arg(v), [&set, v](Plan& p) { set(p, v); }, mergeId);
    });
    return spin;
}

QString PlanControlGroup::undoName(const QString& label)
{
    return QString(label).remove(QLatin1Char('&')).remove(QLatin1Char(':'));
}

QLabel* PlanControlGroup::addWideRow(const QString& label, QWidget* field)
{
    auto* caption = new QLabel(label, this);
    caption->setBuddy(field);
    m_form->addRow(caption);
    m_form->addRow(field);
    return caption;
}

void PlanControlGroup::edit(
    const QString& description, const std::function<void(Plan&)>& change, int mergeId)
{
    Plan plan = m_document->plan();
    change(plan);
    m_document->edit(plan, description, mergeId);
}

} // namespace envelope::ui
