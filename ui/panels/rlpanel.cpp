#include "panels/rlpanel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "charts/memorybarchart.h"
#include "charts/memoryview.h"
#include "charts/rltimeline.h"
#include "controls/rlcontrols.h"
#include "document/plandocument.h"
#include "panels/panelchrome.h"
#include "widgets/figuregrid.h"
#include "widgets/formulatooltips.h"
#include "widgets/throughputformat.h"

namespace envelope::ui {
namespace {
QString duration(double s)
{
    return QString::fromStdString(formatDuration(s));
}
QString gpus(int n)
{
    return n == 1 ? QObject::tr("1 GPU") : QObject::tr("%1 GPUs").arg(n);
}
QString tokens(double n)
{
    return QObject::tr("%L1 tokens").arg(qlonglong(std::llround(n)));
}
} // namespace

RlPanel::RlPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_controls(new RlControls(document))
    , m_header(new QLabel)
    , m_status(new QLabel)
    , m_toolTips(new FormulaToolTips(this))
    , m_figures(new FigureGrid(m_toolTips, 3))
    , m_suggestion(new QLabel)
    , m_roleChart(new MemoryBarChart(tr("Memory per GPU, by role"),
          std::vector<Tenant>(kAllTenants.begin(), kAllTenants.end())))
    , m_timeline(new RlTimeline)
{
    QScrollArea* scroll = controlsColumn(m_controls,
        tr("Model, GPU, recipe and the trainer's layout come from the Training tab "
           "(its step, timed on the trainer's own GPUs, sets the update's speed); the rollout "
           "engine's TP, KV settings and memory share from the Serving tab."));

    styleHeader(m_header);
    m_header->setWordWrap(true); // a layout problem names the field and the minimum
    m_toolTips->setProvider([this](const QString& figure) { return tooltipFor(figure); });
    bindValidationStatus(m_status, m_document);
    QFont suggestionFont = m_suggestion->font();
    suggestionFont.setBold(true);
    m_suggestion->setFont(suggestionFont);
    m_suggestion->setWordWrap(true);
    m_toolTips->attach(m_suggestion, QStringLiteral("rl.suggested_rollout_gpus"));

    const std::pair<const char*, QString> figures[] = {
        { "rl.steps_per_hour", tr("Steps / hour") },
        { "rl.step_s", tr("Step") },
        { "rl.bottleneck", tr("Bottleneck") },
        { "rl.rollout_s", tr("Rollout") },
        { "rl.reference_s", tr("Frozen forwards") },
        { "rl.train_s", tr("Train") },
        { "rl.rollout_tokens", tr("Rollout tokens") },
        { "rl.train_tokens", tr("Train tokens") },
        { "rl.colocated_peak_bytes", tr("Memory") },
    };
    for (const auto& [key, title] : figures)
        m_figures->addFigure(QLatin1String(key), title);

    auto* right = new QVBoxLayout;
    right->addWidget(m_header);
    right->addWidget(m_status);
    right->addWidget(warningsLine(m_document, QStringLiteral("rl"), this));
    right->addWidget(m_figures);
    right->addWidget(m_suggestion);
    right->addWidget(m_roleChart, 1);
    right->addWidget(m_timeline);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(scroll);
    layout->addLayout(right, 1);

    // A role's segments all carry the core's formula of that role's per-GPU bytes.
    m_roleChart->setFormulaProvider(
        [this](int column, Tenant) { return tooltipFor(m_roleFigures.value(column)); });

    connect(document, &PlanDocument::resultsChanged, this, &RlPanel::redraw);
    redraw();
}

QString RlPanel::tooltipFor(const QString& figure)
{
    return explanationToolTip(m_document->explanation(figure));
}

QString RlPanel::suggestionText(const Plan& plan, const RlEstimate& rl)
{
    const RlConfig& c = plan.rl;
    if (c.placement == RlPlacement::Colocated)
        return tr("colocated: every role shares the %1 GPUs in turn, so there is no split to "
                  "balance")
            .arg(rl.totalGpus);
    if (c.algorithm == RlAlgorithm::Dpo)
        return tr("DPO has no rollout: all %1 GPUs train").arg(rl.suggestedTrainerGpus);
    if (!rl.suggestionFits) {
        // The core kept the current split only to stay defined: it balances nothing.
        const int total = rl.suggestedRolloutGpus + rl.suggestedTrainerGpus;
        const int engine = std::max(plan.serving.tp, 1);
        if (engine > 1)
            return tr("no split of these %1 GPUs into whole TP-%2 rollout engines leaves the "
                      "trainer room to fit — add GPUs, a smaller rollout TP or shard the trainer")
                .arg(total)
                .arg(engine);
        return plan.training.zeroStage < 3
            ? tr("no split of these %1 GPUs lets the trainer fit — add GPUs or shard the trainer "
                 "(ZeRO-3)")
                  .arg(total)
            : tr("no split of these %1 GPUs lets the trainer fit — add GPUs").arg(total);
    }
    const int move = rl.suggestedRolloutGpus - c.rolloutGpus;
    const QString split
        = tr("%1 training + %2 rollout").arg(rl.suggestedTrainerGpus).arg(rl.suggestedRolloutGpus);
    const QString pools
        = c.placement == RlPlacement::Colocated ? tr(" (as disjoint pools)") : QString();
    if (move == 0)
        return tr("%1 already balances the step%2").arg(split, pools);
    if (move > 0)
        return tr("move %1 from training to rollout: %2 balances the step%3")
            .arg(gpus(move), split, pools);
    return tr("move %1 from rollout to training: %2 balances the step%3")
        .arg(gpus(-move), split, pools);
}

void RlPanel::redraw()
{
    // Hidden behind another tab: mark stale and draw once when shown (showEvent), instead of
    // redrawing on every edit made elsewhere.
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    const ByteUnits units = m_document->units();
    const Plan& plan = m_document->plan();
    const RlEstimate& rl = m_document->results().estimate.rl;
    const RlConfig& c = plan.rl;
    const bool colocated = c.placement == RlPlacement::Colocated;
    const double memory = plan.gpu.gpu.memoryBytes;

    // The core's verdict under the training tab's rule; the header names the pool at fault.
    QString verdict = tr("every role fits");
    QColor verdictColor = fitsColor();
    if (!rl.problem.empty()) {
        verdict = tr("cannot be laid out: %1").arg(QString::fromStdString(rl.problem));
        verdictColor = overflowColor();
    } else if (rl.verdict != Verdict::Fits) {
        QString pool;
        for (const RoleEstimate& role : rl.perRole)
            if (pool.isEmpty() && role.verdict == rl.verdict)
                pool = QString::fromStdString(role.role);
        verdict = rl.verdict == Verdict::Tight
            ? (colocated ? tr("tight: the colocated peak is above the %1% usable line")
                               .arg(plan.training.usableFraction * 100, 0, 'f', 0)
                         : tr("tight: the %1 pool is above the %2% usable line")
                               .arg(pool)
                               .arg(plan.training.usableFraction * 100, 0, 'f', 0))
            : (colocated ? tr("does not fit: the colocated peak is over HBM")
                         : tr("does not fit: the %1 pool overflows").arg(pool));
        verdictColor = rl.verdict == Verdict::Tight ? tightColor() : overflowColor();
    }
    m_header->setText(tr("%1 %2 on %3 × %4, %5 — %6")
                          .arg(QString::fromLatin1(rlAlgorithmId(c.algorithm).data()).toUpper(),
                              QString::fromStdString(plan.model.arch.name))
                          .arg(rl.totalGpus)
                          .arg(QString::fromStdString(plan.gpu.gpu.name),
                              colocated ? tr("colocated") : tr("disjoint pools"), verdict));
    QPalette headerPalette = palette();
    headerPalette.setColor(QPalette::WindowText, verdictColor);
    m_header->setPalette(headerPalette);

    std::vector<MemoryBarColumn> columns;
    m_roleFigures.clear();
    for (const RoleEstimate& role : rl.perRole)
        m_roleFigures.push_back(
            QStringLiteral("rl.per_role.%1.per_gpu_bytes").arg(QString::fromStdString(role.role)));
    for (const RoleEstimate& role : rl.perRole)
        columns.push_back(memoryBarColumn(
            tr("%1 · %2").arg(QString::fromStdString(role.role), gpus(role.gpus)), role.perGpu,
            role.fits));
    const MemoryLimitLine limit = colocated
        ? MemoryLimitLine { tr("colocated peak"), rl.colocatedPeakBytes }
        : MemoryLimitLine { tr("rollout %1")
                                .arg(engineLineLabel(plan.serving.engine,
                                    m_document->results().estimate.serving.memoryFraction)),
              m_document->results().estimate.serving.usableBytes };
    m_roleChart->setColumns(columns, memory, limit, units);

    const bool overlapped = rl.overlapped && rl.rolloutS > 0;
    m_timeline->setStep(rl, overlapped);

    auto set = [this](const char* key, const QString& text) {
        m_figures->setFigure(QLatin1String(key), text);
    };
    // A job that does not fit runs no step: its times and rate greyed, "does not fit".
    const QString doesNotFit = tr("does not fit");
    set("rl.steps_per_hour", rl.fits ? QString::number(rl.stepsPerHour, 'f', 1) : doesNotFit);
    set("rl.step_s", rl.fits ? duration(rl.stepS) : doesNotFit);
    set("rl.bottleneck", QString::fromStdString(rl.bottleneck));
    set("rl.rollout_s", rl.fits ? duration(rl.rolloutS) : doesNotFit);
    set("rl.reference_s", rl.fits ? duration(rl.referenceS) : doesNotFit);
    set("rl.train_s", rl.fits ? duration(rl.trainS) : doesNotFit);
    for (const char* key :
        { "rl.steps_per_hour", "rl.step_s", "rl.rollout_s", "rl.reference_s", "rl.train_s" })
        m_figures->setFigureColor(
            QLatin1String(key), rl.fits ? QColor() : palette().color(QPalette::PlaceholderText));
    set("rl.rollout_tokens", tokens(rl.rolloutTokens));
    set("rl.train_tokens", tokens(rl.trainTokens));
    if (colocated)
        set("rl.colocated_peak_bytes",
            tr("peak %1 of %2")
                .arg(bytesText(rl.colocatedPeakBytes, units), bytesText(memory, units)));
    else
        set("rl.colocated_peak_bytes", rl.fits ? tr("every pool fits") : tr("a pool overflows"));
    m_figures->setFigureColor(
        QStringLiteral("rl.colocated_peak_bytes"), rl.fits ? fitsColor() : overflowColor());

    m_suggestion->setText(tr("Suggested split: %1").arg(suggestionText(plan, rl)));
    QPalette suggestionPalette = palette();
    if (!rl.suggestionFits)
        suggestionPalette.setColor(QPalette::WindowText, overflowColor());
    m_suggestion->setPalette(suggestionPalette);
}

void RlPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        redraw();
}

} // namespace envelope::ui
