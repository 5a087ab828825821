// The model group's Hugging Face Hub row (issue 23): type or paste an id ("meta-llama/
// Llama-3.1-8B", optionally "@revision"), press Enter or Fetch, and the config.json is fetched
// and imported on a worker thread (QtConcurrent; never the GUI thread), with progress and any
// error shown under the box. The fetch, cache and messages are envelope_hub's, the import the
// core's importHfConfig, as for a local file; the group applies the result as one undo step.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <string>
#include <vector>

#include "model/model.h"
#include "serving/checkpoint.h"

class QLabel;
class QLineEdit;
class QPushButton;

namespace envelope::ui {

// What a fetch gives the GUI thread back.
struct HubImport {
    QString id; // as typed, trimmed
    QString error; // empty on success
    ModelArch arch;
    // The checkpoint's own serving formats (its quantization_config), applied with the model.
    std::optional<CheckpointFormats> formats;
    std::vector<std::string> warnings;
};

class HubImportBox : public QWidget {
    Q_OBJECT
public:
    explicit HubImportBox(QWidget* parent = nullptr);
    ~HubImportBox() override;

    QLineEdit* idEdit() const { return m_id; }
    QPushButton* fetchButton() const { return m_fetch; }
    // Progress, the error or the warnings of the last fetch; hidden while empty. The caller lays
    // it out (the model group: a form row of its own under the box, where a long message wraps
    // to the column's width).
    QLabel* statusLabel() const { return m_status; }
    bool isBusy() const { return m_watcher.isRunning(); }

    // Fetches the id in the line edit (what Enter and the button do). A malformed id is
    // refused at once, naming the allowed form; nothing starts while a fetch runs.
    void fetch();

signals:
    // A fetch succeeded: the model to import. Emitted on the GUI thread.
    void imported(const envelope::ui::HubImport& result);
    // Every fetch ends here, after `imported` on success (tests wait for it).
    void finished(bool ok);

private:
    void onFetched();
    void showStatus(const QString& text, bool error);

    QLineEdit* m_id;
    QPushButton* m_fetch;
    QLabel* m_status;
    QFutureWatcher<HubImport> m_watcher;
};

} // namespace envelope::ui
