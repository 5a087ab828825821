// The RL panel driven like a user: picking the algorithm and placement, typing GPU counts,
// toggling KL and the off-policy pipeline. After each interaction the role bars, the step
// timeline and the figures are the core's estimate(plan).rl, and undo brings them back.
#include <QAbstractSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSpinBox>
#include <QToolTip>
#include <QUndoStack>

#include <cmath>

#include "charts/memorybarchart.h"
#include "charts/memoryview.h"
#include "charts/rltimeline.h"
#include "controls/rlcontrols.h"
#include "controls/sliderspin.h"
#include "document/plandocument.h"
#include "document/settings.h"
#include "estimate/estimate.h"
#include "model/model.h"
#include "panels/rlpanel.h"
#include "plan/planio.h"
#include "uitestutil.h"
#include "widgets/figuregrid.h"

using namespace envelope;
using namespace envelope::ui;
using envelope::uitest::close;
using envelope::uitest::typeInto;

namespace {

QStringList roleNames(const RlEstimate& rl)
{
    QStringList names;
    for (const RoleEstimate& r : rl.perRole)
        names.push_back(QString::fromStdString(r.role));
    return names;
}

// One column per role the core reports, its bars, label and fit mark; the timeline's phases;
// the figures.
void verifyMatchesCore(const RlPanel& panel, const Plan& plan)
{
    const RlEstimate rl = estimate(plan).rl;
    const MemoryBarChart* chart = panel.roleChart();
    QCOMPARE(chart->columnCount(), int(rl.perRole.size()));
    for (int c = 0; c < chart->columnCount(); ++c) {
        const RoleEstimate& role = rl.perRole[std::size_t(c)];
        const QString label = chart->columnLabel(c);
        QVERIFY2(label.startsWith(QString::fromStdString(role.role)), qPrintable(label));
        QVERIFY2(label.endsWith(role.gpus == 1 ? QStringLiteral("1 GPU")
                                               : QStringLiteral("%1 GPUs").arg(role.gpus)),
            qPrintable(label));
        for (Tenant t : kAllTenants) {
            const double expected = toDisplayUnits(tenantBytes(role.perGpu, t), ByteUnits::GB);
            QVERIFY2(close(chart->barSet(t)->at(c), expected),
                qPrintable(QStringLiteral("%1 / %2: drawn %3, core %4")
                               .arg(label, tenantName(t))
                               .arg(chart->barSet(t)->at(c))
                               .arg(expected)));
        }
        QVERIFY(
            chart->totalText(c).endsWith(role.fits ? QStringLiteral("✓") : QStringLiteral("✗")));
    }
    QVERIFY(close(chart->hbmLineValue(), toDisplayUnits(plan.gpu.gpu.memoryBytes, ByteUnits::GB)));

    const RlTimeline* timeline = panel.timeline();
    QCOMPARE(timeline->stepS(), rl.stepS);
    const auto& seg = timeline->segments();
    QCOMPARE(int(seg.size()), 4);
    QVERIFY(close(seg[0].endS - seg[0].startS, rl.rolloutS));
    QVERIFY(close(seg[1].endS - seg[1].startS, rl.weightSyncS)); // on the rollout row
    // Serial: the sync follows the rollout; overlapped, it ends the step (both pools pause),
    // and the trainer's forwards start after its wait for the first completions.
    if (rl.overlapped) {
        QVERIFY(close(seg[1].endS, rl.stepS));
        QVERIFY(seg[1].startS >= seg[0].endS);
        QVERIFY(close(seg[2].startS, rl.trainerIdleS));
    } else
        QCOMPARE(seg[1].startS, seg[0].endS);
    QVERIFY(close(seg[2].endS - seg[2].startS, rl.referenceS));
    QVERIFY(close(seg[3].endS - seg[3].startS, rl.trainS));
    // The last phase ends where the step ends: serial, or max(rollout + sync, forwards + train).
    QVERIFY(close(std::max(seg[1].endS, seg[3].endS), rl.stepS));

    const FigureGrid* f = panel.figures();
    // A job that does not fit shows no real-looking rate or step (issue 11 item 6): greyed
    // "does not fit", and the timeline greyed with it.
    QCOMPARE(timeline->runs(), rl.fits);
    QCOMPARE(f->figureText(QStringLiteral("rl.steps_per_hour")),
        rl.fits ? QString::number(rl.stepsPerHour, 'f', 1) : QStringLiteral("does not fit"));
    QCOMPARE(f->figureText(QStringLiteral("rl.bottleneck")), QString::fromStdString(rl.bottleneck));
    QCOMPARE(f->figureText(QStringLiteral("rl.step_s")),
        rl.fits ? QString::fromStdString(formatDuration(rl.stepS))
                : QStringLiteral("does not fit"));
    QCOMPARE(panel.suggestionLabel()->text(),
        QStringLiteral("Suggested split: ") + RlPanel::suggestionText(plan, rl));
}

} // namespace

