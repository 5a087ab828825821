// The "Find a plan" tab driven like a user: it searches when first shown, a Find with another
// goal fills the table with the core's candidates, Cancel stops a running search, and a
// double-clicked candidate becomes the plan in one undo step that Undo reverts.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableWidget>
#include <QUndoStack>
#include <QValueAxis>

#include "charts/paretochart.h"
#include "document/plandocument.h"
#include "document/settings.h"
#include "panels/planpanel.h"
#include "plan/planio.h"
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

// GRPO on Qwen2.5-7B with a ZeRO-3 trainer on one 8-GPU node (seed 000's shape).
const char* kRlPlan = R"({"format": "envelope.plan", "version": 1, "model": "qwen2.5-7b",
  "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8}, "training": {"zero_stage": 3},
  "rl": {"algorithm": "grpo", "trainer_gpus": 4, "reference_gpus": 1, "rollout_gpus": 3}})";

// Llama-3 8B on 4 H100s under a Poisson workload with an SLO (issue 27's goodput goal).
const char* kGoodputPlan = R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b",
  "gpu": "h100-sxm", "cluster": {"gpus": 4, "gpus_per_node": 8},
  "serving": {"context": 8192, "workload": {"input_tokens": 2000, "output_tokens": 200,
              "request_rate": 8}, "slo": {"ttft_p90_s": 0.4, "tpot_p90_s": 0.02}}})";

