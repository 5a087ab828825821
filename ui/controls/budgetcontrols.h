// The budget solver (seed 001 ex. 3: budget, time and MFU, any two give the third). The user
// picks which two are fixed; the plan's MFU is always one input, so the mode only decides
// whether the plan carries a budget (training.budget_usd), a deadline (training.deadline_s) or
// both. Below the inputs, the core's solved figures: required MFU, GPU counts, the deadline the
// budget reaches and the tokens it buys. Nothing is solved here.
#pragma once

#include "controls/plancontrolgroup.h"

class QComboBox;
class QLabel;

namespace envelope::ui {

class FormulaToolTips;
class SliderSpin;

class BudgetControls : public PlanControlGroup {
    Q_OBJECT
public:
    enum Mode { Off, BudgetAndDeadline, BudgetAndMfu, DeadlineAndMfu };

    BudgetControls(PlanDocument* document, FormulaToolTips* toolTips, QWidget* parent = nullptr);

    QComboBox* mode() const { return m_mode; }
    SliderSpin* budget() const { return m_budget; } // millions of USD
    SliderSpin* deadline() const { return m_deadline; } // days

    // The shown result of a figure key ("training.required_mfu"); empty when the row is hidden.
    QString resultText(const QString& figure) const;

protected:
    void refresh() override;

private:
    QLabel* addResult(const QString& caption, const QString& figure);
    void setResult(const QString& figure, const QString& text); // empty text hides the row
    void onModeChosen(int mode);

    FormulaToolTips* m_toolTips;
    QComboBox* m_mode;
    SliderSpin* m_budget;
    SliderSpin* m_deadline;
    QLabel* m_hint;
    struct Result {
        QString figure;
        QLabel* value;
    };
    std::vector<Result> m_results;
};

} // namespace envelope::ui
