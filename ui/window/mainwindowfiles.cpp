// MainWindow: files (open, save, recent, session, import) and exports.
#include "window/mainwindow.h"

#include <QClipboard>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMimeData>
#include <QSaveFile>
#include <QStatusBar>

#include "io/files.h"
#include "window/exporter.h"
#include "window/exportsizedialog.h"
#include "charts/memorybarchart.h"
#include "document/modelimport.h"
#include "serving/checkpoint.h"
#include "document/plandocument.h"
#include "plan/planio.h"
#include "document/settings.h"
#include "panels/trainingpanel.h"

namespace envelope::ui {
namespace {

using io::readTextFile;

const QString kPlanFilter = QObject::tr("Envelope plans (*.json);;All files (*)");

// An imported config.json is written relative to the plan's folder (design.md: "relative to the
// plan file"), so a plan saved elsewhere must have the path rebased from where it was read.
Plan planForFolder(Plan plan, const QString& fromFolder, const QString& toFolder)
{
    if (plan.model.form != ModelChoice::Form::HfConfig)
        return plan;
    const QString written = QString::fromStdString(plan.model.hfConfigPath);
    const QString absolute
        = QFileInfo(written).isAbsolute() ? written : QDir(fromFolder).absoluteFilePath(written);
    plan.model.hfConfigPath = QDir(toFolder).relativeFilePath(absolute).toStdString();
    return plan;
}

} // namespace

bool MainWindow::openFile(const QString& path, QString* error)
{
    // Every message names the file: the plan's own errors only name a JSON path.
    const QString shown = QDir::toNativeSeparators(path);
    const Expected<std::string> text = readTextFile(path.toStdString());
    if (!text) {
        if (error)
            *error = QString::fromStdString(text.error().toString());
        return false;
    }
    ReadOptions options;
    options.readFile = readTextFile;
    options.readHub = hubCacheReader();
    options.baseDir = QFileInfo(path).absolutePath().toStdString();
    Expected<Plan> plan = readPlan(*text, m_document->presets(), options);
    if (!plan) {
        if (error)
            *error = shown + QStringLiteral(": ") + QString::fromStdString(plan.error().toString());
        return false;
    }
    // Kept absolute in memory, as an import is: the session and a save elsewhere then find the
    // config.json wherever the plan is written (saving rebases it to the plan's folder).
    if (plan->model.form == ModelChoice::Form::HfConfig)
        plan->model.hfConfigPath
            = QDir(QFileInfo(path).absolutePath())
                  .absoluteFilePath(QString::fromStdString(plan->model.hfConfigPath))
                  .toStdString();
    m_document->reset(*plan, QFileInfo(path).absoluteFilePath());
    m_settings->addRecentFile(QFileInfo(path).absoluteFilePath());
    // The plan's pins, if it has a sibling PLAN.pins.json; a bad pins file never blocks the plan.
    QString pinsError;
    m_document->setPins(loadPins(pinsPathFor(path), m_document->presets(), &pinsError));
    statusBar()->showMessage(pinsError.isEmpty()
            ? tr("Opened %1").arg(shown)
            : tr("Opened %1; pins not read: %2").arg(shown, pinsError),
        pinsError.isEmpty() ? 4000 : 10000);
    return true;
}

bool MainWindow::saveFile(const QString& path, QString* error)
{
    // QSaveFile writes beside the target and renames on commit: a crash never leaves half a plan.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error)
            *error = file.errorString();
        return false;
    }
    file.write(QByteArray::fromStdString(writePlan(planForFolder(m_document->plan(),
        QFileInfo(m_document->filePath()).absolutePath(), QFileInfo(path).absolutePath()))));
    if (!file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    if (!savePins(pinsPathFor(path), m_document->pins(), error))
        return false;
    m_document->setFilePath(QFileInfo(path).absoluteFilePath());
    m_document->markSaved();
    m_settings->addRecentFile(QFileInfo(path).absoluteFilePath());
    statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 4000);
    return true;
}

void MainWindow::open()
{
    if (!maybeSave())
        return;
    const QString path
        = QFileDialog::getOpenFileName(this, tr("Open plan"), QString(), kPlanFilter);
    if (path.isEmpty())
        return;
    QString error;
    if (!openFile(path, &error))
        showError(tr("Could not open %1").arg(QFileInfo(path).fileName()), error);
}

bool MainWindow::save()
{
    if (m_document->filePath().isEmpty())
        return saveAs();
    QString error;
    if (!saveFile(m_document->filePath(), &error)) {
        showError(tr("Could not save"), error);
        return false;
    }
    return true;
}

bool MainWindow::saveAs()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save plan as"), m_document->filePath(), kPlanFilter);
    if (path.isEmpty())
        return false;
    QString error;
    if (!saveFile(path, &error)) {
        showError(tr("Could not save"), error);
        return false;
    }
    return true;
}

void MainWindow::loadDefaultPlan()
{
    Expected<Plan> plan = readPlan(m_document->presets().defaultPlanJson, m_document->presets());
    m_document->reset(plan ? *plan : Plan {});
}

