// Main chart: per-GPU memory of this plan as one stacked bar (weights, gradients, optimizer,
// activations, overhead), beside the same stacks for each ZeRO stage or each recompute mode
// (a toggle) with the plan's own setting outlined, against dashed lines at the GPU's HBM and
// at the usable fraction of it.
#pragma once

#include <QWidget>

#include <array>
#include <functional>
#include <vector>

#include "charts/tenantpalette.h"
#include "base/units.h"

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QChart;
class QChartView;
class QComboBox;
class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace envelope::ui {

class ChartLegend;
struct TrainingResults;

class MemoryBarChart : public QWidget {
    Q_OBJECT
public:
    enum class Compare { ZeroStages, RecomputeModes };

    explicit MemoryBarChart(QWidget* parent = nullptr);

    void setResults(const TrainingResults& results, ByteUnits units);
    void setCompare(Compare compare);
    Compare compare() const { return m_compare; }

    // Text shown under a tenant's tooltip for the plan's own bar (the core's formula).
    using FormulaProvider = std::function<QString(Tenant)>;
    void setFormulaProvider(FormulaProvider provider) { m_formulaProvider = std::move(provider); }

    QChartView* chartView() const { return m_view; }
    ChartLegend* legend() const { return m_legend; }
    QComboBox* compareCombo() const { return m_compareCombo; }
    // The bar segment values as drawn, in display units (column 0 is this plan).
    QBarSet* barSet(Tenant tenant) const;
    int columnCount() const;
    int highlightedColumn() const { return m_highlighted; }
    QString columnLabel(int column) const;

signals:
    void compareChanged(envelope::ui::MemoryBarChart::Compare compare);

protected:
    void changeEvent(QEvent* event) override;

private:
    void placeOverlays();
    void onHovered(bool status, int index, QBarSet* set);

    Compare m_compare = Compare::ZeroStages;
    ByteUnits m_units = ByteUnits::GB;
    std::vector<std::array<double, kTenants.size()>> m_columnBytes; // per column, bytes
    QComboBox* m_compareCombo;
    QChartView* m_view;
    ChartLegend* m_legend;
    QChart* m_chart;
    QStackedBarSeries* m_series;
    QBarSet* m_sets[kTenants.size()];
    QBarCategoryAxis* m_xAxis;
    QValueAxis* m_yAxis;
    QLineSeries* m_hbmLine;
    QLineSeries* m_usableLine;
    QGraphicsSimpleTextItem* m_hbmLabel;
    QGraphicsSimpleTextItem* m_usableLabel;
    QGraphicsRectItem* m_hbmBox; // backgrounds that keep the line labels legible over bars
    QGraphicsRectItem* m_usableBox;
    QGraphicsRectItem* m_highlight;
    QStringList m_plainLabels;
    QStringList m_totalTexts; // formatted column totals
    QList<QGraphicsSimpleTextItem*> m_totalLabels; // drawn above the bars
    std::vector<double> m_totals; // display units, per column
    double m_hbm = 0; // display units
    double m_usableFraction = 0.9; // the plan's training.usable_fraction
    int m_highlighted = -1;
    bool m_twoLineLabels = false; // category labels broken onto two lines (narrow plot)
    FormulaProvider m_formulaProvider;
};

} // namespace envelope::ui
