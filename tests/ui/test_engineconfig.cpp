// File → Export → Engine config… and File → Import engine config…: the dialog shows exactly
// the core's export for the chosen engine with its warnings, saves it atomically, and an
// engine file imports as a new untitled plan (the engine file is never overwritten).
// Set ENVELOPE_SCREENSHOT_DIR to keep PNGs of the dialogs for review.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>

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
    Engine m_lastShown = Engine::DeepSpeed;

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
            // The first tab is the configuration, one tab after it per companion (TRL's launch
            // script): by tab, since a companion's editor may come first among the children.
            auto* tabs = dialog.findChild<QTabWidget*>();
            QCOMPARE(tabs->count(), static_cast<int>(expected.companions.size()) + 1);
            QCOMPARE(qobject_cast<QPlainTextEdit*>(tabs->widget(0))->toPlainText(), dialog.text());
            for (std::size_t i = 0; i < expected.companions.size(); ++i)
                QCOMPARE(qobject_cast<QPlainTextEdit*>(tabs->widget(static_cast<int>(i) + 1))
                             ->toPlainText(),
                    QString::fromStdString(expected.companions[i].text));
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

    // Issue 25: the export wrapped in a job. The dialog shows the core's launcher file in its
    // own tab, saves the set into one folder, and refuses (Save off, the reason shown) a job the
    // launcher cannot start.
    void exportWrapsTheConfigInALaunchableJob()
    {
        EngineExportDialog dialog(m_window->document(), m_window.get());
        dialog.resize(900, 700);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        const Plan& plan = m_window->document()->plan();
        dialog.setEngine(Engine::TorchTitan);
        auto* launcherBox = dialog.findChildren<QComboBox*>().at(1);
        // Chosen as a user does: the launcher box's own items.
        launcherBox->setCurrentIndex(launcherBox->findText(QStringLiteral("Slurm"), Qt::MatchStartsWith));
        QCOMPARE(dialog.launcher(), std::optional<Launcher>(Launcher::Slurm));
        const EngineConfig expected = withLauncher(
            exportPlan(plan, estimate(plan), Engine::TorchTitan, std::string()), plan,
            Launcher::Slurm)
                                          .value();
        QCOMPARE(dialog.config().launch, std::string("sbatch job.sbatch"));
        auto* tabs = dialog.findChild<QTabWidget*>();
        QVERIFY(tabs);
        QCOMPARE(tabs->count(), 2);
        QCOMPARE(tabs->tabText(0), QStringLiteral("job.toml"));
        QCOMPARE(tabs->tabText(1), QStringLiteral("job.sbatch"));
        QCOMPARE(qobject_cast<QPlainTextEdit*>(tabs->widget(1))->toPlainText(),
            QString::fromStdString(expected.companions.back().text));
        uitest::keepScreenshot(&dialog, QStringLiteral("export-dialog-slurm.png"));

        QString error;
        QVERIFY2(dialog.saveToFolder(m_dir.path(), &error), qPrintable(error));
        for (const char* name : { "job.toml", "job.sbatch" })
            QVERIFY2(QFile::exists(m_dir.filePath(QString::fromUtf8(name))), name);

        // torchrun cannot start a vLLM server: said, and nothing half-made is saved.
        dialog.setEngine(Engine::Vllm);
        dialog.setLauncher(Launcher::Torchrun);
        QVERIFY(dialog.launcherError().contains(QStringLiteral("vllm starts its own workers")));
        QVERIFY(dialog.findChild<QTextBrowser*>()->toPlainText().contains(
            QStringLiteral("vllm starts its own workers")));
        QPushButton* save = nullptr;
        for (QPushButton* b : dialog.findChildren<QPushButton*>())
            if (b->text().contains(QStringLiteral("Save")))
                save = b;
        QVERIFY(save);
        QVERIFY(!save->isEnabled());
        QCOMPARE(tabs->count(), 1);
        dialog.setLauncher(std::nullopt);
        QVERIFY(save->isEnabled());
    }

    // File → Export → Engine config… opens on the engine that runs the tab in view: the plan's
    // serving engine from Serving, OpenRLHF for disjoint RL pools and verl for colocated ones.
    void exportOpensOnTheEngineOfTheTabInView()
    {
        QAction* action = nullptr;
        for (QAction* a : m_window->findChildren<QAction*>())
            if (a->text() == QStringLiteral("&Engine config…"))
                action = a;
        QVERIFY(action);
        const auto engineShown = [&](const QString& panel) {
            QVERIFY(m_window->selectPanel(panel));
            std::optional<Engine> shown;
            QTimer::singleShot(0, [&] {
                auto* dialog = qobject_cast<EngineExportDialog*>(QApplication::activeModalWidget());
                if (dialog) {
                    shown = dialog->engine();
                    dialog->reject();
                }
            });
            action->trigger();
            QVERIFY(shown.has_value());
            m_lastShown = *shown;
        };
        engineShown(QStringLiteral("rl"));
        QCOMPARE(m_lastShown, Engine::OpenRlhf); // the test plan's disjoint pools
        engineShown(QStringLiteral("serving"));
        QCOMPARE(m_lastShown, Engine::Vllm);
        engineShown(QStringLiteral("training"));
        QCOMPARE(m_lastShown, Engine::DeepSpeed);
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
