// The throughput panel driven as a user would: typing into the MFU box, picking a budget mode
// with the keyboard, typing a budget and a deadline, undoing. Every shown figure is compared
// with the core's estimate(plan).compute for the plan the edits describe, built independently
// here, and formatted through the same functions the panel uses.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSlider>
#include <QTest>
#include <QUndoStack>

#include <cmath>

#include "charts/stepbreakdownbar.h"
#include "controls/budgetcontrols.h"
#include "controls/sliderspin.h"
#include "controls/throughputcontrols.h"
#include "document/plandocument.h"
#include "estimate/estimate.h"
#include "panels/throughputfigures.h"
#include "panels/throughputpanel.h"
#include "uitestutil.h"
#include "widgets/formulatooltips.h"
#include "widgets/throughputformat.h"

using namespace envelope;
using namespace envelope::ui;
using envelope::uitest::typeInto;

namespace {

const QString kTokensPerS = QStringLiteral("training.tokens_per_s");

} // namespace

class TestThroughputPanel : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void showsTheCoresFiguresForTheOpenPlan();
    void typingAnMfuRedrawsStepTimeAndTokensPerSAndUndoRestoresThem();
    void draggingTheMfuSliderIsOneUndoStep();
    void budgetAndDeadlineShowTheRequiredMfuAndAffordableGpus();
    void deadlineAndMfuShowTheGpusThatFinishInTime();
    void theBarAddsUpToTheStepTimeAndNamesTheBottleneck();
    void tooltipsCarryTheFormula();
    void aPlanThatDoesNotFitShowsNoRealLookingStep();

private:
    Plan m_plan; // Llama-2 7B on 8 x H100 (uitestutil.h)
    PlanDocument* m_document = nullptr;
    ThroughputPanel* m_panel = nullptr;
};

void TestThroughputPanel::init()
{
    m_plan = uitest::llama7bPlan();
    m_document = new PlanDocument(uitest::presets());
    m_document->reset(m_plan);
    m_panel = new ThroughputPanel(m_document);
    m_panel->resize(340, 900);
    m_panel->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_panel));
}

void TestThroughputPanel::cleanup()
{
    delete m_panel;
    delete m_document;
}

void TestThroughputPanel::showsTheCoresFiguresForTheOpenPlan()
{
    const TrainingCompute c = estimate(m_plan).compute;
    const ThroughputFigures* f = m_panel->figures();
    // The step time carries its expected error (issue 22: "14.6 s ± 8%").
    QCOMPARE(m_panel->stepBar()->stepText(),
        QStringLiteral("%1 ± %2%").arg(durationText(c.stepTimeS)).arg(std::lround(100 * c.uncertainty)));
    QCOMPARE(f->valueText(kTokensPerS), tokenRateText(c.tokensPerS));
    QCOMPARE(f->valueText("training.tokens_per_s_per_gpu"), tokenRateText(c.tokensPerSPerGpu));
    QCOMPARE(f->valueText("training.flops_per_token"), flopsText(c.flopsPerToken));
    QCOMPARE(f->valueText("training.hardware_flops_per_token"), flopsText(c.hardwareFlopsPerToken));
    QCOMPARE(f->valueText("training.train_time_s"), durationText(c.trainTimeS));
    QCOMPARE(f->valueText("training.gpu_hours"), gpuHoursText(c.gpuHours));
    QCOMPARE(f->valueText("training.cost"), usdText(c.cost));
    QCOMPARE(f->valueText("training.hfu"), percentText(c.hfu));
    // The default plan has no measurement: no observed rows.
    QVERIFY(!c.observedMfu);
    QVERIFY(f->valueText("training.observed_mfu").isEmpty());
    // Selective recompute repeats the attention core: hardware FLOPs exceed the model's.
    QVERIFY(c.hardwareFlopsPerToken > c.flopsPerToken);
}

