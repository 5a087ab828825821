// A text that a custom-painted chart draws itself (no QLabel, no scene item): its whole extent
// in widget coordinates as laid out, and the string. The widgets report them so that the drawing
// test can check what Qt cannot see: no two texts overlap and none runs out of the widget.
#pragma once

#include <QRectF>
#include <QString>

namespace envelope::ui {

struct DrawnText {
    QRectF rect; // the text's full extent (its advance wide, one line high per line)
    QString text;
};

} // namespace envelope::ui
