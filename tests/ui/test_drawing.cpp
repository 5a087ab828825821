// Nothing overlaps or clips (issue 11, "Drawing"): every panel of the main window, laid out at
// 1280x800, 1600x1000 and 2560x1440 for five hard plans (tests/data/plans/hard/: DeepSeek-V3
// 671B, Llama-3 70B on TP 8 x PP 4, Mixtral with EP 8, int4 serving at 32k, PPO colocated).
//
// Every text the window shows is collected in window coordinates: labels, buttons and the closed
// combo boxes' current choice; each chart's scene texts (axis labels and titles, our annotation
// labels); the chart legends' entries; and the texts of the custom-painted charts, which report
// them (DrawnText). Then: no two of them intersect, none is cut (a label or button narrower than
// its one-line text, a wrapping label shorter than its text, a combo's edit field narrower than
// its choice, a chart text outside its view, an elided "…"), and no chart label sits on a bar.
// Widgets scrolled partly out of a scroll area are skipped: scrolling is not clipping.
#include <QAbstractButton>
#include <QAbstractScrollArea>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFile>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QStyleOptionComboBox>
#include <QTabWidget>
#include <QTextDocument>
#include <QThread>

#include <QLogValueAxis>
#include <QScatterSeries>

#include "charts/chartlegend.h"
#include "charts/memorybarchart.h"
#include "charts/rltimeline.h"
#include "charts/servingcurvechart.h"
#include "charts/stepbreakdownbar.h"
#include "panels/planpanel.h"
#include "panels/servingpanel.h"
#include "uitestutil.h"

using namespace envelope;
using namespace envelope::ui;

namespace {

struct TextBox {
    QRectF rect; // window coordinates
    QString text;
    QString owner; // the widget's class, for the failure message
    const void* group = nullptr; // Qt's own labels of one axis: laid out by Qt, see below
};

QString describe(const TextBox& t)
{
    return QStringLiteral("%1 \"%2\" at (%3,%4 %5x%6)")
        .arg(t.owner, t.text.left(60))
        .arg(t.rect.x(), 0, 'f', 0)
        .arg(t.rect.y(), 0, 'f', 0)
        .arg(t.rect.width(), 0, 'f', 0)
        .arg(t.rect.height(), 0, 'f', 0);
}

bool elided(const QString& text)
{
    return text.endsWith(QChar(0x2026)) || text.endsWith(QLatin1String("..."));
}

class Collector {
public:
    explicit Collector(QWidget* window)
        : m_window(window)
    { }

    void collect(QWidget* root)
    {
        for (QWidget* w : root->findChildren<QWidget*>()) {
            if (!w->isVisibleTo(m_window) || !fullyShown(w))
                continue;
            if (auto* label = qobject_cast<QLabel*>(w))
                addLabel(label);
            else if (auto* button = qobject_cast<QAbstractButton*>(w))
                addButton(button);
            else if (auto* combo = qobject_cast<QComboBox*>(w))
                addCombo(combo);
            else if (auto* view = qobject_cast<QChartView*>(w))
                addChart(view);
            else if (auto* legend = qobject_cast<ChartLegend*>(w))
                addLegend(legend);
            else if (auto* bar = qobject_cast<StepBreakdownBar*>(w))
                addDrawn(bar, bar->texts());
            else if (auto* timeline = qobject_cast<RlTimeline*>(w))
                addDrawn(timeline, timeline->texts());
        }
    }

    // Pairs that intersect; Qt's labels of one axis are exempt from each other: Qt hides an
    // axis label that would overlap its neighbour and their boxes share a pixel of rounding.
    void checkOverlaps()
    {
        for (qsizetype i = 0; i < m_texts.size(); ++i)
            for (qsizetype j = i + 1; j < m_texts.size(); ++j) {
                const TextBox& a = m_texts[i];
                const TextBox& b = m_texts[j];
                if (a.group && a.group == b.group)
                    continue;
                const QRectF both = a.rect.intersected(b.rect);
                if (both.width() > 0.5 && both.height() > 0.5)
                    m_problems
                        << QStringLiteral("overlap: %1 and %2").arg(describe(a), describe(b));
            }
    }

