#include "panels/detailspane.h"

#include <QHeaderView>

#include "charts/memoryview.h"
#include "widgets/elidingdelegate.h"

#include <map>

namespace envelope::ui {
namespace {
enum Column { FigureColumn, ValueColumn, FormulaColumn, SourceColumn };

// Formulas and sources run to 400 characters: the cell shows the start, elided by the delegate,
// and the tooltip all of it.
void setLongText(QTreeWidgetItem* item, int column, const QString& full)
{
    item->setText(column, full);
    item->setToolTip(column, full);
}
} // namespace

DetailsPane::DetailsPane(QWidget* parent)
    : QTreeWidget(parent)
{
    setHeaderLabels({ tr("Figure"), tr("Value"), tr("Formula"), tr("Source") });
    setRootIsDecorated(true);
    setAlternatingRowColors(true);
    setUniformRowHeights(true);
    setWordWrap(false);
    header()->setStretchLastSection(true);
    header()->setSectionResizeMode(QHeaderView::Interactive);
    setColumnWidth(FigureColumn, 230);
    setColumnWidth(ValueColumn, 100);
    setColumnWidth(FormulaColumn, 520);
    setAccessibleName(tr("Figure details"));
    setItemDelegate(new ElidingDelegate(this));
}

QString DetailsPane::valueText(const Explanation& e, ByteUnits units)
{
    if (e.unit == "bytes")
        return bytesText(e.value, units);
    if (e.unit == "params" || e.unit.empty())
        return std::abs(e.value) >= 1e4 ? QString::fromStdString(formatCount(e.value))
                                        : QLocale().toString(e.value, 'g', 6);
    if (e.unit == "s")
        return QString::fromStdString(formatDuration(e.value));
    return QStringLiteral("%1 %2").arg(
        QLocale().toString(e.value, 'g', 4), QString::fromStdString(e.unit));
}

void DetailsPane::setExplanations(const std::vector<Explanation>& explanations, ByteUnits units)
{
    // The same figures as before (the usual case while dragging): update the rows in place.
    std::vector<const Explanation*> shown;
    for (const Explanation& e : explanations)
        if (e.figure.rfind("model.", 0) == 0 || e.figure.rfind("training.", 0) == 0)
            shown.push_back(&e);
    std::vector<QTreeWidgetItem*> rows;
    for (int i = 0; i < topLevelItemCount(); ++i)
        for (int j = 0; j < topLevelItem(i)->childCount(); ++j)
            rows.push_back(topLevelItem(i)->child(j));
    bool same = rows.size() == shown.size();
    for (std::size_t i = 0; same && i < rows.size(); ++i)
        same = rows[i]->data(FigureColumn, Qt::UserRole).toString()
            == QString::fromStdString(shown[i]->figure);
    if (same) {
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const Explanation& e = *shown[i];
            const QString value = valueText(e, units);
            const QString formula = QString::fromStdString(e.formula);
            if (rows[i]->text(ValueColumn) != value)
                rows[i]->setText(ValueColumn, value);
            if (rows[i]->text(FormulaColumn) != formula)
                setLongText(rows[i], FormulaColumn, formula);
        }
        return;
    }

    setUpdatesEnabled(false);
    // Keep which groups the user folded.
    std::map<QString, bool> expanded;
    for (int i = 0; i < topLevelItemCount(); ++i)
        expanded[topLevelItem(i)->text(FigureColumn)] = topLevelItem(i)->isExpanded();
    clear();
    std::map<QString, QTreeWidgetItem*> groups;
    for (const Explanation& e : explanations) {
        const QString figure = QString::fromStdString(e.figure);
        const QString group = figure.section(QLatin1Char('.'), 0, 0);
        if (group != QLatin1String("model") && group != QLatin1String("training"))
            continue; // the training panel explains its own figures
        QTreeWidgetItem*& parent = groups[group];
        if (!parent) {
            parent = new QTreeWidgetItem(this, { group });
            QFont bold = parent->font(FigureColumn);
            bold.setBold(true);
            parent->setFont(FigureColumn, bold);
            parent->setFirstColumnSpanned(true);
            const auto it = expanded.find(group);
            parent->setExpanded(it == expanded.end() || it->second);
        }
        auto* item = new QTreeWidgetItem(parent);
        item->setText(FigureColumn, figure.section(QLatin1Char('.'), 1));
        item->setData(FigureColumn, Qt::UserRole, figure);
        item->setText(ValueColumn, valueText(e, units));
        item->setTextAlignment(ValueColumn, Qt::AlignRight | Qt::AlignVCenter);
        setLongText(item, FormulaColumn, QString::fromStdString(e.formula));
        setLongText(item, SourceColumn, QString::fromStdString(e.source));
    }
    setUpdatesEnabled(true);
}

QTreeWidgetItem* DetailsPane::itemFor(const QString& figure) const
{
    for (int i = 0; i < topLevelItemCount(); ++i) {
        QTreeWidgetItem* group = topLevelItem(i);
        for (int j = 0; j < group->childCount(); ++j)
            if (group->child(j)->data(FigureColumn, Qt::UserRole).toString() == figure)
                return group->child(j);
    }
    return nullptr;
}

} // namespace envelope::ui