class TestRlPanel : public uitest::PanelTest<RlPanel> {
    Q_OBJECT
private slots:
    void init() { QVERIFY(openPanel()); }
    void cleanup() { closePanel(); }

    void grpoStartsWithTrainerReferenceAndRollout()
    {
        verifyMatchesCore(*m_panel, m_doc->plan());
        QCOMPARE(roleNames(estimate(m_doc->plan()).rl).mid(0, 3),
            (QStringList { QStringLiteral("trainer"), QStringLiteral("reference"),
                QStringLiteral("rollout") }));
        QCOMPARE(m_panel->roleChart()->columnLabel(0), QStringLiteral("trainer · 4 GPUs"));
        // Synchronous: the phases follow one another.
        const auto& seg = m_panel->timeline()->segments();
        QCOMPARE(seg[1].startS, seg[0].endS);
        QCOMPARE(seg[2].startS, seg[1].endS);
        QCOMPARE(seg[3].startS, seg[2].endS);
    }

    void pickingPpoAddsCriticAndReward()
    {
        QComboBox* algorithm = m_panel->controls()->algorithmCombo();
        algorithm->setFocus();
        QTest::keyClick(algorithm, Qt::Key_Up); // GRPO -> PPO
        QCOMPARE(m_doc->plan().rl.algorithm, RlAlgorithm::Ppo);
        verifyMatchesCore(*m_panel, m_doc->plan());
        const QStringList roles = roleNames(estimate(m_doc->plan()).rl);
        QVERIFY(roles.contains(QStringLiteral("critic")));
        QVERIFY(roles.contains(QStringLiteral("reward")));
        QVERIFY(m_panel->controls()->criticGpusControl()->isEnabled());
    }

    void typingRolloutGpusRelabelsItsBarAndRebalances()
    {
        typeInto(m_panel->controls()->rolloutGpusControl(), QStringLiteral("5"));
        QCOMPARE(m_doc->plan().rl.rolloutGpus, 5);
        verifyMatchesCore(*m_panel, m_doc->plan());
        QCOMPARE(m_panel->roleChart()->columnLabel(2), QStringLiteral("rollout · 5 GPUs"));
    }

    void aRolloutPoolSmallerThanItsEngineIsNamedInTheHeader()
    {
        // Issue 28: a TP-4 engine on 3 rollout GPUs read "every role fits". The Serving tab's
        // TP is the engine's; typing 3 rollout GPUs under it names the pool and the minimum.
        Plan plan = m_doc->plan();
        plan.serving.tp = 4;
        m_doc->edit(plan, QStringLiteral("serving TP"));
        typeInto(m_panel->controls()->rolloutGpusControl(), QStringLiteral("3"));
        QCOMPARE(m_doc->plan().rl.rolloutGpus, 3);
        const QString header = m_panel->headerLabel()->text();
        QVERIFY2(header.contains(QStringLiteral("cannot be laid out")), qPrintable(header));
        QVERIFY2(header.contains(QStringLiteral("rl.rollout_gpus")), qPrintable(header));
        QVERIFY2(header.contains(QStringLiteral("multiple of 4 GPUs, got 3")), qPrintable(header));
        QCOMPARE(m_panel->figures()->figureText(QStringLiteral("rl.step_s")),
            QStringLiteral("does not fit"));
        // Four rollout GPUs host one engine: the header says every role fits again.
        typeInto(m_panel->controls()->rolloutGpusControl(), QStringLiteral("4"));
        QVERIFY(!m_panel->headerLabel()->text().contains(QStringLiteral("cannot be laid out")));
    }

