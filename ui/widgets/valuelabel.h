// A figure's value ("67.1K tok/s", "37.3 GB of 85.5 GB"): a plain-text label whose context menu
// copies the text, optionally led by a colour swatch (the tenant it names).
//
// Not a selectable QLabel: text interaction gives each label a QTextDocument that is laid out
// again on every size query and paint, which made the figures that change on each slider step
// a fifth of the drag's cost.
#pragma once

#include <QColor>
#include <QLabel>

namespace envelope::ui {

class ValueLabel : public QLabel {
    Q_OBJECT
public:
    explicit ValueLabel(QWidget* parent = nullptr);

    // A filled square before the text; an invalid colour removes it.
    void setSwatch(const QColor& color);
    QColor swatch() const { return m_swatch; }

    // Puts the text on the clipboard (the context menu's "Copy").
    void copy() const;

    // With word wrap on, the label asks for one line and wraps only when given less (QLabel's
    // own hint for wrapping text picks a squarish block and wraps even a short value).
    QSize sizeHint() const override;

    int heightForWidth(int width) const override;

    // A figure that changes on every slider step keeps the widest width and the most lines it
    // has asked for, so the row it sits in does not shift as its digits do or as a wrapped
    // sentence gains and loses a line (and the charts below are not laid out again each time:
    // such a flip resized both chart views).
    void setGrowOnly(bool growOnly) { m_growOnly = growOnly; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    int swatchSize() const;

    QColor m_swatch;
    bool m_growOnly = false;
    mutable int m_widest = 0; // the widest sizeHint given, with m_growOnly
    mutable int m_tallest = 0; // the tallest height given, with m_growOnly
};

} // namespace envelope::ui
