#include "panels/throughputpanel.h"

#include <QFrame>
#include <QLabel>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>

#include <algorithm>

#include "charts/stepbreakdownbar.h"
#include "controls/budgetcontrols.h"
#include "controls/throughputcontrols.h"
#include "document/plandocument.h"
#include "panels/throughputfigures.h"
#include "widgets/formulatooltips.h"
#include "widgets/throughputformat.h"

namespace envelope::ui {
namespace {
// Wide enough for a slider with its spin box and "Budget + deadline → MFU, GPUs"; it takes
// the training panel's share for the side slot between these bounds, so at 1280 px the memory
// and sweep charts keep most of the row.
constexpr int kMinimumWidth = 280;
constexpr int kMaximumWidth = 340;
} // namespace

ThroughputPanel::ThroughputPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_toolTips(new FormulaToolTips(this))
    , m_bar(new StepBreakdownBar)
    , m_figures(new ThroughputFigures(m_toolTips))
    , m_controls(new ThroughputControls(document))
    , m_budget(new BudgetControls(document, m_toolTips))
{
    const auto formula = [this](const QString& figure) {
        return explanationToolTip(m_document->explanation(figure));
    };
    m_toolTips->setProvider(formula);
    m_bar->setFormulaProvider(formula);

    auto* content = new QWidget;
    auto* column = new QVBoxLayout(content);
    column->setContentsMargins(6, 4, 6, 4);
    column->setSpacing(8);
    auto* title = new QLabel(tr("Throughput"));
    QFont titleFont = title->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.1);
    title->setFont(titleFont);
    column->addWidget(title);
    column->addWidget(m_bar);
    column->addWidget(m_figures);
    column->addWidget(m_controls);
    column->addWidget(m_budget);
    column->addStretch(1);

    m_content = content;
    auto* scroll = new QScrollArea;
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);
    setMaximumWidth(kMaximumWidth);

    connect(document, &PlanDocument::resultsChanged, this, &ThroughputPanel::redraw);
    redraw();
}

void ThroughputPanel::updateMinimumWidth()
{
    // Never narrower than the content (its texts change with the plan): the scroll area would
    // clip it on the right. The vertical scroll bar's room is kept for short windows.
    const int needed = m_content->minimumSizeHint().width()
        + style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 2;
    setMinimumWidth(std::clamp(needed, kMinimumWidth, kMaximumWidth));
}

void ThroughputPanel::redraw()
{
    // Hidden behind another tab: mark stale and draw once when shown (showEvent), instead of
    // redrawing on every edit made elsewhere.
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    const TrainingCompute& compute = m_document->results().estimate.compute;
    const bool runs = m_document->results().estimate.training.verdict != Verdict::Over;
    m_bar->setCompute(compute, runs);
    m_figures->setCompute(compute, m_document->plan(), runs);
    updateMinimumWidth();
}

void ThroughputPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        redraw();
}

} // namespace envelope::ui
