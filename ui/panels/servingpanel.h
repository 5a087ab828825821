// The serving panel: the per-GPU budget of an inference replica (weights, KV cache,
// activations, overhead) against HBM and gpu_memory_utilization, the capacity curve against
// context, and the serving figures, each with the core's formula as its tooltip.
#pragma once

#include <QWidget>

class QLabel;

namespace envelope::ui {

class FigureGrid;
class FormulaToolTips;
class MemoryBarChart;
class PlanDocument;
class ServingControls;
class ServingCurveChart;
class WorkloadControls;
class InteractivityChart;
class LatencyRateChart;
class SpeculativeControls;
class SchedulerControls;

class ServingPanel : public QWidget {
    Q_OBJECT
public:
    explicit ServingPanel(PlanDocument* document, QWidget* parent = nullptr);

    ServingControls* controls() const { return m_controls; }
    MemoryBarChart* memoryChart() const { return m_memoryChart; }
    ServingCurveChart* curveChart() const { return m_curveChart; }
    InteractivityChart* interactivityChart() const { return m_interactivityChart; }
    FigureGrid* figures() const { return m_figures; }
    WorkloadControls* workloadControls() const { return m_workload; }
    SpeculativeControls* speculativeControls() const { return m_speculative; }
    SchedulerControls* schedulerControls() const { return m_scheduler; }
    LatencyRateChart* rateChart() const { return m_rateChart; }
    // Under a workload: its percentiles, rates and SLO (hidden without one).
    FigureGrid* loadFigures() const { return m_loadFigures; }
    FigureGrid* poolFigures() const { return m_poolFigures; }

    // The bars show at most this many GPUs of a tensor-parallel group (all are alike).
    static constexpr int kMaxGpuBars = 4;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void redraw();
    void redrawLoad();
    void redrawPools();
    QString tooltipFor(const QString& figure);

    PlanDocument* m_document;
    ServingControls* m_controls;
    QLabel* m_header;
    QLabel* m_status;
    FormulaToolTips* m_toolTips;
    FigureGrid* m_figures;
    WorkloadControls* m_workload;
    SpeculativeControls* m_speculative;
    SchedulerControls* m_scheduler;
    QLabel* m_loadHeader;
    FigureGrid* m_loadFigures;
    FigureGrid* m_poolFigures; // serving.disaggregation's pools, transfer and rates
    MemoryBarChart* m_memoryChart;
    ServingCurveChart* m_curveChart;
    InteractivityChart* m_interactivityChart;
    LatencyRateChart* m_rateChart; // in the capacity curve's place under a workload
    bool m_stale = true; // results changed while hidden
};

// Small byte counts for per-token figures: "128.0 KB" (or KiB), larger ones as formatBytes.
QString smallBytesText(double bytes, bool binary);

} // namespace envelope::ui
