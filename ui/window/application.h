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

// Window and screenshot sides. 99999x99999 crashed inside Qt's painting (an ARGB32 image of
// 40 GB) and 20000x20000 took 16 s; 8192 (a 256 MB image, an 8K screen) is the most a
// screenshot needs and what a QImage can allocate on any machine that runs the app.
inline constexpr int kMinShotSide = 64;
inline constexpr int kMaxShotSide = 8192;

// "1600x1000" -> QSize; invalid on anything else, with the reason in `error`.
QSize parseSize(const QString& text, QString* error = nullptr);

} // namespace envelope::ui
