#include "widgets/elidingdelegate.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace envelope::ui {

QString ElidingDelegate::elide(const QString& text, const QFontMetrics& metrics, int width)
{
    if (width <= 0)
        return {};
    // No glyph of a text font is narrower than a third of the average width, so a prefix this
    // long always overflows the cell when the text is cut: the ellipsis still lands right.
    const qsizetype reach
        = qsizetype(std::ceil(3.0 * width / std::max(1, metrics.averageCharWidth()))) + 1;
    if (text.size() <= reach)
        return metrics.elidedText(text, Qt::ElideRight, width);
    return metrics.elidedText(text.left(reach) + QChar(0x2026), Qt::ElideRight, width);
}

void ElidingDelegate::paint(
    QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear();
    const QWidget* widget = opt.widget;
    QStyle* style = widget ? widget->style() : QApplication::style();
    // Background, selection, focus and decoration as the style draws them, without the text.
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
    if (text.isEmpty())
        return;

    // The margin QCommonStyle leaves inside the text rectangle.
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    const QRect rect = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget)
                           .adjusted(margin, 0, -margin, 0);
    const Key key { text, rect.width(), opt.font.key() };
    auto it = m_cache.constFind(key);
    if (it == m_cache.constEnd()) {
        if (m_cache.size() >= kCacheLimit)
            m_cache.clear();
        QStaticText laidOut(elide(text, QFontMetrics(opt.font), rect.width()));
        laidOut.setTextFormat(Qt::PlainText);
        laidOut.prepare(QTransform(), opt.font);
        it = m_cache.insert(key, laidOut);
    }
    const QSizeF size = it->size();
    const double x
        = (opt.displayAlignment & Qt::AlignRight) ? rect.right() + 1 - size.width() : rect.left();
    const double y = rect.top() + (rect.height() - size.height()) / 2;

    const QPalette::ColorGroup group = !(opt.state & QStyle::State_Enabled) ? QPalette::Disabled
        : (opt.state & QStyle::State_Active)                                ? QPalette::Active
                                                                            : QPalette::Inactive;
    painter->save();
    painter->setFont(opt.font);
    painter->setPen(opt.palette.color(
        group, (opt.state & QStyle::State_Selected) ? QPalette::HighlightedText : QPalette::Text));
    painter->drawStaticText(QPointF(x, y), *it);
    painter->restore();
}

} // namespace envelope::ui
