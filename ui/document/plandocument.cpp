#include "document/plandocument.h"

#include <QThread>
#include <QUndoStack>

#include "document/planeditcommand.h"
#include "document/settings.h"
#include "estimate/estimate.h"
#include "plan/planio.h"
#include "serving/load.h"
#include "whatif/whatif.h"

namespace envelope::ui {

// The searches an edit starts off the GUI thread: "what makes it fit" when the plan does not
// fit, the serving goodput when it has a workload and an SLO.
struct PlanDocument::FitJob {
    Plan plan;
    ByteUnits units = ByteUnits::GB;
    bool fit = false, goodput = false, rateCurve = false;
    std::vector<FitSuggestion> suggestions;
    // goodput or rateCurve: the plan's estimate, its serving load completed by the worker.
    Estimate estimate;
    ServingRateCurve curve;
};

PlanDocument::PlanDocument(PresetLibrary presets, Settings* settings, QObject* parent)
    : QObject(parent)
    , m_presets(std::move(presets))
    , m_undoStack(new QUndoStack(this))
    , m_settings(settings)
{
    connect(m_undoStack, &QUndoStack::cleanChanged, this,
        [this](bool clean) { emit modifiedChanged(!clean || m_pinsModified); });
    if (m_settings)
        connect(m_settings, &Settings::unitsChanged, this, [this] {
            // The same figures in the new units (suggestion texts carry formatted bytes), also
            // while an invalid edit keeps the last valid figures drawn.
            m_results = computeTrainingResults(m_resultsPlan);
            if (m_results.workPending())
                startFitSearch();
            emit resultsChanged();
        });
    recompute();
}

PlanDocument::~PlanDocument()
{
    // The worker only reads its own copy of the plan; it must not outlive the thread object.
    if (m_fitThread)
        m_fitThread->wait();
}

void PlanDocument::startFitSearch()
{
    if (m_fitThread) {
        m_fitQueued = true; // one search at a time: the latest plan goes next
        return;
    }
    auto job = std::make_shared<FitJob>();
    job->plan = m_resultsPlan;
    job->units = units();
    job->fit = m_results.suggestionsPending;
    job->goodput = m_results.goodputPending;
    job->rateCurve = m_results.rateCurvePending;
    if (job->goodput || job->rateCurve)
        job->estimate = m_results.estimate;
    m_fitJob = job;
    m_fitThread = QThread::create([job] {
        if (job->fit)
            job->suggestions = suggestFits(job->plan, job->units);
        // The curve from the plan's own load (its capacity), before the goodput completes it.
        if (job->rateCurve)
            job->curve = servingRateCurve(job->plan, job->estimate);
        if (job->goodput)
            attachServingGoodput(job->plan, job->estimate);
    });
    m_fitThread->setParent(this);
    connect(m_fitThread, &QThread::finished, this, [this, job] { fitSearchFinished(job); });
    m_fitThread->start(QThread::LowPriority);
}

void PlanDocument::fitSearchFinished(std::shared_ptr<FitJob> job)
{
    if (job != m_fitJob)
        return; // already delivered (waitForFitSearch)
    m_fitThread->deleteLater();
    m_fitThread = nullptr;
    m_fitJob.reset();
    const bool samePlan = job->plan == m_resultsPlan && job->units == units();
    const bool fitLanded = samePlan && job->fit && m_results.suggestionsPending;
    const bool goodputLanded = samePlan && job->goodput && m_results.goodputPending;
    const bool curveLanded = samePlan && job->rateCurve && m_results.rateCurvePending;
    if (fitLanded) {
        m_results.suggestions = std::move(job->suggestions);
        m_results.suggestionsPending = false;
    }
    if (goodputLanded) {
        m_results.estimate.serving.load = std::move(job->estimate.serving.load);
        m_results.goodputPending = false;
    }
    if (curveLanded) {
        m_results.rateCurve = std::move(job->curve);
        m_results.rateCurvePending = false;
    }
    if (fitLanded || goodputLanded || curveLanded)
        emit resultsChanged();
    const bool pending = m_results.workPending();
    const bool again = m_fitQueued || pending;
    m_fitQueued = false;
    if (again && pending)
        startFitSearch();
}

void PlanDocument::waitForFitSearch()
{
    while (m_fitThread) {
        m_fitThread->wait();
        fitSearchFinished(m_fitJob);
    }
}

const std::vector<Explanation>& PlanDocument::explanations()
{
    if (!m_explanations) {
        // The explained path formats every figure: only when a tooltip or the details pane asks.
        m_explanations = isValid() ? estimate(m_plan, { .explain = true }).explain
                                   : std::vector<Explanation> {};
    }
    return *m_explanations;
}

const Explanation* PlanDocument::explanation(const QString& figure)
{
    const std::string key = figure.toStdString();
    for (const Explanation& e : explanations())
        if (e.figure == key)
            return &e;
    return nullptr;
}

void PlanDocument::edit(const Plan& plan, const QString& description, int mergeId)
{
    if (plan == m_plan)
        return;
    m_undoStack->push(new PlanEditCommand(this, m_plan, plan, description, mergeId));
}

void PlanDocument::setPlan(const Plan& plan)
{
    if (plan == m_plan)
        return;
    m_plan = plan;
    recompute();
    emit planChanged();
}

void PlanDocument::reset(const Plan& plan, const QString& filePath)
{
    m_undoStack->clear();
    const bool changed = !(plan == m_plan);
    m_plan = plan;
    setFilePath(filePath);
    recompute();
    m_undoStack->setClean();
    const bool hadPins = !m_pins.empty();
    m_pins.clear(); // a new or opened plan starts unpinned (MainWindow restores saved pins)
    m_pinsModified = false;
    if (changed)
        emit planChanged();
    emit modifiedChanged(false);
    if (hadPins)
        emit pinsChanged();
}

bool PlanDocument::pinCurrent()
{
    if (!isValid())
        return false;
    m_pins.push_back({ QString::fromStdString(m_plan.name), m_plan, m_results.estimate });
    m_pinsModified = true; // pins are saved with the plan: closing must offer to save them
    emit pinsChanged();
    emit modifiedChanged(true);
    return true;
}

void PlanDocument::setPins(std::vector<PinnedPlan> pins)
{
    m_pins = std::move(pins);
    m_pinsModified = false; // as read from disk, or none
    emit pinsChanged();
    emit modifiedChanged(isModified());
}

void PlanDocument::clearPins()
{
    if (m_pins.empty())
        return;
    m_pins.clear();
    m_pinsModified = true;
    emit pinsChanged();
    emit modifiedChanged(true);
}

void PlanDocument::setFilePath(const QString& path)
{
    if (path == m_filePath)
        return;
    m_filePath = path;
    emit filePathChanged(path);
}

bool PlanDocument::isModified() const
{
    return !m_undoStack->isClean() || m_pinsModified;
}

void PlanDocument::markSaved()
{
    m_undoStack->setClean();
    if (m_pinsModified) {
        m_pinsModified = false;
        emit modifiedChanged(isModified());
    }
}

ByteUnits PlanDocument::units() const
{
    return m_settings ? m_settings->units() : ByteUnits::GB;
}

void PlanDocument::recompute()
{
    m_explanations.reset();
    QString message;
    if (const std::optional<Error> error = validatePlan(m_plan))
        message = QString::fromStdString(error->toString());
    const bool validityChanged = message != m_validationMessage;
    m_validationMessage = message;
    if (validityChanged)
        emit validationChanged(message);
    if (!message.isEmpty())
        return; // keep drawing the last valid figures
    m_resultsPlan = m_plan;
    m_results = computeTrainingResults(m_plan);
    if (m_results.workPending())
        startFitSearch();
    emit resultsChanged();
}

} // namespace envelope::ui
