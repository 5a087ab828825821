// File → Export → Engine config…: the plan as a DeepSpeed / torchtitan / Megatron / HF / vLLM
// configuration (core/export does the work; this dialog only shows it), with what the engine
// cannot express, the launch line, Copy and Save (atomic, through QSaveFile).
#pragma once

#include <QDialog>

#include "export/export.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTextBrowser;

namespace envelope::ui {

class PlanDocument;

class EngineExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit EngineExportDialog(PlanDocument* document, QWidget* parent = nullptr);

    void setEngine(Engine engine);
    Engine engine() const;
    const EngineConfig& config() const { return m_config; }
    QString text() const;
    // Writes the configuration to `path` atomically; false with `error` set on failure.
    bool saveTo(const QString& path, QString* error = nullptr) const;

private:
    void refresh();
    void copy();
    void save();

    PlanDocument* m_document;
    EngineConfig m_config;
    QComboBox* m_engine;
    QPlainTextEdit* m_text;
    QLabel* m_launch;
    QTextBrowser* m_warnings;
    QPushButton* m_save;
};

} // namespace envelope::ui
