#include "panels/servingpanel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "charts/interactivitychart.h"
#include "charts/latencyratechart.h"
#include "charts/memorybarchart.h"
#include "charts/memoryview.h"
#include "charts/servingcurvechart.h"
#include "controls/schedulercontrols.h"
#include "controls/servingcontrols.h"
#include "controls/speculativecontrols.h"
#include "controls/workloadcontrols.h"
#include "document/plandocument.h"
#include "panels/panelchrome.h"
#include "serving/sweep.h"
#include "widgets/figuregrid.h"
#include "widgets/formulatooltips.h"
#include "widgets/throughputformat.h"

namespace envelope::ui {
namespace {
QString duration(double s)
{
    return QString::fromStdString(formatDuration(s));
}
} // namespace

QString smallBytesText(double b, bool binary)
{
    return QString::fromStdString(formatBytesScaled(b, binary ? ByteUnits::GiB : ByteUnits::GB));
}

ServingPanel::ServingPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_controls(new ServingControls(document))
    , m_header(new QLabel)
    , m_status(new QLabel)
    , m_toolTips(new FormulaToolTips(this))
    , m_figures(new FigureGrid(m_toolTips, 3))
    , m_workload(new WorkloadControls(document))
    , m_speculative(new SpeculativeControls(document))
    , m_scheduler(new SchedulerControls(document))
    , m_loadHeader(new QLabel)
    , m_loadFigures(new FigureGrid(m_toolTips, 3))
    , m_poolFigures(new FigureGrid(m_toolTips, 3))
    , m_memoryChart(new MemoryBarChart(tr("Memory per GPU"),
          { Tenant::Weights, Tenant::KvCache, Tenant::Activations, Tenant::Overhead }))
    , m_curveChart(new ServingCurveChart)
    , m_interactivityChart(new InteractivityChart)
    , m_rateChart(new LatencyRateChart)
{
    auto* groups = new QWidget;
    auto* groupsLayout = new QVBoxLayout(groups);
    groupsLayout->setContentsMargins(0, 0, 0, 0);
    groupsLayout->addWidget(m_controls);
    groupsLayout->addWidget(m_workload);
    groupsLayout->addWidget(m_speculative);
    groupsLayout->addWidget(m_scheduler);
    QScrollArea* scroll = controlsColumn(groups,
        tr("Model and GPU come from the Training tab; the cluster's GPUs / TP are the engines "
           "that share the workload."));

    styleHeader(m_header);
    m_toolTips->setProvider([this](const QString& figure) { return tooltipFor(figure); });
    bindValidationStatus(m_status, m_document);

    const std::pair<const char*, QString> figures[] = {
        { "serving.kv_bytes_per_token", tr("KV per token") },
        { "serving.kv_budget_bytes", tr("KV budget / GPU") },
        { "serving.max_tokens", tr("Token slots") },
        { "serving.max_sequences", tr("Max sequences") },
        { "serving.contiguous_waste_bytes", tr("Contiguous waste") },
        { "serving.decode_tokens_per_s", tr("Decode") },
        { "serving.ttft_s", tr("TTFT") },
        { "serving.itl_s", tr("ITL") },
        { "serving.compute_bound_concurrency", tr("Compute-bound at") },
    };
    for (const auto& [key, title] : figures)
        m_figures->addFigure(QLatin1String(key), title);
    const std::pair<const char*, QString> loadFigures[] = {
        { "serving.ttft_p90_s", tr("TTFT p50 / p90 / p99") },
        { "serving.tpot_p90_s", tr("TPOT p50 / p90 / p99") },
        { "serving.load.capacity_rps", tr("Requests served") },
        { "serving.output_tokens_per_s_per_gpu", tr("Output / GPU") },
        { "serving.output_tokens_per_s_per_user", tr("Output / user") },
        { "serving.goodput_rps", tr("Goodput (SLO)") },
    };
    for (const auto& [key, title] : loadFigures)
        m_loadFigures->addFigure(QLatin1String(key), title);
    m_loadHeader->setWordWrap(true);
    m_loadHeader->setObjectName(QStringLiteral("loadHeader"));
    const std::pair<const char*, QString> poolFigures[] = {
        { "serving.disaggregation.prefill.weights_bytes_per_gpu", tr("Prefill pool") },
        { "serving.disaggregation.kv_transfer_s", tr("KV transfer / prompt") },
        { "serving.disaggregation.requests_per_s", tr("Requests / s") },
        { "serving.disaggregation.prefill_tokens_per_s", tr("Prefill rate") },
        { "serving.disaggregation.decode_tokens_per_s", tr("Decode rate") },
    };
    for (const auto& [key, title] : poolFigures)
        m_poolFigures->addFigure(QLatin1String(key), title);

    auto* charts = new QHBoxLayout;
    charts->addWidget(m_memoryChart, 1);
    charts->addWidget(m_curveChart, 1);
    charts->addWidget(m_rateChart, 1);
    charts->addWidget(m_interactivityChart, 1);

    auto* right = new QVBoxLayout;
    right->addWidget(m_header);
    right->addWidget(m_status);
    right->addWidget(warningsLine(m_document, QStringLiteral("serving"), this));
    right->addWidget(m_poolFigures);
    right->addWidget(m_figures);
    right->addWidget(m_loadHeader);
    right->addWidget(m_loadFigures);
    right->addLayout(charts, 1);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(scroll);
    layout->addLayout(right, 1);

    m_memoryChart->setFormulaProvider([this](int, Tenant tenant) {
        switch (tenant) {
        case Tenant::Weights:
            return tooltipFor(QStringLiteral("serving.weights_bytes_per_gpu"));
        case Tenant::KvCache:
            return tooltipFor(QStringLiteral("serving.per_gpu_bytes.kv_cache"));
        case Tenant::Activations:
            return tooltipFor(QStringLiteral("serving.activation_peak_bytes"));
        case Tenant::Overhead:
            return tooltipFor(QStringLiteral("serving.overhead_bytes"));
        default:
            return QString();
        }
    });

    connect(document, &PlanDocument::resultsChanged, this, &ServingPanel::redraw);
    redraw();
}

QString ServingPanel::tooltipFor(const QString& figure)
{
    return explanationToolTip(m_document->explanation(figure));
}

void ServingPanel::redraw()
{
    // Hidden behind another tab: mark stale and draw once when shown (showEvent), instead of
    // redrawing on every edit made elsewhere.
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    const ByteUnits units = m_document->units();
    const bool binary = units == ByteUnits::GiB;
    const Plan& plan = m_document->plan();
    const ServingEstimate& s = m_document->results().estimate.serving;
    const ServingConfig& c = plan.serving;
    const double memory = plan.gpu.gpu.memoryBytes;
    // The GPUs one engine spans (tp x attention ranks), or both pools' under disaggregation.
    const int engineGpus = s.disaggregation
        ? s.disaggregation->prefill.gpus + s.disaggregation->decode.gpus
        : std::max(s.engineGpus, 1);

    m_header->setText(
        tr("%1 on %2× %3 — %4")
            .arg(QString::fromStdString(plan.model.arch.name))
            .arg(engineGpus)
            .arg(QString::fromStdString(plan.gpu.gpu.name),
                s.fits ? tr("%1 sequences of %L2 tokens fit").arg(c.concurrency).arg(c.context)
                       : (s.fitsWeights ? tr("%1 sequences of %L2 tokens do not fit: at most %L3")
                                              .arg(c.concurrency)
                                              .arg(c.context)
                                              .arg(qlonglong(s.maxSequences))
                                        : tr("the weights leave no room for a KV cache"))));
    QPalette headerPalette = palette();
    headerPalette.setColor(QPalette::WindowText, s.fits ? fitsColor() : overflowColor());
    // Under a workload the question is the workload's: served, and within the SLO?
    if (c.workload && s.load && s.load->requests > 0) {
        const ServingLoad& l = *s.load;
        const QString rate = c.workload->concurrency
            ? tr("%L1 users").arg(*c.workload->concurrency)
            : (*c.workload->requestRate == 1.0 ? tr("1 request/s")
                                               : tr("%1 requests/s").arg(*c.workload->requestRate, 0, 'g', 3));
        const QString engines = l.replicas == 1 ? tr("1 engine") : tr("%1 engines").arg(l.replicas);
        QString verdict;
        if (l.saturated)
            verdict = tr("above capacity (%1 requests/s): the queue grows").arg(l.capacityRps, 0, 'g', 3);
        else if (l.meetsSlo && !*l.meetsSlo)
            verdict = tr("misses the SLO (%1)").arg(QString::fromStdString(l.sloMiss));
        else
            verdict = tr("p90 TTFT %1, TPOT %2%3")
                          .arg(duration(l.ttftP90S), duration(l.tpotP90S),
                              l.meetsSlo ? tr(": meets the SLO") : QString());
        m_header->setText(tr("%1 on %2× %3, %4 — %5: %6")
                              .arg(QString::fromStdString(plan.model.arch.name))
                              .arg(engineGpus)
                              .arg(QString::fromStdString(plan.gpu.gpu.name), engines, rate, verdict));
        headerPalette.setColor(QPalette::WindowText,
            l.saturated || (l.meetsSlo && !*l.meetsSlo) ? overflowColor() : fitsColor());
    }
    m_header->setPalette(headerPalette);

    // One bar per GPU of the engine (every rank holds the same share); under disaggregation
    // one GPU of each pool.
    std::vector<MemoryBarColumn> columns;
    if (s.disaggregation) {
        const DisaggregationEstimate& g = *s.disaggregation;
        columns.push_back(memoryBarColumn(tr("Prefill"), g.prefill.perGpu, g.prefill.fits));
        columns.push_back(memoryBarColumn(tr("Decode"), g.decode.perGpu, g.decode.fits));
    } else {
        const int gpus = std::max(s.engineGpus, 1);
        const int bars = std::clamp(gpus, 1, kMaxGpuBars);
        for (int g = 0; g < bars; ++g)
            columns.push_back(
                memoryBarColumn(bars == 1 ? tr("1 GPU")
                        : (g + 1 == bars && gpus > bars ? tr("GPU %1 … %2").arg(g).arg(gpus - 1)
                                                        : tr("GPU %1").arg(g)),
                    s.perGpu, s.fits));
    }
    m_memoryChart->setColumns(columns, memory,
        MemoryLimitLine { engineLineLabel(c.engine, s.memoryFraction), s.usableBytes },
        units);

    // Under a workload its latency against the request rate takes the capacity curve's place:
    // the static batch's question gives way to the workload's.
    const TrainingResults& results = m_document->results();
    const bool underLoad = c.workload && s.load && s.load->requests > 0;
    m_curveChart->setVisible(!underLoad);
    m_rateChart->setVisible(underLoad);
    if (underLoad)
        m_rateChart->setCurve(results.rateCurve, &*s.load, c.slo, results.rateCurvePending);
    else
        m_curveChart->setPoints(servingContextSweep(plan), c.context, s.maxSequences, c.concurrency);
    // The plan on the throughput-interactivity curve: the simulation's point under a workload,
    // else the static batch's (when it fits the pool).
    const InteractivityCurve curve = servingInteractivityCurve(plan);
    const bool simulated = underLoad;
    const QPointF planPoint = simulated
        ? QPointF(s.load->outputTokensPerSPerUser, s.load->outputTokensPerSPerGpu)
        : (curve.current.batch > 0 && s.fits
                  ? QPointF(curve.current.tokensPerSPerUser, curve.current.tokensPerSPerGpu)
                  : QPointF());
    m_interactivityChart->setCurve(curve, planPoint, simulated);

    auto set = [this](const char* key, const QString& text) {
        m_figures->setFigure(QLatin1String(key), text);
    };
    set("serving.kv_bytes_per_token",
        tr("%1 (%2 / GPU)")
            .arg(smallBytesText(s.kvBytesPerToken, binary),
                smallBytesText(s.kvBytesPerTokenPerGpu, binary)));
    set("serving.kv_budget_bytes", bytesText(s.kvBudgetBytes, units));
    set("serving.max_tokens", tr("%L1 tokens").arg(qlonglong(s.maxTokens)));
    set("serving.max_sequences",
        tr("%L1 at %L2 tok").arg(qlonglong(s.maxSequences)).arg(c.context));
    set("serving.contiguous_waste_bytes",
        tr("%1 (%2%)")
            .arg(bytesText(s.contiguousWasteBytes, units))
            .arg(s.contiguousWasteFraction * 100, 0, 'f', 0));
    // Rates at the requested concurrency only when it fits; otherwise greyed "does not fit".
    const QString doesNotFit = tr("does not fit");
    set("serving.decode_tokens_per_s",
        s.fits ? tr("%L1 tok/s").arg(qlonglong(std::llround(s.decodeTokensPerS))) : doesNotFit);
    // Times carry their expected error (issue 22), from the validation by timing source.
    const auto timed = [&](double seconds, double uncertainty) {
        return tr("%1 ± %2%").arg(duration(seconds)).arg(std::lround(100 * uncertainty));
    };
    set("serving.ttft_s", s.fits ? timed(s.ttftS, s.ttftUncertainty) : doesNotFit);
    set("serving.itl_s",
        !s.fits ? doesNotFit
                : (s.speculative ? tr("%1 (%2× by %3)")
                                       .arg(timed(s.itlS, s.uncertainty))
                                       .arg(s.speculative->speedup, 0, 'f', 2)
                                       .arg(QString::fromStdString(s.speculative->kind).toUpper())
                                 : timed(s.itlS, s.uncertainty)));
    for (const char* key : { "serving.decode_tokens_per_s", "serving.ttft_s", "serving.itl_s" })
        m_figures->setFigureColor(
            QLatin1String(key), s.fits ? QColor() : palette().color(QPalette::PlaceholderText));
    set("serving.compute_bound_concurrency",
        s.computeBoundConcurrency > 0
            ? tr("%L1 sequences").arg(qlonglong(s.computeBoundConcurrency))
            : tr("never (memory-bound)"));
    m_figures->setFigureColor(QStringLiteral("serving.max_sequences"),
        s.maxSequences >= c.concurrency || c.workload ? QColor() : overflowColor());
    if (c.workload && s.load && s.load->requests > 0) {
        // The workload's means (the grid below has the percentiles).
        const ServingLoad& l = *s.load;
        set("serving.decode_tokens_per_s", tr("%L1 tok/s / engine").arg(qlonglong(std::llround(s.decodeTokensPerS))));
        set("serving.ttft_s", l.saturated ? tr("unbounded") : tr("%1 mean").arg(duration(l.ttftMeanS)));
        set("serving.itl_s", tr("%1 mean").arg(duration(l.itlMeanS)));
    }
    redrawPools();
    redrawLoad();
}

// serving.disaggregation (issue 27): the prefill pool, the KV transfer and each pool's rate.
void ServingPanel::redrawPools()
{
    const ServingEstimate& s = m_document->results().estimate.serving;
    m_poolFigures->setVisible(s.disaggregation.has_value());
    if (!s.disaggregation)
        return;
    const DisaggregationEstimate& g = *s.disaggregation;
    const ByteUnits units = m_document->units();
    auto set = [this](const char* key, const QString& text) {
        m_poolFigures->setFigure(QLatin1String(key), text);
    };
    const auto layout = [](const ServingPoolEstimate& p) {
        return tr("%1 × %2 GPU%3").arg(p.workers).arg(p.tp * p.dp).arg(p.tp * p.dp == 1 ? QString() : tr("s"));
    };
    set("serving.disaggregation.prefill.weights_bytes_per_gpu",
        tr("%1, %2 weights / GPU").arg(layout(g.prefill), bytesText(g.prefill.weightsBytesPerGpu, units)));
    const QString doesNotFit = tr("does not fit");
    set("serving.disaggregation.kv_transfer_s",
        s.fits ? tr("%1 (%2)").arg(duration(g.kvTransferS), bytesText(g.kvTransferBytes, units)) : doesNotFit);
    set("serving.disaggregation.requests_per_s",
        s.fits ? tr("%1 (%2-bound)").arg(g.requestsPerS, 0, 'g', 3).arg(QString::fromStdString(g.bottleneck))
               : doesNotFit);
    set("serving.disaggregation.prefill_tokens_per_s",
        s.fits ? tr("%L1 tok/s").arg(qlonglong(std::llround(g.prefillTokensPerS))) : doesNotFit);
    set("serving.disaggregation.decode_tokens_per_s",
        s.fits ? tr("%L1 tok/s (%2)").arg(qlonglong(std::llround(g.decodeTokensPerS))).arg(layout(g.decode))
               : doesNotFit);
    for (const char* key : { "serving.disaggregation.kv_transfer_s", "serving.disaggregation.requests_per_s",
             "serving.disaggregation.prefill_tokens_per_s", "serving.disaggregation.decode_tokens_per_s" })
        m_poolFigures->setFigureColor(
            QLatin1String(key), s.fits ? QColor() : palette().color(QPalette::PlaceholderText));
}

// The workload's figures (issue 27), each a simulated percentile or a rate of the deployment;
// the goodput searched off the GUI thread shows "searching…" until it lands.
void ServingPanel::redrawLoad()
{
    const Plan& plan = m_document->plan();
    const TrainingResults& results = m_document->results();
    const ServingEstimate& s = results.estimate.serving;
    const bool shown = plan.serving.workload.has_value();
    m_loadHeader->setVisible(shown);
    m_loadFigures->setVisible(shown);
    if (!shown)
        return;
    const ServingWorkload& w = *plan.serving.workload;
    const QString load = w.concurrency
        ? tr("%L1 users in a closed loop").arg(*w.concurrency)
        : (*w.requestRate == 1.0 ? tr("1 request/s (Poisson)")
                                 : tr("%1 requests/s (Poisson)").arg(*w.requestRate, 0, 'g', 3));
    auto set = [this](const char* key, const QString& text) {
        m_loadFigures->setFigure(QLatin1String(key), text);
    };
    if (!s.load || s.load->requests <= 0) {
        m_loadHeader->setText(tr("Under load: %1 — not served: %2")
                                  .arg(load,
                                      s.load && !s.load->sloNote.empty()
                                          ? QString::fromStdString(s.load->sloNote)
                                          : tr("the weights leave no room for a KV cache")));
        for (const char* key : { "serving.ttft_p90_s", "serving.tpot_p90_s", "serving.load.capacity_rps",
                 "serving.output_tokens_per_s_per_gpu", "serving.output_tokens_per_s_per_user",
                 "serving.goodput_rps" })
            set(key, tr("n/a"));
        return;
    }
    const ServingLoad& l = *s.load;
    QString verdict;
    if (l.saturated)
        verdict = tr("above capacity: the queue grows without bound");
    else if (l.meetsSlo)
        verdict = *l.meetsSlo ? tr("meets the SLO")
                              : tr("misses the SLO: %1").arg(QString::fromStdString(l.sloMiss));
    else
        verdict = tr("no SLO set");
    m_loadHeader->setText(tr("Under load: %1 over %2, %3 + %4 tokens on average — %5 "
                             "(simulated)")
                              .arg(load)
                              .arg(l.replicas == 1 ? tr("1 engine") : tr("%1 engines").arg(l.replicas))
                              .arg(l.meanInputTokens, 0, 'f', 0)
                              .arg(l.meanOutputTokens, 0, 'f', 0)
                              .arg(verdict));
    // How the simulated engine schedules, and why (serving.load.scheduler).
    m_loadHeader->setToolTip(tr("Engine scheduler: %1").arg(QString::fromStdString(l.scheduler)));
    QPalette headerPalette = palette();
    headerPalette.setColor(QPalette::WindowText,
        l.saturated || (l.meetsSlo && !*l.meetsSlo) ? overflowColor() : fitsColor());
    m_loadHeader->setPalette(headerPalette);
    set("serving.ttft_p90_s",
        l.saturated ? tr("unbounded")
                    : tr("%1 / %2 / %3").arg(duration(l.ttftP50S), duration(l.ttftP90S), duration(l.ttftP99S)));
    set("serving.tpot_p90_s", tr("%1 / %2 / %3").arg(duration(l.tpotP50S), duration(l.tpotP90S), duration(l.tpotP99S)));
    set("serving.load.capacity_rps",
        tr("%1 req/s (capacity %2)").arg(l.requestRateRps, 0, 'g', 3).arg(l.capacityRps, 0, 'g', 3));
    set("serving.output_tokens_per_s_per_gpu", tr("%L1 tok/s").arg(qlonglong(std::llround(l.outputTokensPerSPerGpu))));
    set("serving.output_tokens_per_s_per_user", tr("%1 tok/s").arg(l.outputTokensPerSPerUser, 0, 'f', 1));
    set("serving.goodput_rps",
        !plan.serving.slo        ? tr("set an SLO")
            : results.goodputPending ? tr("searching…")
            : l.goodputRps           ? (*l.goodputRps > 0 ? tr("%1 req/s").arg(*l.goodputRps, 0, 'g', 3)
                                                          : tr("none meets it"))
                                     : tr("n/a"));
    m_loadFigures->setFigureColor(QStringLiteral("serving.ttft_p90_s"),
        l.saturated ? overflowColor() : QColor());
}

void ServingPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        redraw();
}

} // namespace envelope::ui