    void colocatedDrawsThePeakLine()
    {
        QComboBox* placement = m_panel->controls()->placementCombo();
        placement->setFocus();
        QTest::keyClick(placement, Qt::Key_Down); // disjoint -> colocated
        QCOMPARE(m_doc->plan().rl.placement, RlPlacement::Colocated);
        verifyMatchesCore(*m_panel, m_doc->plan());
        const RlEstimate rl = estimate(m_doc->plan()).rl;
        QVERIFY(close(m_panel->roleChart()->limitLineValue(),
            toDisplayUnits(rl.colocatedPeakBytes, ByteUnits::GB)));
        // Every role sits on all 8 GPUs of the shared pool.
        QCOMPARE(m_panel->roleChart()->columnLabel(0), QStringLiteral("trainer · 8 GPUs"));
    }

    void offPolicyPipelineOverlapsRolloutWithTraining()
    {
        QTest::mouseClick(m_panel->controls()->offPolicyCheck(), Qt::LeftButton);
        QVERIFY(m_doc->plan().rl.offPolicyPipeline);
        verifyMatchesCore(*m_panel, m_doc->plan());
        QVERIFY(m_panel->timeline()->overlapped());
        const auto& seg = m_panel->timeline()->segments();
        // Rollout and the weight sync that ends the step on one row; a whole step ahead, the
        // forwards start with the rollout (no wait), the update after the forwards.
        const RlEstimate rl = estimate(m_doc->plan()).rl;
        QCOMPARE(seg[0].startS, 0.0);
        QVERIFY(close(seg[1].endS, m_panel->timeline()->stepS()));
        QVERIFY(close(seg[1].endS - seg[1].startS, rl.weightSyncS));
        QVERIFY(seg[1].startS >= seg[0].endS);
        QCOMPARE(seg[2].startS, 0.0);
        QCOMPARE(seg[3].startS, seg[2].endS);
    }

    void streamedUpdatesStartTheTrainerAfterItsFirstShare()
    {
        // Four updates per sync, on-policy: the trainer waits for the first quarter of the
        // completions, and the step is shorter than the synchronous sum.
        const double before = estimate(m_doc->plan()).rl.stepS;
        typeInto(m_panel->controls()->updatesPerSyncControl(), QStringLiteral("4"));
        QCOMPARE(m_doc->plan().rl.updatesPerSync, 4);
        verifyMatchesCore(*m_panel, m_doc->plan());
        const RlEstimate rl = estimate(m_doc->plan()).rl;
        QVERIFY(rl.overlapped);
        QVERIFY(rl.stepS < before);
        QVERIFY(m_panel->timeline()->overlapped());
        const auto& seg = m_panel->timeline()->segments();
        QVERIFY(close(seg[2].startS, rl.trainerIdleS));
        QVERIFY(rl.trainerIdleS > 0);
        // Fewer prompts than updates: the updates follow the prompts down.
        typeInto(m_panel->controls()->promptsControl()->spinBox(), QStringLiteral("2"));
        QCOMPARE(m_doc->plan().rl.updatesPerSync, 2);
        QVERIFY(!validatePlan(m_doc->plan()).has_value());
    }

