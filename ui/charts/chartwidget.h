// The frame every Qt Charts chart of the app shares: a QChart in a QChartView styled by
// styleChart (palette colours, no animation, PlotGrid's fast grid), restyled on a palette change,
// an optional header row above the plot (toggles, a headline figure) and the wrapping
// ChartLegend below it in place of Qt's one-row legend, which elides labels when narrow.
// Subclasses add their series and axes, call finishChart(), and place their overlay items
// (labels, markers) in placeOverlays(), which runs whenever the plot area moves.
#pragma once

#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QHBoxLayout;
QT_END_NAMESPACE

namespace envelope::ui {

class ChartLegend;

class ChartWidget : public QWidget {
    Q_OBJECT
public:
    QChartView* chartView() const { return m_view; }
    ChartLegend* legend() const { return m_legend; }

protected:
    explicit ChartWidget(QWidget* parent = nullptr);

    QChart* chart() const { return m_chart; }
    // The row above the plot; empty (and taking no room) until something is added to it.
    QHBoxLayout* header() const { return m_header; }

    // Styles the chart (after the axes are attached: PlotGrid reads them) and starts placing the
    // overlays. `antialiased`: curves want it; axis-aligned bars and lines look the same without
    // it and paint in half the time.
    void finishChart(bool antialiased);

    // Places the overlay items over the plot; called when the plot area changes and after a
    // palette change. Subclasses call it too once their data changed.
    virtual void placeOverlays() { }

    void changeEvent(QEvent* event) override;

private:
    QChart* m_chart;
    QChartView* m_view;
    ChartLegend* m_legend;
    QHBoxLayout* m_header;
};

} // namespace envelope::ui
