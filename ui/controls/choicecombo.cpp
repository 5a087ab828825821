#include "controls/choicecombo.h"

#include <QAbstractItemView>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QListView>
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
    m_filter.clear();
    applyFilter();
    list->installEventFilter(this);
    QComboBox::showPopup();
}

void ChoiceCombo::hidePopup()
{
    view()->removeEventFilter(this);
    QComboBox::hidePopup();
    m_filter.clear();
    applyFilter();
}

bool ChoiceCombo::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == view() && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        const QString text = key->text();
        if (key->key() == Qt::Key_Backspace && !m_filter.isEmpty()) {
            m_filter.chop(1);
            applyFilter();
            return true;
        }
        if (!text.isEmpty() && text.at(0).isPrint() && !(key->modifiers() & Qt::ControlModifier)) {
            m_filter += text;
            applyFilter();
            return true;
        }
    }
    return QComboBox::eventFilter(watched, event);
}

// Rows that do not contain the filter hide; a heading hides when none of its choices shows;
// the first choice that shows becomes the list's current row (what Enter picks).
void ChoiceCombo::applyFilter()
{
    auto* list = qobject_cast<QListView*>(view());
    if (!list)
        return;
    const auto isHeading = [&](int row) {
        return !(model()->flags(model()->index(row, 0)) & Qt::ItemIsSelectable);
    };
    int heading = -1;
    bool headingHasMatch = false;
    int first = -1;
    for (int row = 0; row < count(); ++row) {
        if (isHeading(row)) {
            if (heading >= 0)
                list->setRowHidden(heading, !headingHasMatch);
            heading = row;
            headingHasMatch = false;
            continue;
        }
        const bool match = m_filter.isEmpty() || itemText(row).contains(m_filter, Qt::CaseInsensitive);
        list->setRowHidden(row, !match);
        headingHasMatch = headingHasMatch || match;
        if (match && first < 0)
            first = row;
    }
    if (heading >= 0)
        list->setRowHidden(heading, !headingHasMatch);
    if (!m_filter.isEmpty() && first >= 0)
        list->setCurrentIndex(model()->index(first, 0));
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
