// The compute side of the training tab, beside the memory charts: the step-time breakdown bar,
// the throughput / time / cost figures, the throughput assumptions (MFU, token budget, overlap)
// and the budget solver. A fixed-width column so the memory charts keep their room; scrolls
// vertically on short windows. Redraws from PlanDocument::resultsChanged only (no estimate of
// its own); formulas are fetched when a tooltip opens.
#pragma once

#include <QWidget>

namespace envelope::ui {

class BudgetControls;
class FormulaToolTips;
class PlanDocument;
class StepBreakdownBar;
class ThroughputControls;
class ThroughputFigures;

class ThroughputPanel : public QWidget {
    Q_OBJECT
public:
    explicit ThroughputPanel(PlanDocument* document, QWidget* parent = nullptr);

    StepBreakdownBar* stepBar() const { return m_bar; }
    ThroughputFigures* figures() const { return m_figures; }
    ThroughputControls* controls() const { return m_controls; }
    BudgetControls* budget() const { return m_budget; }
    FormulaToolTips* toolTips() const { return m_toolTips; }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void redraw();
    void updateMinimumWidth();

    PlanDocument* m_document;
    QWidget* m_content = nullptr; // the scrolled column
    FormulaToolTips* m_toolTips;
    StepBreakdownBar* m_bar;
    ThroughputFigures* m_figures;
    ThroughputControls* m_controls;
    BudgetControls* m_budget;
    bool m_stale = true; // results changed while hidden
};

} // namespace envelope::ui
