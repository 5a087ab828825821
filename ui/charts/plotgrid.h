// A chart's grid and axis lines, drawn as opaque one-pixel rectangles.
//
// Qt Charts draws its grid and axis lines with the raster engine's cosmetic stroker, which emits
// one span per pixel and hands every 255 spans to Qt's thread pool in four pieces: hundreds of
// thread hand-offs per slider step, a quarter of its wall time on two cores (measured:
// docs/performance.md). An opaque axis-aligned rectangle takes the engine's plain
// memory-fill path instead. The colours are the palette's text blended over its base at the
// strengths styleAxis gives the translucent lines, so the chart looks the same.
#pragma once

#include <QColor>
#include <QGraphicsObject>
#include <QList>
#include <QRect>

QT_BEGIN_NAMESPACE
class QChart;
class QPalette;
QT_END_NAMESPACE

namespace envelope::ui {

class PlotGrid : public QGraphicsObject {
    Q_OBJECT
public:
    // The chart's grid, creating it on the first call: hides the axes' own grid and axis lines and
    // draws, within the plot area, a horizontal line at each major and minor tick of the vertical
    // value axis (at each decade, and 2..9 times it, of a vertical log axis), a vertical line at
    // each category boundary of a horizontal QCategoryAxis, and the left and bottom edges as axis
    // lines. Call after the axes are attached; again on a palette change (styleChart does both).
    static PlotGrid* install(QChart* chart, const QPalette& palette);
    static PlotGrid* of(const QChart* chart);

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    // What paint() fills, in chart coordinates (for tests).
    const QList<QRect>& majorLines() const { return m_major; }
    const QList<QRect>& minorLines() const { return m_minor; }
    const QList<QRect>& axisLines() const { return m_axes; }
    QColor majorColor() const { return m_majorColor; }

private:
    explicit PlotGrid(QChart* chart);
    void setPalette(const QPalette& palette);
    void adoptAxes();
    void relayout();

    QChart* m_chart;
    QList<QRect> m_major;
    QList<QRect> m_minor;
    QList<QRect> m_axes;
    QRectF m_bounds;
    QColor m_majorColor;
    QColor m_minorColor;
    QColor m_axisColor;
};

} // namespace envelope::ui
