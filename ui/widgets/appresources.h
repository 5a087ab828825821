// What the app reads from resources/envelope.qrc (compiled in by AUTORCC): the application
// icon and the style sheet fragments of resources/styles/*.qss. A fragment names its one
// variable colour `@accent` (the fits or overflow colour of tenantpalette.h), so the colours
// stay defined once, in C++.
#pragma once

#include <QColor>
#include <QIcon>
#include <QString>

namespace envelope::ui {

// The fragment `name` ("status-line" for resources/styles/status-line.qss) with `@accent`
// replaced by `accent`'s #rrggbb. Empty when there is no such fragment.
QString loadStyleSheet(const QString& name, const QColor& accent = {});

// resources/io.envelope.Envelope.svg, the icon packaging installs for the desktop too.
QIcon applicationIcon();

} // namespace envelope::ui
