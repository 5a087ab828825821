#include "window/application.h"

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
    for (int i = 0; i < 3; ++i)
        QApplication::processEvents();
    return grabWidget(window, size).save(path, "PNG");
}

QSize parseSize(const QString& text)
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d{2,5})[xX](\\d{2,5})$"));
    const QRegularExpressionMatch match = pattern.match(text.trimmed());
    if (!match.hasMatch())
        return {};
    return { match.captured(1).toInt(), match.captured(2).toInt() };
}

} // namespace envelope::ui
