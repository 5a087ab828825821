// "Pin this plan": the memory chart draws the pinned plan's stack ghosted beside the current
// one, the summary shows the change against it, and the pins survive save and open in the
// sibling PLAN.pins.json (docs/plan-format.md, "Pins").
#include <QBarSet>
#include <QFile>
#include <QTemporaryDir>

#include "charts/memorybarchart.h"
#include "document/plandocument.h"
#include "document/settings.h"
#include "panels/summarystrip.h"
#include "panels/trainingpanel.h"
#include "uitestutil.h"
#include "window/mainwindow.h"

using namespace envelope;
using namespace envelope::ui;

class TestPins : public uitest::WindowTest {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    MemoryBarChart* chart() const { return m_window->trainingPanel()->memoryChart(); }
    SummaryStrip* summary() const { return m_window->trainingPanel()->findChild<SummaryStrip*>(); }

private slots:
    void init() { QVERIFY(openWindow()); }
    void cleanup() { closeWindow(); }

    void pinnedStackIsDrawnGhostedBesideThePlan()
    {
        const int before = chart()->columnCount();
        const Estimate pinned = m_window->document()->results().estimate;
        m_window->pinPlan();
        QVERIFY(m_window->isWindowModified()); // pins are saved with the plan
        QCOMPARE(chart()->columnCount(), before + 1);
        QCOMPARE(chart()->columnLabel(1), QStringLiteral("Pinned"));

        // Now ZeRO-3: the plan's weights shrink 8x, the pinned ZeRO-1 column keeps its own.
        Plan p = m_window->document()->plan();
        p.training.zeroStage = 3;
        m_window->document()->edit(p, QStringLiteral("ZeRO-3"));
        QBarSet* weights = chart()->barSet(Tenant::Weights);
        QCOMPARE(weights->at(1), pinned.training.perGpu.weights / 1e9); // GB
        QVERIFY(weights->at(0) < weights->at(1) / 7);
        QVERIFY(weights->isBarSelected(1)); // drawn in the faded "selected" colour
        QVERIFY(!weights->isBarSelected(0));
        QVERIFY(std::abs(weights->selectedColor().alphaF() - 0.35f) < 0.01f); // 8-bit alpha

        // The summary compares with the pin: the plan's total, then its change.
        const double now = m_window->document()->results().estimate.training.perGpu.total();
        const QString text = summary()->pinComparisonText();
        QVERIFY2(text.startsWith(QString::fromStdString(formatBytes(now, ByteUnits::GB))
                     + QStringLiteral(" (-")),
            qPrintable(text));
        QVERIFY(text.contains(QStringLiteral(" · ")));
    }

    void pinsSurviveSaveAndOpen()
    {
        m_window->pinPlan();
        const QString plan = m_dir.filePath(QStringLiteral("plan.json"));
        QString error;
        QVERIFY2(m_window->saveFile(plan, &error), qPrintable(error));
        QVERIFY(!m_window->isWindowModified());
        QVERIFY(QFile::exists(m_dir.filePath(QStringLiteral("plan.pins.json"))));

        m_window->newPlan();
        QVERIFY(m_window->document()->pins().empty());
        QVERIFY2(m_window->openFile(plan, &error), qPrintable(error));
        QCOMPARE(m_window->document()->pins().size(), std::size_t(1));
        QCOMPARE(m_window->document()->pins().front().plan, uitest::llama7bPlan());
        QVERIFY(!m_window->isWindowModified());
        QCOMPARE(chart()->columnLabel(1), QStringLiteral("Pinned"));

        // Clearing the pins and saving removes the sibling file.
        m_window->clearPins();
        QVERIFY(m_window->isWindowModified());
        QVERIFY2(m_window->saveFile(plan, &error), qPrintable(error));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("plan.pins.json"))));
        QVERIFY(summary()->pinComparisonText().isEmpty());
    }

    void aBadPinsFileNeverBlocksThePlan()
    {
        const QString plan = m_dir.filePath(QStringLiteral("other.json"));
        QString error;
        QVERIFY(m_window->saveFile(plan, &error));
        QFile bad(m_dir.filePath(QStringLiteral("other.pins.json")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"format": "envelope.pins", "version": 1, "pins": [{"plan": {"model": 5}}]})");
        bad.close();
        QVERIFY2(m_window->openFile(plan, &error), qPrintable(error));
        QVERIFY(m_window->document()->pins().empty());
        QString pinsError;
        loadPins(bad.fileName(), uitest::presets(), &pinsError);
        QVERIFY2(pinsError.contains(QStringLiteral("pins[0].plan.model")), qPrintable(pinsError));
    }
};

ENVELOPE_UI_TEST_MAIN(TestPins)
#include "test_pins.moc"
