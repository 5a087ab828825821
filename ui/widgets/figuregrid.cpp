#include "widgets/figuregrid.h"

#include <QGridLayout>
#include <QLabel>

#include "widgets/formulatooltips.h"
#include "widgets/valuelabel.h"

namespace envelope::ui {

FigureGrid::FigureGrid(FormulaToolTips* toolTips, int columns, QWidget* parent)
    : QFrame(parent)
    , m_toolTips(toolTips)
    , m_columns(std::max(columns, 1))
    , m_grid(new QGridLayout(this))
{
    setFrameShape(QFrame::StyledPanel);
    m_grid->setContentsMargins(8, 6, 8, 6);
    m_grid->setHorizontalSpacing(10);
    m_grid->setVerticalSpacing(3);
    for (int c = 0; c < m_columns; ++c)
        m_grid->setColumnStretch(2 * c + 1, 1);
}

void FigureGrid::addFigure(const QString& key, const QString& title)
{
    auto* name = new QLabel(title + QLatin1Char(':'), this);
    name->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    QPalette muted = name->palette();
    muted.setColor(QPalette::WindowText, muted.color(QPalette::PlaceholderText));
    name->setPalette(muted);
    QLabel* value = new ValueLabel(this);
    QFont bold = value->font();
    bold.setBold(true);
    value->setFont(bold);
    const int row = m_count / m_columns;
    const int column = 2 * (m_count % m_columns);
    m_grid->addWidget(name, row, column);
    m_grid->addWidget(value, row, column + 1);
    m_toolTips->attach(name, key);
    m_toolTips->attach(value, key);
    m_titles.insert(key, name);
    m_values.insert(key, value);
    ++m_count;
}

void FigureGrid::setFigure(const QString& key, const QString& text)
{
    if (QLabel* value = m_values.value(key))
        value->setText(text);
}

void FigureGrid::setFigureColor(const QString& key, const QColor& color)
{
    QLabel* value = m_values.value(key);
    if (!value)
        return;
    QPalette p = palette();
    if (color.isValid())
        p.setColor(QPalette::WindowText, color);
    value->setPalette(p);
}

QString FigureGrid::figureText(const QString& key) const
{
    const QLabel* value = m_values.value(key);
    return value ? value->text() : QString();
}

QString FigureGrid::figureToolTip(const QString& key) const
{
    QLabel* value = m_values.value(key);
    return value ? m_toolTips->toolTipFor(value) : QString();
}

} // namespace envelope::ui
