// PlanDocument: change signals only on real changes, one undo step per slider drag, the last
// valid figures kept while the plan is invalid.
#include <QSignalSpy>
#include <QUndoStack>

#include "document/plandocument.h"
#include "estimate/estimate.h"
#include "uitestutil.h"

using namespace envelope;
using namespace envelope::ui;

class TestPlanDocument : public QObject {
    Q_OBJECT
private slots:
    void setPlanEmitsOnlyOnRealChange()
    {
        PlanDocument doc(uitest::presets());
        doc.reset(uitest::llama7bPlan());
        QSignalSpy planSpy(&doc, &PlanDocument::planChanged);
        QSignalSpy resultsSpy(&doc, &PlanDocument::resultsChanged);
        doc.setPlan(doc.plan()); // the same plan
        QCOMPARE(planSpy.count(), 0);
        QCOMPARE(resultsSpy.count(), 0);
        Plan changed = doc.plan();
        changed.training.seqLen = 8192;
        doc.setPlan(changed);
        QCOMPARE(planSpy.count(), 1);
        QCOMPARE(resultsSpy.count(), 1);
    }

    void resultsAreTheCoreEstimateOfThePlan()
    {
        PlanDocument doc(uitest::presets());
        doc.reset(uitest::llama7bPlan());
        const Estimate expected = estimate(doc.plan());
        QCOMPARE(doc.results().estimate.training.perGpu.total(), expected.training.perGpu.total());
        QCOMPARE(doc.results().zeroVariants.size(), std::size_t(4));
        // Llama-2 7B has 6.74B parameters (Touvron et al. 2023); the core counts them exactly.
        QVERIFY(std::abs(doc.results().estimate.params - 6.74e9) < 0.01e9);
    }

    void consecutiveEditsOfOneControlAreOneUndoStep()
    {
        PlanDocument doc(uitest::presets());
        doc.reset(uitest::llama7bPlan());
        const Plan original = doc.plan();
        for (int seqLen : { 8192, 16384, 32768 }) {
            Plan p = doc.plan();
            p.training.seqLen = seqLen;
            doc.edit(p, QStringLiteral("Context"), 42);
        }
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.plan().training.seqLen, 32768);
        Plan other = doc.plan();
        other.training.zeroStage = 3;
        doc.edit(other, QStringLiteral("ZeRO"));
        QCOMPARE(doc.undoStack()->count(), 2);
        doc.undoStack()->undo();
        doc.undoStack()->undo();
        QVERIFY(doc.plan() == original);
        QVERIFY(!doc.isModified());
    }

    void dragBackToTheStartLeavesNoUndoStep()
    {
        PlanDocument doc(uitest::presets());
        doc.reset(uitest::llama7bPlan());
        Plan p = doc.plan();
        p.training.seqLen = 8192;
        doc.edit(p, QStringLiteral("Context"), 7);
        p.training.seqLen = 4096;
        doc.edit(p, QStringLiteral("Context"), 7);
        QCOMPARE(doc.undoStack()->count(), 0);
    }

    void invalidPlanKeepsTheLastValidFigures()
    {
        PlanDocument doc(uitest::presets());
        doc.reset(uitest::llama7bPlan());
        const double before = doc.results().estimate.training.perGpu.total();
        QSignalSpy validation(&doc, &PlanDocument::validationChanged);
        Plan p = doc.plan();
        p.training.tp = 3; // 8 GPUs are not divisible by tp x pp x cp = 3
        doc.edit(p, QStringLiteral("TP"));
        QCOMPARE(validation.count(), 1);
        QVERIFY(!doc.isValid());
        const auto expected = validatePlan(p);
        QVERIFY(expected.has_value());
        QCOMPARE(doc.validationMessage(), QString::fromStdString(expected->toString()));
        QCOMPARE(doc.results().estimate.training.perGpu.total(), before);
        doc.undoStack()->undo();
        QVERIFY(doc.isValid());
    }

    void explanationsComeFromTheCoreOnDemand()
    {
        PlanDocument doc(uitest::presets());
        doc.reset(uitest::llama7bPlan());
        const Explanation* weights
            = doc.explanation(QStringLiteral("training.per_gpu_bytes.weights"));
        QVERIFY(weights);
        QCOMPARE(weights->value, doc.results().estimate.training.perGpu.weights);
        QVERIFY(!weights->formula.empty());
    }
};

ENVELOPE_UI_TEST_MAIN(TestPlanDocument)
#include "test_plandocument.moc"
