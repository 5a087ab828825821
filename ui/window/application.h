// What app/main.cpp needs beyond argument parsing: the preset library (built in + the user's
// preset files) and the offscreen screenshot.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

#include "plan/presets.h"

class QWidget;

namespace envelope::ui {

// builtinPresets() plus every *.json in $XDG_CONFIG_HOME/envelope/presets, the folder envelope-cli
// reads too (later files replace entries by id). Problems are appended to `warnings`.
PresetLibrary loadPresetLibrary(QStringList* warnings = nullptr);

// Shows `window` at exactly `size`, lets it lay out and paint, and writes it as PNG.
bool writeScreenshot(QWidget* window, const QSize& size, const QString& path);

// "1600x1000" -> QSize; invalid on anything else.
QSize parseSize(const QString& text);

} // namespace envelope::ui
