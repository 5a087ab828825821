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
#include "charts/sweepchart.h"
#include "controls/hardwarecontrols.h"
#include "controls/memorysavercontrols.h"
#include "controls/modelcontrols.h"
#include "controls/parallelismcontrols.h"
#include "document/plandocument.h"
#include "document/settings.h"
#include "panels/detailspane.h"
#include "panels/summarystrip.h"
#include "plan/planio.h"
#include "widgets/throughputformat.h"

namespace envelope::ui {
namespace {
// The controls column: room for a label, a slider and a spin box of "1,048,576 tokens".
constexpr int kControlsWidth = 340;
} // namespace

TrainingPanel::TrainingPanel(PlanDocument* document, Settings* settings, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_settings(settings)
    , m_model(new ModelControls(document))
    , m_hardware(new HardwareControls(document))
    , m_parallelism(new ParallelismControls(document))
    , m_savers(new MemorySaverControls(document))
    , m_summary(new SummaryStrip)
    , m_status(new QLabel)
    , m_memoryChart(new MemoryBarChart)
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

    m_status->setWordWrap(true);
    m_status->setVisible(false);
    m_status->setStyleSheet(QStringLiteral("QLabel { color: #C62828; font-weight: bold; }"));

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

    m_memoryChart->setFormulaProvider([this](Tenant tenant) {
        return explanationToolTip(m_document->explanation(tenantFigure(tenant)));
    });

    connect(document, &PlanDocument::resultsChanged, this, &TrainingPanel::redraw);
    connect(document, &PlanDocument::validationChanged, this, &TrainingPanel::showValidation);
    connect(m_memoryChart, &MemoryBarChart::compareChanged, this, &TrainingPanel::redraw);
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
    connect(settings, &Settings::unitsChanged, this, &TrainingPanel::redraw);
    redraw();
    showValidation(document->validationMessage());
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
    const ByteUnits units = m_settings->units();
    const TrainingResults& results = m_document->results();
    const Plan& plan = m_document->plan();
    m_summary->setResults(results, plan.cluster.gpus, units);
    m_memoryChart->setResults(results, units);
    m_sweepChart->setResults(results, plan.training.seqLen, plan.training.microBatch, units);
    m_detailsStale = true;
    if (m_details->isVisible() && m_details->height() > 0)
        refreshDetails();
}

void TrainingPanel::refreshDetails()
{
    m_details->setExplanations(m_document->explanations(), m_settings->units());
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

void TrainingPanel::showValidation(const QString& message)
{
    m_status->setText(
        message.isEmpty() ? QString() : tr("⚠ %1 — showing the last valid estimate").arg(message));
    m_status->setVisible(!message.isEmpty());
    m_summary->applyButton()->setEnabled(message.isEmpty());
}

} // namespace envelope::ui
