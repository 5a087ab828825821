// The main window's tabs: a QTabWidget that lays itself out again only when its tab bar or its
// pages ask for another size.
//
// A label whose text changes anywhere on a page outside a scroll area (the summary's figures,
// a chart's caption) invalidates every layout up to the tab widget, which QTabWidget answers by
// repainting its whole area. Everything on the page not under an opaque viewport then repaints
// on each slider step: three scroll bars, the tab bar, the splitter handles and the combo boxes,
// their gradients each split across Qt's raster thread pool (bench_ui's paints_per_step).
#pragma once

#include <QSize>
#include <QTabWidget>

namespace envelope::ui {

class PageTabs : public QTabWidget {
    Q_OBJECT
public:
    using QTabWidget::QTabWidget;

protected:
    bool event(QEvent* event) override;

private:
    struct Hints {
        QSize tabBar, minimum, preferred;
        bool operator==(const Hints&) const = default;
    };
    Hints m_hints; // as of the last layout (invalid sizes before the first)
};

} // namespace envelope::ui
