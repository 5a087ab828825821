// File → Import engine config…: which engine's file, the file, the model it trains and the GPUs
// to estimate on. The reading is core/export's importEngineConfig; MainWindow opens the result.
#pragma once

#include <QDialog>

#include <optional>

#include "export/export.h"
#include "plan/presets.h"

class QComboBox;
class QLineEdit;
class QSpinBox;

namespace envelope::ui {

class EngineImportDialog : public QDialog {
    Q_OBJECT
public:
    EngineImportDialog(
        const PresetLibrary& presets, const QString& initialModel, QWidget* parent = nullptr);

    Engine engine() const;
    QString filePath() const;
    QString model() const; // a preset id or a config.json path
    std::optional<int> gpus() const; // empty: from the file
    void setFilePath(const QString& path); // also guesses the engine from the extension

private:
    QComboBox* m_engine;
    QLineEdit* m_file;
    QComboBox* m_model;
    QSpinBox* m_gpus;
};

} // namespace envelope::ui