// Llama-3 8B on 8 H100s, 6,000-token prompts under a 12 ms TPOT: served best disaggregated
// (SearchServingGoodput.LongPromptsUnderATightTpotAreServedDisaggregated).
const char* kXpydPlan = R"({"format": "envelope.plan", "version": 1, "model": "llama-3-8b",
  "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8},
  "serving": {"context": 8192, "concurrency": 16, "workload": {"input_tokens": 6000,
              "output_tokens": 300, "request_rate": 8}, "slo": {"ttft_p90_s": 2, "tpot_p90_s": 0.012}}})";

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

    void theStatusSaysWhyTheBestHasHeadroom()
    {
        // Megatron-Bridge's Qwen3-30B-A3B on 16 H100s at 8192 tokens a sequence: the fastest
        // layout holds 76.2 GB under a 77.0 GB line; the planner answers a roomier one and the
        // status line says why.
        QFile file(QStringLiteral(ENVELOPE_TEST_DATA_DIR
            "/validation/throughput/mbridge2511-h100-qwen3-30b-a3b-16gpu-fp8-cs.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const Expected<Plan> plan = readPlan(file.readAll().toStdString(), m_doc->presets());
        QVERIFY(plan.ok());
        Plan longer = *plan;
        longer.training.seqLen = 8192;
        m_doc->edit(longer, QStringLiteral("test"));
        m_panel->goalCombo()->setCurrentIndex(
            m_panel->goalCombo()->findData(int(SearchGoal::MaxThroughput)));
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        const SearchResult& shown = m_panel->result();
        QVERIFY(!shown.headroomNote.empty());
        QVERIFY(m_panel->statusLabel()->text().contains(
            QString::fromStdString(shown.headroomNote)));
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

    // Serving: choose the kind and goal like a user, search, cancel one, apply a candidate as
    // one undo step and undo it.
    void servingSearchCancelApplyAndUndo()
    {
        m_panel->kindCombo()->setCurrentIndex(
            m_panel->kindCombo()->findData(int(SearchKind::Serving)));
        QCOMPARE(SearchGoal(m_panel->goalCombo()->currentData().toInt()),
            SearchGoal::ServingMaxThroughput);
        m_panel->goalCombo()->setCurrentIndex(
            m_panel->goalCombo()->findData(int(SearchGoal::ServingMinGpus)));

        // A cancelled search says so and keeps the window usable.
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        m_panel->startSearch();
        m_panel->cancelSearch();
        QVERIFY(finished.wait(20000));
        QCOMPARE(m_panel->resultKind(), SearchKind::Serving);
        QVERIFY(m_panel->findButton()->isEnabled());

        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        SearchOptions options;
        options.goal = SearchGoal::ServingMinGpus;
        options.top = 200;
        const ServingSearchResult expected = searchServing(m_doc->plan(), options);
        const ServingSearchResult& shown = m_panel->servingResult();
        QVERIFY(!shown.cancelled);
        QCOMPARE(shown.feasible, expected.feasible);
        QCOMPARE(m_panel->table()->rowCount(), int(expected.candidates.size()));
        QVERIFY(m_panel->table()->rowCount() > 0);
        QCOMPARE(m_panel->table()->item(0, 1)->text(),
            QString::number(expected.candidates.front().gpus));
        QCOMPARE(m_panel->table()->horizontalHeaderItem(3)->text(), QStringLiteral("Replicas"));

        const Plan before = m_doc->plan();
        const int steps = m_doc->undoStack()->count();
        const QRect cell = m_panel->table()->visualItemRect(m_panel->table()->item(0, 1));
        QTest::mouseClick(m_panel->table()->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(m_panel->table()->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(m_doc->undoStack()->count(), steps + 1);
        QVERIFY(m_doc->plan() == applyServingLayout(before, expected.candidates.front().layout));
        QVERIFY(m_doc->isValid());
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan() == before);
    }

    // Serving latency limits typed in the tab reach the search: an ITL limit no layout meets
    // leaves nothing feasible, exactly as the core's search with that limit says.
    void servingItlLimitFromTheTab()
    {
        m_panel->kindCombo()->setCurrentIndex(
            m_panel->kindCombo()->findData(int(SearchKind::Serving)));
        QVERIFY(m_panel->maxItlSpin()->isEnabled());
        uitest::typeInto(m_panel->maxItlSpin(), QStringLiteral("1"));
        QCOMPARE(m_panel->maxItlSpin()->value(), 1.0);
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        SearchOptions options;
        options.goal = SearchGoal::ServingMaxThroughput;
        options.top = 200;
        options.maxItlS = 0.001;
        const ServingSearchResult expected = searchServing(m_doc->plan(), options);
        QCOMPARE(m_panel->servingResult().feasible, expected.feasible);
        QVERIFY(m_panel->servingResult().feasible == 0);
        QCOMPARE(m_panel->table()->rowCount(), 0);
        // Training has no latency: the fields are disabled there.
        m_panel->kindCombo()->setCurrentIndex(
            m_panel->kindCombo()->findData(int(SearchKind::Training)));
        QVERIFY(!m_panel->maxItlSpin()->isEnabled());
    }

    // Serving, "Most goodput under the plan's SLO": the table ranks by goodput, with the
    // capacity beside it, in the core's order.
    void servingGoodputGoalShowsGoodputAndCapacity()
    {
        Expected<Plan> plan = readPlan(kGoodputPlan, uitest::presets());
        QVERIFY(plan.ok());
        m_doc->reset(*plan);
        m_panel->kindCombo()->setCurrentIndex(
            m_panel->kindCombo()->findData(int(SearchKind::Serving)));
        const int goal = m_panel->goalCombo()->findData(int(SearchGoal::ServingMaxGoodput));
        QVERIFY(goal >= 0);
        m_panel->goalCombo()->setCurrentIndex(goal);
        QVERIFY(!m_panel->maxItlSpin()->isEnabled()); // the SLO, not a single-request limit
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        const ServingSearchResult& shown = m_panel->servingResult();
        QVERIFY(!shown.candidates.empty());
        QTableWidget* table = m_panel->table();
        QCOMPARE(table->columnCount(), 13);
        QCOMPARE(table->horizontalHeaderItem(11)->text(), QStringLiteral("Goodput req/s"));
        QCOMPARE(table->horizontalHeaderItem(12)->text(), QStringLiteral("Capacity req/s"));
        QCOMPARE(table->item(0, 11)->text(),
            QString::number(*shown.candidates.front().goodputRps, 'g', 3));
        QVERIFY(table->item(0, 0)->toolTip().contains(QStringLiteral("goodput")));
        // Back to most tokens/s: the goodput columns go.
        m_panel->goalCombo()->setCurrentIndex(
            m_panel->goalCombo()->findData(int(SearchGoal::ServingMaxThroughput)));
        QVERIFY(m_panel->maxItlSpin()->isEnabled());
        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        QCOMPARE(table->columnCount(), 11);
    }

    // Serving under an SLO with long prompts: the goal defaults to goodput, the best layout is
    // an xPyD split whose pools the table names, and applying it sets serving.disaggregation.
    void servingGoodputOffersDisaggregatedPools()
    {
        Expected<Plan> plan = readPlan(kXpydPlan, uitest::presets());
        QVERIFY(plan.ok());
        m_doc->reset(*plan);
        m_panel->kindCombo()->setCurrentIndex(
            m_panel->kindCombo()->findData(int(SearchKind::Training)));
        m_panel->kindCombo()->setCurrentIndex(
            m_panel->kindCombo()->findData(int(SearchKind::Serving)));
        QCOMPARE(SearchGoal(m_panel->goalCombo()->currentData().toInt()),
            SearchGoal::ServingMaxGoodput);
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        const ServingSearchResult& shown = m_panel->servingResult();
        QVERIFY(!shown.candidates.empty());
        const int index = m_panel->table()->item(0, 0)->data(Qt::UserRole).toInt() - 1;
        const ServingCandidate& best = shown.candidates[size_t(index)];
        QVERIFY(best.layout.disaggregation.has_value());
        const ServingDisaggregation& d = *best.layout.disaggregation;
        QCOMPARE(m_panel->table()->item(0, 3)->text(),
            QStringLiteral("%1P + %2D").arg(d.prefill.workers).arg(d.decode.workers));
        QVERIFY(m_panel->table()->item(0, 2)->text().startsWith(QStringLiteral("P ")));

        const Plan before = m_doc->plan();
        m_panel->table()->selectRow(0);
        QTest::mouseClick(m_panel->applyButton(), Qt::LeftButton);
        QVERIFY(m_doc->plan().serving.disaggregation == best.layout.disaggregation);
        QVERIFY(m_doc->isValid());
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan() == before);
    }

    // RL: the pools the core ranks first become the plan's in one undo step.
    void rlSearchAppliesPoolsAsOneUndoStep()
    {
        Expected<Plan> rl = readPlan(kRlPlan, uitest::presets());
        QVERIFY(rl.ok());
        m_doc->reset(*rl);
        m_panel->kindCombo()->setCurrentIndex(m_panel->kindCombo()->findData(int(SearchKind::Rl)));
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        QTest::mouseClick(m_panel->findButton(), Qt::LeftButton);
        QVERIFY(finished.wait(20000));
        QCOMPARE(m_panel->resultKind(), SearchKind::Rl);
        const RlSearchResult& shown = m_panel->rlResult();
        QVERIFY(!shown.candidates.empty());
        QCOMPARE(m_panel->table()->horizontalHeaderItem(2)->text(), QStringLiteral("Placement"));
        const Plan before = m_doc->plan();
        m_panel->table()->selectRow(0);
        QTest::mouseClick(m_panel->applyButton(), Qt::LeftButton);
        const int index = m_panel->table()->item(0, 0)->data(Qt::UserRole).toInt() - 1;
        QVERIFY(m_doc->plan() == applyRlLayout(before, shown.candidates[size_t(index)].layout));
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan() == before);
    }

    // Results stream while a long search runs: partial batches reach the table before the end.
    void partialResultsStreamIntoTheTable()
    {
        Expected<Plan> large = readPlan(kLargePlan, uitest::presets());
        QVERIFY(large.ok());
        m_doc->reset(*large);
        m_panel->goalCombo()->setCurrentIndex(
            m_panel->goalCombo()->findData(int(SearchGoal::MaxThroughput)));
        const int before = m_panel->batchesShown();
        QSignalSpy finished(m_panel.get(), &PlanPanel::searchFinished);
        m_panel->startSearch();
        QVERIFY(finished.wait(20000));
        // The first batch is posted as soon as the top list changes (no wait for the first).
        QVERIFY(m_panel->batchesShown() > before);
        QVERIFY(m_panel->table()->rowCount() > 0);
    }

    // A cost axis in the tens of millions reads in millions of USD (issue 23: it printed
    // "2e+07"): the points are plotted in that unit and the title says so.
    void aCostAxisOfMillionsReadsInMillions()
    {
        ParetoChart chart;
        SearchResult result;
        result.paretoX = "cost";
        for (const double cost : { 8.5e6, 2.0e7 }) {
            Candidate c;
            c.cost = cost;
            c.tokensPerS = cost / 1e3;
            result.pareto.push_back(c);
        }
        chart.setResult(result, ByteUnits::GB);
        QCOMPARE(chart.xAxis()->titleText(), QStringLiteral("cost of the run (million USD)"));
        QCOMPARE(chart.frontSeries()->at(1).x(), 20.0);
        QVERIFY(chart.xAxis()->max() < 100);
        result.pareto.resize(1);
        result.pareto[0].cost = 9000;
        chart.setResult(result, ByteUnits::GB);
        QCOMPARE(chart.xAxis()->titleText(), QStringLiteral("cost of the run (USD)"));
    }
};

ENVELOPE_UI_TEST_MAIN(TestPlanPanel)
#include "test_planpanel.moc"
