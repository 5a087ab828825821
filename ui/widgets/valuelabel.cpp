#include "widgets/valuelabel.h"

#include <QClipboard>
#include <QContextMenuEvent>
#include <QGuiApplication>
#include <QMenu>
#include <QPainter>

#include <algorithm>

namespace envelope::ui {

ValueLabel::ValueLabel(QWidget* parent)
    : QLabel(parent)
{
    setTextFormat(Qt::PlainText);
    setContextMenuPolicy(Qt::DefaultContextMenu);
}

int ValueLabel::swatchSize() const
{
    return fontMetrics().ascent() * 3 / 4;
}

void ValueLabel::setSwatch(const QColor& color)
{
    if (color == m_swatch)
        return;
    const bool hadSwatch = m_swatch.isValid();
    m_swatch = color;
    if (hadSwatch != color.isValid())
        setIndent(color.isValid() ? swatchSize() + fontMetrics().horizontalAdvance(QLatin1Char(' '))
                                  : -1);
    update();
}

QSize ValueLabel::sizeHint() const
{
    if (!wordWrap())
        return QLabel::sizeHint();
    const QMargins m = contentsMargins();
    const int width = fontMetrics().horizontalAdvance(text()) + m.left() + m.right() + 2 * margin()
        + std::max(indent(), 0) + 1;
    return QSize(width, heightForWidth(width));
}

void ValueLabel::copy() const
{
    QGuiApplication::clipboard()->setText(text());
}

void ValueLabel::paintEvent(QPaintEvent* event)
{
    QLabel::paintEvent(event);
    if (!m_swatch.isValid())
        return;
    const int size = swatchSize();
    const QRect content = contentsRect();
    QRect square(content.left() + margin(), 0, size, size);
    square.moveTop(content.top() + (content.height() - size) / 2);
    QPainter painter(this);
    painter.fillRect(square, m_swatch);
    painter.setPen(m_swatch.darker(130));
    painter.drawRect(square.adjusted(0, 0, -1, -1));
}

void ValueLabel::contextMenuEvent(QContextMenuEvent* event)
{
    QMenu menu(this);
    QAction* copyAction = menu.addAction(tr("&Copy"), this, &ValueLabel::copy);
    copyAction->setEnabled(!text().isEmpty());
    menu.exec(event->globalPos());
}

} // namespace envelope::ui