    const QStringList& problems() const { return m_problems; }
    qsizetype count() const { return m_texts.size(); }

private:
    QRectF toWindow(const QWidget* w, const QRectF& r) const
    {
        return QRectF(w->mapTo(m_window, r.topLeft()), r.size());
    }

    // False when a scroll area shows the widget only in part (or not at all).
    bool fullyShown(const QWidget* w) const
    {
        const QRectF own = toWindow(w, w->rect());
        for (const QWidget* p = w->parentWidget(); p && p != m_window; p = p->parentWidget()) {
            const auto* area = qobject_cast<const QAbstractScrollArea*>(p->parentWidget());
            if (area && area->viewport() == p && !toWindow(p, p->rect()).contains(own))
                return false;
            if (p->width() == 0 || p->height() == 0)
                return false; // a collapsed splitter pane
        }
        return true;
    }

    void add(const QWidget* w, const QRectF& rect, const QString& text, const void* group = nullptr)
    {
        m_texts.push_back(
            { toWindow(w, rect), text, QString::fromLatin1(w->metaObject()->className()), group });
    }

    void clipped(const QWidget* w, const QString& text, const QString& why)
    {
        m_problems << QStringLiteral("clipped: %1 \"%2\" (%3)")
                          .arg(QString::fromLatin1(w->metaObject()->className()), text.left(60),
                              why);
    }

    void addLabel(QLabel* label)
    {
        QString text = label->text();
        if (text.isEmpty())
            return;
        const bool rich = label->textFormat() == Qt::RichText
            || (label->textFormat() == Qt::AutoText && Qt::mightBeRichText(text));
        if (rich) {
            QTextDocument doc;
            doc.setHtml(text);
            text = doc.toPlainText();
        }
        if (elided(text))
            clipped(label, text, QStringLiteral("elided"));
        if (label->wordWrap()) {
            if (label->heightForWidth(label->width()) > label->height())
                clipped(label, text,
                    QStringLiteral("wraps to %1 px in %2")
                        .arg(label->heightForWidth(label->width()))
                        .arg(label->height()));
        } else if (label->sizeHint().width() > label->width()) {
            clipped(label, text,
                QStringLiteral("needs %1 px, has %2")
                    .arg(label->sizeHint().width())
                    .arg(label->width()));
        }
        QRect area = label->contentsRect();
        if (!rich && !label->wordWrap())
            area = label->style()->itemTextRect(
                label->fontMetrics(), area, int(label->alignment()), true, text);
        add(label, area.intersected(label->rect()), text);
    }

    void addButton(QAbstractButton* button)
    {
        if (button->text().isEmpty())
            return;
        if (button->sizeHint().width() > button->width())
            clipped(button, button->text(),
                QStringLiteral("needs %1 px, has %2")
                    .arg(button->sizeHint().width())
                    .arg(button->width()));
        add(button, button->rect(), button->text());
    }

    void addCombo(QComboBox* combo)
    {
        if (combo->isEditable() || combo->currentText().isEmpty())
            return;
        QStyleOptionComboBox option;
        option.initFrom(combo);
        option.editable = false;
        option.frame = combo->hasFrame();
        option.currentText = combo->currentText();
        option.subControls = QStyle::SC_All;
        const QRect field = combo->style()->subControlRect(
            QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, combo);
        const int needed = combo->fontMetrics().horizontalAdvance(combo->currentText());
        if (needed > field.width())
            clipped(combo, combo->currentText(),
                QStringLiteral("needs %1 px, has %2").arg(needed).arg(field.width()));
        add(combo, combo->rect(), combo->currentText());
    }

    void addLegend(ChartLegend* legend)
    {
        const QList<QRect> rects = legend->entryRects(legend->width());
        for (qsizetype i = 0; i < rects.size(); ++i) {
            const QString text = legend->entries()[i].text;
            if (!legend->rect().contains(rects[i]))
                clipped(legend, text, QStringLiteral("outside the legend"));
            add(legend, rects[i], text);
        }
    }

