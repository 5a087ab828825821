#include "controls/budgetcontrols.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>

#include "controls/choicecombo.h"
#include "widgets/formulatooltips.h"
#include "document/plandocument.h"
#include "controls/sliderspin.h"
#include "controls/throughputcontrols.h"
#include "widgets/throughputformat.h"
#include "widgets/valuelabel.h"

namespace envelope::ui {
namespace {
constexpr double kMillion = 1e6;
constexpr double kDay = 86400;

bool usesBudget(int mode)
{
    return mode == BudgetControls::BudgetAndDeadline || mode == BudgetControls::BudgetAndMfu;
}
bool usesDeadline(int mode)
{
    return mode == BudgetControls::BudgetAndDeadline || mode == BudgetControls::DeadlineAndMfu;
}
} // namespace

BudgetControls::BudgetControls(PlanDocument* document, FormulaToolTips* toolTips, QWidget* parent)
    : PlanControlGroup(tr("Budget solver"), document, parent)
    , m_toolTips(toolTips)
    , m_mode(new ChoiceCombo(this))
    , m_budget(new SliderSpin(SliderSpin::Scale::Log, 0.01, 1e4, 2, this))
    , m_deadline(new SliderSpin(SliderSpin::Scale::Log, 1, 3650, 1, this))
    , m_hint(new QLabel(this))
{
    m_mode->addItem(tr("Off"), Off);
    m_mode->addItem(tr("Budget + deadline → MFU, GPUs"), BudgetAndDeadline);
    m_mode->addItem(tr("Budget + MFU → deadline"), BudgetAndMfu);
    m_mode->addItem(tr("Deadline + MFU → GPUs"), DeadlineAndMfu);
    m_mode->setToolTip(tr("Fix two of budget, deadline and MFU (seed 001 ex. 3)"));
    m_budget->spinBox()->setPrefix(tr("$"));
    m_budget->setSuffix(tr("M"));
    m_budget->setValue(1);
    m_budget->setToolTip(tr("Budget in millions of USD at the GPU's price per hour"));
    m_deadline->setSuffix(tr(" days"));
    m_deadline->setValue(30);
    m_deadline->setToolTip(tr("Wall-clock time to train the token budget"));
    m_mode->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_mode->setMinimumContentsLength(10);
    for (SliderSpin* control : { m_budget, m_deadline })
        control->slider()->setMinimumWidth(40);
    m_hint->setWordWrap(true);
    m_hint->setForegroundRole(QPalette::PlaceholderText);

    // In a narrow column a label goes above its field rather than clipping it.
    form()->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form()->addRow(tr("Fi&x:"), m_mode);
    form()->addRow(tr("&Budget:"), m_budget);
    form()->addRow(tr("&Deadline:"), m_deadline);
    addResult(tr("Required MFU:"), QStringLiteral("training.required_mfu"));
    addResult(tr("Affordable:"), QStringLiteral("training.affordable_gpus"));
    addResult(tr("For deadline:"), QStringLiteral("training.gpus_for_deadline"));
    addResult(tr("Done in:"), QStringLiteral("training.achievable_deadline_s"));
    addResult(tr("Budget buys:"), QStringLiteral("training.budget_tokens"));
    form()->addRow(m_hint);

    connect(m_mode, &QComboBox::activated, this,
        [this](int index) { onModeChosen(m_mode->itemData(index).toInt()); });
    connect(m_budget, &SliderSpin::valueEdited, this, [this](double v) {
        edit(
            tr("Budget $%1M").arg(v), [v](Plan& p) { p.training.budgetUsd = v * kMillion; },
            kBudgetUsdControl);
    });
    connect(m_deadline, &SliderSpin::valueEdited, this, [this](double v) {
        edit(
            tr("Deadline %1 days").arg(v), [v](Plan& p) { p.training.deadlineS = v * kDay; },
            kDeadlineControl);
    });
    refresh();
}

QLabel* BudgetControls::addResult(const QString& caption, const QString& figure)
{
    auto* label = new ValueLabel(this);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    label->setWordWrap(true); // the column may be narrow; "59 GPUs at 45.0%" can wrap
    m_toolTips->attach(label, figure);
    form()->addRow(caption, label);
    m_toolTips->attach(form()->labelForField(label), figure);
    m_results.push_back({ figure, label });
    return label;
}

void BudgetControls::setResult(const QString& figure, const QString& text)
{
    for (const Result& r : m_results)
        if (r.figure == figure) {
            r.value->setText(text);
            form()->setRowVisible(r.value, !text.isEmpty());
        }
}

QString BudgetControls::resultText(const QString& figure) const
{
    for (const Result& r : m_results)
        if (r.figure == figure)
            return r.value->isHidden() ? QString() : r.value->text();
    return {};
}

void BudgetControls::onModeChosen(int mode)
{
    const double budget = m_budget->value() * kMillion;
    const double deadline = m_deadline->value() * kDay;
    edit(tr("Budget solver: %1").arg(m_mode->itemText(m_mode->findData(mode))),
        [mode, budget, deadline](Plan& p) {
            p.training.budgetUsd = usesBudget(mode) ? std::optional(budget) : std::nullopt;
            p.training.deadlineS = usesDeadline(mode) ? std::optional(deadline) : std::nullopt;
        });
}

void BudgetControls::refresh()
{
    const Plan& plan = document()->plan();
    const TrainingConfig& t = plan.training;
    const int mode = t.budgetUsd ? (t.deadlineS ? BudgetAndDeadline : BudgetAndMfu)
        : t.deadlineS            ? DeadlineAndMfu
                                 : Off;
    {
        const QSignalBlocker block(m_mode);
        m_mode->setCurrentIndex(m_mode->findData(mode));
    }
    // An unset value keeps what the box last held, so switching modes back and forth keeps it.
    if (t.budgetUsd)
        m_budget->setValue(*t.budgetUsd / kMillion);
    if (t.deadlineS)
        m_deadline->setValue(*t.deadlineS / kDay);
    m_budget->setEnabled(usesBudget(mode));
    m_deadline->setEnabled(usesDeadline(mode));

    const TrainingCompute& c = document()->results().estimate.compute;
    setResult(QStringLiteral("training.required_mfu"),
        c.requiredMfu ? tr("%1 at %2").arg(percentText(*c.requiredMfu), gpuCountText(c.gpus))
                      : QString());
    setResult(QStringLiteral("training.affordable_gpus"),
        c.affordableGpus ? gpuCountText(*c.affordableGpus) : QString());
    setResult(QStringLiteral("training.gpus_for_deadline"),
        c.gpusForDeadline ? tr("%1 at %2").arg(gpuCountText(*c.gpusForDeadline), percentText(t.mfu))
                          : QString());
    QString done;
    if (c.achievableDeadlineS)
        done = tr("%1 on %2").arg(durationText(*c.achievableDeadlineS), gpuCountText(c.gpus));
    else if (mode == BudgetAndMfu && c.budgetTokens)
        done = tr("over budget (costs %1)").arg(usdText(c.cost));
    setResult(QStringLiteral("training.achievable_deadline_s"), done);
    setResult(QStringLiteral("training.budget_tokens"),
        c.budgetTokens ? tokensText(*c.budgetTokens) : QString());

    // The core solves budget modes only at a known price (compute.cpp).
    const bool unpriced = usesBudget(mode) && !c.affordableGpus && !c.budgetTokens;
    if (mode == Off)
        m_hint->setText(tr("Fix two of budget, deadline and MFU to solve for the third."));
    else if (unpriced)
        m_hint->setText(tr("The GPU has no price per hour: the budget buys nothing to solve."));
    form()->setRowVisible(m_hint, mode == Off || unpriced);
}

} // namespace envelope::ui
