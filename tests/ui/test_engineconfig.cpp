// File → Export → Engine config… and File → Import engine config…: the dialog shows exactly
// the core's export for the chosen engine with its warnings, saves it atomically, and an
// engine file imports as a new untitled plan (the engine file is never overwritten).
// Set ENVELOPE_SCREENSHOT_DIR to keep PNGs of the dialogs for review.
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTemporaryDir>
#include <QTextBrowser>

#include "document/plandocument.h"
#include "document/settings.h"
#include "estimate/estimate.h"
#include "uitestutil.h"
#include "window/engineexportdialog.h"
#include "window/engineimportdialog.h"
#include "window/mainwindow.h"

using namespace envelope;
using namespace envelope::ui;

class TestEngineConfig : public uitest::WindowTest {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void init() { QVERIFY(openWindow()); }
    void cleanup() { closeWindow(); }

    void exportDialogShowsTheCoresTextForEachEngine()
    {
        EngineExportDialog dialog(m_window->document(), m_window.get());
        dialog.resize(900, 700);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        const Plan& plan = m_window->document()->plan();
        for (Engine e : kAllEngines) {
            dialog.setEngine(e);
            QCOMPARE(dialog.engine(), e);
            const EngineConfig expected = exportPlan(plan, estimate(plan), e, std::string());
            QCOMPARE(dialog.text(), QString::fromStdString(expected.text));
            QCOMPARE(dialog.findChild<QPlainTextEdit*>()->toPlainText(), dialog.text());
            uitest::keepScreenshot(&dialog,
                QStringLiteral("export-dialog-%1.png").arg(QString::fromUtf8(engineId(e).data())));
        }
        // The test plan (ZeRO-1, selective recompute) has settings DeepSpeed cannot express:
        // the dialog lists them.
        dialog.setEngine(Engine::DeepSpeed);
        QVERIFY(dialog.findChild<QTextBrowser*>()->toPlainText().contains(
            QStringLiteral("training.recompute = \"selective\"")));
    }

    void exportSavesAtomically()
    {
        EngineExportDialog dialog(m_window->document(), m_window.get());
        dialog.setEngine(Engine::Megatron);
        const QString path = m_dir.filePath(QStringLiteral("megatron.args"));
        QString error;
        QVERIFY2(dialog.saveTo(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(file.readAll()), dialog.text());
        QVERIFY(!dialog.saveTo(m_dir.filePath(QStringLiteral("no/such/dir/x.args")), &error));
        QVERIFY(!error.isEmpty());
    }

    void importOpensAnUntitledPlan()
    {
        // Export the test plan for torchtitan, then import it as 16 GPUs of the same model.
        EngineExportDialog dialog(m_window->document(), m_window.get());
        dialog.setEngine(Engine::TorchTitan);
        const QString path = m_dir.filePath(QStringLiteral("job.toml"));
        QVERIFY(dialog.saveTo(path));
        QString error;
        QStringList warnings;
        QVERIFY2(m_window->importEngineConfigFile(
                     Engine::TorchTitan, path, QStringLiteral("llama-2-7b"), 16, &error, &warnings),
            qPrintable(error));
        const Plan& imported = m_window->document()->plan();
        QCOMPARE(imported.cluster.gpus, 16);
        QCOMPARE(imported.training.microBatch, 2); // the test plan's micro batch
        QCOMPARE(imported.training.recompute, Recompute::Selective);
        QCOMPARE(imported.model.presetId, std::string("llama-2-7b"));
        QVERIFY(m_window->document()->filePath().isEmpty());
        QVERIFY(!warnings.isEmpty()); // 8 GPUs in the file, 16 asked for

        // A bad file keeps the current plan and says which key is wrong.
        QFile bad(m_dir.filePath(QStringLiteral("bad.json")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"zero_optimization": {"stage": 9}})");
        bad.close();
        QVERIFY(!m_window->importEngineConfigFile(
            Engine::DeepSpeed, bad.fileName(), QStringLiteral("llama-2-7b"), {}, &error));
        QCOMPARE(error, QStringLiteral("zero_optimization.stage: must be 0..3, got 9"));
        QCOMPARE(m_window->document()->plan().cluster.gpus, 16);
    }

    void importDialogGuessesTheEngine()
    {
        EngineImportDialog dialog(uitest::presets(), QStringLiteral("llama-2-7b"));
        dialog.setFilePath(QStringLiteral("/x/job.toml"));
        QCOMPARE(dialog.engine(), Engine::TorchTitan);
        dialog.setFilePath(QStringLiteral("/x/ds_config.json"));
        QCOMPARE(dialog.engine(), Engine::DeepSpeed);
        dialog.setFilePath(QStringLiteral("/x/run.sh"));
        QCOMPARE(dialog.engine(), Engine::Megatron);
        QCOMPARE(dialog.model(), QStringLiteral("llama-2-7b"));
        QVERIFY(!dialog.gpus().has_value());
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        uitest::keepScreenshot(&dialog, QStringLiteral("import-dialog.png"));
    }
};

ENVELOPE_UI_TEST_MAIN(TestEngineConfig)
#include "test_engineconfig.moc"