    void stalenessAndPartialRolloutsAreEditedTogether()
    {
        RlControls* controls = m_panel->controls();
        // On-policy: no carried sequences, so the partial-rollouts switch is off and disabled.
        QCOMPARE(controls->stalenessControl()->value(), 0);
        QVERIFY(!controls->partialRolloutsCheck()->isEnabled());
        // A bound of 4 overlaps the rollout (disjoint pools) and allows partial rollouts.
        typeInto(controls->stalenessControl(), QStringLiteral("4"));
        QCOMPARE(rlStaleness(m_doc->plan().rl), 4);
        QVERIFY(controls->offPolicyCheck()->isChecked());
        QVERIFY(controls->partialRolloutsCheck()->isEnabled());
        QTest::mouseClick(controls->partialRolloutsCheck(), Qt::LeftButton);
        QVERIFY(m_doc->plan().rl.partialRollouts);
        QVERIFY(!validatePlan(m_doc->plan()).has_value());
        verifyMatchesCore(*m_panel, m_doc->plan());
        QVERIFY(m_panel->timeline()->overlapped());
        // A fraction of a step (verl's staleness_threshold) keeps the carried sequences, but is
        // not the one-step pipeline.
        typeInto(controls->stalenessControl(), QStringLiteral("0.5"));
        QCOMPARE(rlStaleness(m_doc->plan().rl), 0.5);
        QVERIFY(m_doc->plan().rl.partialRollouts);
        QVERIFY(!controls->offPolicyCheck()->isChecked());
        QVERIFY(!validatePlan(m_doc->plan()).has_value());
        verifyMatchesCore(*m_panel, m_doc->plan());
        QVERIFY(m_panel->timeline()->overlapped());
        // Back to 0: on-policy again, and the carried sequences go with it (a plan with partial
        // rollouts at staleness 0 would be refused).
        typeInto(controls->stalenessControl(), QStringLiteral("0"));
        QCOMPARE(rlStaleness(m_doc->plan().rl), 0);
        QVERIFY(!m_doc->plan().rl.partialRollouts);
        QVERIFY(!controls->offPolicyCheck()->isChecked());
        QVERIFY(!validatePlan(m_doc->plan()).has_value());
        verifyMatchesCore(*m_panel, m_doc->plan());
    }

    void klOffDropsTheReference()
    {
        QTest::mouseClick(m_panel->controls()->klCheck(), Qt::LeftButton);
        QVERIFY(!m_doc->plan().rl.kl);
        verifyMatchesCore(*m_panel, m_doc->plan());
        QVERIFY(!roleNames(estimate(m_doc->plan()).rl).contains(QStringLiteral("reference")));
    }

    void typingBatchShapeChangesTheStep()
    {
        const double before = estimate(m_doc->plan()).rl.stepS;
        typeInto(m_panel->controls()->promptsControl()->spinBox(), QStringLiteral("64"));
        typeInto(m_panel->controls()->groupSizeControl(), QStringLiteral("16"));
        typeInto(m_panel->controls()->responseLenControl()->spinBox(), QStringLiteral("1024"));
        QCOMPARE(m_doc->plan().rl.prompts, 64);
        QCOMPARE(m_doc->plan().rl.groupSize, 16);
        QCOMPARE(m_doc->plan().rl.responseLen, 1024);
        verifyMatchesCore(*m_panel, m_doc->plan());
        QVERIFY(estimate(m_doc->plan()).rl.stepS != before);
    }

    void suggestionNamesTheMove()
    {
        // A lone rollout GPU against 7 trainers: the rollout is the bottleneck and the split
        // moves trainer GPUs over (ZeRO-3, so a smaller trainer pool still fits).
        Plan plan = m_doc->plan();
        plan.training.zeroStage = 3;
        plan.rl.trainerGpus = 7;
        plan.rl.rolloutGpus = 1;
        m_doc->edit(plan, QStringLiteral("7 + 1"));
        verifyMatchesCore(*m_panel, m_doc->plan());
        const RlEstimate rl = estimate(m_doc->plan()).rl;
        QCOMPARE(QString::fromStdString(rl.bottleneck), QStringLiteral("rollout"));
        QVERIFY(rl.suggestedRolloutGpus > 1);
        const int move = rl.suggestedRolloutGpus - 1;
        QVERIFY2(
            m_panel->suggestionLabel()->text().contains(
                QStringLiteral("move %1 GPU%2 from training to rollout: %3 training + %4 rollout")
                    .arg(move)
                    .arg(move == 1 ? QString() : QStringLiteral("s"))
                    .arg(rl.suggestedTrainerGpus)
                    .arg(rl.suggestedRolloutGpus)),
            qPrintable(m_panel->suggestionLabel()->text()));
    }

