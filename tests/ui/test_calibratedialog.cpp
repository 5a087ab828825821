// Tools → Calibrate from a measured run…: the dialog fits the plan through the core's calibrate()
// (estimate/calibrate.h), shows each change, applies it as one undo step, and names the field
// and its range when an input is bad. Driven with real key presses and clicks, offscreen.
// Set ENVELOPE_SCREENSHOT_DIR to keep PNGs of the dialog for review.
#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QTimer>
#include <QUndoStack>

#include "document/plandocument.h"
#include "estimate/calibrate.h"
#include "estimate/estimate.h"
#include "uitestutil.h"
#include "window/calibratedialog.h"
#include "window/mainwindow.h"

using namespace envelope;
using namespace envelope::ui;

class TestCalibrateDialog : public uitest::WindowTest {
    Q_OBJECT
private:
    // Replaces the line edit's text by `text`, as a user types it.
    static void typeInto(QLineEdit* edit, const QString& text)
    {
        edit->setFocus();
        edit->selectAll();
        QTest::keyClick(edit, Qt::Key_Delete);
        QTest::keyClicks(edit, text);
    }

    static QPushButton* okButton(CalibrateDialog& dialog)
    {
        return dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    }

    static QString preview(CalibrateDialog& dialog)
    {
        return dialog.findChild<QLabel*>(QStringLiteral("preview"))->text();
    }

private slots:
    void init() { QVERIFY(openWindow()); }
    void cleanup() { closeWindow(); }

    void typedMeasurementsApplyAsOneUndoStep()
    {
        PlanDocument* doc = m_window->document();
        const Plan original = doc->plan();
        const Estimate before = estimate(original);
        // A run that reserved 5% more than the plan's estimate and ran 20% slower (10% more would
        // be 82.6 GiB on a 79.6 GiB GPU, which calibrate now refuses as no real run's peak).
        const QString peakText
            = QString::number(before.training.reservedBytes * 1.05 / 1073741824.0, 'f', 3);
        const QString rateText = QString::number(before.compute.tokensPerS * 0.8, 'f', 0);

        CalibrateDialog dialog(doc, m_window.get());
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QVERIFY(!okButton(dialog)->isEnabled()); // nothing entered yet
        typeInto(dialog.findChild<QLineEdit*>(QStringLiteral("peak")), peakText);
        auto* metric = dialog.findChild<QComboBox*>(QStringLiteral("metric"));
        QCOMPARE(metric->currentData().toString(), QStringLiteral("reserved"));
        typeInto(dialog.findChild<QLineEdit*>(QStringLiteral("rate")), rateText);

        // What the dialog shows is the core's fit of the same measurements.
        CalibrationTarget target;
        target.peakBytes = peakText.toDouble() * 1073741824.0;
        target.metric = MemoryMetric::Reserved;
        target.tokensPerS = rateText.toDouble();
        const Expected<Calibration> expected = calibrate(original, target);
        QVERIFY(expected);
        QCOMPARE(int(expected->changes.size()), 2);
        QVERIFY(dialog.calibration().has_value());
        QVERIFY(okButton(dialog)->isEnabled());
        const QString shown = preview(dialog);
        for (const CalibrationChange& c : expected->changes) {
            QVERIFY2(shown.contains(QString::fromStdString(c.field)), qPrintable(shown));
            QVERIFY2(shown.contains(QString::number(c.after, 'g', 4)), qPrintable(shown));
        }
        // An op-timed plan is calibrated in efficiency_scale, not an MFU (issue 22).
        QVERIFY(shown.contains(QStringLiteral("training.efficiency_scale")));
        uitest::keepScreenshot(&dialog, QStringLiteral("calibrate-dialog.png"));

        const int steps = doc->undoStack()->count();
        QTest::mouseClick(okButton(dialog), Qt::LeftButton);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(doc->undoStack()->count(), steps + 1); // one undo step for both changes
        QCOMPARE(doc->plan(), expected->plan);
        // 20% slower than the tables: the compute ops scaled down (efficiency_scale < 1).
        QVERIFY(doc->plan().training.efficiencyScale < original.training.efficiencyScale);
        QVERIFY(!(doc->plan() == original));

        m_window->undoAction()->trigger();
        QCOMPARE(doc->plan(), original);
    }

    void badInputNamesTheFieldAndItsRange()
    {
        PlanDocument* doc = m_window->document();
        const Plan original = doc->plan();
        CalibrateDialog dialog(doc, m_window.get());
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* peak = dialog.findChild<QLineEdit*>(QStringLiteral("peak"));

        typeInto(peak, QStringLiteral("lots"));
        QVERIFY(!okButton(dialog)->isEnabled());
        QVERIFY2(dialog.message().contains(QStringLiteral("Peak memory (GiB)")),
            qPrintable(dialog.message()));
        QVERIFY(dialog.message().contains(QStringLiteral("0.01..100000")));
        QVERIFY(preview(dialog).contains(QStringLiteral("Peak memory (GiB)")));
        uitest::keepScreenshot(&dialog, QStringLiteral("calibrate-dialog-error.png"));

        // A number in range that the plan cannot reach: the core's message, under the field.
        typeInto(peak, QStringLiteral("0.5"));
        QVERIFY(!okButton(dialog)->isEnabled());
        QVERIFY2(dialog.message().startsWith(QStringLiteral("Peak memory (GiB): ")),
            qPrintable(dialog.message()));

        // The step time's own range.
        peak->clear();
        auto* kind = dialog.findChild<QComboBox*>(QStringLiteral("rateKind"));
        kind->setCurrentIndex(kind->findData(QStringLiteral("step")));
        typeInto(dialog.findChild<QLineEdit*>(QStringLiteral("rate")), QStringLiteral("-3"));
        QVERIFY2(dialog.message().contains(QStringLiteral("Step time (s)")),
            qPrintable(dialog.message()));
        QVERIFY(dialog.message().contains(QStringLiteral("0.001..")));

        // OK stays off and nothing changes.
        QTest::keyClick(&dialog, Qt::Key_Return);
        QCOMPARE(doc->plan(), original);
    }

    void toolsMenuOpensTheDialog()
    {
        QAction* action = nullptr;
        for (QAction* a : m_window->menuBar()->findChildren<QAction*>())
            if (a->text() == QStringLiteral("&Calibrate from a measured run…"))
                action = a;
        QVERIFY(action);
        bool opened = false;
        QTimer::singleShot(0, this, [&opened] {
            auto* dialog = qobject_cast<CalibrateDialog*>(QApplication::activeModalWidget());
            opened = dialog != nullptr;
            if (dialog)
                dialog->reject();
        });
        action->trigger();
        QVERIFY(opened);
    }
};

ENVELOPE_UI_TEST_MAIN(TestCalibrateDialog)
#include "test_calibratedialog.moc"
