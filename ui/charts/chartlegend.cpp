#include "charts/chartlegend.h"

#include <QEvent>
#include <QPainter>

#include <algorithm>

namespace envelope::ui {
namespace {
constexpr int kMarker = 12; // marker square / line length, px
constexpr int kGap = 5; // marker to text
constexpr int kSpacing = 14; // between entries
constexpr int kRowGap = 2;
} // namespace

ChartLegend::ChartLegend(QWidget* parent)
    : QWidget(parent)
{
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void ChartLegend::setEntries(const QList<Entry>& entries)
{
    if (entries == m_entries)
        return;
    const bool relayout = entries.size() != m_entries.size()
        || !std::equal(entries.begin(), entries.end(), m_entries.begin(),
            [](const Entry& a, const Entry& b) { return a.text == b.text; });
    m_entries = entries;
    if (relayout) {
        forgetLayout();
        updateGeometry();
    }
    update();
}

void ChartLegend::forgetLayout()
{
    m_widths.clear();
    m_rectsWidth = -1;
    m_rects.clear();
}

int ChartLegend::entryWidth(qsizetype index) const
{
    if (m_widths.size() != m_entries.size()) {
        m_widths.clear();
        const QFontMetrics metrics = fontMetrics();
        for (const Entry& entry : m_entries)
            m_widths.push_back(kMarker + kGap + metrics.horizontalAdvance(entry.text));
    }
    return m_widths[index];
}

int ChartLegend::rowHeight() const
{
    return std::max(fontMetrics().height(), kMarker);
}

QList<QRect> ChartLegend::entryRects(int width) const
{
    if (width == m_rectsWidth)
        return m_rects;
    // Greedy rows, each centred: the layout a reader expects of a legend under a plot.
    QList<QRect> rects;
    QList<int> rowStarts;
    int x = 0;
    int row = 0;
    for (qsizetype i = 0; i < m_entries.size(); ++i) {
        const int w = entryWidth(i);
        if (x > 0 && x + w > width) {
            ++row;
            x = 0;
        }
        if (x == 0)
            rowStarts.push_back(int(rects.size()));
        rects.push_back(QRect(x, row * (rowHeight() + kRowGap), w, rowHeight()));
        x += w + kSpacing;
    }
    rowStarts.push_back(int(rects.size()));
    for (qsizetype r = 0; r + 1 < rowStarts.size(); ++r) {
        const int first = rowStarts[r];
        const int last = rowStarts[r + 1] - 1;
        const int used = rects[last].right() + 1;
        const int shift = std::max(0, (width - used) / 2);
        for (int i = first; i <= last; ++i)
            rects[i].translate(shift, 0);
    }
    m_rectsWidth = width;
    m_rects = rects;
    return rects;
}

int ChartLegend::heightForWidth(int width) const
{
    const QList<QRect> rects = entryRects(width);
    return rects.isEmpty() ? 0 : rects.back().bottom() + 1;
}

QSize ChartLegend::sizeHint() const
{
    int width = 0;
    for (qsizetype i = 0; i < m_entries.size(); ++i)
        width += entryWidth(i) + kSpacing;
    width = std::max(0, width - kSpacing);
    return { width, heightForWidth(width) };
}

QSize ChartLegend::minimumSizeHint() const
{
    int widest = 0;
    for (qsizetype i = 0; i < m_entries.size(); ++i)
        widest = std::max(widest, entryWidth(i));
    return { widest, heightForWidth(widest) };
}

void ChartLegend::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QList<QRect> rects = entryRects(width());
    for (qsizetype i = 0; i < rects.size(); ++i) {
        const Entry& entry = m_entries[i];
        const QRect r = rects[i];
        const QRect marker(r.left(), r.center().y() - kMarker / 2, kMarker, kMarker);
        switch (entry.marker) {
        case Marker::Box:
            painter.setPen(entry.color.darker(125));
            painter.setBrush(entry.color);
            painter.drawRect(marker.adjusted(0, 0, -1, -1));
            break;
        case Marker::Dot:
            painter.setPen(QPen(Qt::black, 1));
            painter.setBrush(entry.color);
            painter.drawEllipse(marker.adjusted(1, 1, -1, -1));
            break;
        case Marker::Line:
        case Marker::DashLine:
        case Marker::DotLine: {
            const Qt::PenStyle style = entry.marker == Marker::Line ? Qt::SolidLine
                : entry.marker == Marker::DashLine                  ? Qt::DashLine
                                                                    : Qt::DotLine;
            painter.setPen(QPen(entry.color, 2.0, style, Qt::FlatCap));
            painter.drawLine(QPointF(marker.left(), marker.center().y() + 0.5),
                QPointF(marker.right() + 1, marker.center().y() + 0.5));
            break;
        }
        }
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(
            r.adjusted(kMarker + kGap, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, entry.text);
    }
}

void ChartLegend::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange) {
        forgetLayout();
        updateGeometry();
    }
    QWidget::changeEvent(event);
}

} // namespace envelope::ui
