// Stacked per-GPU memory bars, one column per GPU or per role, in the tenant colours, against
// a dashed HBM line and an optional second limit (vLLM's gpu_memory_utilization). Each column's
// total sits above its bar with a fits / does-not-fit mark. The serving and RL panels use it;
// the training panel's MemoryBarChart adds its own comparison columns.
#pragma once

#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

#include "estimate/estimate.h"
#include "charts/tenantpalette.h"
#include "base/units.h"

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QChart;
class QChartView;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace envelope::ui {

struct TenantBarColumn {
    QString label;
    MemoryBreakdown bytes;
    bool fits = true;
};

class TenantBarChart : public QWidget {
    Q_OBJECT
public:
    // `tenants`: the stacked segments, bottom first.
    TenantBarChart(const QString& title, std::vector<Tenant> tenants, QWidget* parent = nullptr);

    // `limitBytes`, when set, draws a dotted line named `limitName` ("utilization 0.90").
    void setColumns(const std::vector<TenantBarColumn>& columns, double hbmBytes,
        std::optional<double> limitBytes, const QString& limitName, ByteUnits units);

    // Tooltip text under a segment: the core's formula for (column, tenant), rich text.
    using FormulaProvider = std::function<QString(int column, Tenant tenant)>;
    void setFormulaProvider(FormulaProvider provider) { m_formulaProvider = std::move(provider); }

    QChartView* chartView() const { return m_view; }
    QBarSet* barSet(Tenant tenant) const; // values as drawn, in display units
    int columnCount() const { return int(m_columns.size()); }
    QString columnLabel(int column) const;
    QString totalText(int column) const; // "62.3 GB ✓"
    double hbmLineValue() const { return m_hbm; } // display units
    double limitLineValue() const { return m_limit; } // display units, 0 when none

protected:
    void changeEvent(QEvent* event) override;

private:
    void placeOverlays();
    void onHovered(bool status, int index, QBarSet* set);

    std::vector<Tenant> m_tenants;
    std::vector<TenantBarColumn> m_columns;
    ByteUnits m_units = ByteUnits::GB;
    QChartView* m_view;
    QChart* m_chart;
    QStackedBarSeries* m_series;
    std::vector<QBarSet*> m_sets;
    QBarCategoryAxis* m_xAxis;
    QValueAxis* m_yAxis;
    QLineSeries* m_hbmLine;
    QLineSeries* m_limitLine;
    QGraphicsSimpleTextItem* m_hbmLabel;
    QGraphicsSimpleTextItem* m_limitLabel;
    QList<QGraphicsSimpleTextItem*> m_totalLabels;
    QStringList m_totalTexts;
    std::vector<double> m_totals; // display units
    double m_hbm = 0;
    double m_limit = 0;
    FormulaProvider m_formulaProvider;
};

} // namespace envelope::ui
