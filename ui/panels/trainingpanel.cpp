#include "panels/trainingpanel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLayout>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "charts/memorybarchart.h"
#include "charts/memoryview.h"
#include "charts/sweepchart.h"
#include "controls/hardwarecontrols.h"
#include "controls/memorysavercontrols.h"
#include "controls/modelcontrols.h"
#include "controls/parallelismcontrols.h"
#include "document/plandocument.h"
#include "panels/detailspane.h"
#include "panels/panelchrome.h"
#include "panels/summarystrip.h"
#include "plan/planio.h"
#include "report/compare.h"
#include "widgets/throughputformat.h"

namespace envelope::ui {
namespace {
// The controls column: room for a label, a slider and a spin box of "1,048,576 tokens".
constexpr int kControlsWidth = 340;
} // namespace

TrainingPanel::TrainingPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_model(new ModelControls(document))
    , m_hardware(new HardwareControls(document))
    , m_parallelism(new ParallelismControls(document))
    , m_savers(new MemorySaverControls(document))
    , m_summary(new SummaryStrip)
    , m_status(new QLabel)
    , m_memoryChart(new MemoryBarChart(
          tr("Memory per GPU"), std::vector<Tenant>(kTenants.begin(), kTenants.end()), 0.62))
    , m_compareCombo(new QComboBox)
    , m_sweepChart(new SweepChart)
    , m_details(new DetailsPane)
{
    auto* controls = new QWidget;
    auto* controlsLayout = new QVBoxLayout(controls);
    controlsLayout->setContentsMargins(4, 4, 4, 4);
    for (QWidget* group :
        std::initializer_list<QWidget*> { m_model, m_hardware, m_parallelism, m_savers })
        controlsLayout->addWidget(group);
    controlsLayout->addStretch(1);
    auto* scroll = new QScrollArea;
    scroll->setWidget(controls);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setFocusPolicy(Qt::NoFocus); // Tab goes straight to the first control
    // A narrow column leaves the charts their width: combo boxes may be narrower than their
    // longest item (the closed box elides it, the popup shows it whole) and stretch to the
    // column.
    for (QComboBox* combo : controls->findChildren<QComboBox*>()) {
        combo->setMinimumWidth(90);
        combo->setSizePolicy(QSizePolicy::Ignored, combo->sizePolicy().verticalPolicy());
    }
    // Not yet shown, the groups' layouts keep the sizes they cached before: recompute them.
    for (QWidget* widget : controls->findChildren<QWidget*>())
        widget->updateGeometry();
    for (QLayout* layout : controls->findChildren<QLayout*>())
        layout->invalidate();
    const int scrollBar = scroll->verticalScrollBar()->sizeHint().width() + 4;
    const int controlsWidth
        = std::max(controls->minimumSizeHint().width() + scrollBar, kControlsWidth);
    scroll->setMinimumWidth(controlsWidth);
    scroll->setMaximumWidth(controlsWidth);
    scroll->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);

    bindValidationStatus(m_status, m_document);

    m_compareCombo->addItem(tr("ZeRO stages"));
    m_compareCombo->addItem(tr("Recompute modes"));
    auto* compareLabel = new QLabel(tr("Compare &bars with:"));
    compareLabel->setBuddy(m_compareCombo);
    m_memoryChart->header()->addStretch(1);
    m_memoryChart->header()->addWidget(compareLabel);
    m_memoryChart->header()->addWidget(m_compareCombo);
    connect(m_compareCombo, &QComboBox::activated, this, [this](int index) {
        setCompare(index == 0 ? Compare::ZeroStages : Compare::RecomputeModes);
    });

    auto* charts = new QWidget;
    m_chartRow = new QHBoxLayout(charts);
    m_chartRow->setContentsMargins(0, 0, 0, 0);
    m_chartRow->addWidget(m_memoryChart, 3);
    m_chartRow->addWidget(m_sweepChart, 2);

    auto* top = new QWidget;
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(m_summary);
    topLayout->addWidget(m_status);
    topLayout->addWidget(warningsLine(m_document, QStringLiteral("training"), this));
    topLayout->addWidget(charts, 1);

    auto* vertical = new QSplitter(Qt::Vertical);
    vertical->addWidget(top);
    vertical->addWidget(m_details);
    vertical->setStretchFactor(0, 4);
    vertical->setStretchFactor(1, 1);
    vertical->setChildrenCollapsible(true);
    connect(vertical, &QSplitter::splitterMoved, this, [this] {
        if (m_detailsStale && m_details->height() > 0)
            refreshDetails();
    });

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(scroll, 0);
    layout->addWidget(vertical, 1);

    // Only the plan's own column has the core's formulas (the variants are other plans).
    m_memoryChart->setFormulaProvider([this](int column, Tenant tenant) {
        return column == 0 ? explanationToolTip(m_document->explanation(tenantFigure(tenant)))
                           : QString();
    });