    void suggestionSaysWhenNoSplitLetsTheTrainerFit()
    {
        // 70B under ZeRO-0 keeps all 16 B/param of bf16-mixed-16 on every trainer GPU:
        // 16 x 70e9 = 1,120 GB per GPU at any trainer count, against 80 GB of HBM. No split
        // fits, so the panel must not claim the current one "balances the step".
        Plan plan = m_doc->plan();
        plan.training.zeroStage = 0;
        plan.model = ModelChoice {};
        plan.model.form = ModelChoice::Form::Params;
        plan.model.arch = standardShapeForParams(70e9);
        plan.model.arch.declaredParams = 70e9;
        QVERIFY(16.0 * 70e9 > plan.gpu.gpu.memoryBytes);
        m_doc->edit(plan, QStringLiteral("70B ZeRO-0"));
        verifyMatchesCore(*m_panel, m_doc->plan());
        QVERIFY(!estimate(m_doc->plan()).rl.suggestionFits);
        const QString text = m_panel->suggestionLabel()->text();
        const int gpus = plan.rl.trainerGpus + plan.rl.rolloutGpus;
        QVERIFY2(text.contains(QStringLiteral("no split of these %1 GPUs lets the trainer fit — "
                                              "add GPUs or shard the trainer (ZeRO-3)")
                                   .arg(gpus)),
            qPrintable(text));
        QVERIFY(!text.contains(QStringLiteral("balances")));
    }

    void hoveringARoleBarShowsItsFormula()
    {
        QChartView* view = m_panel->roleChart()->chartView();
        QChart* chart = view->chart();
        QAbstractSeries* bars = chart->series().front();
        // Column 0 is the trainer; hover the middle of its weights segment.
        const double weights = m_panel->roleChart()->barSet(Tenant::Weights)->at(0);
        QVERIFY(weights > 0);
        const QPointF scene
            = chart->mapToScene(chart->mapToPosition(QPointF(0, weights / 2), bars));
        QTest::mouseMove(view->viewport(), view->mapFromScene(scene));
        QTRY_VERIFY(QToolTip::isVisible());
        const Explanation* e
            = m_doc->explanation(QStringLiteral("rl.per_role.trainer.per_gpu_bytes"));
        QVERIFY(e);
        // The formula names the trainer's recipe and GPU count ("training memory (ZeRO-1 ...").
        QVERIFY(QString::fromStdString(e->formula).contains(QStringLiteral("training memory")));
        QVERIFY2(QToolTip::text().contains(QString::fromStdString(e->formula).toHtmlEscaped()),
            qPrintable(QToolTip::text()));
    }

    void undoRestoresThePlanAndItsFigures()
    {
        const Plan original = m_doc->plan();
        const QString steps = m_panel->figures()->figureText(QStringLiteral("rl.steps_per_hour"));
        QComboBox* algorithm = m_panel->controls()->algorithmCombo();
        algorithm->setFocus();
        QTest::keyClick(algorithm, Qt::Key_Up); // PPO
        typeInto(m_panel->controls()->trainerGpusControl(), QStringLiteral("6"));
        QCOMPARE(m_doc->undoStack()->count(), 2);
        verifyMatchesCore(*m_panel, m_doc->plan());
        m_doc->undoStack()->undo();
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan() == original);
        verifyMatchesCore(*m_panel, original);
        QCOMPARE(m_panel->figures()->figureText(QStringLiteral("rl.steps_per_hour")), steps);
        QCOMPARE(m_panel->controls()->algorithmCombo()->currentIndex(), 1);
        QCOMPARE(m_panel->controls()->trainerGpusControl()->value(), 4);
    }
};

ENVELOPE_UI_TEST_MAIN(TestRlPanel)
#include "test_rlpanel.moc"
