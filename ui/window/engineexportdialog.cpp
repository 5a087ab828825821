#include "window/engineexportdialog.h"

#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGuiApplication>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "document/plandocument.h"
#include "estimate/estimate.h"

namespace envelope::ui {

EngineExportDialog::EngineExportDialog(PlanDocument* document, QWidget* parent)
    : QDialog(parent)
    , m_document(document)
    , m_engine(new QComboBox(this))
    , m_text(new QPlainTextEdit(this))
    , m_launch(new QLabel(this))
    , m_warnings(new QTextBrowser(this))
{
    setWindowTitle(tr("Export engine config"));
    m_engine->addItem(tr("DeepSpeed (config JSON)"), static_cast<int>(Engine::DeepSpeed));
    m_engine->addItem(tr("torchtitan (job TOML)"), static_cast<int>(Engine::TorchTitan));
    m_engine->addItem(tr("Megatron-LM (arguments)"), static_cast<int>(Engine::Megatron));
    m_engine->addItem(
        tr("Hugging Face Trainer (TrainingArguments JSON)"), static_cast<int>(Engine::Hf));
    m_engine->addItem(tr("vLLM (vllm serve)"), static_cast<int>(Engine::Vllm));
    m_engine->addItem(tr("SGLang (sglang.launch_server)"), static_cast<int>(Engine::Sglang));
    m_engine->addItem(tr("TensorRT-LLM (trtllm-serve)"), static_cast<int>(Engine::Trtllm));
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_launch->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_launch->setWordWrap(true);
    // A scrolling box: a plan can have more warnings than fit under the text.
    m_warnings->setMaximumHeight(140);
    m_warnings->setFrameShape(QFrame::NoFrame);

    auto* form = new QFormLayout;
    form->addRow(tr("&Engine:"), m_engine);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    QPushButton* copyButton = buttons->addButton(tr("&Copy"), QDialogButtonBox::ActionRole);
    m_save = buttons->addButton(tr("&Save…"), QDialogButtonBox::ActionRole);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_launch);
    layout->addWidget(m_warnings);
    layout->addWidget(buttons);

    connect(m_engine, &QComboBox::currentIndexChanged, this, &EngineExportDialog::refresh);
    connect(copyButton, &QPushButton::clicked, this, &EngineExportDialog::copy);
    connect(m_save, &QPushButton::clicked, this, &EngineExportDialog::save);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(820, 640);
    refresh();
}

void EngineExportDialog::setEngine(Engine engine)
{
    m_engine->setCurrentIndex(m_engine->findData(static_cast<int>(engine)));
}

Engine EngineExportDialog::engine() const
{
    return static_cast<Engine>(m_engine->currentData().toInt());
}

QString EngineExportDialog::text() const
{
    return QString::fromStdString(m_config.text);
}

void EngineExportDialog::refresh()
{
    const Plan& plan = m_document->plan();
    if (!m_document->isValid()) {
        m_config = {};
        m_text->setPlainText(tr("The plan is not valid: %1").arg(m_document->validationMessage()));
        m_launch->clear();
        m_warnings->clear();
        m_save->setEnabled(false);
        return;
    }
    m_config
        = exportPlan(plan, estimate(plan), engine(), modelRepository(plan, m_document->presets()));
    m_text->setPlainText(text());
    m_save->setEnabled(true);
    // JSON has no comments, so Envelope's figures are shown here instead of in the file.
    QString launch;
    if (m_config.text.find("# Envelope export") == std::string::npos)
        for (const std::string& f : m_config.figures)
            launch += QString::fromStdString(f).toHtmlEscaped() + QStringLiteral("<br>");
    for (const EngineConfig::Companion& companion : m_config.companions)
        launch += tr("Beside it, <b>%1</b>:<pre>%2</pre>")
                      .arg(QString::fromStdString(companion.fileName).toHtmlEscaped(),
                          QString::fromStdString(companion.text).toHtmlEscaped());
    m_launch->setText(launch
        + tr("Launch: <code>%1</code>")
              .arg(QString::fromStdString(m_config.launch).toHtmlEscaped()));
    m_launch->setTextFormat(Qt::RichText);
    if (m_config.warnings.empty()) {
        m_warnings->setHtml(tr("The engine expresses every setting of this plan."));
        return;
    }
    QString html = tr("<b>Not expressed by %1:</b><ul style=\"margin: 0\">")
                       .arg(QString::fromUtf8(engineId(engine()).data()));
    for (const std::string& w : m_config.warnings)
        html += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(w).toHtmlEscaped());
    m_warnings->setHtml(html + QStringLiteral("</ul>"));
}

void EngineExportDialog::copy()
{
    QGuiApplication::clipboard()->setText(text());
}

bool EngineExportDialog::saveTo(const QString& path, QString* error) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = file.errorString();
        return false;
    }
    file.write(QByteArray::fromStdString(m_config.text));
    if (!file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

void EngineExportDialog::save()
{
    const QString folder = m_document->filePath().isEmpty()
        ? QDir::homePath()
        : QFileInfo(m_document->filePath()).absolutePath();
    const QString path = QFileDialog::getSaveFileName(this, tr("Save engine config"),
        QDir(folder).filePath(QString::fromStdString(m_config.fileName)));
    if (path.isEmpty())
        return;
    QString error;
    if (!saveTo(path, &error))
        QMessageBox::warning(this, tr("Could not save"), error);
}

} // namespace envelope::ui
