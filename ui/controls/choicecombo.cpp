#include "controls/choicecombo.h"

#include <QAbstractItemView>
#include <QHelpEvent>
#include <QScrollBar>
#include <QStandardItemModel>
#include <QStyle>
#include <QToolTip>

#include <algorithm>

namespace envelope::ui {

void ChoiceCombo::showPopup()
{
    QAbstractItemView* list = view();
    const int widest = list->sizeHintForColumn(0) + 2 * list->frameWidth()
        + style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, list);
    list->setMinimumWidth(std::max(width(), widest));
    QComboBox::showPopup();
}

void ChoiceCombo::addHeading(const QString& text)
{
    addItem(text);
    if (auto* items = qobject_cast<QStandardItemModel*>(model())) {
        QStandardItem* heading = items->item(count() - 1);
        heading->setFlags(Qt::NoItemFlags);
        QFont bold = font();
        bold.setBold(true);
        heading->setFont(bold);
    }
}

void ChoiceCombo::addGrouped(const QList<GroupedChoice>& choices)
{
    QStringList groups;
    for (const GroupedChoice& c : choices)
        if (!groups.contains(c.group))
            groups.push_back(c.group);
    for (const QString& group : groups) {
        addHeading(group);
        for (const GroupedChoice& c : choices)
            if (c.group == group)
                addItem(c.text, c.data);
    }
}

bool ChoiceCombo::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip && toolTip().isEmpty() && !currentText().isEmpty()) {
        // Read when asked: refreshes set the index with signals blocked.
        QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), currentText(), this);
        return true;
    }
    return QComboBox::event(event);
}

} // namespace envelope::ui