void MainWindow::newPlan()
{
    loadDefaultPlan();
}

void MainWindow::restoreSession()
{
    const QString last = m_settings->lastSessionPlan();
    if (last.isEmpty()) {
        loadDefaultPlan();
        return;
    }
    // The session may name an imported config.json (by its absolute path): read it through the
    // same capped reader as any plan.
    ReadOptions options;
    options.readFile = readTextFile;
    options.readHub = hubCacheReader();
    Expected<Plan> plan = readPlan(last.toStdString(), m_document->presets(), options);
    if (plan) {
        m_document->reset(*plan);
        return;
    }
    loadDefaultPlan();
    // Never silently: say what was lost and why.
    statusBar()->showMessage(tr("Could not restore the last session (%1); opened the default plan")
                                 .arg(QString::fromStdString(plan.error().toString())));
}

bool MainWindow::importHfConfigFile(const QString& path, QString* error)
{
    const Expected<std::string> text = readTextFile(path.toStdString());
    if (!text) {
        if (error)
            *error = QString::fromStdString(text.error().toString());
        return false;
    }
    Expected<ModelArch> arch = importHfConfig(*text);
    if (!arch) {
        if (error)
            *error = QDir::toNativeSeparators(path) + QStringLiteral(": ")
                + QString::fromStdString(arch.error().toString());
        return false;
    }
    Plan plan = m_document->plan();
    plan.model = importedHfModel(std::move(*arch), QFileInfo(path).absoluteFilePath().toStdString(),
        QFileInfo(path).dir().dirName().toStdString());
    // The checkpoint's own serving formats (quantization_config) come with it; one Envelope
    // cannot map leaves the plan's formats as they were.
    if (const Expected<std::optional<CheckpointFormats>> formats = checkpointFormats(*text); formats && *formats)
        applyCheckpointFormats(plan.serving, **formats);
    m_document->edit(plan, tr("Import %1").arg(QFileInfo(path).fileName()));
    return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile()
        && urls.front().toLocalFile().endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString path = event->mimeData()->urls().front().toLocalFile();
    // Sniffed through the capped reader too: QFile::open on a dropped fifo would block.
    const Expected<std::string> text = readTextFile(path.toStdString());
    QString error;
    bool ok = false;
    if (!text) {
        error = QString::fromStdString(text.error().toString());
    } else if (std::string_view(*text).substr(0, 4096).find("\"envelope.plan\"")
        != std::string_view::npos) {
        if (!maybeSave())
            return;
        ok = openFile(path, &error);
    } else {
        ok = importHfConfigFile(path, &error);
    }
    if (!ok)
        showError(tr("Could not load %1").arg(QFileInfo(path).fileName()), error);
    event->acceptProposedAction();
}

QString MainWindow::exportPath(const QString& filter, const QString& suffix)
{
    const QString base = m_document->filePath().isEmpty()
        ? QDir::home().filePath(QStringLiteral("envelope"))
        : QFileInfo(m_document->filePath()).path() + QLatin1Char('/')
            + QFileInfo(m_document->filePath()).completeBaseName();
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export"), base + QLatin1Char('.') + suffix, filter);
    if (!path.isEmpty() && QFileInfo(path).suffix().isEmpty())
        path += QLatin1Char('.') + suffix;
    return path;
}

void MainWindow::exportChartPng()
{
    ExportSizeDialog dialog(QSize(1600, 1000), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QString path = exportPath(tr("PNG image (*.png)"), QStringLiteral("png"));
    m_training->drawIfStale();
    if (!path.isEmpty()
        && !ui::exportChartPng(m_training->memoryChart()->chartView(), dialog.chosenSize(), path))
        showError(tr("Export failed"), tr("Could not write %1").arg(path));
}

void MainWindow::exportChartSvg()
{
    ExportSizeDialog dialog(QSize(1600, 1000), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QString path = exportPath(tr("SVG image (*.svg)"), QStringLiteral("svg"));
    m_training->drawIfStale();
    if (!path.isEmpty()
        && !ui::exportChartSvg(m_training->memoryChart()->chartView(), dialog.chosenSize(), path))
        showError(tr("Export failed"), tr("Could not write %1").arg(path));
}

void MainWindow::exportWindowPng()
{
    const QString path = exportPath(tr("PNG image (*.png)"), QStringLiteral("png"));
    if (!path.isEmpty() && !savePng(grabWidget(this, size()), path))
        showError(tr("Export failed"), tr("Could not write %1").arg(path));
}

void MainWindow::copySummaryMarkdown()
{
    // The summary names what makes the plan fit: a search still running lands first (bounded,
    // milliseconds), so the copied text is complete.
    m_document->waitForFitSearch();
    QGuiApplication::clipboard()->setText(
        summaryMarkdown(m_document->plan(), m_document->results(), m_settings->units()));
    statusBar()->showMessage(tr("Summary copied as Markdown"), 3000);
}

} // namespace envelope::ui
