// The "Find a plan" tab driven like a user: it searches when first shown, a Find with another
// goal fills the table with the core's candidates, Cancel stops a running search, and a
// double-clicked candidate becomes the plan in one undo step that Undo reverts.
#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableWidget>
#include <QUndoStack>

#include "charts/paretochart.h"
#include "document/plandocument.h"
#include "document/settings.h"
#include "panels/planpanel.h"
#include "search/search.h"
#include "uitestutil.h"

using namespace envelope;
using namespace envelope::ui;

namespace {

// Llama 3.1 405B on 16,384 H100s: the largest search the issue names (tens of ms).
const char* kLargePlan = R"({"format": "envelope.plan", "version": 1,
  "model": "llama-3.1-405b", "gpu": "h100-sxm", "cluster": {"gpus": 16384, "gpus_per_node": 8},
  "training": {"zero_stage": 1, "tp": 8, "pp": 16, "micro_batch": 1, "grad_accum": 16,
               "seq_len": 8192}})";

bool waitForSearch(PlanPanel& panel)
{
    if (!panel.isSearching())
        return true;
    QSignalSpy finished(&panel, &PlanPanel::searchFinished);
    return finished.wait(20000);
}

} // namespace

class TestPlanPanel : public uitest::PanelTest<PlanPanel> {
    Q_OBJECT
private slots:
    void init()
    {
        QVERIFY(openPanel());
        QVERIFY(waitForSearch(*m_panel)); // the first show searches
    }
    void cleanup() { closePanel(); }

    void findFillsTheTableWithTheCoresCandidates()
    {
        m_panel->goalCombo()->setCurrentIndex(
            m_panel->goalCombo()->findData(int(SearchGoal::MinGpus)));
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));

        SearchOptions options;
        options.goal = SearchGoal::MinGpus;
        options.top = 200;
        const SearchResult expected = search(m_doc->plan(), options);
        const SearchResult& shown = m_panel->result();
        QCOMPARE(shown.feasible, expected.feasible);
        QCOMPARE(m_panel->table()->rowCount(), int(expected.candidates.size()));
        QVERIFY(m_panel->table()->rowCount() > 0);
        QVERIFY(shown.candidates.front().layout == expected.candidates.front().layout);
        QCOMPARE(m_panel->table()->item(0, 1)->text(),
            QString::number(expected.candidates.front().layout.gpus));
        QVERIFY(m_panel->statusLabel()->text().startsWith(QStringLiteral("Searched ")));
        QCOMPARE(m_panel->chart()->frontSeries()->count(), int(expected.pareto.size()));
        QVERIFY(!m_panel->progressBar()->isVisible());
        QVERIFY(m_panel->findButton()->isEnabled());
    }

    void cancelStopsARunningSearch()
    {
        Expected<Plan> large = readPlan(kLargePlan, uitest::presets());
        QVERIFY(large.ok());
        m_doc->reset(*large);
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        m_panel->startSearch();
        QVERIFY(m_panel->isSearching());
        QVERIFY(!m_panel->findButton()->isEnabled());
        m_panel->cancelSearch();
        QVERIFY(finished.wait(20000));
        QVERIFY(m_panel->result().cancelled);
        QVERIFY(m_panel->statusLabel()->text().startsWith(QStringLiteral("Cancelled.")));
        QVERIFY(!m_panel->isSearching());
        QVERIFY(m_panel->findButton()->isEnabled());
    }

    void doubleClickAppliesACandidateAsOneUndoStep()
    {
        const Plan before = m_doc->plan();
        QTableWidget* table = m_panel->table();
        // The first candidate whose layout differs from the plan.
        int row = -1;
        for (int r = 0; r < table->rowCount() && row < 0; ++r) {
            const int index = table->item(r, 0)->data(Qt::UserRole).toInt() - 1;
            if (!layoutChanges(before, m_panel->result().candidates[size_t(index)].layout).empty())
                row = r;
        }
        QVERIFY(row >= 0);
        const Candidate chosen
            = m_panel->result()
                  .candidates[size_t(table->item(row, 0)->data(Qt::UserRole).toInt() - 1)];
        const int steps = m_doc->undoStack()->count();
        const QRect cell = table->visualItemRect(table->item(row, 1));
        // A user's double-click: press and release, then the double-click event.
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(m_doc->undoStack()->count(), steps + 1);
        QVERIFY(m_doc->plan() == applyLayout(before, chosen.layout));
        QVERIFY(m_doc->isValid());
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan() == before);
    }
};

ENVELOPE_UI_TEST_MAIN(TestPlanPanel)
#include "test_planpanel.moc"
