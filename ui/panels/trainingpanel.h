// The Training tab: controls on the left; on the right the summary strip, the validation status
// line, the memory bar chart and the sweep chart side by side (with a slot for another panel to
// their right), and the details pane below.
#pragma once

#include <QWidget>

#include "base/units.h"

class QComboBox;
class QLabel;
class QHBoxLayout;

namespace envelope::ui {

class DetailsPane;
class HardwareControls;
class MemoryBarChart;
class MemorySaverControls;
class ModelControls;
class ParallelismControls;
class PlanDocument;
class SummaryStrip;
class SweepChart;

class TrainingPanel : public QWidget {
    Q_OBJECT
public:
    // What the memory chart's columns beside "This plan" compare: each ZeRO stage or each
    // recompute mode, the plan's own setting outlined.
    enum class Compare { ZeroStages, RecomputeModes };

    explicit TrainingPanel(PlanDocument* document, QWidget* parent = nullptr);

    // Places `widget` to the right of the charts (e.g. a throughput panel). Takes ownership.
    void setSideWidget(QWidget* widget);
    // Draws the charts now if results changed while the panel was hidden (before an export).
    void drawIfStale();

    ModelControls* modelControls() const { return m_model; }
    HardwareControls* hardwareControls() const { return m_hardware; }
    ParallelismControls* parallelismControls() const { return m_parallelism; }
    MemorySaverControls* memorySaverControls() const { return m_savers; }
    MemoryBarChart* memoryChart() const { return m_memoryChart; }
    QComboBox* compareCombo() const { return m_compareCombo; }
    Compare compare() const { return m_compare; }
    void setCompare(Compare compare);
    SweepChart* sweepChart() const { return m_sweepChart; }
    SummaryStrip* summary() const { return m_summary; }
    DetailsPane* details() const { return m_details; }
    QLabel* statusLine() const { return m_status; }

signals:
    void importRequested();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void redraw();
    void draw();
    void drawMemoryChart();
    void refreshDetails();
    void showPinComparison(ByteUnits units);

    PlanDocument* m_document;
    ModelControls* m_model;
    HardwareControls* m_hardware;
    ParallelismControls* m_parallelism;
    MemorySaverControls* m_savers;
    SummaryStrip* m_summary;
    QLabel* m_status;
    MemoryBarChart* m_memoryChart;
    QComboBox* m_compareCombo;
    Compare m_compare = Compare::ZeroStages;
    SweepChart* m_sweepChart;
    QHBoxLayout* m_chartRow;
    QWidget* m_side = nullptr;
    DetailsPane* m_details;
    bool m_detailsStale = true;
    bool m_stale = true; // results changed while hidden
};

} // namespace envelope::ui
