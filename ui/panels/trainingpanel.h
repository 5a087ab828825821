// The Training tab: controls on the left; on the right the summary strip, the validation status
// line, the memory bar chart and the sweep chart side by side (with a slot for another panel to
// their right), and the details pane below.
#pragma once

#include <QWidget>

#include "base/units.h"

class QLabel;
class QHBoxLayout;
class QSplitter;

namespace envelope::ui {

class DetailsPane;
class HardwareControls;
class MemoryBarChart;
class MemorySaverControls;
class ModelControls;
class ParallelismControls;
class PlanDocument;
class Settings;
class SummaryStrip;
class SweepChart;

class TrainingPanel : public QWidget {
    Q_OBJECT
public:
    TrainingPanel(PlanDocument* document, Settings* settings, QWidget* parent = nullptr);

    // Places `widget` to the right of the charts (e.g. a throughput panel). Takes ownership.
    void setSideWidget(QWidget* widget);
    // Draws the charts now if results changed while the panel was hidden (before an export).
    void drawIfStale();

    ModelControls* modelControls() const { return m_model; }
    HardwareControls* hardwareControls() const { return m_hardware; }
    ParallelismControls* parallelismControls() const { return m_parallelism; }
    MemorySaverControls* memorySaverControls() const { return m_savers; }
    MemoryBarChart* memoryChart() const { return m_memoryChart; }
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
    void refreshDetails();
    void showPinComparison(ByteUnits units);
    void showValidation(const QString& message);

    PlanDocument* m_document;
    Settings* m_settings;
    ModelControls* m_model;
    HardwareControls* m_hardware;
    ParallelismControls* m_parallelism;
    MemorySaverControls* m_savers;
    SummaryStrip* m_summary;
    QLabel* m_status;
    MemoryBarChart* m_memoryChart;
    SweepChart* m_sweepChart;
    QHBoxLayout* m_chartRow;
    QWidget* m_side = nullptr;
    DetailsPane* m_details;
    bool m_detailsStale = true;
    bool m_stale = true; // results changed while hidden
};

} // namespace envelope::ui
