#include "widgets/formulatooltips.h"

#include <QHelpEvent>
#include <QToolTip>
#include <QWidget>

namespace envelope::ui {

FormulaToolTips::FormulaToolTips(QObject* parent)
    : QObject(parent)
{ }

void FormulaToolTips::attach(QWidget* widget, const QString& figure)
{
    m_figures.insert(widget, figure);
    widget->installEventFilter(this);
    connect(widget, &QObject::destroyed, this, [this](QObject* gone) { m_figures.remove(gone); });
}

QString FormulaToolTips::toolTipFor(QWidget* widget) const
{
    const auto it = m_figures.constFind(widget);
    if (it == m_figures.constEnd())
        return widget->toolTip();
    const QString formula = m_provider ? m_provider(*it) : QString();
    const QString own = widget->toolTip();
    if (own.isEmpty())
        return formula;
    return formula.isEmpty() ? own : own + QStringLiteral("<br>") + formula;
}

bool FormulaToolTips::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::ToolTip && m_figures.contains(watched)) {
        auto* widget = static_cast<QWidget*>(watched);
        const QString text = toolTipFor(widget);
        const auto* help = static_cast<QHelpEvent*>(event);
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, widget);
        return true;
    }
    return QObject::eventFilter(watched, event);
}

} // namespace envelope::ui
