#include "panels/planpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <atomic>

#include "charts/paretochart.h"
#include "document/plandocument.h"
#include "panels/plantable.h"
#include "plan/fields.h"
#include "search/solution.h"

namespace envelope::ui {

// What one search shares with its worker thread; the thread owns nothing else.
struct PlanPanel::Job {
    Plan plan;
    SearchOptions options;
    SearchKind kind = SearchKind::Training;
    std::atomic<bool> cancel { false };
    std::atomic<double> progress { 0 };
    QElapsedTimer sinceBatch; // the worker's: when it last posted partial results
    SearchResult result;
    ServingSearchResult serving;
    RlSearchResult rl;
};

namespace {

// The planner's candidates in the GUI: the top 200 (the CLI's default is 10).
constexpr int kTableRows = 200;
// A search shorter than this shows no progress bar (it would only flicker).
constexpr int kProgressDelayMs = 100;

// Partial results go to the table at most this often while a search runs: a refill of 200 rows
// takes a few ms, so the window keeps most of every frame for itself.
constexpr int kBatchIntervalMs = 100;
// Rows a streamed batch shows (more than the table's viewport holds); the final result fills
// all kTableRows. A batch of 50 refills and repaints in about a third of a 200-row fill.
constexpr size_t kStreamedRows = 50;

} // namespace

PlanPanel::PlanPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_kind(new QComboBox)
    , m_goal(new QComboBox)
    , m_maxGpus(new QSpinBox)
    , m_gpusPerNode(new QSpinBox)
    , m_maxTtft(new QDoubleSpinBox)
    , m_maxItl(new QDoubleSpinBox)
    , m_offload(new QCheckBox(tr("Allow CPU offload")))
    , m_find(new QPushButton(tr("Find plans")))
    , m_cancel(new QPushButton(tr("Cancel")))
    , m_apply(new QPushButton(tr("Apply selected")))
    , m_progress(new QProgressBar)
    , m_status(new QLabel)
    , m_table(new QTableWidget(0, 2))
    , m_chart(new ParetoChart)
    , m_progressTimer(new QTimer(this))
{
    m_kind->addItem(tr("Training"), int(SearchKind::Training));
    m_kind->addItem(tr("Serving"), int(SearchKind::Serving));
    m_kind->addItem(tr("RL"), int(SearchKind::Rl));
    fillGoals();
    m_goal->setCurrentIndex(1);
    m_maxGpus->setRange(0, planfields::kMaxGpus); // solve's --max-gpus, a plan's cluster.gpus
    m_maxGpus->setSpecialValueText(tr("goal's default"));
    m_maxGpus->setToolTip(tr("Largest GPU count: fewest-GPUs searches up to 65,536, the others use "
                             "the plan's cluster"));
    m_gpusPerNode->setRange(0, 1024);
    m_gpusPerNode->setSpecialValueText(tr("plan's"));
    // Serving latency limits in ms; 0 keeps the plan's serving.max_ttft_s / max_itl_s (none
    // when the plan sets none). A candidate over a limit is rejected as "latency".
    for (QDoubleSpinBox* limit : { m_maxTtft, m_maxItl }) {
        limit->setRange(0, 1e6);
        limit->setDecimals(0);
        limit->setSuffix(tr(" ms"));
        limit->setSpecialValueText(tr("plan's"));
    }
    m_maxTtft->setToolTip(tr("Serving: the longest time to first token a layout may have"));
    m_maxItl->setToolTip(tr("Serving: the longest inter-token latency a layout may have"));
    m_offload->setChecked(true);
    m_offload->setToolTip(tr("For the memory goals (fewest GPUs, longest sequence, largest "
                             "micro-batch): the step time does not charge offload, so the speed "
                             "and cost goals never propose it"));
    m_cancel->setVisible(false);
    m_progress->setVisible(false);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_apply->setEnabled(false);
    m_status->setWordWrap(true);
    m_status->setText(tr("Choose a goal and press Find: every layout of the plan is searched "
                         "and the ones that fit are ranked."));

    // One row of constraints, then the buttons and the progress, then what the search found.
    auto* constraints = new QHBoxLayout;
    const auto labelled = [constraints](const QString& text, QWidget* field) {
        auto* label = new QLabel(text);
        label->setBuddy(field);
        constraints->addWidget(label);
        constraints->addWidget(field);
    };
    labelled(tr("&Kind"), m_kind);
    labelled(tr("&Goal"), m_goal);
    labelled(tr("&Max GPUs"), m_maxGpus);
    labelled(tr("GPUs per &node"), m_gpusPerNode);
    labelled(tr("Max &TTFT"), m_maxTtft);
    labelled(tr("Max &ITL"), m_maxItl);
    constraints->addWidget(m_offload);
    constraints->addStretch();
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_find);
    buttons->addWidget(m_progress, 1);
    buttons->addWidget(m_cancel);
    buttons->addStretch();
    buttons->addWidget(m_apply);
    auto* controls = new QVBoxLayout;
    controls->addLayout(constraints);
    controls->addLayout(buttons);
    controls->addWidget(m_status);

    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setToolTip(tr("Double-click a candidate to apply it to the plan (Undo reverts it)"));

