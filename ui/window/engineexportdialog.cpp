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
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "document/plandocument.h"
#include "estimate/estimate.h"
#include "io/savefile.h"

namespace envelope::ui {

EngineExportDialog::EngineExportDialog(PlanDocument* document, QWidget* parent)
    : QDialog(parent)
    , m_document(document)
    , m_engine(new QComboBox(this))
    , m_launcher(new QComboBox(this))
    , m_files(new QTabWidget(this))
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
    m_engine->addItem(tr("verl (RL job: main_ppo overrides)"), static_cast<int>(Engine::Verl));
    m_engine->addItem(
        tr("OpenRLHF (RL job: train_ppo_ray arguments)"), static_cast<int>(Engine::OpenRlhf));
    m_engine->addItem(tr("TRL (RL job: GRPOTrainer config)"), static_cast<int>(Engine::Trl));
    m_launcher->addItem(tr("None: the engine's own launch line"), -1);
    m_launcher->addItem(tr("torchrun on each node (launch.sh)"), static_cast<int>(Launcher::Torchrun));
    m_launcher->addItem(tr("Slurm batch job (job.sbatch)"), static_cast<int>(Launcher::Slurm));
    m_launcher->addItem(tr("Kubernetes manifest (job.yaml)"), static_cast<int>(Launcher::K8s));
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
    form->addRow(tr("&Launcher:"), m_launcher);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    QPushButton* copyButton = buttons->addButton(tr("&Copy"), QDialogButtonBox::ActionRole);
    m_save = buttons->addButton(tr("&Save…"), QDialogButtonBox::ActionRole);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    m_files->addTab(m_text, QString());
    m_files->setDocumentMode(true);
    layout->addWidget(m_files, 1);
    layout->addWidget(m_launch);
    layout->addWidget(m_warnings);
    layout->addWidget(buttons);

    connect(m_engine, &QComboBox::currentIndexChanged, this, &EngineExportDialog::refresh);
    connect(m_launcher, &QComboBox::currentIndexChanged, this, &EngineExportDialog::refresh);
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

void EngineExportDialog::setLauncher(std::optional<Launcher> launcher)
{
    m_launcher->setCurrentIndex(m_launcher->findData(launcher ? static_cast<int>(*launcher) : -1));
}

std::optional<Launcher> EngineExportDialog::launcher() const
{
    const int data = m_launcher->currentData().toInt();
    return data < 0 ? std::nullopt : std::optional<Launcher>(static_cast<Launcher>(data));
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
        showCompanions();
        m_launch->clear();
        m_warnings->clear();
        m_save->setEnabled(false);
        return;
    }
    m_config
        = exportPlan(plan, estimate(plan), engine(), modelRepository(plan, m_document->presets()));
    m_launcherError.clear();
    if (const std::optional<Launcher> l = launcher()) {
        Expected<EngineConfig> launched = withLauncher(m_config, plan, *l);
        if (launched)
            m_config = *launched;
        else
            m_launcherError = QString::fromStdString(launched.error().message);
    }
    m_text->setPlainText(text());
    // A job the launcher refuses is not saved half-made: the reason is shown instead.
    m_save->setEnabled(m_launcherError.isEmpty());
    // JSON has no comments, so Envelope's figures are shown here instead of in the file.
    QString launch;
    if (m_config.text.find("# Envelope export") == std::string::npos)
        for (const std::string& f : m_config.figures)
            launch += QString::fromStdString(f).toHtmlEscaped() + QStringLiteral("<br>");
    showCompanions();
    if (!m_config.companions.empty()) {
        QStringList names;
        for (const EngineConfig::Companion& companion : m_config.companions)
            names << QString::fromStdString(companion.fileName).toHtmlEscaped();
        launch += tr("Beside it (tabs above): <b>%1</b><br>").arg(names.join(QStringLiteral(", ")));
    }
    m_launch->setText(launch
        + tr("Launch: <code>%1</code>")
              .arg(QString::fromStdString(m_config.launch).toHtmlEscaped()));
    m_launch->setTextFormat(Qt::RichText);
    QString html;
    if (!m_launcherError.isEmpty())
        html = tr("<p><b>No %1 job:</b> %2</p>")
                   .arg(m_launcher->currentText().toHtmlEscaped(), m_launcherError.toHtmlEscaped());
    if (m_config.warnings.empty()) {
        m_warnings->setHtml(html + tr("The engine expresses every setting of this plan."));
        return;
    }
    html += tr("<b>Not expressed by %1:</b><ul style=\"margin: 0\">")
                .arg(QString::fromUtf8(engineId(engine()).data()));
    for (const std::string& w : m_config.warnings)
        html += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(w).toHtmlEscaped());
    m_warnings->setHtml(html + QStringLiteral("</ul>"));
}

// One read-only tab per companion after the configuration's, named by file.
void EngineExportDialog::showCompanions()
{
    m_files->setTabText(0, QString::fromStdString(m_config.fileName));
    while (m_files->count() > 1) {
        QWidget* tab = m_files->widget(1);
        m_files->removeTab(1);
        tab->deleteLater();
    }
    for (const EngineConfig::Companion& companion : m_config.companions) {
        auto* view = new QPlainTextEdit(m_files);
        view->setReadOnly(true);
        view->setLineWrapMode(QPlainTextEdit::NoWrap);
        view->setFont(m_text->font());
        view->setPlainText(QString::fromStdString(companion.text));
        m_files->addTab(view, QString::fromStdString(companion.fileName));
    }
}

// The file on the tab in view: the configuration, or a companion beside it.
void EngineExportDialog::copy()
{
    const auto* view = qobject_cast<const QPlainTextEdit*>(m_files->currentWidget());
    QGuiApplication::clipboard()->setText(view ? view->toPlainText() : text());
}

bool EngineExportDialog::saveTo(const QString& path, QString* error) const
{
    const QString folder = QFileInfo(path).dir().path();
    std::vector<io::OutputFile> files { { path.toStdString(), m_config.text } };
    for (const EngineConfig::Companion& companion : m_config.companions)
        files.push_back({ QDir(folder).filePath(QString::fromStdString(companion.fileName))
                              .toStdString(),
            companion.text });
    if (const std::optional<Error> e = io::saveFiles(files)) {
        if (error)
            *error = QString::fromStdString(e->toString());
        return false;
    }
    return true;
}

bool EngineExportDialog::saveToFolder(const QString& folder, QString* error) const
{
    return saveTo(QDir(folder).filePath(QString::fromStdString(m_config.fileName)), error);
}

void EngineExportDialog::save()
{
    const QString folder = m_document->filePath().isEmpty()
        ? QDir::homePath()
        : QFileInfo(m_document->filePath()).absolutePath();
    QString error;
    if (launcher()) {
        // The job runs the files by name: they go into one folder under their own names.
        const QString target = QFileDialog::getExistingDirectory(this,
            tr("Save the job and its files into folder"), folder);
        if (!target.isEmpty() && !saveToFolder(target, &error))
            QMessageBox::warning(this, tr("Could not save"), error);
        return;
    }
    const QString path = QFileDialog::getSaveFileName(this, tr("Save engine config"),
        QDir(folder).filePath(QString::fromStdString(m_config.fileName)));
    if (path.isEmpty())
        return;
    if (!saveTo(path, &error))
        QMessageBox::warning(this, tr("Could not save"), error);
}

} // namespace envelope::ui
