// A layout that places its items left to right and starts a new row when the next one does not
// fit, so a strip of figures never clips at any window width: it grows a row instead.
//
// The last item can be elastic: it takes what is left of its row, or a row of its own when less
// than its minimum width is left (the summary strip's wrapping "best single change").
#pragma once

#include <QLayout>
#include <QList>

namespace envelope::ui {

class FlowLayout : public QLayout {
public:
    explicit FlowLayout(
        QWidget* parent = nullptr, int horizontalSpacing = 12, int verticalSpacing = 4);
    ~FlowLayout() override;

    // The last item fills the rest of its row; it wraps when less than `minimumWidth` is left.
    void setLastItemElastic(int minimumWidth);

    void addItem(QLayoutItem* item) override;
    int count() const override;
    QLayoutItem* itemAt(int index) const override;
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override;
    bool hasHeightForWidth() const override;
    int heightForWidth(int width) const override;
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

    // How many rows the items took at the last setGeometry (for tests).
    int rowCount() const { return m_rows; }

private:
    // Places the items inside `rect` (or only measures when `apply` is false); returns the height
    // used, margins included.
    int arrange(const QRect& rect, bool apply) const;

    QList<QLayoutItem*> m_items;
    int m_hSpacing;
    int m_vSpacing;
    int m_elasticMinimum = -1;
    mutable int m_rows = 0;
};

} // namespace envelope::ui
