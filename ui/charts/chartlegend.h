// A chart legend that wraps onto as many rows as its width needs, so no entry is ever elided.
// Qt Charts' own legend lays its markers out on one row and truncates the labels ("Wei...")
// when the chart is narrow; the charts hide it and show this widget under the plot instead.
#pragma once

#include <QColor>
#include <QList>
#include <QRect>
#include <QString>
#include <QWidget>

namespace envelope::ui {

class ChartLegend : public QWidget {
    Q_OBJECT
public:
    enum class Marker { Box, Line, DashLine, DotLine, Dot };
    struct Entry {
        QString text;
        QColor color;
        Marker marker = Marker::Box;
        bool operator==(const Entry&) const = default;
    };

    explicit ChartLegend(QWidget* parent = nullptr);

    // Replaces the entries; relays out only when they change.
    void setEntries(const QList<Entry>& entries);
    const QList<Entry>& entries() const { return m_entries; }
    // Where each entry is drawn at `width` (for tests: rows wrap, nothing overlaps or clips).
    QList<QRect> entryRects(int width) const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    int entryWidth(qsizetype index) const;
    int rowHeight() const;
    void forgetLayout(); // after a text or font change

    QList<Entry> m_entries;
    // Measured once per text and font: the layout asks for the legend's height and the paint for
    // its rects on every slider step, while the texts rarely change (measuring them each time
    // was a tenth of a step's instructions).
    mutable QList<int> m_widths;
    mutable int m_rectsWidth = -1;
    mutable QList<QRect> m_rects;
};

} // namespace envelope::ui
