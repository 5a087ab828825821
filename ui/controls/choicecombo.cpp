#include "controls/choicecombo.h"

#include <QAbstractItemView>
#include <QHelpEvent>
#include <QScrollBar>
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
