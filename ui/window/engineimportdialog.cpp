#include "window/engineimportdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace envelope::ui {

EngineImportDialog::EngineImportDialog(
    const PresetLibrary& presets, const QString& initialModel, QWidget* parent)
    : QDialog(parent)
    , m_engine(new QComboBox(this))
    , m_file(new QLineEdit(this))
    , m_model(new QComboBox(this))
    , m_gpus(new QSpinBox(this))
{
    setWindowTitle(tr("Import engine config"));
    m_engine->addItem(tr("DeepSpeed config (JSON)"), static_cast<int>(Engine::DeepSpeed));
    m_engine->addItem(tr("torchtitan job (TOML)"), static_cast<int>(Engine::TorchTitan));
    m_engine->addItem(tr("Megatron-LM arguments"), static_cast<int>(Engine::Megatron));
    m_model->setEditable(true);
    for (const ModelPreset& m : presets.models)
        m_model->addItem(QString::fromStdString(m.id));
    m_model->setCurrentText(initialModel);
    m_model->setToolTip(tr("A model preset id, or the path of a Hugging Face config.json"));
    m_gpus->setRange(0, 1'000'000);
    m_gpus->setSpecialValueText(tr("from the file"));
    m_gpus->setToolTip(tr("The cluster to estimate on: will this config fit there?"));

    auto* browse = new QPushButton(tr("&Browse…"), this);
    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(m_file, 1);
    fileRow->addWidget(browse);
    auto* form = new QFormLayout;
    form->addRow(tr("&Engine:"), m_engine);
    auto* fileLabel = new QLabel(tr("&File:"), this);
    fileLabel->setBuddy(m_file);
    form->addRow(fileLabel, fileRow);
    form->addRow(tr("&Model:"), m_model);
    form->addRow(tr("&GPUs:"), m_gpus);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Import"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Engine config"), QString(),
            tr("Engine configs (*.json *.toml *.args *.sh *.txt);;All files (*)"));
        if (!path.isEmpty())
            setFilePath(path);
    });
    const auto updateOk = [this, buttons] {
        buttons->button(QDialogButtonBox::Ok)
            ->setEnabled(!m_file->text().isEmpty() && !m_model->currentText().isEmpty());
    };
    connect(m_file, &QLineEdit::textChanged, this, updateOk);
    connect(m_model, &QComboBox::currentTextChanged, this, updateOk);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    updateOk();
    resize(560, sizeHint().height());
}

Engine EngineImportDialog::engine() const
{
    return static_cast<Engine>(m_engine->currentData().toInt());
}

QString EngineImportDialog::filePath() const
{
    return m_file->text();
}

QString EngineImportDialog::model() const
{
    return m_model->currentText().trimmed();
}

std::optional<int> EngineImportDialog::gpus() const
{
    return m_gpus->value() > 0 ? std::optional<int>(m_gpus->value()) : std::nullopt;
}

void EngineImportDialog::setFilePath(const QString& path)
{
    m_file->setText(path);
    if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
        m_engine->setCurrentIndex(m_engine->findData(static_cast<int>(Engine::DeepSpeed)));
    else if (path.endsWith(QLatin1String(".toml"), Qt::CaseInsensitive))
        m_engine->setCurrentIndex(m_engine->findData(static_cast<int>(Engine::TorchTitan)));
    else
        m_engine->setCurrentIndex(m_engine->findData(static_cast<int>(Engine::Megatron)));
}

} // namespace envelope::ui