void TestThroughputPanel::typingAnMfuRedrawsStepTimeAndTokensPerSAndUndoRestoresThem()
{
    const QString stepBefore = m_panel->stepBar()->stepText();
    const QString rateBefore = m_panel->figures()->valueText(kTokensPerS);

    typeInto(m_panel->controls()->mfu()->spinBox(), QStringLiteral("30"));

    Plan expected = m_plan;
    expected.training.mfu = 0.30;
    expected.training.mfuOverride = true; // the slider sets an override of the op timing
    QCOMPARE(m_document->plan().training.mfu, 0.30);
    QVERIFY(m_document->plan().training.mfuOverride);
    const TrainingCompute c = estimate(expected).compute;
    // The step time carries its expected error (issue 22: "14.6 s ± 8%").
    QCOMPARE(m_panel->stepBar()->stepText(),
        QStringLiteral("%1 ± %2%").arg(durationText(c.stepTimeS)).arg(std::lround(100 * c.uncertainty)));
    QCOMPARE(m_panel->figures()->valueText(kTokensPerS), tokenRateText(c.tokensPerS));
    // 45% -> 30% MFU lengthens the step: the texts really changed.
    QVERIFY(m_panel->stepBar()->stepText() != stepBefore);
    QVERIFY(m_panel->figures()->valueText(kTokensPerS) != rateBefore);

    m_document->undoStack()->undo();
    QCOMPARE(m_document->plan(), m_plan);
    QCOMPARE(m_panel->stepBar()->stepText(), stepBefore);
    QCOMPARE(m_panel->figures()->valueText(kTokensPerS), rateBefore);
    QCOMPARE(m_panel->controls()->mfu()->value(), 45.0);
}

void TestThroughputPanel::draggingTheMfuSliderIsOneUndoStep()
{
    QSlider* slider = m_panel->controls()->mfu()->slider();
    const int steps = m_document->undoStack()->count();
    slider->setFocus();
    for (int i = 0; i < 5; ++i)
        QTest::keyClick(slider, Qt::Key_Right); // 45 -> 50 %, one point per press
    QCOMPARE(m_document->plan().training.mfu, 0.50);
    QCOMPARE(m_document->undoStack()->count(), steps + 1);
    m_document->undoStack()->undo();
    QCOMPARE(m_document->plan().training.mfu, 0.45);
}

void TestThroughputPanel::budgetAndDeadlineShowTheRequiredMfuAndAffordableGpus()
{
    BudgetControls* budget = m_panel->budget();
    QVERIFY(budget->resultText("training.required_mfu").isEmpty());
    budget->mode()->setFocus();
    QTest::keyClick(budget->mode(), Qt::Key_Down); // Off -> Budget + deadline
    QCOMPARE(budget->mode()->currentData().toInt(), int(BudgetControls::BudgetAndDeadline));
    typeInto(budget->budget()->spinBox(), QStringLiteral("2"));
    typeInto(budget->deadline()->spinBox(), QStringLiteral("20"));

    Plan expected = m_plan;
    expected.training.budgetUsd = 2e6;
    expected.training.deadlineS = 20 * 86400.0;
    QCOMPARE(m_document->plan(), expected);
    const TrainingCompute c = estimate(expected).compute;
    QVERIFY(c.requiredMfu && c.affordableGpus);
    QCOMPARE(budget->resultText("training.required_mfu"),
        QStringLiteral("%1 at %2").arg(percentText(*c.requiredMfu), gpuCountText(c.gpus)));
    QCOMPARE(budget->resultText("training.affordable_gpus"), gpuCountText(*c.affordableGpus));
    // Budget + deadline solve no tokens-for-budget figure.
    QVERIFY(budget->resultText("training.budget_tokens").isEmpty());

    // Undo the deadline, the budget and the mode: back to no solver figures.
    for (int i = 0; i < 3; ++i)
        m_document->undoStack()->undo();
    QCOMPARE(m_document->plan(), m_plan);
    QCOMPARE(budget->mode()->currentData().toInt(), int(BudgetControls::Off));
    QVERIFY(budget->resultText("training.required_mfu").isEmpty());
    QVERIFY(budget->resultText("training.affordable_gpus").isEmpty());
}