    auto* split = new QSplitter(Qt::Horizontal);
    m_split = split;
    split->addWidget(m_table);
    split->addWidget(m_chart);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    connect(split, &QSplitter::splitterMoved, this, [this] { m_splitMoved = true; });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(split, 1);

    m_progressTimer->setInterval(50);
    connect(m_progressTimer, &QTimer::timeout, this, &PlanPanel::showProgress);
    connect(m_find, &QPushButton::clicked, this, &PlanPanel::startSearch);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &PlanPanel::fillGoals);
    connect(m_goal, &QComboBox::currentIndexChanged, this, &PlanPanel::enableLatencyLimits);
    connect(m_cancel, &QPushButton::clicked, this, &PlanPanel::cancelSearch);
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
        [this] { m_apply->setEnabled(!m_table->selectedItems().isEmpty()); });
    connect(
        m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { applyRow(row); });
    connect(m_apply, &QPushButton::clicked, this, [this] {
        const QList<QTableWidgetItem*> selected = m_table->selectedItems();
        if (!selected.isEmpty())
            applyRow(selected.front()->row());
    });
    connect(m_chart, &ParetoChart::candidateClicked, this,
        qOverload<const Candidate&>(&PlanPanel::applyCandidate));
    connect(m_chart, &ParetoChart::candidateHovered, this,
        [this](const Candidate& c, const QPoint& pos) {
            QToolTip::showText(
                pos, describeCandidate(m_searchedPlan, c, m_document->units()), m_chart);
        });
}

void PlanPanel::fillGoals()
{
    const SearchKind kind = SearchKind(m_kind->currentData().toInt());
    m_goal->clear();
    if (kind == SearchKind::Serving) {
        m_goal->addItem(
            tr("Most tokens/s on the plan's GPUs"), int(SearchGoal::ServingMaxThroughput));
        m_goal->addItem(tr("Fewest GPUs"), int(SearchGoal::ServingMinGpus));
        m_goal->addItem(
            tr("Most goodput under the plan's SLO"), int(SearchGoal::ServingMaxGoodput));
        // A plan with a workload and an SLO asks how many requests its GPUs serve within it.
        const ServingConfig& s = m_document->plan().serving;
        if (s.workload && s.slo && s.slo->any())
            m_goal->setCurrentIndex(m_goal->findData(int(SearchGoal::ServingMaxGoodput)));
    } else if (kind == SearchKind::Rl) {
        m_goal->addItem(tr("Most steps per hour"), int(SearchGoal::RlMaxStepsPerHour));
    } else {
        const std::pair<SearchGoal, QString> goals[] = {
            { SearchGoal::MinGpus, tr("Fewest GPUs") },
            { SearchGoal::MaxThroughput, tr("Most tokens/s on the plan's GPUs") },
            { SearchGoal::MinCost, tr("Cheapest run (within the deadline)") },
            { SearchGoal::MinTime, tr("Fastest run (within the budget)") },
            { SearchGoal::MaxSeqLen, tr("Longest sequence") },
            { SearchGoal::MaxMicroBatch, tr("Largest micro-batch") },
        };
        for (const auto& [goal, label] : goals)
            m_goal->addItem(label, int(goal));
    }
    m_offload->setEnabled(kind == SearchKind::Training);
    enableLatencyLimits();
}

void PlanPanel::enableLatencyLimits()
{
    // The goodput goal ranks by the plan's SLO percentiles; the single-request limits are for
    // the other serving goals, and a box it would ignore is not offered.
    const auto goal = SearchGoal(m_goal->currentData().toInt());
    const bool limits
        = searchKind(goal) == SearchKind::Serving && goal != SearchGoal::ServingMaxGoodput;
    m_maxTtft->setEnabled(limits);
    m_maxItl->setEnabled(limits);
}

void PlanPanel::applyRow(int row)
{
    const QTableWidgetItem* item = m_table->item(row, 0);
    const int index = item ? item->data(Qt::UserRole).toInt() - 1 : -1;
    const auto apply = [&](const auto& candidates) {
        if (index >= 0 && index < int(candidates.size()))
            applyCandidate(candidates[size_t(index)]);
    };
    switch (m_resultKind) {
    case SearchKind::Serving:
        return apply(m_servingResult.candidates);
    case SearchKind::Rl:
        return apply(m_rlResult.candidates);
    case SearchKind::Training:
        break;
    }
    apply(m_result.candidates);
}

