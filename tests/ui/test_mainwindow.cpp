// The main window's files and exports: save -> open round trip, a bad file names its field and
// keeps the plan, exports of the requested size that are not blank, the title, the prompt.
#include <QAction>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImage>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QProcess>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QUrl>

#include "charts/memorybarchart.h"
#include "charts/tenantpalette.h"
#include "controls/modelcontrols.h"
#include "controls/parallelismcontrols.h"
#include "controls/sliderspin.h"
#include "document/plandocument.h"
#include "document/settings.h"
#include "estimate/estimate.h"
#include "panels/planpanel.h"
#include "panels/trainingpanel.h"
#include "uitestutil.h"
#include "widgets/appresources.h"
#include "window/application.h"
#include "window/exporter.h"
#include "window/mainwindow.h"

using namespace envelope;
using namespace envelope::ui;

namespace {

// Distinct colours in the image: a blank (single-colour) render has one.
int distinctColours(const QImage& image)
{
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7)
            colours.insert(image.pixel(x, y));
    return int(colours.size());
}

// Counts the paint events a widget receives.
class PaintCount : public QObject {
public:
    explicit PaintCount(QWidget* widget) { widget->installEventFilter(this); }
    int count = 0;

protected:
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::Paint)
            ++count;
        return false;
    }
};