void TestThroughputPanel::deadlineAndMfuShowTheGpusThatFinishInTime()
{
    BudgetControls* budget = m_panel->budget();
    budget->mode()->setFocus();
    for (int i = 0; i < 3; ++i)
        QTest::keyClick(budget->mode(), Qt::Key_Down); // Off -> ... -> Deadline + MFU
    QCOMPARE(budget->mode()->currentData().toInt(), int(BudgetControls::DeadlineAndMfu));
    typeInto(budget->deadline()->spinBox(), QStringLiteral("60"));

    Plan expected = m_plan;
    expected.training.deadlineS = 60 * 86400.0;
    QCOMPARE(m_document->plan().training.deadlineS, expected.training.deadlineS);
    QVERIFY(!m_document->plan().training.budgetUsd);
    const TrainingCompute c = estimate(expected).compute;
    QVERIFY(c.gpusForDeadline);
    QCOMPARE(budget->resultText("training.gpus_for_deadline"),
        QStringLiteral("%1 at %2").arg(gpuCountText(*c.gpusForDeadline), percentText(0.45)));
    QVERIFY(budget->resultText("training.affordable_gpus").isEmpty());
}

void TestThroughputPanel::theBarAddsUpToTheStepTimeAndNamesTheBottleneck()
{
    // A pipeline with few micro-batches: a bubble and point-to-point traffic to draw.
    Plan plan = m_plan;
    plan.training.pp = 4;
    plan.training.gradAccum = 2;
    plan.training.zeroStage = 1;
    m_document->edit(plan, QStringLiteral("pp 4"));
    const TrainingCompute c = estimate(plan).compute;
    double sum = 0;
    bool bubble = false;
    for (const StepBreakdownBar::Segment& s : m_panel->stepBar()->segments()) {
        sum += s.seconds;
        bubble = bubble || s.figure == QLatin1String("training.communication.pp_bubble_s");
    }
    QVERIFY(bubble);
    QVERIFY(std::abs(sum - c.stepTimeS) <= 1e-9 * c.stepTimeS);
    QCOMPARE(m_panel->stepBar()->bottleneckText(),
        QStringLiteral("%1, %2").arg(
            bottleneckName(QString::fromStdString(c.bottleneck)), durationText(c.bottleneckS)));
}

void TestThroughputPanel::tooltipsCarryTheFormula()
{
    const Explanation* e = m_document->explanation(kTokensPerS);
    QVERIFY(e);
    QLabel* label = m_panel->figures()->valueLabel(kTokensPerS);
    QVERIFY(m_panel->toolTips()->toolTipFor(label).contains(
        QString::fromStdString(e->formula).toHtmlEscaped()));
}

ENVELOPE_UI_TEST_MAIN(TestThroughputPanel)

// Issue 11 item 6: Llama-2 7B with every state replicated on one 80 GB GPU (ZeRO-0, 16 B/param:
// 6.74e9 x 16 = 108 GB before activations) does not fit: the step bar says so instead of a
// step time, greys its segments, and the figures say "does not fit".
void TestThroughputPanel::aPlanThatDoesNotFitShowsNoRealLookingStep()
{
    Plan plan = m_plan;
    plan.cluster.gpus = 1;
    plan.training.zeroStage = 0;
    m_document->reset(plan);
    QCoreApplication::processEvents();
    const Estimate e = estimate(plan);
    QCOMPARE(e.training.verdict, Verdict::Over);
    QVERIFY(m_panel->stepBar()->stepText().startsWith(QStringLiteral("does not fit")));
    QCOMPARE(m_panel->figures()->valueText(kTokensPerS), QStringLiteral("does not fit"));
}

#include "test_throughputpanel.moc"
