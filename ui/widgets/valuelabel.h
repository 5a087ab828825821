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

protected:
    void paintEvent(QPaintEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    int swatchSize() const;

    QColor m_swatch;
};

} // namespace envelope::ui