    void addDrawn(QWidget* w, const std::vector<DrawnText>& texts)
    {
        for (const DrawnText& t : texts) {
            if (elided(t.text))
                clipped(w, t.text, QStringLiteral("elided"));
            if (!QRectF(w->rect()).adjusted(-0.5, -0.5, 0.5, 0.5).contains(t.rect))
                clipped(w, t.text, QStringLiteral("runs out of the widget"));
            add(w, t.rect, t.text);
        }
    }

    void addChart(QChartView* view)
    {
        const QRectF viewArea = view->mapToScene(view->viewport()->rect()).boundingRect();
        QList<QRectF> bars;
        QList<std::pair<QRectF, QString>> labels;
        for (QGraphicsItem* item : view->scene()->items()) {
            if (!item->isVisible())
                continue;
            // Qt Charts' bars are QGraphicsRectItems that are QObjects of class Bar.
            if (auto* rectItem = dynamic_cast<QGraphicsRectItem*>(item)) {
                const auto* object = dynamic_cast<QObject*>(rectItem);
                if (object && QByteArray(object->metaObject()->className()).endsWith("Bar")
                    && rectItem->rect().height() > 0)
                    bars << rectItem->sceneBoundingRect();
                continue;
            }
            QString text;
            QRectF rect;
            const void* group = nullptr;
            if (auto* simple = dynamic_cast<QGraphicsSimpleTextItem*>(item)) {
                text = simple->text();
                rect = simple->sceneBoundingRect();
            } else if (auto* rich = dynamic_cast<QGraphicsTextItem*>(item)) {
                text = rich->toPlainText();
                const qreal margin = rich->document()->documentMargin();
                rect = rich->mapRectToScene(
                    rich->boundingRect().adjusted(margin, margin, -margin, -margin));
                group = rich->parentItem(); // Qt's axis labels share their axis' label group
            } else {
                continue;
            }
            if (text.trimmed().isEmpty())
                continue;
            if (elided(text))
                clipped(view, text, QStringLiteral("elided"));
            if (!viewArea.adjusted(-0.5, -0.5, 0.5, 0.5).contains(rect))
                clipped(view, text, QStringLiteral("outside the chart's view"));
            labels << std::pair { rect, text };
            const QPolygonF inView = view->mapFromScene(rect);
            m_texts.push_back({ toWindow(view->viewport(), inView.boundingRect()), text,
                QStringLiteral("chart \"%1\"").arg(view->chart()->title()), group });
        }
        for (const auto& [rect, text] : labels)
            for (const QRectF& bar : bars) {
                const QRectF both = rect.intersected(bar);
                if (both.width() > 1 && both.height() > 1)
                    m_problems << QStringLiteral("on a bar: chart \"%1\" \"%2\"")
                                      .arg(view->chart()->title(), text);
            }
    }

