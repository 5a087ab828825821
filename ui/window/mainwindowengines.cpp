// MainWindow: engine configurations (issue 15): File → Export → Engine config… and
// File → Import engine config…. The core reads and writes them; this file only wires dialogs.
#include "window/mainwindow.h"
#include "document/modelimport.h"

#include <QFileInfo>
#include <QMessageBox>
#include <QStatusBar>

#include <nlohmann/json.hpp>

#include "document/plandocument.h"
#include "io/files.h"
#include "plan/planio.h"
#include "window/engineexportdialog.h"
#include "window/engineimportdialog.h"

namespace envelope::ui {

bool MainWindow::importEngineConfigFile(Engine engine, const QString& path, const QString& model,
    std::optional<int> gpus, QString* error, QStringList* warnings)
{
    const Expected<std::string> text = io::readTextFile(path.toStdString());
    if (!text) {
        if (error)
            *error = QString::fromStdString(text.error().toString());
        return false;
    }
    ImportOptions options;
    options.gpus = gpus;
    options.sourceName = QFileInfo(path).fileName().toStdString();
    const bool configFile
        = model.endsWith(QLatin1String(".json"), Qt::CaseInsensitive) || QFileInfo(model).isFile();
    options.modelJson = configFile
        ? nlohmann::json { { "hf_config", QFileInfo(model).absoluteFilePath().toStdString() } }
              .dump()
        : nlohmann::json(model.toStdString()).dump();
    Expected<ImportedPlan> imported
        = envelope::importEngineConfig(engine, *text, m_document->presets(), options);
    if (!imported) {
        if (error)
            *error = QString::fromStdString(imported.error().toString());
        return false;
    }
    ReadOptions readOptions;
    readOptions.readFile = io::readTextFile;
    readOptions.readHub = hubCacheReader();
    Expected<Plan> plan = readPlan(imported->planJson, m_document->presets(), readOptions);
    if (!plan) {
        if (error)
            *error = QString::fromStdString(plan.error().toString());
        return false;
    }
    if (warnings)
        for (const std::string& w : imported->warnings)
            warnings->append(QString::fromStdString(w));
    m_document->reset(*plan); // untitled: Save asks where, the engine file is never overwritten
    return true;
}

void MainWindow::exportEngineConfig()
{
    EngineExportDialog dialog(m_document, this);
    // Opens on the engine that runs what the tab in view sizes.
    const QString panel = m_panelIds.value(m_tabs->currentIndex());
    if (panel == QLatin1String("serving"))
        dialog.setEngine(servingExportEngine(m_document->plan()));
    else if (panel == QLatin1String("rl"))
        dialog.setEngine(rlExportEngine(m_document->plan()));
    dialog.exec();
}

void MainWindow::importEngineConfig()
{
    if (!maybeSave())
        return;
    const Plan& current = m_document->plan();
    EngineImportDialog dialog(m_document->presets(),
        QString::fromStdString(
            current.model.presetId.empty() ? std::string("llama-2-7b") : current.model.presetId),
        this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    QStringList warnings;
    if (!importEngineConfigFile(
            dialog.engine(), dialog.filePath(), dialog.model(), dialog.gpus(), &error, &warnings)) {
        showError(tr("Could not import %1").arg(QFileInfo(dialog.filePath()).fileName()), error);
        return;
    }
    if (!warnings.isEmpty())
        QMessageBox::information(this,
            tr("Imported %1").arg(QFileInfo(dialog.filePath()).fileName()),
            tr("The plan was read. Settings it cannot hold:\n\n• %1")
                .arg(warnings.join(QStringLiteral("\n• "))));
    statusBar()->showMessage(tr("Imported %1").arg(QFileInfo(dialog.filePath()).fileName()), 4000);
}

void MainWindow::pinPlan()
{
    if (!m_document->pinCurrent()) {
        showError(
            tr("Cannot pin"), tr("The plan is not valid: %1").arg(m_document->validationMessage()));
        return;
    }
    // Pins are saved beside the plan (PLAN.pins.json); mark the document so Save writes them.
    statusBar()->showMessage(
        tr("Pinned \u201c%1\u201d: the memory chart shows it beside the "
           "plan; Save keeps it in %2")
            .arg(m_document->pins().back().label,
                m_document->filePath().isEmpty()
                    ? tr("PLAN.pins.json")
                    : QFileInfo(pinsPathFor(m_document->filePath())).fileName()),
        6000);
}

void MainWindow::clearPins()
{
    m_document->clearPins();
}

} // namespace envelope::ui