    connect(document, &PlanDocument::resultsChanged, this, &TrainingPanel::redraw);
    // The suggestions belong to the last valid plan: no applying one over an invalid edit.
    connect(document, &PlanDocument::validationChanged, this, [this](const QString& message) {
        m_summary->applyButton()->setEnabled(message.isEmpty());
    });
    connect(document, &PlanDocument::pinsChanged, this, &TrainingPanel::redraw);
    connect(m_sweepChart, &SweepChart::axisChanged, this, &TrainingPanel::redraw);
    connect(m_summary, &SummaryStrip::applySuggestionRequested, this, [this] {
        // The suggestions belong to the last valid plan: applying one over an invalid edit
        // would silently drop what the user typed.
        const std::vector<FitSuggestion>& suggestions = m_document->results().suggestions;
        if (suggestions.empty() || !m_document->isValid())
            return;
        // The core offers only valid plans (suggestFits); refuse anything else here too, so a
        // change can never install a plan the plan reader would reject.
        if (validatePlan(suggestions.front().plan))
            return;
        m_document->edit(suggestions.front().plan,
            tr("Apply %1").arg(QString::fromStdString(suggestions.front().description)));
    });
    connect(m_model, &ModelControls::importRequested, this, &TrainingPanel::importRequested);
    redraw();
    m_summary->applyButton()->setEnabled(document->isValid());
}

void TrainingPanel::setCompare(Compare compare)
{
    if (compare == m_compare)
        return;
    m_compare = compare;
    m_compareCombo->setCurrentIndex(compare == Compare::ZeroStages ? 0 : 1);
    redraw();
}

void TrainingPanel::setSideWidget(QWidget* widget)
{
    if (m_side) {
        m_chartRow->removeWidget(m_side);
        delete m_side;
    }
    m_side = widget;
    if (widget)
        m_chartRow->addWidget(widget, 2);
}

void TrainingPanel::redraw()
{
    // Hidden behind another tab: mark stale and draw once when shown (showEvent), instead of
    // redrawing on every edit made elsewhere.
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    draw();
}

void TrainingPanel::drawIfStale()
{
    if (m_stale)
        draw();
}

void TrainingPanel::draw()
{
    m_stale = false;
    const ByteUnits units = m_document->units();
    const TrainingResults& results = m_document->results();
    const Plan& plan = m_document->plan();
    m_summary->setResults(results, plan.cluster.gpus, units);
    drawMemoryChart();
    showPinComparison(units);
    m_sweepChart->setResults(results, plan.training.seqLen, plan.training.microBatch, units,
        double(plan.model.arch.maxPositions));
    m_detailsStale = true;
    if (m_details->isVisible() && m_details->height() > 0)
        refreshDetails();
}

void TrainingPanel::drawMemoryChart()
{
    // The plan's own stack, then the same plan at each ZeRO stage or recompute mode.
    const TrainingResults& results = m_document->results();
    const auto& variants
        = m_compare == Compare::ZeroStages ? results.zeroVariants : results.recomputeVariants;
    const TrainingMemory& own = results.estimate.training;
    std::vector<MemoryBarColumn> columns;
    columns.reserve(variants.size() + m_document->pins().size() + 1);
    columns.push_back(memoryBarColumn(tr("This plan"), own.perGpu));
    // Pinned plans right after it, ghosted ("Pinned", "Pinned 2"; the name is in the tooltip).
    const std::vector<PinnedPlan>& pins = m_document->pins();
    for (std::size_t i = 0; i < pins.size(); ++i) {
        MemoryBarColumn pinned = memoryBarColumn(
            pins.size() == 1 ? tr("Pinned") : tr("Pinned %1").arg(i + 1),
            pins[i].estimate.training.perGpu);
        pinned.ghost = true;
        pinned.tooltipLabel = tr("pinned \u201c%1\u201d").arg(pins[i].label);
        columns.push_back(std::move(pinned));
    }    int highlighted = -1;
    for (const Variant& v : variants) {
        if (v.current)
            highlighted = int(columns.size());
        // "ZeRO-3 / FSDP" -> "ZeRO-3": category labels must fit under a bar.
        columns.push_back(memoryBarColumn(
            QString::fromStdString(v.label).section(QStringLiteral(" / "), 0, 0), v.memory.perGpu));
    }
    // The core's line between "fits" and "tight" (training.usable_fraction).
    const MemoryLimitLine usable {
        tr("%1% usable").arg(m_document->plan().training.usableFraction * 100, 0, 'f', 0),
        own.usableBytes };
    m_memoryChart->setColumns(
        columns, own.gpuMemoryBytes, usable, m_document->units(), highlighted);
}

void TrainingPanel::showPinComparison(ByteUnits units)
{
    if (m_document->pins().empty()) {
        m_summary->setPinComparison({}, {});
        return;
    }
    // The core's comparison rows (report/compare.h), the latest pin first, so each cell reads
    // as this plan's value and its change against the pin.
    const PinnedPlan& pin = m_document->pins().back();
    const std::vector<report::ComparedPlan> plans {
        { pin.label.toStdString(), &pin.plan, &pin.estimate },
        { m_document->plan().name, &m_document->plan(), &m_document->results().estimate },
    };
    QStringList cells;
    for (const report::CompareRow& row : report::compareRows(plans))
        if (row.key == "training.per_gpu_bytes.total" || row.key == "training.step_time_s")
            cells.push_back(QString::fromStdString(report::formatCell(row, 1, units)));
    m_summary->setPinComparison(
        tr("vs pinned \u201c%1\u201d (memory, step)").arg(pin.label), cells.join(QStringLiteral(" · ")));
}

void TrainingPanel::refreshDetails()
{
    m_details->setExplanations(m_document->explanations(), m_document->units());
    m_detailsStale = false;
}

void TrainingPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        draw();
    else if (m_detailsStale)
        refreshDetails();
}

} // namespace envelope::ui
