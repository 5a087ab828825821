// "Find a plan": runs the core's planner (search/search.h) on a worker thread for a kind
// (training, serving, RL), a goal and constraints; the best candidates so far stream into a
// sortable table while it runs (batches through queued calls, at most every 100 ms), the
// training Pareto front is charted, and a chosen candidate is applied to the document as one
// undo step. The window never waits on a search: after 100 ms a progress bar and Cancel appear.
#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

#include "search/search.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTableWidget;
class QThread;
class QTimer;
QT_END_NAMESPACE

namespace envelope::ui {

class ParetoChart;
class PlanDocument;

class PlanPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlanPanel(PlanDocument* document, QWidget* parent = nullptr);
    ~PlanPanel() override;

    // Starts a search of the document's plan with the chosen goal and constraints (a running
    // one is cancelled and its answer dropped).
    void startSearch();
    void cancelSearch();
    // The kind of search the user is asking about: the tab they came from (Serving, RL or
    // Training). Sets the Kind box unless a search runs; the first automatic search then
    // searches that kind, so an RL or serving question does not start a training search.
    void setPreferredKind(SearchKind kind);
    bool isSearching() const { return m_thread != nullptr; }
    // Applies a candidate's layout to the document's current plan: one undo step.
    void applyCandidate(const Candidate& candidate);
    void applyCandidate(const ServingCandidate& candidate);
    void applyCandidate(const RlCandidate& candidate);

    // The kind the last finished search searched, and its result (the others are empty).
    SearchKind resultKind() const { return m_resultKind; }
    const SearchResult& result() const { return m_result; }
    const ServingSearchResult& servingResult() const { return m_servingResult; }
    const RlSearchResult& rlResult() const { return m_rlResult; }
    // Partial results shown while searches ran (streamed batches), for tests and diagnostics.
    int batchesShown() const { return m_batchesShown; }
    QComboBox* kindCombo() const { return m_kind; }
    QComboBox* goalCombo() const { return m_goal; }
    QSpinBox* maxGpusSpin() const { return m_maxGpus; }
    QDoubleSpinBox* maxItlSpin() const { return m_maxItl; }
    QTableWidget* table() const { return m_table; }
    QProgressBar* progressBar() const { return m_progress; }
    QPushButton* findButton() const { return m_find; }
    QPushButton* cancelButton() const { return m_cancel; }
    QPushButton* applyButton() const { return m_apply; }
    QLabel* statusLabel() const { return m_status; }
    ParetoChart* chart() const { return m_chart; }

signals:
    void searchFinished();

protected:
    // The first time the tab is shown it searches with the default goal (milliseconds).
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    struct Job;
    void finish(const std::shared_ptr<Job>& job);
    void fillTable();
    // The finished search's table and chart; while the tab is hidden (a user dragging a
    // Training slider as a search ends) they wait for showEvent instead.
    void showResult();
    // Widens the table to what its columns need (up to three quarters of the tab) unless the
    // user has moved the splitter, so tokens/s, step and cost are not clipped at 1280 px.
    void fitTableWidth();
    void showProgress();
    void fillGoals();
    void enableLatencyLimits(); // Max TTFT / Max ITL: the serving goals that apply them
    void applyRow(int row);
    // Posts a batch of partial results from the worker to the GUI thread (queued).
    template <class C> void streamTo(Job* job, std::function<void(const std::vector<C>&)>& sink);
    QString statusText(
        const SearchTally& tally, const QString& best, const std::string& none) const;

    PlanDocument* m_document;
    QComboBox* m_kind;
    QComboBox* m_goal;
    QSpinBox* m_maxGpus;
    QSpinBox* m_gpusPerNode;
    QDoubleSpinBox* m_maxTtft;
    QDoubleSpinBox* m_maxItl;
    QCheckBox* m_offload;
    QPushButton* m_find;
    QPushButton* m_cancel;
    QPushButton* m_apply;
    QProgressBar* m_progress;
    QLabel* m_status;
    QTableWidget* m_table;
    ParetoChart* m_chart;
    QSplitter* m_split = nullptr;
    bool m_splitMoved = false; // the user dragged the splitter: keep their sizes
    QTimer* m_progressTimer;
    QElapsedTimer m_clock;
    QThread* m_thread = nullptr;
    std::shared_ptr<Job> m_job;
    Plan m_searchedPlan;
    SearchKind m_resultKind = SearchKind::Training;
    SearchResult m_result;
    ServingSearchResult m_servingResult;
    RlSearchResult m_rlResult;
    int m_batchesShown = 0;
    bool m_resultStale = false; // a search finished while the tab was hidden: showResult when shown
    bool m_searchedOnce = false;
};

} // namespace envelope::ui
