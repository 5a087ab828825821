// The RL post-training panel: per-GPU memory of each role the core reports (trainer,
// reference, rollout, old-policy, critic, reward) against HBM, one step on a timeline, the
// throughput, the bottleneck and the split of GPUs that balances the step.
#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;

namespace envelope {
struct RlEstimate;
struct Plan;
} // namespace envelope

namespace envelope::ui {

class FigureGrid;
class FormulaToolTips;
class MemoryBarChart;
class PlanDocument;
class RlControls;
class RlTimeline;

class RlPanel : public QWidget {
    Q_OBJECT
public:
    explicit RlPanel(PlanDocument* document, QWidget* parent = nullptr);

    RlControls* controls() const { return m_controls; }
    MemoryBarChart* roleChart() const { return m_roleChart; }
    RlTimeline* timeline() const { return m_timeline; }
    FigureGrid* figures() const { return m_figures; }
    QLabel* suggestionLabel() const { return m_suggestion; }
    QLabel* headerLabel() const { return m_header; }

    // "move 2 GPUs from training to rollout: 2 training + 6 rollout balance the step".
    static QString suggestionText(const Plan& plan, const RlEstimate& rl);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void redraw();
    QString tooltipFor(const QString& figure);

    PlanDocument* m_document;
    RlControls* m_controls;
    QLabel* m_header;
    QLabel* m_status;
    FormulaToolTips* m_toolTips;
    FigureGrid* m_figures;
    QLabel* m_suggestion;
    MemoryBarChart* m_roleChart;
    RlTimeline* m_timeline;
    QStringList m_roleFigures; // per column: "rl.per_role.<role>.per_gpu_bytes"
    bool m_stale = true; // results changed while hidden
};

} // namespace envelope::ui
