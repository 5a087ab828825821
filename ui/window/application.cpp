#include "window/application.h"
#include "window/mainwindow.h"
#include "document/plandocument.h"

#include <QApplication>
#include <QRegularExpression>
#include <QThread>
#include <QWidget>

#include "io/files.h"
#include "panels/planpanel.h"
#include "window/exporter.h"

namespace envelope::ui {

PresetLibrary loadPresetLibrary(QStringList* warnings)
{
    // The CLI's loader (io/files.h): the same user folder, $XDG_CONFIG_HOME/envelope/presets.
    std::vector<std::string> messages;
    PresetLibrary library = io::loadPresetsSkippingBad(messages);
    if (warnings)
        for (const std::string& message : messages)
            warnings->push_back(QString::fromStdString(message));
    return library;
}

bool writeScreenshot(QWidget* window, const QSize& size, const QString& path)
{
    window->setMinimumSize(0, 0);
    window->resize(size);
    window->show();
    // Two rounds: the first lays out and resizes the charts, the second paints them.
    for (int i = 0; i < 3; ++i)
        QApplication::processEvents();
    // The planner tab searches on a worker thread when first shown: let it finish (a few ms).
    for (PlanPanel* planner : window->findChildren<PlanPanel*>())
        for (int i = 0; i < 500 && planner->isSearching(); ++i) {
            QThread::msleep(10);
            QApplication::processEvents();
        }
    // "What makes it fit" runs on a worker too: the picture shows its answer, not "searching".
    if (auto* main = qobject_cast<MainWindow*>(window))
        main->document()->waitForFitSearch();
    for (int i = 0; i < 3; ++i)
        QApplication::processEvents();
    return savePng(grabWidget(window, size), path);
}

QSize parseSize(const QString& text, QString* error)
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d{1,9})[xX](\\d{1,9})$"));
    const QRegularExpressionMatch match = pattern.match(text.trimmed());
    if (!match.hasMatch()) {
        if (error)
            *error = QStringLiteral("expected WxH, e.g. 1600x1000, got %1").arg(text);
        return {};
    }
    const QSize size(match.captured(1).toInt(), match.captured(2).toInt());
    if (size.width() < kMinShotSide || size.height() < kMinShotSide || size.width() > kMaxShotSide
        || size.height() > kMaxShotSide) {
        if (error)
            *error = QStringLiteral("each side must be %1..%2 pixels, got %3x%4")
                         .arg(kMinShotSide)
                         .arg(kMaxShotSide)
                         .arg(size.width())
                         .arg(size.height());
        return {};
    }
    return size;
}

} // namespace envelope::ui
