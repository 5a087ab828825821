// "Find a plan": runs the core's planner (search/search.h) on a worker thread for a goal and
// constraints, shows the candidates in a sortable table and the Pareto front in a chart, and
// applies a chosen candidate to the document as one undo step. The window never waits on a
// search: after 100 ms a progress bar and Cancel appear.
#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include <memory>

#include "search/search.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
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
    bool isSearching() const { return m_thread != nullptr; }
    // Applies a candidate's layout to the document's current plan: one undo step.
    void applyCandidate(const Candidate& candidate);

    const SearchResult& result() const { return m_result; }
    QComboBox* goalCombo() const { return m_goal; }
    QSpinBox* maxGpusSpin() const { return m_maxGpus; }
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

private:
    struct Job;
    void finish(const std::shared_ptr<Job>& job);
    void fillTable();
    void showProgress();
    QString describe(const Candidate& c) const;

    PlanDocument* m_document;
    QComboBox* m_goal;
    QSpinBox* m_maxGpus;
    QSpinBox* m_gpusPerNode;
    QCheckBox* m_offload;
    QPushButton* m_find;
    QPushButton* m_cancel;
    QPushButton* m_apply;
    QProgressBar* m_progress;
    QLabel* m_status;
    QTableWidget* m_table;
    ParetoChart* m_chart;
    QTimer* m_progressTimer;
    QElapsedTimer m_clock;
    QThread* m_thread = nullptr;
    std::shared_ptr<Job> m_job;
    Plan m_searchedPlan;
    SearchResult m_result;
    bool m_searchedOnce = false;
};

} // namespace envelope::ui
