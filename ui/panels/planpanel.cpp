#include "panels/planpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <atomic>

#include "charts/memoryview.h"
#include "charts/paretochart.h"
#include "document/plandocument.h"
#include "search/solution.h"

namespace envelope::ui {

// What one search shares with its worker thread; the thread owns nothing else.
struct PlanPanel::Job {
    Plan plan;
    SearchOptions options;
    std::atomic<bool> cancel { false };
    std::atomic<double> progress { 0 };
    SearchResult result;
};

namespace {

// The planner's candidates in the GUI: the top 200 (the CLI's default is 10).
constexpr int kTableRows = 200;
// A search shorter than this shows no progress bar (it would only flicker).
constexpr int kProgressDelayMs = 100;

enum Column {
    Rank,
    Gpus,
    Tp,
    Pp,
    Cp,
    Ep,
    Dp,
    Zero,
    Recompute,
    Offload,
    Batch,
    Memory,
    Tokens,
    Step,
    Cost,
    Columns
};

// Sorts by the number in Qt::UserRole, whatever the text shows.
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(const QString& text, double value)
        : QTableWidgetItem(text)
    {
        setData(Qt::UserRole, value);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override
    {
        return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
    }
};

} // namespace

PlanPanel::PlanPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_goal(new QComboBox)
    , m_maxGpus(new QSpinBox)
    , m_gpusPerNode(new QSpinBox)
    , m_offload(new QCheckBox(tr("Allow CPU offload")))
    , m_find(new QPushButton(tr("Find plans")))
    , m_cancel(new QPushButton(tr("Cancel")))
    , m_apply(new QPushButton(tr("Apply selected")))
    , m_progress(new QProgressBar)
    , m_status(new QLabel)
    , m_table(new QTableWidget(0, Columns))
    , m_chart(new ParetoChart)
    , m_progressTimer(new QTimer(this))
{
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
    m_goal->setCurrentIndex(1);
    m_maxGpus->setRange(0, 1 << 20);
    m_maxGpus->setSpecialValueText(tr("goal's default"));
    m_maxGpus->setToolTip(tr("Largest GPU count: fewest-GPUs searches up to 65,536, the others use "
                             "the plan's cluster"));
    m_gpusPerNode->setRange(0, 1024);
    m_gpusPerNode->setSpecialValueText(tr("plan's"));
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
    labelled(tr("&Goal"), m_goal);
    labelled(tr("&Max GPUs"), m_maxGpus);
    labelled(tr("GPUs per &node"), m_gpusPerNode);
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

    m_table->setHorizontalHeaderLabels({ tr("#"), tr("GPUs"), tr("TP"), tr("PP"), tr("CP"),
        tr("EP"), tr("DP"), tr("ZeRO"), tr("Recompute"), tr("Offload"), tr("Batch"), tr("Per GPU"),
        tr("Tokens/s"), tr("Step"), tr("Cost") });
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setToolTip(tr("Double-click a candidate to apply it to the plan (Undo reverts it)"));

    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_table);
    split->addWidget(m_chart);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(split, 1);

    m_progressTimer->setInterval(50);
    connect(m_progressTimer, &QTimer::timeout, this, &PlanPanel::showProgress);
    connect(m_find, &QPushButton::clicked, this, &PlanPanel::startSearch);
    connect(m_cancel, &QPushButton::clicked, this, &PlanPanel::cancelSearch);
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
        [this] { m_apply->setEnabled(!m_table->selectedItems().isEmpty()); });
    const auto applyRow = [this](int row) {
        const QTableWidgetItem* item = m_table->item(row, Rank);
        const int index = item ? item->data(Qt::UserRole).toInt() - 1 : -1;
        if (index >= 0 && index < int(m_result.candidates.size()))
            applyCandidate(m_result.candidates[size_t(index)]);
    };
    connect(m_table, &QTableWidget::cellDoubleClicked, this,
        [applyRow](int row, int) { applyRow(row); });
    connect(m_apply, &QPushButton::clicked, this, [this, applyRow] {
        const QList<QTableWidgetItem*> selected = m_table->selectedItems();
        if (!selected.isEmpty())
            applyRow(selected.front()->row());
    });
    connect(m_chart, &ParetoChart::candidateClicked, this, &PlanPanel::applyCandidate);
    connect(m_chart, &ParetoChart::candidateHovered, this,
        [this](const Candidate& c, const QPoint& pos) {
            QToolTip::showText(pos, describe(c), m_chart);
        });
}

PlanPanel::~PlanPanel()
{
    if (m_thread) {
        m_job->cancel = true;
        m_thread->wait();
    }
}

void PlanPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_searchedOnce && m_document->isValid()) {
        // A plan that does not fit asks "how many GPUs", one that fits "how fast".
        const TrainingMemory& m = m_document->results().estimate.training;
        const bool fits
            = fitVerdict(m.perGpu.total(), m.gpuMemoryBytes, SearchOptions {}.usableFraction)
            == FitVerdict::Fits;
        m_goal->setCurrentIndex(
            m_goal->findData(int(fits ? SearchGoal::MaxThroughput : SearchGoal::MinGpus)));
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
    job->options.top = kTableRows;
    job->options.maxGpus = m_maxGpus->value();
    job->options.gpusPerNode = m_gpusPerNode->value();
    job->options.allowOffload = m_offload->isChecked();
    Job* raw = job.get();
    job->options.cancel = &raw->cancel;
    job->options.progress = [raw](double fraction) { raw->progress = fraction; };
    m_job = job;
    m_thread = QThread::create([raw] { raw->result = search(raw->plan, raw->options); });
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
    m_result = std::move(job->result);
    m_job.reset();
    QString rejected;
    for (const RejectCount& r : m_result.rejected)
        rejected += QStringLiteral("%1%2 %3")
                        .arg(rejected.isEmpty() ? QString() : QStringLiteral(", "))
                        .arg(r.count)
                        .arg(QString::fromStdString(r.reason));
    QString text = tr("Searched %1 layouts in %2 s: %3 fit; rejected: %4.")
                       .arg(m_result.searched)
                       .arg(m_result.elapsedS, 0, 'f', 3)
                       .arg(m_result.feasible)
                       .arg(rejected);
    if (m_result.cancelled)
        text = tr("Cancelled. ") + text;
    if (m_result.candidates.empty()) {
        QString message = QString::fromStdString(
            noSolutionMessage(m_searchedPlan, m_result, m_document->units()));
        if (!message.isEmpty())
            message[0] = message[0].toUpper();
        text += QLatin1Char(' ') + message + QLatin1Char('.');
    } else
        text += QLatin1Char(' ') + tr("Best: %1.").arg(describe(m_result.candidates.front()));
    m_status->setText(text);
    fillTable();
    m_chart->setResult(m_result, m_document->units());
    emit searchFinished();
}

void PlanPanel::fillTable()
{
    m_table->setSortingEnabled(false);
    m_table->clearContents();
    m_table->setRowCount(int(m_result.candidates.size()));
    const ByteUnits units = m_document->units();
    int row = 0;
    for (const Candidate& c : m_result.candidates) {
        const Layout& l = c.layout;
        const auto number = [&](int column, double value, const QString& text) {
            m_table->setItem(row, column, new NumberItem(text, value));
        };
        const auto integer
            = [&](int column, int value) { number(column, value, QString::number(value)); };
        integer(Rank, row + 1);
        integer(Gpus, l.gpus);
        integer(Tp, l.tp);
        number(Pp, l.pp,
            l.virtualStages > 1 ? QStringLiteral("%1×%2").arg(l.pp).arg(l.virtualStages)
                                : QString::number(l.pp));
        integer(Cp, l.cp);
        integer(Ep, l.ep);
        integer(Dp, l.gpus / std::max(1, l.tp * l.pp * l.cp));
        integer(Zero, l.zeroStage);
        const QString recompute = l.recompute == envelope::Recompute::EveryK
            ? tr("every %1").arg(l.recomputeEvery)
            : QString::fromUtf8(recomputeId(l.recompute).data());
        m_table->setItem(row, Recompute,
            new QTableWidgetItem(recompute + (l.sequenceParallel ? tr(" + SP") : QString())));
        m_table->setItem(row, Offload,
            new QTableWidgetItem(l.offloadParams ? tr("optimizer + params")
                    : l.offloadOptimizer         ? tr("optimizer")
                                                 : tr("none")));
        number(Batch, l.microBatch, QStringLiteral("%1 × %2").arg(l.microBatch).arg(l.gradAccum));
        number(Memory, c.perGpuBytes, bytesText(c.perGpuBytes, units));
        number(Tokens, c.tokensPerS, QString::number(c.tokensPerS, 'f', 0));
        number(Step, c.stepTimeS, QString::fromStdString(formatDuration(c.stepTimeS)));
        number(Cost, c.cost, QStringLiteral("$%1").arg(c.cost, 0, 'f', 0));
        m_table->item(row, Rank)->setToolTip(describe(c));
        ++row;
    }
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(Rank, Qt::AscendingOrder);
}

QString PlanPanel::describe(const Candidate& c) const
{
    return QStringLiteral("%1: %2 per GPU, %3 tokens/s")
        .arg(QString::fromStdString(describeChanges(m_searchedPlan, c.layout)),
            bytesText(c.perGpuBytes, m_document->units()),
            QString::number(c.tokensPerS, 'f', 0));
}

void PlanPanel::applyCandidate(const Candidate& candidate)
{
    const Plan changed = applyLayout(m_document->plan(), candidate.layout);
    m_document->edit(changed,
        tr("Apply planner layout: %1")
            .arg(QString::fromStdString(describeChanges(m_document->plan(), candidate.layout))));
}

} // namespace envelope::ui
