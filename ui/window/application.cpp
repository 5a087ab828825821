#include "window/application.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QWidget>

#include "window/exporter.h"

namespace envelope::ui {

PresetLibrary loadPresetLibrary(QStringList* warnings)
{
    Expected<PresetLibrary> builtin = builtinPresets();
    if (!builtin) {
        if (warnings)
            warnings->push_back(QString::fromStdString(builtin.error().toString()));
        return {};
    }
    PresetLibrary library = std::move(*builtin);
    const QDir dir(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation)
        + QStringLiteral("/presets"));
    for (const QString& name :
        dir.entryList({ QStringLiteral("*.json") }, QDir::Files, QDir::Name)) {
        QFile file(dir.filePath(name));
        if (!file.open(QIODevice::ReadOnly))
            continue;
        if (auto error
            = mergePresetFile(library, file.readAll().toStdString(), file.fileName().toStdString());
            error && warnings)
            warnings->push_back(QString::fromStdString(error->toString()));
    }
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
