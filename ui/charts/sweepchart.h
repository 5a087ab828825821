// Second chart: total per-GPU memory against context length or micro-batch (a toggle), from the
// core's sweep(), on a log2 axis, with the HBM and usable lines and the plan's own point marked.
#pragma once

#include <QPointF>

#include <utility>

#include "base/units.h"
#include "charts/chartwidget.h"

QT_BEGIN_NAMESPACE
class QCategoryAxis;
class QComboBox;
class QLabel;
class QLineSeries;
class QGraphicsEllipseItem;
class QValueAxis;
QT_END_NAMESPACE

namespace envelope::ui {

struct TrainingResults;

class SweepChart : public ChartWidget {
    Q_OBJECT
public:
    enum class Axis { Context, MicroBatch };

    explicit SweepChart(QWidget* parent = nullptr);

    // `maxPositions`: the model's positions (0 unknown), marked on the context axis.
    void setResults(const TrainingResults& results, int seqLen, int microBatch, ByteUnits units,
        double maxPositions = 0);
    void setAxis(Axis axis);
    Axis axis() const { return m_axis; }

    QComboBox* axisCombo() const { return m_axisCombo; }
    QLineSeries* totalSeries() const { return m_total; }
    QLineSeries* positionsLine() const { return m_positionsLine; } // hidden when not marked
    QLineSeries* usableLine() const { return m_usableLine; }
    // The plan's own point in chart coordinates (x = log2 of the swept value, y = memory).
    QPointF currentPoint() const { return m_currentValue; }
    QGraphicsEllipseItem* currentMarker() const { return m_current; }
    QCategoryAxis* xAxis() const { return m_xAxis; }
    QLabel* largestLabel() const { return m_largestLabel; }

    // "256", "4K", "1M": a power-of-two count as axis labels show it.
    static QString shortCount(double value);

signals:
    void axisChanged(envelope::ui::SweepChart::Axis axis);

protected:
    // Re-picks the x labels when the plot's width changed, and moves the plan's marker.
    void placeOverlays() override;

private:
    void updateXLabels();
    std::pair<double, double> xRange() const; // the x axis' range at the plot's width
    void placeCurrentMarker();

    Axis m_axis = Axis::Context;
    QComboBox* m_axisCombo;
    QLineSeries* m_total;
    QLineSeries* m_hbmLine;
    QLineSeries* m_usableLine;
    QLineSeries* m_positionsLine;
    // A marker item over the plot rather than a scatter series: a series spans the whole plot, so
    // moving its one point repainted every grid line and the curve on each slider step.
    QGraphicsEllipseItem* m_current;
    QPointF m_currentValue;
    QCategoryAxis* m_xAxis;
    QValueAxis* m_yAxis;
    QLabel* m_largestLabel;
    double m_first = 0; // log2 of the first and last sweep points
    double m_last = 1;
    double m_ownX = 0; // log2 of the plan's own point
    double m_labelledWidth = -1; // plot width the x labels were picked for
};

} // namespace envelope::ui
