// A compact grid of named figures ("KV budget  58.2 GB"), each with a tooltip carrying the
// core's formula for it. Used by the serving and RL panels.
#pragma once

#include <QFrame>
#include <QHash>

class QGridLayout;
class QLabel;

namespace envelope::ui {

class FigureGrid : public QFrame {
    Q_OBJECT
public:
    explicit FigureGrid(int columns = 3, QWidget* parent = nullptr);

    // Adds a figure in reading order; `key` names it for setFigure and figureText.
    void addFigure(const QString& key, const QString& title);
    // Shows `text`; `tooltip` (rich text) appears on both the title and the value.
    void setFigure(const QString& key, const QString& text, const QString& tooltip = {});
    // Colours a figure's value (fits / does not fit); an invalid colour resets it.
    void setFigureColor(const QString& key, const QColor& color);

    QString figureText(const QString& key) const;
    QString figureToolTip(const QString& key) const;
    QLabel* valueLabel(const QString& key) const { return m_values.value(key); }

private:
    int m_columns;
    int m_count = 0;
    QGridLayout* m_grid;
    QHash<QString, QLabel*> m_titles;
    QHash<QString, QLabel*> m_values;
};

} // namespace envelope::ui
