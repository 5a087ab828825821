#include "widgets/pagetabs.h"

#include <QEvent>
#include <QTabBar>

namespace envelope::ui {

bool PageTabs::event(QEvent* event)
{
    if (event->type() == QEvent::LayoutRequest) {
        // The tab bar's place and the pages' rectangle follow from the tab bar's hint and this
        // widget's size (a resize lays out again by itself); the window's layout needs to hear
        // only of a new size hint.
        const Hints hints { tabBar()->sizeHint(), minimumSizeHint(), sizeHint() };
        if (hints == m_hints)
            return QWidget::event(event);
        m_hints = hints;
    }
    return QTabWidget::event(event);
}

} // namespace envelope::ui
