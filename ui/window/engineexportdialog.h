// File → Export → Engine config…: the plan as a DeepSpeed / torchtitan / Megatron / HF / vLLM /
// SGLang / TensorRT-LLM configuration (core/export does the work; this dialog only shows it),
// optionally wrapped in a launchable job (torchrun, Slurm, Kubernetes), with what the engine
// cannot express, the launch line, Copy and Save (the file and its companions as one set:
// all written or none, io::saveFiles).
#pragma once

#include <optional>

#include <QDialog>

#include "export/export.h"
#include "export/launcher.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QTextBrowser;

namespace envelope::ui {

class PlanDocument;

class EngineExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit EngineExportDialog(PlanDocument* document, QWidget* parent = nullptr);

    void setEngine(Engine engine);
    Engine engine() const;
    // No launcher: the engine's own launch line.
    void setLauncher(std::optional<Launcher> launcher);
    std::optional<Launcher> launcher() const;
    // Why the chosen launcher cannot start this export ("" when it can, or none is chosen).
    QString launcherError() const { return m_launcherError; }
    const EngineConfig& config() const { return m_config; }
    QString text() const;
    // Writes the configuration to `path` and its companions (the launcher's job file, PEFT and
    // bitsandbytes configs, extra LLM API options) beside it, all or none; false with `error`
    // set on failure.
    bool saveTo(const QString& path, QString* error = nullptr) const;
    // The same in `folder`, each file under its own name (a launcher's job runs them by name).
    bool saveToFolder(const QString& folder, QString* error = nullptr) const;

private:
    void refresh();
    void showCompanions();
    void copy();
    void save();

    PlanDocument* m_document;
    EngineConfig m_config;
    QComboBox* m_engine;
    QComboBox* m_launcher;
    QString m_launcherError;
    QTabWidget* m_files;   // the configuration, then each companion file beside it
    QPlainTextEdit* m_text;
    QLabel* m_launch;
    QTextBrowser* m_warnings;
    QPushButton* m_save;
};

} // namespace envelope::ui
