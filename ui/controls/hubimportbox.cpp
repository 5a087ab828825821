#include "controls/hubimportbox.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

#include "charts/tenantpalette.h"
#include "hubfetch.h"
#include "widgets/appresources.h"

namespace envelope::ui {
namespace {

// Runs on a pool thread: the fetch (network, cache) and the import, both without Qt widgets.
HubImport fetchAndImport(QString text, hub::HubId id, hub::HubSettings settings)
{
    HubImport result;
    result.id = text;
    Expected<hub::HubConfig> config = hub::fetchHubConfig(id, settings);
    if (!config) {
        result.error = QString::fromStdString(config.error().toString());
        return result;
    }
    Expected<ModelArch> arch = importHfConfig(config->text);
    if (!arch) {
        result.error
            = text + QStringLiteral(": ") + QString::fromStdString(arch.error().toString());
        return result;
    }
    result.arch = std::move(*arch);
    result.warnings = std::move(config->warnings);
    // The checkpoint's serving formats; a quantization_config Envelope cannot map is a warning
    // and leaves the plan's formats alone.
    Expected<std::optional<CheckpointFormats>> formats = checkpointFormats(config->text);
    if (!formats)
        result.warnings.push_back(formats.error().toString() + "; the serving formats are left as they were");
    else
        result.formats = std::move(*formats);
    return result;
}

} // namespace

HubImportBox::HubImportBox(QWidget* parent)
    : QWidget(parent)
    , m_id(new QLineEdit(this))
    , m_fetch(new QPushButton(tr("Fetch"), this))
    , m_status(new QLabel(this))
{
    m_id->setPlaceholderText(tr("owner/name"));
    m_id->setClearButtonEnabled(true);
    m_id->setToolTip(tr("A Hugging Face Hub model id (OWNER/NAME or OWNER/NAME@REVISION): Enter "
                        "fetches its config.json and imports it.\nHF_TOKEN opens gated and "
                        "private repos, HF_ENDPOINT names a mirror, HF_HUB_OFFLINE=1 uses only "
                        "the cache (~/.cache/envelope/hf)."));
    m_fetch->setToolTip(tr("Fetch the config.json of the Hub id and import it"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->hide();

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_id, 1);
    layout->addWidget(m_fetch);

    connect(m_id, &QLineEdit::returnPressed, this, &HubImportBox::fetch);
    connect(m_fetch, &QPushButton::clicked, this, &HubImportBox::fetch);
    connect(&m_watcher, &QFutureWatcher<HubImport>::finished, this, &HubImportBox::onFetched);
}

// The watcher's future holds its own copy of the result; a fetch still running finishes on
// the pool (its bounded timeout) and is dropped.
HubImportBox::~HubImportBox() = default;

void HubImportBox::fetch()
{
    if (isBusy())
        return;
    const QString text = m_id->text().trimmed();
    if (text.isEmpty()) {
        showStatus(tr("Type a Hub id, e.g. meta-llama/Llama-3.1-8B"), true);
        emit finished(false);
        return;
    }
    const Expected<hub::HubId> id = hub::parseHubId(text.toStdString());
    if (!id) {
        showStatus(QString::fromStdString(id.error().toString()), true);
        emit finished(false);
        return;
    }
    // Read here, on the GUI thread: the worker touches no shared state.
    const hub::HubSettings settings = hub::hubSettingsFromEnvironment();
    showStatus(settings.offline
            ? tr("Reading %1 from the cache (offline)…").arg(text)
            : tr("Fetching %1 from %2…").arg(text, QString::fromStdString(settings.endpoint)),
        false);
    m_id->setEnabled(false);
    m_fetch->setEnabled(false);
    m_watcher.setFuture(QtConcurrent::run(fetchAndImport, text, *id, settings));
}

void HubImportBox::onFetched()
{
    const HubImport result = m_watcher.result();
    m_id->setEnabled(true);
    m_fetch->setEnabled(true);
    if (!result.error.isEmpty()) {
        showStatus(result.error, true);
        emit finished(false);
        return;
    }
    QString text = tr("Imported %1").arg(result.id);
    if (result.formats)
        text += QStringLiteral("\n")
            + tr("Serving: %1 (its quantization_config)")
                  .arg(QString::fromStdString(servingFormatsText(*result.formats)));
    for (const std::string& warning : result.warnings)
        text += QStringLiteral("\n") + tr("Warning: %1").arg(QString::fromStdString(warning));
    showStatus(text, !result.warnings.empty());
    emit imported(result);
    emit finished(true);
}

void HubImportBox::showStatus(const QString& text, bool error)
{
    m_status->setText(text);
    // An error or warning in the overflow colour (as a tab's status line), progress muted.
    m_status->setStyleSheet(
        error ? loadStyleSheet(QStringLiteral("overflow-text"), overflowColor()) : QString());
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_status->setVisible(!text.isEmpty());
}

} // namespace envelope::ui
