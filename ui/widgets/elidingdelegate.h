// Item delegate for long single-line cells (the details pane's formulas and sources): paints the
// cell's start elided to its width, from a cache of laid-out text, instead of Qt's default path.
// The default lays out and shapes the whole string with line breaking before eliding it, on every
// repaint of every cell: about half a million instructions a cell, the costliest part of a
// slider drag.
#pragma once

#include <QHash>
#include <QStaticText>
#include <QStyledItemDelegate>

namespace envelope::ui {

class ElidingDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
        const QModelIndex& index) const override;

    // `text` shortened to fit `width` pixels in `metrics`' font, ending in "…" when cut. Only a
    // prefix that can reach the width is measured, so the cost does not grow with the text.
    static QString elide(const QString& text, const QFontMetrics& metrics, int width);

private:
    struct Key {
        QString text;
        int width;
        QString font;
        bool operator==(const Key&) const = default;
    };
    friend size_t qHash(const Key& key, size_t seed) noexcept
    {
        return qHashMulti(seed, key.text, key.width, key.font);
    }
    // Elided and laid-out texts by (text, width, font); most cells do not change between
    // repaints. Bounded: cleared when it grows past kCacheLimit entries.
    static constexpr qsizetype kCacheLimit = 4096;
    mutable QHash<Key, QStaticText> m_cache;
};

} // namespace envelope::ui
