// A compact grid of named figures ("KV budget  58.2 GB"), each with a tooltip carrying the
// core's formula for it, fetched through FormulaToolTips only when the tooltip shows (a redraw
// never runs the explained estimate). Used by the serving and RL panels.
#pragma once

#include <QFrame>
#include <QHash>

class QGridLayout;
class QLabel;

namespace envelope::ui {

class FormulaToolTips;

class FigureGrid : public QFrame {
    Q_OBJECT
public:
    // `toolTips` (not owned) gives each figure's title and value the formula of its key.
    explicit FigureGrid(FormulaToolTips* toolTips, int columns = 3, QWidget* parent = nullptr);

    // Adds a figure in reading order; `key` names it for setFigure and figureText and is the
    // explanation key of its formula ("serving.kv_budget_bytes").
    void addFigure(const QString& key, const QString& title);
    void setFigure(const QString& key, const QString& text);
    // Colours a figure's value (fits / does not fit); an invalid colour resets it.
    void setFigureColor(const QString& key, const QColor& color);

    QString figureText(const QString& key) const;
    QString figureToolTip(const QString& key) const; // what hovering it shows now
    QLabel* valueLabel(const QString& key) const { return m_values.value(key); }

private:
    FormulaToolTips* m_toolTips;
    int m_columns;
    int m_count = 0;
    QGridLayout* m_grid;
    QHash<QString, QLabel*> m_titles;
    QHash<QString, QLabel*> m_values;
};

} // namespace envelope::ui
