#include "widgets/flowlayout.h"

#include <QWidget>

#include <algorithm>

namespace envelope::ui {

FlowLayout::FlowLayout(QWidget* parent, int horizontalSpacing, int verticalSpacing)
    : QLayout(parent)
    , m_hSpacing(horizontalSpacing)
    , m_vSpacing(verticalSpacing)
{ }

FlowLayout::~FlowLayout()
{
    while (QLayoutItem* item = takeAt(0))
        delete item;
}

void FlowLayout::setLastItemElastic(int minimumWidth)
{
    m_elasticMinimum = minimumWidth;
    invalidate();
}

void FlowLayout::addItem(QLayoutItem* item)
{
    m_items.append(item);
    invalidate();
}

int FlowLayout::count() const
{
    return int(m_items.size());
}

QLayoutItem* FlowLayout::itemAt(int index) const
{
    return index >= 0 && index < m_items.size() ? m_items[index] : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index)
{
    if (index < 0 || index >= m_items.size())
        return nullptr;
    QLayoutItem* item = m_items.takeAt(index);
    invalidate();
    return item;
}

Qt::Orientations FlowLayout::expandingDirections() const
{
    return {};
}

bool FlowLayout::hasHeightForWidth() const
{
    return true;
}

int FlowLayout::heightForWidth(int width) const
{
    return arrange(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const
{
    // The widest single item: anything narrower would clip it.
    QSize size;
    for (const QLayoutItem* item : m_items)
        if (!item->isEmpty())
            size = size.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return size + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const
{
    // Everything on one row.
    int width = 0;
    int height = 0;
    int visible = 0;
    for (const QLayoutItem* item : m_items) {
        if (item->isEmpty())
            continue;
        const QSize hint = item->sizeHint();
        width += hint.width();
        height = std::max(height, hint.height());
        ++visible;
    }
    width += std::max(0, visible - 1) * m_hSpacing;
    const QMargins m = contentsMargins();
    return QSize(width + m.left() + m.right(), height + m.top() + m.bottom());
}

void FlowLayout::setGeometry(const QRect& rect)
{
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::arrange(const QRect& rect, bool apply) const
{
    const QRect area = rect.marginsRemoved(contentsMargins());
    struct Placed {
        QLayoutItem* item;
        int x;
        int width;
        int height;
    };
    QList<QList<Placed>> rows(1);
    int x = area.x();
    QLayoutItem* last = nullptr;
    for (QLayoutItem* item : m_items)
        if (!item->isEmpty())
            last = item;
    for (QLayoutItem* item : m_items) {
        if (item->isEmpty())
            continue;
        const bool elastic = item == last && m_elasticMinimum >= 0;
        const int wanted = elastic ? std::max(m_elasticMinimum, item->minimumSize().width())
                                   : item->sizeHint().width();
        int width = std::min(wanted, std::max(area.width(), 0));
        if (x + width > area.right() + 1 && !rows.back().isEmpty()) {
            rows.append(QList<Placed>());
            x = area.x();
        }
        if (elastic)
            width = std::max(width, area.right() + 1 - x);
        const int height
            = item->hasHeightForWidth() ? item->heightForWidth(width) : item->sizeHint().height();
        rows.back().append({ item, x, width, height });
        x += width + m_hSpacing;
    }

    int y = area.y();
    int usedRows = 0;
    for (const QList<Placed>& row : rows) {
        if (row.isEmpty())
            continue;
        int rowHeight = 0;
        for (const Placed& p : row)
            rowHeight = std::max(rowHeight, p.height);
        if (apply)
            for (const Placed& p : row)
                p.item->setGeometry(QRect(p.x, y + (rowHeight - p.height) / 2, p.width, p.height));
        y += rowHeight + m_vSpacing;
        ++usedRows;
    }
    if (usedRows > 0)
        y -= m_vSpacing;
    if (apply)
        m_rows = usedRows;
    return y - area.y() + contentsMargins().top() + contentsMargins().bottom();
}

} // namespace envelope::ui