    QWidget* m_window;
    QList<TextBox> m_texts;
    QStringList m_problems;
};

Plan hardPlan(const QString& name)
{
    QFile file(QStringLiteral(ENVELOPE_TEST_DATA_DIR "/plans/hard/%1.json").arg(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open hard plan %s", qPrintable(name));
    Expected<Plan> plan = readPlan(file.readAll().toStdString(), uitest::presets());
    if (!plan)
        qFatal("hard plan %s does not read: %s", qPrintable(name), plan.error().toString().c_str());
    return *plan;
}

void settle()
{
    for (int i = 0; i < 8; ++i)
        QApplication::processEvents();
}

} // namespace

class TestDrawing : public uitest::WindowTest {
    Q_OBJECT
private slots:
    void cleanup() { closeWindow(); }

    void nothingOverlapsOrClips_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QSize>("size");
        for (const char* plan : { "deepseek-v3-671b", "llama-3-70b-3d", "mixtral-8x7b-ep",
                 "llama-3-70b-int4-32k", "llama-3-8b-ppo-colocated" })
            for (QSize size : { QSize(1280, 800), QSize(1600, 1000), QSize(2560, 1440) })
                QTest::addRow("%s@%dx%d", plan, size.width(), size.height())
                    << QString::fromLatin1(plan) << size;
    }

    void nothingOverlapsOrClips()
    {
        QFETCH(QString, plan);
        QFETCH(QSize, size);
        QVERIFY(openWindow(hardPlan(plan), size));
        QStringList problems;
        for (const QString& id : m_window->panelIds()) {
            QVERIFY(m_window->selectPanel(id));
            settle();
            // The planner searches on a worker thread when first shown (a few ms).
            for (PlanPanel* planner : m_window->findChildren<PlanPanel*>())
                for (int i = 0; i < 500 && planner->isSearching(); ++i) {
                    QThread::msleep(10);
                    QApplication::processEvents();
                }
            settle();
            Collector collector(m_window.get());
            collector.collect(m_window->tabs()->currentWidget());
            QVERIFY2(collector.count() > 10, qPrintable(id)); // the panel drew its texts
            collector.checkOverlaps();
            for (const QString& problem : collector.problems())
                problems << QStringLiteral("[%1] %2").arg(id, problem);
        }
        problems.removeDuplicates();
        for (const QString& problem : problems)
            qWarning("%s", qPrintable(problem));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    }

    // DeepSeek-V3's RL step takes minutes: the bars' durations and the axis both read in minutes
    // (the axis used to count seconds under bars labelled "4.1 min").
    void rlTimelineUsesOneUnit()
    {
        QVERIFY(openWindow(hardPlan(QStringLiteral("deepseek-v3-671b"))));
        QVERIFY(m_window->selectPanel(QStringLiteral("rl")));
        settle();
        const auto* timeline = m_window->findChild<RlTimeline*>();
        QVERIFY(timeline);
        QVERIFY(timeline->stepS() > 120);
        const std::vector<DrawnText> texts = timeline->texts();
        QStringList units;
        for (std::size_t i = 4; i < texts.size(); ++i) { // after the title and the three rows
            // A segment too thin for a duration in minutes (the weight sync) is named with its
            // own unit beside its bar: "weight sync 8.5 ms".
            if (texts[i].text.startsWith(QStringLiteral("weight sync")))
                continue;
            units << texts[i].text.section(QLatin1Char(' '), -1);
        }
        units.removeDuplicates();
        QCOMPARE(units, QStringList { QStringLiteral("min") });
    }

    // Int4 serving at 32k holds 9 sequences where 256 tokens hold over a thousand: on a linear
    // axis the plan's point sat on the plot's floor; on the log axis it stands clear of it.
    void servingCurveReadsOnALogAxis()
    {
        QVERIFY(openWindow(hardPlan(QStringLiteral("llama-3-70b-int4-32k"))));
        QVERIFY(m_window->selectPanel(QStringLiteral("serving")));
        settle();
        auto* curve = m_window->findChild<ServingCurveChart*>();
        QVERIFY(curve);
        QChart* chart = curve->chartView()->chart();
        QVERIFY(qobject_cast<QLogValueAxis*>(chart->axes(Qt::Vertical).value(0)));
        const QRectF plot = chart->plotArea();
        const QPointF at = chart->mapToPosition(curve->marker()->at(0), curve->marker());
        QVERIFY2(plot.bottom() - at.y() > 0.2 * plot.height(),
            qPrintable(QStringLiteral("point %1 px above the floor of %2")
                           .arg(plot.bottom() - at.y())
                           .arg(plot.height())));
    }

    // TP 8: eight GPUs holding the same bytes get one total over the group, not eight.
    void equalTotalsShareOneLabel()
    {
        QVERIFY(openWindow(hardPlan(QStringLiteral("llama-3-70b-3d"))));
        QVERIFY(m_window->selectPanel(QStringLiteral("serving")));
        settle();
        const auto* bars = m_window->findChild<ServingPanel*>()->findChild<MemoryBarChart*>();
        QVERIFY(bars);
        QCOMPARE(bars->columnCount(), ServingPanel::kMaxGpuBars); // tp 8 drawn as 4 bars, the last "GPU 3 … 7"
        const QStringList drawn = bars->drawnTotals();
        QCOMPARE(drawn.size(), 1);
        QVERIFY2(drawn.front().startsWith(bars->totalText(0)), qPrintable(drawn.front()));
    }
};

ENVELOPE_UI_TEST_MAIN(TestDrawing)
#include "test_drawing.moc"