PlanPanel::~PlanPanel()
{
    if (m_thread) {
        m_job->cancel = true;
        m_thread->wait();
    }
}

void PlanPanel::setPreferredKind(SearchKind kind)
{
    if (m_thread)
        return;
    const int index = m_kind->findData(int(kind));
    if (index >= 0 && index != m_kind->currentIndex())
        m_kind->setCurrentIndex(index); // fillGoals follows
}

void PlanPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_resultStale) {
        m_resultStale = false;
        showResult();
    }
    if (!m_searchedOnce && m_document->isValid()) {
        if (SearchKind(m_kind->currentData().toInt()) == SearchKind::Training) {
            // A plan that does not fit asks "how many GPUs", one that fits "how fast".
            // The training tab's own verdict: the plan's usable_fraction is the fits line.
            const bool fits = m_document->results().estimate.training.verdict == Verdict::Fits;
            m_goal->setCurrentIndex(
                m_goal->findData(int(fits ? SearchGoal::MaxThroughput : SearchGoal::MinGpus)));
        }
        // Serving and RL keep their first goal: most tokens/s, most steps per hour.
        startSearch();
    }
}

void PlanPanel::startSearch()
{
    m_searchedOnce = true;
    if (m_thread)
        cancelSearch();
    auto job = std::make_shared<Job>();
    job->plan = m_document->plan();
    job->options.goal = SearchGoal(m_goal->currentData().toInt());
    job->kind = searchKind(job->options.goal);
    job->options.top = kTableRows;
    job->options.maxGpus = m_maxGpus->value();
    job->options.gpusPerNode = m_gpusPerNode->value();
    job->options.allowOffload = m_offload->isChecked();
    if (m_maxTtft->value() > 0)
        job->options.maxTtftS = m_maxTtft->value() / 1000;
    if (m_maxItl->value() > 0)
        job->options.maxItlS = m_maxItl->value() / 1000;
    Job* raw = job.get();
    job->options.cancel = &raw->cancel;
    job->options.progress = [raw](double fraction) { raw->progress = fraction; };
    streamTo(raw, raw->options.partialTraining);
    streamTo(raw, raw->options.partialServing);
    streamTo(raw, raw->options.partialRl);
    m_job = job;
    m_searchedPlan = job->plan;
    m_chart->setVisible(job->kind == SearchKind::Training);
    m_thread = QThread::create([raw] {
        switch (raw->kind) {
        case SearchKind::Serving:
            raw->serving = searchServing(raw->plan, raw->options);
            break;
        case SearchKind::Rl:
            raw->rl = searchRl(raw->plan, raw->options);
            break;
        case SearchKind::Training:
            raw->result = search(raw->plan, raw->options);
            break;
        }
    });
    connect(m_thread, &QThread::finished, this, [this, job] { finish(job); });
    connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
    m_clock.start();
    m_progressTimer->start();
    m_find->setEnabled(false);
    m_status->setText(tr("Searching…"));
    m_thread->start();
}

void PlanPanel::cancelSearch()
{
    if (!m_thread)
        return;
    m_job->cancel = true;
}

void PlanPanel::showProgress()
{
    if (!m_thread || m_clock.elapsed() < kProgressDelayMs)
        return;
    m_progress->setVisible(true);
    m_cancel->setVisible(true);
    m_progress->setValue(int(m_job->progress * 1000));
}

// The worker hands the best candidates so far to the GUI thread, at most every
// kBatchIntervalMs; a batch of a search that has since been replaced is dropped.
template <class C>
void PlanPanel::streamTo(Job* job, std::function<void(const std::vector<C>&)>& sink)
{
    sink = [this, job](const std::vector<C>& top) {
        if (job->sinceBatch.isValid() && job->sinceBatch.elapsed() < kBatchIntervalMs)
            return;
        job->sinceBatch.start();
        QMetaObject::invokeMethod(
            this,
            [this, job,
                rows
                = std::vector<C>(top.begin(), top.begin() + std::min(top.size(), kStreamedRows))] {
                // Hidden behind another tab, a batch would refill a table nobody sees on the
                // thread that is redrawing the tab the user works in; the result fills it.
                if (m_job.get() != job || !isVisible())
                    return;
                fillPlanTable(m_table, m_searchedPlan, rows, m_document->units());
                fitTableWidth();
                ++m_batchesShown;
                m_status->setText(
                    tr("Searching… %n candidate(s) so far", nullptr, int(rows.size())));
            },
            Qt::QueuedConnection);
    };
}

