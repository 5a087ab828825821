// The training panel driven like a user: typing into spin boxes, keys on sliders, picking combo
// items. After each interaction the bars are the core's estimate(plan) of the edited plan.
#include <QAbstractItemView>
#include <QAbstractSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QStandardItemModel>
#include <QDoubleSpinBox>
#include <QGraphicsEllipseItem>
#include <QHelpEvent>
#include <QLabel>
#include <QLineSeries>
#include <QListView>
#include <QSlider>
#include <QSpinBox>
#include <QToolButton>
#include <QToolTip>
#include <QUndoStack>
#include <QValueAxis>

#include "charts/memorybarchart.h"
#include "charts/memoryview.h"
#include "charts/plotgrid.h"
#include "charts/sweepchart.h"
#include "controls/choicecombo.h"
#include "controls/memorysavercontrols.h"
#include "controls/modelcontrols.h"
#include "controls/parallelismcontrols.h"
#include "controls/sliderspin.h"
#include "document/plandocument.h"
#include "document/settings.h"
#include "estimate/estimate.h"
#include "panels/detailspane.h"
#include "panels/summarystrip.h"
#include "controls/hardwarecontrols.h"
#include "panels/trainingpanel.h"
#include "uitestutil.h"
#include "widgets/elidingdelegate.h"
#include "widgets/flowlayout.h"
#include "widgets/valuelabel.h"

using namespace envelope;
using namespace envelope::ui;
using envelope::uitest::typeInto;

namespace {

// The summary badge for each of the core's verdicts.
QString badgeFor(Verdict v)
{
    switch (v) {
    case Verdict::Fits:
        return QStringLiteral("✔ FITS");
    case Verdict::Tight:
        return QStringLiteral("⚠ TIGHT");
    case Verdict::Over:
        break;
    }
    return QStringLiteral("✘ DOES NOT FIT");
}

// Every bar of the plan's own column equals the core's figure for the same plan.
void verifyBarsMatchCore(const TrainingPanel& panel, const Plan& plan, ByteUnits units)
{
    const TrainingMemory m = estimate(plan).training;
    for (Tenant t : kTenants) {
        const double drawn = panel.memoryChart()->barSet(t)->at(0);
        const double expected = toDisplayUnits(tenantBytes(m.perGpu, t), units);
        if (std::abs(drawn - expected) > 1e-9 * std::max(1.0, expected))
            QFAIL(qPrintable(QStringLiteral("%1: drawn %2, core %3")
                                 .arg(tenantName(t))
                                 .arg(drawn)
                                 .arg(expected)));
    }
}

} // namespace

class TestTrainingPanel : public uitest::PanelTest<TrainingPanel> {
    Q_OBJECT
private slots:
    void init() { QVERIFY(openPanel()); }
    void cleanup() { closePanel(); }

    void theGpuCountBoxAcceptsWhatAPlanDoes()
    {
        // Issue 26 item 13: the box allowed 1,048,576 GPUs where a plan allows 1,000,000.
        QSpinBox* gpus = m_panel->hardwareControls()->gpuCountControl();
        QCOMPARE(gpus->maximum(), 1'000'000);
        typeInto(gpus, QStringLiteral("1000000"));
        QCOMPARE(m_doc->plan().cluster.gpus, 1'000'000);
        QVERIFY(m_doc->isValid());
    }

    // Issue 26 item 13: the context and micro-batch boxes showed a clamped 1,048,576 and 512
    // for a plan of 1e8 tokens and 1e6 sequences while the figures used the plan's values.
    void theContextAndMicroBatchBoxesShowThePlansValues()
    {
        Plan plan = m_doc->plan();
        plan.training.seqLen = 100'000'000;
        plan.training.microBatch = 1'000'000;
        m_doc->edit(plan, QStringLiteral("huge"));
        ModelControls* model = m_panel->modelControls();
        QCOMPARE(model->contextControl()->value(), 100'000'000.0);
        QCOMPARE(model->microBatchControl()->value(), 1'000'000.0);
        // The sliders rest at their ends; typing beyond them still edits the plan.
        QCOMPARE(model->contextControl()->slider()->value(), model->contextControl()->slider()->maximum());
        typeInto(model->microBatchControl()->spinBox(), QStringLiteral("4096"));
        QCOMPARE(m_doc->plan().training.microBatch, 4096);
    }

    void barsStartAsTheCoreEstimate()
    {
        verifyBarsMatchCore(*m_panel, m_doc->plan(), ByteUnits::GB);
        // Column 0 is the plan, then ZeRO-0..3; the plan's own stage (1) is outlined.
        QCOMPARE(m_panel->memoryChart()->columnCount(), 5);
        QCOMPARE(m_panel->memoryChart()->highlightedColumn(), 2);
    }

    void typingAContextUpdatesPlanAndBars()
    {
        const double before = m_panel->memoryChart()->barSet(Tenant::Activations)->at(0);
        typeInto(m_panel->modelControls()->contextControl()->spinBox(), QStringLiteral("2048"));
        QCOMPARE(m_doc->plan().training.seqLen, 2048);
        verifyBarsMatchCore(*m_panel, m_doc->plan(), ByteUnits::GB);
        // Half the tokens: activations shrink (Korthikanti et al. 2022: linear in s with flash).
        QVERIFY(m_panel->memoryChart()->barSet(Tenant::Activations)->at(0) < before);
    }

