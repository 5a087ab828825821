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
    QSize hint;
    if (!wordWrap()) {
        hint = QLabel::sizeHint();
    } else {
        const QMargins m = contentsMargins();
        const int width = fontMetrics().horizontalAdvance(text()) + m.left() + m.right()
            + 2 * margin() + std::max(indent(), 0) + 1;
        hint = QSize(width, heightForWidth(width));
    }
    if (m_growOnly) {
        m_widest = std::max(m_widest, hint.width());
        m_tallest = std::max(m_tallest, hint.height());
        hint = QSize(m_widest, m_tallest);
    }
    return hint;
}

int ValueLabel::heightForWidth(int width) const
{
    const int height = QLabel::heightForWidth(width);
    if (!m_growOnly)
        return height;
    m_tallest = std::max(m_tallest, height);
    return m_tallest;
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