void writeText(const QString& path, const QByteArray& text)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::unique_ptr<Settings> m_settings;
    std::unique_ptr<MainWindow> m_window;

    QString path(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void init()
    {
        m_settings = std::make_unique<Settings>();
        m_window = std::make_unique<MainWindow>(uitest::presets(), m_settings.get());
        writeText(path(QStringLiteral("llama.json")), uitest::kLlama7bPlan);
        QString error;
        QVERIFY2(m_window->openFile(path(QStringLiteral("llama.json")), &error), qPrintable(error));
        m_window->resize(1400, 900);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanup()
    {
        m_window->document()->markSaved(); // no prompt on close
        m_window.reset();
        m_settings.reset();
    }

    void iconAndStylesComeFromTheResources()
    {
        // resources/envelope.qrc is compiled into the static envelope_ui: a lost resource
        // would show no icon and an unstyled badge rather than fail.
        QVERIFY(!m_window->windowIcon().isNull());
        QVERIFY(!m_window->windowIcon().pixmap(64, 64).isNull());
        const QString status = loadStyleSheet(QStringLiteral("status-line"), overflowColor());
        QVERIFY2(status.contains(QStringLiteral("color: #c62828")), qPrintable(status));
        QVERIFY(!status.contains(QStringLiteral("@accent")));
        QVERIFY(loadStyleSheet(QStringLiteral("no-such-fragment")).isEmpty());
    }

    void titleShowsNameAndModifiedMarker()
    {
        QCOMPARE(m_window->windowTitle(), QStringLiteral("Llama-2 7B SFT[*] — Envelope"));
        QVERIFY(!m_window->isWindowModified());
        Plan p = m_window->document()->plan();
        p.training.zeroStage = 3;
        m_window->document()->edit(p, QStringLiteral("ZeRO"));
        QVERIFY(m_window->isWindowModified());
        m_window->undoAction()->trigger();
        QVERIFY(!m_window->isWindowModified());
    }

    void saveThenOpenRoundTrips()
    {
        Plan p = m_window->document()->plan();
        p.training.zeroStage = 3;
        p.training.seqLen = 8192;
        p.training.recompute = Recompute::Full;
        m_window->document()->edit(p, QStringLiteral("edits"));
        const QString saved = path(QStringLiteral("saved.json"));
        QString error;
        QVERIFY2(m_window->saveFile(saved, &error), qPrintable(error));
        QVERIFY(!m_window->isWindowModified());
        QCOMPARE(m_settings->recentFiles().front(), QFileInfo(saved).absoluteFilePath());

        m_window->newPlan();
        QVERIFY(!(m_window->document()->plan() == p));
        QVERIFY2(m_window->openFile(saved, &error), qPrintable(error));
        QVERIFY(m_window->document()->plan() == p);
        QCOMPARE(m_window->trainingPanel()->memoryChart()->barSet(Tenant::Weights)->at(0),
            toDisplayUnits(estimate(p).training.perGpu.weights, ByteUnits::GB));
    }

    void badFileNamesTheFieldAndKeepsThePlan()
    {
        const Plan before = m_window->document()->plan();
        QByteArray bad = uitest::kLlama7bPlan;
        bad.replace("\"zero_stage\": 1", "\"zero_stage\": 5");
        writeText(path(QStringLiteral("bad.json")), bad);
        QString error;
        QVERIFY(!m_window->openFile(path(QStringLiteral("bad.json")), &error));
        // The message names the file, then the field (issue 13, defect 12).
        QVERIFY2(
            error.endsWith(QStringLiteral("bad.json: training.zero_stage: must be 0..3, got 5")),
            qPrintable(error));
        QVERIFY(m_window->document()->plan() == before);

        writeText(path(QStringLiteral("broken.json")), "{ not json");
        QVERIFY(!m_window->openFile(path(QStringLiteral("broken.json")), &error));
        QVERIFY(!error.isEmpty());
        QVERIFY(m_window->document()->plan() == before);
        QCOMPARE(m_window->document()->filePath(),
            QFileInfo(path(QStringLiteral("llama.json"))).absoluteFilePath());
    }

    void discardPromptGuardsUnsavedChanges()
    {
        Plan p = m_window->document()->plan();
        p.training.tp = 2;
        m_window->document()->edit(p, QStringLiteral("TP"));
        int asked = 0;
        m_window->setSavePrompt([&asked] {
            ++asked;
            return int(QMessageBox::Cancel);
        });
        QVERIFY(!m_window->maybeSave());
        QVERIFY(!m_window->close()); // cancelled: the window stays
        QCOMPARE(asked, 2);
        m_window->setSavePrompt([] { return int(QMessageBox::Discard); });
        QVERIFY(m_window->maybeSave());
    }

    void chartExportsHaveTheRequestedSizeAndContent()
    {
        QChartView* view = m_window->trainingPanel()->memoryChart()->chartView();
        const QString png = path(QStringLiteral("chart.png"));
        QVERIFY(exportChartPng(view, QSize(1200, 700), png));
        const QImage image(png);
        QCOMPARE(image.size(), QSize(1200, 700));
        QVERIFY(distinctColours(image) > 8);
        // The on-screen chart keeps its own size.
        QCOMPARE(view->chart()->size().toSize(), view->viewport()->size());

        const QString svg = path(QStringLiteral("chart.svg"));
        QVERIFY(exportChartSvg(view, QSize(900, 500), svg));
        QSvgRenderer renderer(svg);
        QVERIFY(renderer.isValid());
        QCOMPARE(renderer.defaultSize(), QSize(900, 500));
        QImage rendered(900, 500, QImage::Format_ARGB32);
        rendered.fill(Qt::white);
        QPainter painter(&rendered);
        renderer.render(&painter);
        painter.end();
        QVERIFY(distinctColours(rendered) > 8);
    }

    void windowScreenshotIsExactlyTheRequestedSize()
    {
        const QString png = path(QStringLiteral("window.png"));
        QVERIFY(writeScreenshot(m_window.get(), QSize(1000, 700), png));
        const QImage image(png);
        QCOMPARE(image.size(), QSize(1000, 700));
        QVERIFY(distinctColours(image) > 8);
    }

    void summaryMarkdownGoesToTheClipboard()
    {
        m_window->copySummaryMarkdown();
        const QString md = QGuiApplication::clipboard()->text();
        const TrainingMemory m = estimate(m_window->document()->plan()).training;
        QVERIFY(md.contains(
            QStringLiteral("| **Total** | **%1** |")
                .arg(QString::fromStdString(formatBytes(m.perGpu.total(), ByteUnits::GB)))));
        // The three-valued verdict: this plan (83.1 of 85.5 GB) is above the usable line.
        const char* verdict = m.verdict == Verdict::Fits
            ? "**Fits**"
            : (m.verdict == Verdict::Tight ? "**Tight**" : "**Does not fit**");
        QVERIFY2(md.contains(QLatin1String(verdict)), qPrintable(md));
        QVERIFY(md.contains(QStringLiteral("| ZeRO stage | ZeRO-")));
    }

    void panelsAreAddedAndSelectedById()
    {
        const QStringList builtIn { QStringLiteral("training"), QStringLiteral("serving"),
            QStringLiteral("rl"), QStringLiteral("planner") };
        QCOMPARE(m_window->panelIds(), builtIn);
        QVERIFY(m_window->selectPanel(QStringLiteral("rl")));
        QCOMPARE(m_window->tabs()->currentIndex(), 2);
        auto* extra = new QWidget;
        m_window->addPanel(QStringLiteral("extra"), QStringLiteral("Extra"), extra);
        QVERIFY(m_window->selectPanel(QStringLiteral("extra")));
        QCOMPARE(m_window->tabs()->currentWidget(), extra);
        QVERIFY(!m_window->selectPanel(QStringLiteral("nope")));
    }

    void findAPlanSearchesTheKindOfTheTabTheUserCameFrom()
    {
        // Issue 28: from the RL tab, Find a plan's first search is an RL one (it used to start
        // a training search whatever the user was looking at).
        QVERIFY(m_window->selectPanel(QStringLiteral("rl")));
        QTabBar* bar = m_window->tabs()->tabBar();
        const int planner = int(m_window->panelIds().indexOf(QStringLiteral("planner")));
        QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(planner).center());
        auto* panel = qobject_cast<PlanPanel*>(m_window->tabs()->currentWidget());
        QVERIFY(panel != nullptr);
        QCOMPARE(SearchKind(panel->kindCombo()->currentData().toInt()), SearchKind::Rl);
        if (panel->isSearching()) {
            QSignalSpy finished(panel, &PlanPanel::searchFinished);
            QVERIFY(finished.wait(20000));
        }
        QCOMPARE(panel->resultKind(), SearchKind::Rl);
        // Back to Serving, then Find a plan again: the Kind box follows.
        QVERIFY(m_window->selectPanel(QStringLiteral("serving")));
        QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(planner).center());
        QCOMPARE(SearchKind(panel->kindCombo()->currentData().toInt()), SearchKind::Serving);
    }

    void aSliderStepRepaintsWhatChangedAndNotTheRest()
    {
        // Issue 22 (a slider step within 8 ms): a step repainted every spin box of the tab (a
        // spin box repaints on any setValue) and, through QTabWidget's answer to the layout
        // request a changed label posts, every scroll bar, the tab bar and the combo boxes,
        // each gradient split across Qt's raster threads. Only what shows a new value repaints.
        QVERIFY(m_window->selectPanel(QStringLiteral("training")));
        TrainingPanel* training = m_window->trainingPanel();
        QSlider* context = training->modelControls()->contextControl()->slider();
        QDoubleSpinBox* contextBox = training->modelControls()->contextControl()->spinBox();
        QSpinBox* tp = training->parallelismControls()->tpControl();
        context->setFocus();
        QTest::keyClick(context, Qt::Key_Left); // a first step: focus, first layouts
        QTest::qWait(50);
        PaintCount contextPaints(contextBox), tpPaints(tp),
            tabBarPaints(m_window->tabs()->tabBar());
        std::vector<std::unique_ptr<PaintCount>> scrollBarPaints;
        for (QScrollBar* bar : training->findChildren<QScrollBar*>())
            if (bar->isVisible())
                scrollBarPaints.push_back(std::make_unique<PaintCount>(bar));
        const int before = context->value();
        QTest::keyClick(context, Qt::Key_Right);
        QCOMPARE(context->value(), before + 1);
        QTest::qWait(50);
        QVERIFY(contextPaints.count > 0); // the box shows the new context
        QCOMPARE(tpPaints.count, 0);
        QCOMPARE(tabBarPaints.count, 0);
        for (const auto& bar : scrollBarPaints)
            QCOMPARE(bar->count, 0);
    }

    void aSearchThatEndsBehindAnotherTabFillsItsTableWhenShown()
    {
        // While the user works in another tab, a search that ends does not refill the planner's
        // table on the GUI thread; showing the tab shows that search's candidates.
        QTabBar* bar = m_window->tabs()->tabBar();
        const int plannerIndex = int(m_window->panelIds().indexOf(QStringLiteral("planner")));
        QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(plannerIndex).center());
        auto* panel = qobject_cast<PlanPanel*>(m_window->tabs()->currentWidget());
        QVERIFY(panel != nullptr);
        if (panel->isSearching()) {
            QSignalSpy finished(panel, &PlanPanel::searchFinished);
            QVERIFY(finished.wait(20000));
        }
        QTableWidget* table = panel->table();
        // The first row's GPUs and micro-batch × accumulation, and the same of a candidate.
        const auto firstRow = [table] {
            return table->item(0, 1)->text() + QLatin1Char('/') + table->item(0, 10)->text();
        };
        const auto rowOf = [](const Candidate& c) {
            return QStringLiteral("%1/%2 × %3")
                .arg(c.layout.gpus)
                .arg(c.layout.microBatch)
                .arg(c.layout.gradAccum);
        };
        QVERIFY(!panel->result().candidates.empty());
        const Candidate shown = panel->result().candidates.front();
        QCOMPARE(firstRow(), rowOf(shown));
        QVERIFY(m_window->selectPanel(QStringLiteral("training")));
        // Another goal, whose best is another layout.
        const SearchGoal other
            = SearchGoal(panel->goalCombo()->currentData().toInt()) == SearchGoal::MinGpus
            ? SearchGoal::MaxThroughput
            : SearchGoal::MinGpus;
        panel->goalCombo()->setCurrentIndex(panel->goalCombo()->findData(int(other)));
        QSignalSpy finished(panel, &PlanPanel::searchFinished);
        panel->startSearch();
        QVERIFY(finished.wait(20000));
        QVERIFY(!panel->result().candidates.empty());
        const Candidate best = panel->result().candidates.front();
        QVERIFY(rowOf(best) != rowOf(shown));
        QCOMPARE(firstRow(), rowOf(shown)); // not refilled behind the tab
        QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(plannerIndex).center());
        QCOMPARE(table->rowCount(), int(panel->result().candidates.size()));
        QCOMPARE(firstRow(), rowOf(best));
    }

    void importHfConfigReplacesTheModel()
    {
        // A Mistral-7B config.json (mistralai/Mistral-7B-v0.1).
        writeText(path(QStringLiteral("config.json")), R"({
            "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "vocab_size": 32000, "max_position_embeddings": 32768, "rms_norm_eps": 1e-5,
            "tie_word_embeddings": false, "sliding_window": 4096})");
        QString error;
        QVERIFY2(m_window->importHfConfigFile(path(QStringLiteral("config.json")), &error),
            qPrintable(error));
        const Plan& plan = m_window->document()->plan();
        QCOMPARE(int(plan.model.form), int(ModelChoice::Form::HfConfig));
        QCOMPARE(plan.model.arch.kvHeads, 8);
        // Mistral 7B: 7.24B parameters (its model card).
        QVERIFY(std::abs(m_window->document()->results().estimate.params - 7.24e9) < 0.01e9);
        m_window->document()->undoStack()->undo();
        QCOMPARE(plan.model.arch.kvHeads, 32);
    }

    void importedConfigIsFoundAfterSavingInAnotherFolder()
    {
        QDir(m_dir.path()).mkdir(QStringLiteral("hf"));
        QDir(m_dir.path()).mkdir(QStringLiteral("plans"));
        const QString config = path(QStringLiteral("hf/config.json"));
        writeText(config, R"({"model_type": "llama", "hidden_size": 2048,
            "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
            "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048,
            "tie_word_embeddings": false})");
        QString error;
        QVERIFY2(m_window->importHfConfigFile(config, &error), qPrintable(error));
        const ModelArch imported = m_window->document()->plan().model.arch;
        const QString saved = path(QStringLiteral("plans/tiny.json"));
        QVERIFY2(m_window->saveFile(saved, &error), qPrintable(error));
        QFile file(saved);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("../hf/config.json")); // relative to the plan's folder
        m_window->newPlan();
        QVERIFY2(m_window->openFile(saved, &error), qPrintable(error));
        QVERIFY(m_window->document()->plan().model.arch == imported);
    }

    void droppingAConfigJsonImportsIt()
    {
        writeText(path(QStringLiteral("drop-config.json")), R"({"model_type": "llama",
            "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
            "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000,
            "max_position_embeddings": 2048, "tie_word_embeddings": false})");
        QMimeData mime;
        mime.setUrls({ QUrl::fromLocalFile(path(QStringLiteral("drop-config.json"))) });
        QDragEnterEvent enter(
            QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_window.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_window.get(), &drop);
        QCOMPARE(int(m_window->document()->plan().model.form), int(ModelChoice::Form::HfConfig));
        QCOMPARE(m_window->document()->plan().model.arch.layers, 22);
        QCOMPARE(m_window->document()->plan().model.arch.kvHeads, 4);
    }

    void closingSavesTheSessionThatTheNextStartRestores()
    {
        Plan p = m_window->document()->plan();
        p.training.seqLen = 2048;
        m_window->document()->edit(p, QStringLiteral("Context"));
        m_window->setSavePrompt([] { return int(QMessageBox::Discard); });
        QVERIFY(m_window->close());
        MainWindow next(uitest::presets(), m_settings.get());
        next.restoreSession();
        QVERIFY(next.document()->plan() == p);
        QVERIFY(!next.document()->isModified());
    }

    void screenshotModeWritesExactlyWxH()
    {
        const QString png = path(QStringLiteral("shot.png"));
        QProcess app;
        app.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        app.start(QStringLiteral(ENVELOPE_APP_PATH),
            { path(QStringLiteral("llama.json")), QStringLiteral("--screenshot"), png,
                QStringLiteral("--size"), QStringLiteral("800x600") });
        QVERIFY(app.waitForFinished(30000));
        QCOMPARE(app.exitCode(), 0);
        const QImage image(png);
        QCOMPARE(image.size(), QSize(800, 600));
        QVERIFY(distinctColours(image) > 8);
    }
};

ENVELOPE_UI_TEST_MAIN(TestMainWindow)
#include "test_mainwindow.moc"