    void aContextBeyondTheModelsPositionsShowsTheCoreWarning()
    {
        // Issue 11 item 9: the CLI warned, the app drew it green. Llama-2 7B has 4096 positions.
        QVERIFY(m_doc->plan().training.seqLen <= m_doc->plan().model.arch.maxPositions);
        auto* line = m_panel->findChild<QLabel*>(QStringLiteral("warnings"));
        QVERIFY(line);
        QVERIFY2(!line->isVisible(), qPrintable(line->text()));
        typeInto(m_panel->modelControls()->contextControl()->spinBox(), QStringLiteral("32768"));
        QCOMPARE(m_doc->plan().training.seqLen, 32768);
        QVERIFY(line->isVisible());
        QVERIFY2(
            line->text().contains(QStringLiteral("training.seq_len = 32768 exceeds the model's %1 "
                                                 "positions")
                                      .arg(m_doc->plan().model.arch.maxPositions)),
            qPrintable(line->text()));
    }

    void sliderKeysStepMicroBatchByPowersOfTwo()
    {
        QSlider* slider = m_panel->modelControls()->microBatchControl()->slider();
        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_Right); // 2 -> 4
        QCOMPARE(m_doc->plan().training.microBatch, 4);
        QTest::keyClick(slider, Qt::Key_Right); // 4 -> 8
        QCOMPARE(m_doc->plan().training.microBatch, 8);
        verifyBarsMatchCore(*m_panel, m_doc->plan(), ByteUnits::GB);
        // A drag (consecutive moves of one control) is one undo step.
        QCOMPARE(m_doc->undoStack()->count(), 1);
    }

    void pickingZeroStageMovesTheHighlightAndBars()
    {
        QComboBox* zero = m_panel->parallelismControls()->zeroCombo();
        zero->setFocus();
        QTest::keyClick(zero, Qt::Key_Down); // 1 -> 2
        QTest::keyClick(zero, Qt::Key_Down); // 2 -> 3
        QCOMPARE(m_doc->plan().training.zeroStage, 3);
        QCOMPARE(m_panel->memoryChart()->highlightedColumn(), 4);
        verifyBarsMatchCore(*m_panel, m_doc->plan(), ByteUnits::GB);
        // ZeRO-3 shards weights over the 8 data-parallel GPUs: 2 B x 6.74e9 / 8 = 1.68 GB.
        QVERIFY(std::abs(m_panel->memoryChart()->barSet(Tenant::Weights)->at(0) - 1.685) < 0.01);
    }

    void undoRestoresThePreviousBars()
    {
        const double before = m_panel->memoryChart()->barSet(Tenant::Optimizer)->at(0);
        QCheckBox* offload = m_panel->memorySaverControls()->offloadOptimizerCheck();
        QTest::mouseClick(offload, Qt::LeftButton, {}, QPoint(8, offload->height() / 2));
        QVERIFY(m_doc->plan().training.offloadOptimizer);
        QVERIFY(m_panel->memoryChart()->barSet(Tenant::Optimizer)->at(0) < before);
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().training.offloadOptimizer);
        QCOMPARE(m_panel->memoryChart()->barSet(Tenant::Optimizer)->at(0), before);
        QVERIFY(!offload->isChecked());
    }

    // Issue 24's keys in the Memory savers group: the bitsandbytes optimizers are choices (a
    // plan that names one shows it), and the activation-offload switch moves the saved
    // activations off the GPU and enables its layer count; undo brings them back.
    void offloadAndEightBitOptimizerEditThePlan()
    {
        MemorySaverControls* savers = m_panel->memorySaverControls();
        QComboBox* optimizer = savers->optimizerCombo();
        const int eightBit = optimizer->findText(QStringLiteral("adamw-8bit"));
        QVERIFY(eightBit >= 0);
        const double optimizerBefore = m_panel->memoryChart()->barSet(Tenant::Optimizer)->at(0);
        optimizer->setCurrentIndex(eightBit);
        emit optimizer->activated(eightBit);
        QCOMPARE(int(m_doc->plan().training.optimizer), int(OptimizerKind::AdamW8bit));
        // 2 moments of 1 B + a 4 B scale per 256 against bf16 AdamW's 2 x 2 B (the default
        // recipe's moments): about half.
        QVERIFY(m_panel->memoryChart()->barSet(Tenant::Optimizer)->at(0) < 0.6 * optimizerBefore);

        QVERIFY(!savers->activationOffloadLayersSpin()->isEnabled());
        const double activationsBefore = m_panel->memoryChart()->barSet(Tenant::Activations)->at(0);
        QCheckBox* offload = savers->activationOffloadCheck();
        QTest::mouseClick(offload, Qt::LeftButton, {}, QPoint(8, offload->height() / 2));
        QVERIFY(m_doc->plan().training.activationOffload);
        QVERIFY(savers->activationOffloadLayersSpin()->isEnabled());
        QVERIFY(m_panel->memoryChart()->barSet(Tenant::Activations)->at(0) < activationsBefore);
        m_doc->undoStack()->undo();
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().training.activationOffload);
        QCOMPARE(int(m_doc->plan().training.optimizer), int(OptimizerKind::AdamW));
        QCOMPARE(optimizer->currentText(), QStringLiteral("adamw"));
    }

    void modelSizeOffAPresetUsesAStandardShape()
    {
        typeInto(m_panel->modelControls()->sizeControl()->spinBox(), QStringLiteral("13"));
        QCOMPARE(int(m_doc->plan().model.form), int(ModelChoice::Form::Params));
        QCOMPARE(m_doc->plan().model.arch.declaredParams.value_or(0), 13e9);
        QVERIFY2(m_panel->modelControls()->shapeNote()->text().contains(
                     QStringLiteral("standard Llama-like shape"), Qt::CaseInsensitive),
            qPrintable(m_panel->modelControls()->shapeNote()->text()));
        verifyBarsMatchCore(*m_panel, m_doc->plan(), ByteUnits::GB);
    }

    // An MLA model caches a latent, not KV heads (issue 23: it read "128 heads (128 KV)").
    void anMlaModelShowsItsLatentAndExperts()
    {
        Expected<Plan> plan = readPlan(
            R"({"model": "deepseek-v3", "gpu": "h200", "cluster": {"gpus": 64, "gpus_per_node": 8},
                "training": {"tp": 8, "ep": 8, "pp": 1, "zero_stage": 1, "seq_len": 4096}})",
            uitest::presets());
        QVERIFY2(plan.ok(), plan ? "" : plan.error().toString().c_str());
        m_doc->reset(*plan);
        const QString note = m_panel->modelControls()->shapeNote()->text();
        QVERIFY2(note.contains(QStringLiteral("128 heads, MLA latent 512 + 64")), qPrintable(note));
        QVERIFY2(note.contains(QStringLiteral("256 experts top-8")), qPrintable(note));
        QVERIFY2(!note.contains(QStringLiteral("KV)")), qPrintable(note));
        // Its 163,840 positions are marked on the memory-vs-context chart.
        SweepChart* sweep = m_panel->sweepChart();
        sweep->setAxis(SweepChart::Axis::Context);
        QVERIFY(sweep->positionsLine()->isVisible());
        QCOMPARE(sweep->positionsLine()->at(0).x(), std::log2(163840.0));
        QVERIFY(sweep->positionsLine()->name().contains(QStringLiteral("160K")));
        sweep->setAxis(SweepChart::Axis::MicroBatch);
        QVERIFY(!sweep->positionsLine()->isVisible());
    }

    // The model and GPU boxes list the presets under family / vendor headings that cannot be
    // picked; picking a GPU still edits the plan; a plan's own GPU shows by its name (issue 23).
    void presetBoxesAreGroupedAndACustomGpuShowsItsName()
    {
        QComboBox* gpus = m_panel->hardwareControls()->gpuCombo();
        auto* items = qobject_cast<QStandardItemModel*>(gpus->model());
        QVERIFY(items);
        const int nvidia = gpus->findText(QStringLiteral("NVIDIA"));
        const int amd = gpus->findText(QStringLiteral("AMD"));
        QVERIFY(nvidia > 0 && amd > nvidia);
        QVERIFY(!(items->item(nvidia)->flags() & Qt::ItemIsSelectable));
        QVERIFY(!gpus->itemData(nvidia).isValid());
        const int h200 = gpus->findData(QStringLiteral("h200"));
        QVERIFY(h200 > nvidia && h200 < amd);
        QCOMPARE(gpus->itemText(h200), QStringLiteral("H200 SXM 141GB"));
        const int mi300x = gpus->findData(QStringLiteral("mi300x"));
        QVERIFY(mi300x > amd);
        gpus->setCurrentIndex(h200);
        emit gpus->activated(h200);
        QCOMPARE(m_doc->plan().gpu.presetId, std::string("h200"));

        QComboBox* models = m_panel->modelControls()->presetCombo();
        const int llama = models->findText(QStringLiteral("Llama"));
        const int mistral = models->findText(QStringLiteral("Mistral"));
        QVERIFY(llama > 0 && mistral > 0);
        // Mixtral sits under Mistral, Llama-3.1 70B under Llama (whatever the presets' order).
        const int mixtral = models->findData(QStringLiteral("mixtral-8x7b"));
        QVERIFY(mixtral > mistral);
        const auto groupEnd = [&](int heading) {
            int i = heading + 1;
            while (i < models->count() && models->itemData(i).isValid())
                ++i;
            return i;
        };
        const int llama31 = models->findData(QStringLiteral("llama-3.1-70b"));
        QVERIFY(llama31 > llama && llama31 < groupEnd(llama));
        QVERIFY(mixtral < groupEnd(mistral));

        Plan custom = m_doc->plan();
        custom.gpu.presetId.clear();
        custom.gpu.gpu.name = "Lab GPU 96GB";
        m_doc->reset(custom);
        QCOMPARE(gpus->currentIndex(), 0);
        QCOMPARE(gpus->currentText(), QStringLiteral("Custom: Lab GPU 96GB"));
    }

    // The context slider steps by powers of two and 1.5 x between (issue 23: a short drag no
    // longer leaps from 8K to 1M): 8,192 -> 12,288 -> 16,384 one step at a time, an octave a page.
    void theContextSliderStepsByHalfOctaves()
    {
        typeInto(m_panel->modelControls()->contextControl()->spinBox(), QStringLiteral("8192"));
        QCOMPARE(m_doc->plan().training.seqLen, 8192);
        QSlider* slider = m_panel->modelControls()->contextControl()->slider();
        QCOMPARE(slider->maximum() - slider->minimum(), 2 * (20 - 8)); // 256 .. 1,048,576
        slider->triggerAction(QAbstractSlider::SliderSingleStepAdd);
        QCOMPARE(m_doc->plan().training.seqLen, 12288);
        slider->triggerAction(QAbstractSlider::SliderSingleStepAdd);
        QCOMPARE(m_doc->plan().training.seqLen, 16384);
        slider->triggerAction(QAbstractSlider::SliderPageStepSub);
        QCOMPARE(m_doc->plan().training.seqLen, 8192);
        slider->triggerAction(QAbstractSlider::SliderSingleStepSub);
        QCOMPARE(m_doc->plan().training.seqLen, 6144);
        // A typed length between the steps rests the slider on the nearest one.
        typeInto(m_panel->modelControls()->contextControl()->spinBox(), QStringLiteral("11000"));
        QCOMPARE(m_doc->plan().training.seqLen, 11000);
        QCOMPARE(slider->value(), 2 * 13 + 1); // 12,288: log2 11,000 = 13.43, nearer 13.58 than 13
        typeInto(m_panel->modelControls()->contextControl()->spinBox(), QStringLiteral("10000"));
        QCOMPARE(slider->value(), 2 * 13); // 8,192: log2 10,000 = 13.29, nearer 13 than 13.58
    }

    // Typing in the open model list keeps the choices that contain the text anywhere (not only
    // at the start), hides the headings left empty, and Enter picks the first (issue 23).
    void typingInAnOpenBoxFiltersByContainedText()
    {
        auto* models = qobject_cast<ChoiceCombo*>(m_panel->modelControls()->presetCombo());
        QVERIFY(models);
        models->showPopup();
        auto* list = qobject_cast<QListView*>(models->view());
        QVERIFY(list);
        QTest::keyClicks(list, QStringLiteral("32b"));
        QCOMPARE(models->filterText(), QStringLiteral("32b"));
        int shown = 0;
        for (int row = 0; row < models->count(); ++row) {
            if (list->isRowHidden(row) || !models->itemData(row).isValid())
                continue;
            ++shown;
            QVERIFY2(models->itemText(row).contains(QStringLiteral("32B"), Qt::CaseInsensitive),
                qPrintable(models->itemText(row)));
        }
        QVERIFY(shown >= 2); // Qwen2.5 32B and Qwen3 32B
        QVERIFY(list->isRowHidden(models->findText(QStringLiteral("Llama"))));
        QVERIFY(list->isRowHidden(models->findData(QStringLiteral("llama-3-8b"))));
        // Backspace widens the filter again: "32" also keeps nothing else here, "3" keeps Llama 3.
        QTest::keyClick(list, Qt::Key_Backspace);
        QTest::keyClick(list, Qt::Key_Backspace);
        QCOMPARE(models->filterText(), QStringLiteral("3"));
        QVERIFY(!list->isRowHidden(models->findData(QStringLiteral("llama-3-8b"))));
        QTest::keyClicks(list, QStringLiteral("2b"));
        QTest::keyClick(list, Qt::Key_Return);
        QVERIFY(!models->view()->isVisible());
        const std::string picked = m_doc->plan().model.presetId;
        QVERIFY2(picked.find("32b") != std::string::npos, picked.c_str());
        // Closed again: every row shows.
        QVERIFY(models->filterText().isEmpty());
        QVERIFY(!list->isRowHidden(models->findData(QStringLiteral("llama-3-8b"))));
    }

    void invalidParallelismShowsTheMessageAndKeepsTheBars()
    {
        const double before = m_panel->memoryChart()->barSet(Tenant::Weights)->at(0);
        typeInto(m_panel->parallelismControls()->tpControl(), QStringLiteral("3"));
        QCOMPARE(m_doc->plan().training.tp, 3);
        const auto error = validatePlan(m_doc->plan());
        QVERIFY(error.has_value());
        QVERIFY(m_panel->statusLine()->isVisible());
        QVERIFY(m_panel->statusLine()->text().contains(QString::fromStdString(error->message)));
        QCOMPARE(m_panel->memoryChart()->barSet(Tenant::Weights)->at(0), before);
        typeInto(m_panel->parallelismControls()->tpControl(), QStringLiteral("2"));
        QVERIFY(!m_panel->statusLine()->isVisible());
        verifyBarsMatchCore(*m_panel, m_doc->plan(), ByteUnits::GB);
    }

    // A plan's own stage split (training.stage_layers) is for its pipeline depth: the PP box's
    // tooltip shows the split the estimate uses, and another depth drops it (the default split)
    // instead of leaving a plan that validation refuses.
    void changingPpDropsThePlansStageSplit()
    {
        Plan plan = m_doc->plan();
        plan.training.pp = 2;
        plan.training.stageLayers = { 14, plan.model.arch.layers - 14 };
        m_doc->edit(plan, QStringLiteral("split"));
        QSpinBox* pp = m_panel->parallelismControls()->ppControl();
        QVERIFY(pp->toolTip().contains(QStringLiteral("14, %1 (the plan's stage_layers)")
                                           .arg(plan.model.arch.layers - 14)));
        QVERIFY(m_doc->isValid());
        typeInto(pp, QStringLiteral("4"));
        QCOMPARE(m_doc->plan().training.pp, 4);
        QVERIFY(m_doc->plan().training.stageLayers.empty());
        QVERIFY(m_doc->isValid());
        const std::vector<int> split = pipelineStageLayers(m_doc->plan().training,
            m_doc->plan().model.arch.layers);
        QVERIFY(pp->toolTip().contains(QString::fromStdString(stageLayersText(split))));
        QVERIFY(!pp->toolTip().contains(QStringLiteral("stage_layers")));
        // A plan that trains an MTP module says where it runs.
        plan = m_doc->plan();
        plan.training.mtpLayers = 1;
        m_doc->edit(plan, QStringLiteral("mtp"));
        QVERIFY(pp->toolTip().contains(QStringLiteral("The last stage also runs 1 MTP module(s)")));
    }

    void unitsSwitchRedrawsInGiB()
    {
        m_settings->setUnits(ByteUnits::GiB);
        verifyBarsMatchCore(*m_panel, m_doc->plan(), ByteUnits::GiB);
    }

    void recomputeToggleComparesModes()
    {
        m_panel->setCompare(TrainingPanel::Compare::RecomputeModes);
        QCOMPARE(m_panel->memoryChart()->columnCount(), 4); // plan + none, selective, full
        QCOMPARE(m_panel->memoryChart()->highlightedColumn(), 2); // the plan's "selective"
        const auto variants = recomputeVariants(m_doc->plan());
        QCOMPARE(m_panel->memoryChart()->barSet(Tenant::Activations)->at(3),
            toDisplayUnits(variants[2].memory.perGpu.activations, ByteUnits::GB));
    }

    void sweepChartDrawsTheCoreSweepAndThePlansPoint()
    {
        const auto points = sweep(m_doc->plan(), SweepAxis::SeqLen);
        QLineSeries* line = m_panel->sweepChart()->totalSeries();
        QCOMPARE(line->count(), qsizetype(points.size()));
        QCOMPARE(line->at(0).x(), std::log2(256.0));
        QCOMPARE(line->at(0).y(), toDisplayUnits(points[0].totalBytes, ByteUnits::GB));
        SweepChart* chart = m_panel->sweepChart();
        QCOMPARE(chart->currentPoint().x(), 12.0); // log2(4096)
        QCOMPARE(chart->currentPoint().y(),
            toDisplayUnits(estimate(m_doc->plan()).training.perGpu.total(), ByteUnits::GB));
        // The marker sits where the chart draws that point, and follows the context slider.
        const auto markerAt = [chart] {
            return chart->chartView()->chart()->mapToPosition(
                chart->currentPoint(), chart->totalSeries());
        };
        QCOMPARE(chart->currentMarker()->pos(), markerAt());
        const QPointF before = chart->currentMarker()->pos();
        typeInto(m_panel->modelControls()->contextControl()->spinBox(), QStringLiteral("16384"));
        QCOMPARE(chart->currentPoint().x(), 14.0);
        QCOMPARE(chart->currentMarker()->pos(), markerAt());
        QVERIFY(chart->currentMarker()->pos().x() > before.x());
        QCOMPARE(SweepChart::shortCount(1 << 20), QStringLiteral("1M"));
        QCOMPARE(SweepChart::shortCount(4096), QStringLiteral("4K"));
    }

    void summaryNamesTheLargestTenantWithItsColour()
    {
        // Llama-2 7B at micro-batch 2, 4K context, selective recompute, ZeRO-1 on 8 GPUs: the
        // activations are the largest tenant.
        const TrainingMemory m = estimate(m_doc->plan()).training;
        QVERIFY(m.perGpu.activations > m.perGpu.optimizer);
        ValueLabel* label = m_panel->summary()->largestLabel();
        QCOMPARE(label->text(),
            QStringLiteral("Activations ")
                + QString::fromStdString(formatBytes(m.perGpu.activations, ByteUnits::GB)));
        QCOMPARE(label->textFormat(), Qt::PlainText);
        QCOMPARE(label->swatch(), tenantColor(Tenant::Activations));
        label->copy();
        QCOMPARE(QGuiApplication::clipboard()->text(), label->text());
    }

    void theBestSingleChangeWrapsAndAppliesInOneClick()
    {
        // Llama-2 7B at 16K context with ZeRO-0 on 8 GPUs: 200.8 GB per GPU, nowhere near 85.5.
        Plan plan = m_doc->plan();
        plan.training.zeroStage = 0;
        plan.training.seqLen = 16384;
        plan.training.microBatch = 1;
        m_doc->edit(plan, QStringLiteral("test"));
        SummaryStrip* strip = m_panel->summary();
        QCOMPARE(strip->badgeText(), QStringLiteral("✘ DOES NOT FIT"));
        // The edit returned before "what makes it fit" ran: it searches on a worker thread
        // (issue 22), and the strip says so until the answer lands.
        QVERIFY(m_doc->results().suggestionsPending);
        QCOMPARE(strip->suggestionText(), QStringLiteral("searching…"));
        QVERIFY(!strip->applyButton()->isVisible());
        m_doc->waitForFitSearch();
        QVERIFY(!m_doc->results().suggestionsPending);
        const std::vector<FitSuggestion> expected = suggestFits(plan);
        QVERIFY(!expected.empty());
        QVERIFY(strip->suggestionText().startsWith(
            QString::fromStdString(expected.front().description)));
        QVERIFY(strip->applyButton()->isVisible());

        QCOMPARE(strip->flowLayout()->rowCount(), 1);

        // In a narrower window the cards flow onto a second row: no figure is clipped, and the
        // suggestion wraps within its row (every line of it on screen).
        m_panel->resize(1000, 700);
        QApplication::processEvents();
        QCOMPARE(strip->flowLayout()->rowCount(), 2);
        ValueLabel* label = strip->suggestionLabel();
        for (ValueLabel* value : strip->findChildren<ValueLabel*>())
            if (value != label)
                QVERIFY2(value->width() >= value->sizeHint().width(), qPrintable(value->text()));
        QVERIFY(label->wordWrap());
        QVERIFY2(label->heightForWidth(label->width()) <= label->height(),
            qPrintable(QStringLiteral("%1 px of text in %2 px")
                           .arg(label->heightForWidth(label->width()))
                           .arg(label->height())));
        QVERIFY(label->geometry().right() < strip->applyButton()->geometry().left());
        QVERIFY(strip->applyButton()->geometry().right() <= strip->contentsRect().right());

        // One click applies the core's plan for that change; one undo takes it back.
        QTest::mouseClick(strip->applyButton(), Qt::LeftButton);
        QCOMPARE(m_doc->plan(), expected.front().plan);
        QCOMPARE(strip->badgeText(), badgeFor(estimate(expected.front().plan).training.verdict));
        QCOMPARE(
            strip->badgeText() != QStringLiteral("✘ DOES NOT FIT"), expected.front().makesItFit);
        QVERIFY(m_doc->undoStack()->undoText().startsWith(QStringLiteral("Apply ")));
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan(), plan);
        m_doc->waitForFitSearch();
        QVERIFY(strip->applyButton()->isVisible());

        // An invalid edit keeps the last valid suggestion on show but cannot be overwritten by it.
        Plan invalid = plan;
        invalid.training.tp = 3; // 32 heads do not split three ways
        m_doc->edit(invalid, QStringLiteral("test"));
        QVERIFY(!m_doc->isValid());
        QVERIFY(!strip->applyButton()->isEnabled());
    }

    void summaryShowsFitAndTotal()
    {
        const TrainingMemory m = estimate(m_doc->plan()).training;
        // The badge is the core's three-valued verdict; this plan is within HBM.
        QVERIFY(m.verdict != Verdict::Over);
        QCOMPARE(m_panel->summary()->badgeText(), badgeFor(m.verdict));
        QVERIFY(m_panel->summary()->totalText().startsWith(
            QString::fromStdString(formatBytes(m.perGpu.total(), ByteUnits::GB))));
        // Micro-batch 16 at 4K context overflows an 80 GB H100: a best change is offered.
        typeInto(m_panel->modelControls()->microBatchControl()->spinBox(), QStringLiteral("16"));
        QVERIFY(m_panel->summary()->badgeText().contains(QStringLiteral("NOT FIT")));
        m_doc->waitForFitSearch();
        const auto suggestions = suggestFits(m_doc->plan(), ByteUnits::GB);
        QVERIFY(!suggestions.empty());
        // The change the core ranks first; at micro-batch 16 it alone makes the plan fit.
        QVERIFY(suggestions.front().makesItFit);
        QCOMPARE(m_panel->summary()->suggestionText(),
            QString::fromStdString(suggestions.front().description));
    }

    void eachVerdictHasItsOwnBadgeColour()
    {
        // A plan above the usable line but within HBM is "tight": its badge is drawn in the tight
        // colour, not green (the strip used the fits style for every plan within HBM).
        // The fixture's plan sits above its usable line; only the line moves below.
        Plan plan = m_doc->plan();
        const TrainingMemory m = estimate(plan).training;
        const double share = m.perGpu.total() / m.gpuMemoryBytes;
        QVERIFY(share > 0.2 && share < 1);
        plan.training.usableFraction = (share + 1) / 2; // the line above the total: fits
        m_doc->edit(plan, QStringLiteral("test"));
        QCOMPARE(estimate(plan).training.verdict, Verdict::Fits);
        QCOMPARE(m_panel->summary()->badgeText(), QStringLiteral("✔ FITS"));
        const QString fitsStyle = m_panel->summary()->badgeStyleSheet();
        QVERIFY(fitsStyle.contains(fitsColor().name(), Qt::CaseInsensitive));
        plan.training.usableFraction = share - 0.1; // the same bytes above the line: tight
        m_doc->edit(plan, QStringLiteral("test"));
        QCOMPARE(estimate(plan).training.verdict, Verdict::Tight);
        QCOMPARE(m_panel->summary()->badgeText(), QStringLiteral("⚠ TIGHT"));
        const QString tightStyle = m_panel->summary()->badgeStyleSheet();
        QVERIFY(tightStyle.contains(tightColor().name(), Qt::CaseInsensitive));
        QVERIFY(!tightStyle.contains(fitsColor().name(), Qt::CaseInsensitive));
        // The sweep beside the bars draws the same usable line (it drew a fixed 90%).
        QLineSeries* usable = m_panel->sweepChart()->usableLine();
        QVERIFY(usable->count() >= 2);
        QCOMPARE(usable->at(0).y(), plan.training.usableFraction * m.gpuMemoryBytes / 1e9);
        QCOMPARE(usable->name(), QStringLiteral("%1% usable").arg(plan.training.usableFraction * 100, 0, 'f', 0));
        m_doc->undoStack()->undo();
        QCOMPARE(m_panel->summary()->badgeStyleSheet(), fitsStyle);
    }

    void everyLabelledControlHasAMnemonicBuddy()
    {
        // Alt+letter reaches each control through its label; none takes File/Edit/View's letter.
        int labelled = 0;
        for (QLabel* label : m_panel->findChildren<QLabel*>()) {
            const QString text = label->text();
            const qsizetype amp = text.indexOf(QLatin1Char('&'));
            if (amp < 0 || amp + 1 >= text.size())
                continue;
            ++labelled;
            QVERIFY2(label->buddy(), qPrintable(text));
            QVERIFY2(label->buddy()->focusPolicy() != Qt::NoFocus || label->buddy()->focusProxy(),
                qPrintable(text));
            const QChar key = text.at(amp + 1).toUpper();
            QVERIFY2(key != QLatin1Char('F') && key != QLatin1Char('E') && key != QLatin1Char('V'),
                qPrintable(text));
        }
        QVERIFY(labelled >= 15);
        // The keyboard alone edits the plan: focus the ZeRO combo, Down picks ZeRO-2.
        m_panel->parallelismControls()->zeroCombo()->setFocus();
        QTest::keyClick(m_panel->parallelismControls()->zeroCombo(), Qt::Key_Down);
        QCOMPARE(m_doc->plan().training.zeroStage, 2);
    }

    void chartGridLinesSitOnTheAxisTicks()
    {
        SweepChart* sweep = m_panel->sweepChart();
        QChart* chart = sweep->chartView()->chart();
        const PlotGrid* grid = PlotGrid::of(chart);
        QVERIFY(grid);
        auto* y = qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).front());
        QVERIFY(y);
        // Qt Charts' own grid and axis lines are off: the grid item draws them.
        for (QAbstractAxis* axis : chart->axes()) {
            QVERIFY(!axis->isGridLineVisible());
            QVERIFY(!axis->isLineVisible());
        }
        const QPointF origin(sweep->xAxis()->min(), y->min());
        const auto at
            = [&](QPointF value) { return chart->mapToPosition(value, sweep->totalSeries()); };
        // A horizontal line at each of the y axis's ticks, one minor line halfway between two.
        const int ticks = y->tickCount();
        QList<int> rows;
        for (const QRect& line : grid->majorLines())
            if (line.height() == 1)
                rows.append(line.y());
        QCOMPARE(rows.size(), qsizetype(ticks));
        for (int i = 0; i < ticks; ++i) {
            const double v = y->min() + (y->max() - y->min()) * i / (ticks - 1);
            QVERIFY2(std::abs(rows[i] - at(QPointF(origin.x(), v)).y()) <= 1.0,
                qPrintable(QStringLiteral("tick %1 at row %2").arg(v).arg(rows[i])));
        }
        QCOMPARE(grid->minorLines().size(), qsizetype((ticks - 1) * y->minorTickCount()));
        // A vertical line at each labelled context (256, 2K, ... 1M) inside the plot.
        QList<int> columns;
        for (const QRect& line : grid->majorLines())
            if (line.width() == 1)
                columns.append(line.x());
        QList<double> labelled;
        for (const QString& label : sweep->xAxis()->categoriesLabels()) {
            const double x = sweep->xAxis()->endValue(label);
            if (x > sweep->xAxis()->min() && x <= sweep->xAxis()->max())
                labelled.append(x);
        }
        QVERIFY(labelled.size() >= 3);
        QCOMPARE(columns.size(), labelled.size());
        for (qsizetype i = 0; i < columns.size(); ++i)
            QVERIFY(std::abs(columns[i] - at(QPointF(labelled[i], y->min())).x()) <= 1.0);
        // The axes: the plot's left and bottom edges.
        QCOMPARE(grid->axisLines().size(), 2);
        QVERIFY(std::abs(grid->axisLines()[1].y() - at(origin).y()) <= 1.0);

        // The colours are the translucent grid (text at 12 %) flattened over the background:
        // black over white is 0.88 x 255 = 224; white over (30, 30, 30) is 0.12 x 255 + 0.88 x 30
        // = 57. A palette change restyles the grid.
        const QPalette original = sweep->palette();
        QPalette light = original;
        light.setColor(QPalette::Base, Qt::white);
        light.setColor(QPalette::Text, Qt::black);
        sweep->setPalette(light);
        QCOMPARE(grid->majorColor(), QColor(224, 224, 224));
        QPalette dark = original;
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::Text, Qt::white);
        sweep->setPalette(dark);
        QCOMPARE(grid->majorColor(), QColor(57, 57, 57));
        QCOMPARE(PlotGrid::of(chart), grid); // restyled, not duplicated
        sweep->setPalette(original);

        // The lines follow the axis: a longer context raises the y range and moves the ticks.
        const double top = y->max();
        typeInto(m_panel->modelControls()->contextControl()->spinBox(), QStringLiteral("65536"));
        QVERIFY(y->max() != top);
        const double v = y->min() + (y->max() - y->min()) / (y->tickCount() - 1);
        QVERIFY(std::abs(grid->majorLines()[1].y() - at(QPointF(origin.x(), v)).y()) <= 1.0);
    }

    void aLongChoiceShowsWholeOnHoverAndInTheList()
    {
        QComboBox* zero = m_panel->parallelismControls()->zeroCombo();
        zero->setCurrentIndex(3);
        QCOMPARE(zero->currentText(), QStringLiteral("3 — + weights sharded (FSDP)"));
        // Hovering the closed combo shows the whole choice, even where the column cuts it.
        QHelpEvent hover(QEvent::ToolTip, QPoint(5, 5), zero->mapToGlobal(QPoint(5, 5)));
        QApplication::sendEvent(zero, &hover);
        QTRY_VERIFY(QToolTip::isVisible());
        QCOMPARE(QToolTip::text(), zero->currentText());
        QToolTip::hideText();
        // The open list is at least as wide as its longest choice.
        zero->showPopup();
        QTRY_VERIFY(zero->view()->isVisible());
        QVERIFY2(zero->view()->width() >= zero->view()->sizeHintForColumn(0),
            qPrintable(QStringLiteral("%1 < %2")
                           .arg(zero->view()->width())
                           .arg(zero->view()->sizeHintForColumn(0))));
        zero->hidePopup();
    }

    void hoveringABarShowsItsFormula()
    {
        QChartView* view = m_panel->memoryChart()->chartView();
        QChart* chart = view->chart();
        QAbstractSeries* bars = chart->series().front();
        const double weights = m_panel->memoryChart()->barSet(Tenant::Weights)->at(0);
        const QPointF scene
            = chart->mapToScene(chart->mapToPosition(QPointF(0, weights / 2), bars));
        QTest::mouseMove(view->viewport(), view->mapFromScene(scene));
        QTRY_VERIFY(QToolTip::isVisible());
        const Explanation* e = m_doc->explanation(QStringLiteral("training.per_gpu_bytes.weights"));
        QVERIFY(e);
        QVERIFY2(QToolTip::text().contains(QString::fromStdString(e->formula).toHtmlEscaped()),
            qPrintable(QToolTip::text()));
    }

    void detailsPaneShowsTheCoreFormulas()
    {
        QTreeWidgetItem* item
            = m_panel->details()->itemFor(QStringLiteral("training.per_gpu_bytes.optimizer"));
        QVERIFY(item);
        const Explanation* e
            = m_doc->explanation(QStringLiteral("training.per_gpu_bytes.optimizer"));
        QVERIFY(e);
        const QString formula = QString::fromStdString(e->formula);
        QCOMPARE(item->toolTip(2), formula);
        QCOMPARE(item->text(2), formula);
        // What the cell paints: the formula's start, cut with an ellipsis to the column's width.
        const QFontMetrics metrics(m_panel->details()->font());
        const int width = m_panel->details()->columnWidth(2) - 8;
        const QString shown = ElidingDelegate::elide(formula, metrics, width);
        QVERIFY(metrics.horizontalAdvance(shown) <= width);
        if (metrics.horizontalAdvance(formula) > width) {
            QVERIFY(shown.endsWith(QChar(0x2026)));
            QVERIFY(formula.startsWith(shown.chopped(1)));
            QCOMPARE(shown, metrics.elidedText(formula, Qt::ElideRight, width));
        } else
            QCOMPARE(shown, formula);
    }
};

ENVELOPE_UI_TEST_MAIN(TestTrainingPanel)
#include "test_trainingpanel.moc"