QString PlanPanel::statusText(
    const SearchTally& r, const QString& best, const std::string& none) const
{
    QString rejected;
    for (const RejectCount& c : r.rejected)
        rejected += QStringLiteral("%1%2 %3")
                        .arg(rejected.isEmpty() ? QString() : QStringLiteral(", "))
                        .arg(c.count)
                        .arg(QString::fromStdString(c.reason));
    QString text = tr("Searched %1 layouts in %2 s: %3 fit; rejected: %4.")
                       .arg(r.searched)
                       .arg(r.elapsedS, 0, 'f', 3)
                       .arg(r.feasible)
                       .arg(rejected.isEmpty() ? tr("none") : rejected);
    if (r.cancelled)
        text = tr("Cancelled. ") + text;
    if (best.isEmpty()) {
        QString message = QString::fromStdString(none);
        if (!message.isEmpty())
            message[0] = message[0].toUpper();
        return text + QLatin1Char(' ') + message + QLatin1Char('.');
    }
    return text + QLatin1Char(' ') + tr("Best: %1.").arg(best);
}

void PlanPanel::finish(const std::shared_ptr<Job>& job)
{
    if (job != m_job)
        return; // a search replaced by a newer one
    m_thread = nullptr;
    m_progressTimer->stop();
    m_progress->setVisible(false);
    m_cancel->setVisible(false);
    m_find->setEnabled(true);
    m_searchedPlan = job->plan;
    m_resultKind = job->kind;
    m_result = std::move(job->result);
    m_servingResult = std::move(job->serving);
    m_rlResult = std::move(job->rl);
    m_job.reset();
    const ByteUnits units = m_document->units();
    const auto status = [&](const auto& r) {
        const QString best = r.candidates.empty()
            ? QString()
            : describeCandidate(m_searchedPlan, r.candidates.front(), units);
        m_status->setText(statusText(r, best,
            r.candidates.empty() ? noSolutionMessage(m_searchedPlan, r, units) : std::string()));
    };
    switch (m_resultKind) {
    case SearchKind::Serving:
        status(m_servingResult);
        break;
    case SearchKind::Rl:
        status(m_rlResult);
        break;
    case SearchKind::Training:
        status(m_result);
        // Why the best is not the goal's first by a hair (the planner's headroom preference).
        if (!m_result.headroomNote.empty())
            m_status->setText(m_status->text() + QLatin1Char(' ')
                + tr("Note: %1.").arg(QString::fromStdString(m_result.headroomNote)));
        break;
    }
    m_resultStale = !isVisible();
    if (!m_resultStale)
        showResult();
    emit searchFinished();
}

void PlanPanel::showResult()
{
    if (m_resultKind == SearchKind::Training)
        m_chart->setResult(m_result, m_document->units());
    fillTable();
}

void PlanPanel::fillTable()
{
    const ByteUnits units = m_document->units();
    switch (m_resultKind) {
    case SearchKind::Serving:
        fillPlanTable(m_table, m_searchedPlan, m_servingResult.candidates, units);
        break;
    case SearchKind::Rl:
        fillPlanTable(m_table, m_searchedPlan, m_rlResult.candidates, units);
        break;
    case SearchKind::Training:
        fillPlanTable(m_table, m_searchedPlan, m_result.candidates, units);
        break;
    }
    fitTableWidth();
}

void PlanPanel::fitTableWidth()
{
    const int total = m_split->width();
    if (m_splitMoved || total <= 0 || m_table->columnCount() == 0)
        return;
    const int wanted = m_table->horizontalHeader()->length()
        + m_table->verticalScrollBar()->sizeHint().width() + 2 * m_table->frameWidth() + 2;
    const int table = std::min(wanted, total * 3 / 4);
    const QList<int> sizes = m_split->sizes();
    if (sizes.size() == 2 && std::abs(sizes[0] - table) > 2)
        m_split->setSizes({ table, total - m_split->handleWidth() - table });
}

void PlanPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitTableWidth();
}

void PlanPanel::applyCandidate(const Candidate& candidate)
{
    const Plan changed = applyLayout(m_document->plan(), candidate.layout);
    m_document->edit(changed,
        tr("Apply planner layout: %1")
            .arg(QString::fromStdString(describeChanges(m_document->plan(), candidate.layout))));
}

void PlanPanel::applyCandidate(const ServingCandidate& candidate)
{
    const Plan changed = applyServingLayout(m_document->plan(), candidate.layout);
    m_document->edit(changed,
        tr("Apply planner serving layout: %1")
            .arg(QString::fromStdString(describeChanges(m_document->plan(), candidate.layout))));
}

void PlanPanel::applyCandidate(const RlCandidate& candidate)
{
    const Plan changed = applyRlLayout(m_document->plan(), candidate.layout);
    m_document->edit(changed,
        tr("Apply planner RL pools: %1")
            .arg(QString::fromStdString(describeChanges(m_document->plan(), candidate.layout))));
}

} // namespace envelope::ui
