// Per-GPU memory as stacked bars in the tenant colours, one column per plan variant, GPU or RL
// role, against a dashed line at the GPU's HBM and a dotted second limit (the usable fraction
// of HBM, vLLM's gpu_memory_utilization, the colocated peak), each named in the right margin at
// its height, off the bars. Each column's total sits above its bar, with a fits / does-not-fit
// mark where the caller gives one; a run of equal totals (a TP group's ranks) gets one label, and
// narrow columns drop the unit (the axis names it); one column may be
// outlined (the training panel's own ZeRO stage or recompute mode among its comparison
// columns). The training, serving and RL panels all draw their memory with this one chart.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "base/units.h"
#include "charts/chartwidget.h"
#include "charts/tenantpalette.h"
#include "estimate/estimate.h"

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QBarSet;
class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace envelope::ui {

struct MemoryBarColumn {
    QString label;
    MemoryBreakdown bytes;
    std::optional<bool> fits; // when set, the total reads "62.3 GB ✓" or, in red, "✗"
    bool ghost = false; // drawn faded in the same colours (a pinned plan)
    QString tooltipLabel; // the column's name in its tooltip, when longer than `label`
};

// A column with its label, bytes and (optionally) verdict; the rest at their defaults.
inline MemoryBarColumn memoryBarColumn(
    QString label, const MemoryBreakdown& bytes, std::optional<bool> fits = std::nullopt)
{
    MemoryBarColumn c;
    c.label = std::move(label);
    c.bytes = bytes;
    c.fits = fits;
    return c;
}

// The second reference line: its name ("90% usable", "util. 0.90") and height.
struct MemoryLimitLine {
    QString name;
    double bytes = 0;
};

class MemoryBarChart : public ChartWidget {
    Q_OBJECT
public:
    // `tenants`: the stacked segments, bottom first. `barWidth`: of a category, 0..1.
    MemoryBarChart(const QString& title, std::vector<Tenant> tenants, double barWidth = 0.55,
        QWidget* parent = nullptr);

    // `highlighted`: the column to outline, -1 for none.
    void setColumns(const std::vector<MemoryBarColumn>& columns, double hbmBytes,
        std::optional<MemoryLimitLine> limit, ByteUnits units, int highlighted = -1);

    // Tooltip text under a segment: the core's formula for (column, tenant), rich text, asked
    // for only when the tooltip shows.
    using FormulaProvider = std::function<QString(int column, Tenant tenant)>;
    void setFormulaProvider(FormulaProvider provider) { m_formulaProvider = std::move(provider); }

    QBarSet* barSet(Tenant tenant) const; // values as drawn, in display units
    int columnCount() const { return int(m_columns.size()); }
    QString columnLabel(int column) const;
    QString totalText(int column) const; // "62.3 GB ✓"
    QStringList drawnTotals() const; // the labels over the bars, as drawn (one per run)
    int highlightedColumn() const { return m_highlighted; }
    double hbmLineValue() const { return m_hbm; } // display units
    double limitLineValue() const { return m_limit; } // display units, 0 when none

    // Exposed for the header row of the training chart's comparison toggle.
    using ChartWidget::header;

protected:
    void placeOverlays() override;

private:
    void placeCategoryLabels(const QRectF& plot);
    void placeLineLabels(const QRectF& plot);
    void placeTotals(const QRectF& plot);
    void onHovered(bool status, int index, QBarSet* set);

    std::vector<Tenant> m_tenants;
    std::vector<MemoryBarColumn> m_columns;
    ByteUnits m_units = ByteUnits::GB;
    double m_barWidth;
    QStackedBarSeries* m_series;
    std::vector<QBarSet*> m_sets;
    QBarCategoryAxis* m_xAxis;
    QValueAxis* m_yAxis;
    QLineSeries* m_hbmLine;
    QLineSeries* m_limitLine;
    QGraphicsSimpleTextItem* m_hbmLabel;
    QGraphicsSimpleTextItem* m_limitLabel;
    QGraphicsRectItem* m_highlight;
    QStringList m_totalTexts;
    QStringList m_shortTotalTexts; // the same without the unit, for narrow columns
    QList<QGraphicsSimpleTextItem*> m_totalLabels; // drawn above the bars
    std::vector<double> m_totals; // display units, per column
    std::vector<double> m_totalWidths; // px, the bold total labels' widths
    QStringList m_measuredLabels; // the category labels m_oneLineWidth, m_twoLineWidth measure
    double m_oneLineWidth = 0;
    double m_twoLineWidth = 0;
    double m_hbm = 0;
    double m_limit = 0;
    int m_highlighted = -1;
    // How the category labels fit under their bars: one line, broken onto two, or upright.
    enum class LabelMode { OneLine, TwoLines, Upright };
    LabelMode m_labelMode = LabelMode::OneLine;
    FormulaProvider m_formulaProvider;
};

} // namespace envelope::ui
