#include "charts/stepbreakdownbar.h"

#include <QHelpEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "estimate/estimate.h"
#include "widgets/throughputformat.h"

namespace envelope::ui {
namespace {
constexpr int kBarHeight = 26;
constexpr int kGap = 6;
constexpr int kSwatch = 10;

// Okabe-Ito hues (as the tenant palette): compute in the calm blue, each communication kind its
// own hue, the bubble a neutral grey since it is idle time.
const QColor kComputeColor(0x00, 0x72, 0xB2);
const QColor kDpColor(0xE6, 0x9F, 0x00);
const QColor kTpColor(0xD5, 0x5E, 0x00);
const QColor kPpColor(0xCC, 0x79, 0xA7);
const QColor kCpColor(0x56, 0xB4, 0xE9);
const QColor kEpColor(0x00, 0x9E, 0x73);
const QColor kBubbleColor(0x99, 0x99, 0x99);
// Op-timed compute by class: the compute blue for GEMMs, lighter tints of it for the attention
// core and the memory-bound elementwise work; the optimizer step in the palette's yellow.
const QColor kAttentionColor(0x4D, 0x9C, 0xC9);
const QColor kElementwiseColor(0x99, 0xC5, 0xE0);
const QColor kOptimizerColor(0xF0, 0xE4, 0x42);
} // namespace

QString bottleneckName(const QString& coreName)
{
    if (coreName == QLatin1String("compute"))
        return StepBreakdownBar::tr("compute");
    if (coreName == QLatin1String("pp-bubble"))
        return StepBreakdownBar::tr("pipeline bubble");
    if (coreName == QLatin1String("optimizer"))
        return StepBreakdownBar::tr("optimizer step");
    if (coreName.endsWith(QLatin1String("-comm")))
        return StepBreakdownBar::tr("%1 comm").arg(coreName.chopped(5).toUpper());
    return coreName;
}

StepBreakdownBar::StepBreakdownBar(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void StepBreakdownBar::setFormulaProvider(std::function<QString(const QString&)> provider)
{
    m_formula = std::move(provider);
}

void StepBreakdownBar::setCompute(const TrainingCompute& compute, bool runs)
{
    const Communication& c = compute.communication;
    // The exposed communication shared out over the kinds in proportion to their time, as the
    // core does when it names the bottleneck (compute.cpp); only the drawn widths use it.
    const double commS = c.dpS + c.tpS + c.ppS + c.cpS + c.epS;
    const double exposedShare = commS > 0 ? c.exposedS / commS : 0.0;
    m_segments.clear();
    // Op-timed steps split the compute by op class (issue 22: the step bar shows the classes
    // explain gives); an `mfu` override has one compute figure.
    const bool opTimed = compute.timingSource != "mfu override" && !compute.timingSource.empty();
    if (opTimed) {
        m_segments.push_back({ tr("GEMMs"), QStringLiteral("training.time_breakdown.gemm_s"),
            compute.gemmS, compute.gemmS, kComputeColor });
        if (compute.attentionS > 0)
            m_segments.push_back({ tr("Attention"), QStringLiteral("training.time_breakdown.attention_s"),
                compute.attentionS, compute.attentionS, kAttentionColor });
        if (compute.elementwiseS > 0)
            m_segments.push_back({ tr("Elementwise"),
                QStringLiteral("training.time_breakdown.elementwise_s"), compute.elementwiseS,
                compute.elementwiseS, kElementwiseColor });
    } else {
        m_segments.push_back({ tr("Compute"), QStringLiteral("training.compute_time_s"),
            compute.computeTimeS, compute.computeTimeS, kComputeColor });
    }
    const struct {
        QString name;
        const char* figure;
        double seconds;
        QColor color;
    } comms[] = {
        { tr("DP comm"), "training.communication.dp_s", c.dpS, kDpColor },
        { tr("TP comm"), "training.communication.tp_s", c.tpS, kTpColor },
        { tr("PP comm"), "training.communication.pp_s", c.ppS, kPpColor },
        { tr("CP comm"), "training.communication.cp_s", c.cpS, kCpColor },
        { tr("EP comm"), "training.communication.ep_s", c.epS, kEpColor },
    };
    for (const auto& k : comms)
        if (k.seconds > 0)
            m_segments.push_back({ k.name, QString::fromLatin1(k.figure), k.seconds * exposedShare,
                k.seconds, k.color });
    if (c.ppBubbleS > 0)
        m_segments.push_back(
            { tr("Pipeline bubble"), QStringLiteral("training.communication.pp_bubble_s"),
                c.ppBubbleS, c.ppBubbleS, kBubbleColor });
    if (compute.optimizerS > 0)
        m_segments.push_back({ tr("Optimizer"), QStringLiteral("training.time_breakdown.optimizer_s"),
            compute.optimizerS, compute.optimizerS, kOptimizerColor });

    m_runs = runs;
    // A plan that does not fit runs no step: "Step does not fit", and the greyed bar's total in
    // the bottleneck line (which wraps), so nothing reads as a real step time.
    // A planning doc should say "14.6 s ± 8%" (issue 22): the step carries its uncertainty.
    m_stepText = !runs ? tr("does not fit")
        : compute.uncertainty > 0
        ? tr("%1 ± %2%").arg(durationText(compute.stepTimeS)).arg(std::lround(100 * compute.uncertainty))
        : durationText(compute.stepTimeS);
    m_bottleneckText = !runs
        ? tr("none (greyed: %1 if it fit)").arg(durationText(compute.stepTimeS))
        : tr("%1, %2").arg(bottleneckName(QString::fromStdString(compute.bottleneck)),
            durationText(compute.bottleneckS));
    // The texts' lengths set the height (they wrap); a relayout only when it changes, as a
    // slider step rarely changes it.
    refreshHeight();
    update();
}

QColor StepBreakdownBar::segmentColor(std::size_t i) const
{
    const QColor c = m_segments[i].color;
    return m_runs ? c : QColor::fromHsl(c.hslHue(), 0, 200);
}

QString StepBreakdownBar::legendText(std::size_t i) const
{
    return QStringLiteral("%1 %2").arg(m_segments[i].name, durationText(m_segments[i].seconds));
}

QSize StepBreakdownBar::sizeHint() const
{
    return { 320, m_height > 0 ? m_height : layoutFor(320).height };
}

QSize StepBreakdownBar::minimumSizeHint() const
{
    return { 220, sizeHint().height() };
}

void StepBreakdownBar::refreshHeight()
{
    // The height follows the width (texts wrap), kept as a fixed height rather than Qt's
    // height-for-width: that makes every relayout of the column ask each of its widgets for a
    // height at each candidate width, a third more work per slider step (callgrind).
    m_layout = layoutFor(width()); // paintEvent draws this one while the width holds
    m_layoutWidth = width();
    const int height = m_layout.height;
    if (height != m_height) {
        m_height = height;
        updateGeometry();
    }
}

void StepBreakdownBar::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (event->oldSize().width() != width())
        refreshHeight();
}

StepBreakdownBar::Layout StepBreakdownBar::layoutFor(int width) const
{
    // Nothing is elided: the bottleneck goes under the step time when the line is too short, the
    // legend takes one column when an entry does not fit half the width, and a long entry
    // ("Pipeline bubble 433.8 ms") wraps within its column.
    Layout l;
    const QFontMetrics metrics = fontMetrics();
    QFont bold = font();
    bold.setBold(true);
    const int line = metrics.height();
    const int stepWidth = QFontMetrics(bold).horizontalAdvance(tr("Step %1").arg(m_stepText));
    l.step = QRect(0, 2, stepWidth, line);
    const QString bottleneck = tr("bottleneck: %1").arg(m_bottleneckText);
    const int bottleneckWidth = metrics.horizontalAdvance(bottleneck);
    if (stepWidth + 10 + bottleneckWidth <= width)
        l.bottleneck = QRect(width - bottleneckWidth, 2, bottleneckWidth, line);
    else
        l.bottleneck = metrics.boundingRect(
            QRect(0, l.step.bottom() + 1, width, 10 * line), Qt::TextWordWrap, bottleneck);
    l.header = QRect(0, 0, width, std::max(l.step.bottom(), l.bottleneck.bottom()) + 3);
    l.bar = QRect(0, l.header.bottom() + 1 + kGap, width, kBarHeight);
    double total = 0;
    for (const Segment& s : m_segments)
        total += std::max(s.seconds, 0.0);
    double x = l.bar.left();
    for (const Segment& s : m_segments) {
        const double w = total > 0 ? l.bar.width() * std::max(s.seconds, 0.0) / total : 0.0;
        const int left = static_cast<int>(std::round(x));
        const int right = static_cast<int>(std::round(x + w));
        l.segments.emplace_back(left, l.bar.top(), right - left, l.bar.height());
        x += w;
    }
    const int textIndent = kSwatch + 5;
    const int halfText = width / 2 - textIndent - 6;
    bool twoColumns = true;
    for (std::size_t i = 0; i < m_segments.size(); ++i)
        twoColumns = twoColumns && metrics.horizontalAdvance(legendText(i)) <= halfText;
    const int columns = twoColumns ? 2 : 1;
    const int columnWidth = width / columns;
    int y = l.bar.bottom() + 1 + kGap;
    for (std::size_t i = 0; i < m_segments.size(); i += std::size_t(columns)) {
        int rowHeight = line + 4;
        for (int c = 0; c < columns && i + std::size_t(c) < m_segments.size(); ++c) {
            const QRect area(
                c * columnWidth + textIndent, y + 2, columnWidth - textIndent - 6, 10 * line);
            // Word-wrapped layout only for an entry too long for its column (it is slower).
            const QString entry = legendText(i + std::size_t(c));
            const int advance = metrics.horizontalAdvance(entry);
            const QRect text = advance <= area.width()
                ? QRect(area.left(), area.top(), advance, line)
                : metrics.boundingRect(
                    area, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, entry);
            l.legendText.push_back(text);
            rowHeight = std::max(rowHeight, text.height() + 4);
        }
        for (int c = 0; c < columns && i + std::size_t(c) < m_segments.size(); ++c)
            l.legend.emplace_back(c * columnWidth, y, columnWidth, rowHeight);
        y += rowHeight;
    }
    l.height = y;
    return l;
}

void StepBreakdownBar::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const Layout l = m_layoutWidth == width() ? m_layout : layoutFor(width());
    const QPalette& pal = palette();

    QFont bold = font();
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(pal.color(QPalette::Text));
    painter.drawText(l.step, Qt::AlignLeft | Qt::AlignVCenter, tr("Step %1").arg(m_stepText));
    painter.setFont(font());
    painter.setPen(pal.color(QPalette::PlaceholderText));
    const int line = fontMetrics().height();
    const int wrapBottleneck = l.bottleneck.height() > line ? int(Qt::TextWordWrap) : 0;
    painter.drawText(l.bottleneck, Qt::AlignLeft | Qt::AlignTop | wrapBottleneck,
        tr("bottleneck: %1").arg(m_bottleneckText));

    painter.setPen(Qt::NoPen);
    painter.setBrush(pal.color(QPalette::AlternateBase));
    painter.drawRoundedRect(l.bar, 3, 3);
    for (size_t i = 0; i < m_segments.size(); ++i) {
        if (l.segments[i].width() <= 0)
            continue;
        painter.setBrush(segmentColor(i));
        painter.drawRect(l.segments[i]);
        if (&m_segments[i] == &m_segments.back() || l.segments[i].width() < 2)
            continue;
        painter.setPen(QPen(pal.color(QPalette::Base), 1));
        painter.drawLine(l.segments[i].topRight(), l.segments[i].bottomRight());
        painter.setPen(Qt::NoPen);
    }

    painter.setPen(pal.color(QPalette::Text));
    for (size_t i = 0; i < m_segments.size(); ++i) {
        const QRect text = l.legendText[i];
        const QRect swatch(l.legend[i].left(), text.top() + (line - kSwatch) / 2, kSwatch, kSwatch);
        painter.fillRect(swatch, segmentColor(i));
        // Only an entry laid out on more than one line wraps: a one-line rect is its text's
        // advance in whole pixels, which word wrap may find a fraction too narrow.
        const int wrap = text.height() > line ? int(Qt::TextWordWrap) : 0;
        painter.drawText(text, Qt::AlignLeft | Qt::AlignTop | wrap, legendText(i));
    }
}

std::vector<DrawnText> StepBreakdownBar::texts() const
{
    const Layout l = layoutFor(width());
    std::vector<DrawnText> out { { l.step, tr("Step %1").arg(m_stepText) },
        { l.bottleneck, tr("bottleneck: %1").arg(m_bottleneckText) } };
    for (std::size_t i = 0; i < m_segments.size(); ++i)
        out.push_back({ l.legendText[i], legendText(i) });
    return out;
}

QString StepBreakdownBar::segmentToolTip(const Segment& s) const
{
    QString head
        = QStringLiteral("<b>%1</b>: %2").arg(s.name.toHtmlEscaped(), durationText(s.seconds));
    if (s.reportedS != s.seconds)
        head += tr(" exposed of %1").arg(durationText(s.reportedS));
    const QString formula = m_formula ? m_formula(s.figure) : QString();
    return formula.isEmpty() ? head : head + QStringLiteral("<br>") + formula;
}

bool StepBreakdownBar::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        const Layout l = layoutFor(width());
        for (size_t i = 0; i < m_segments.size(); ++i)
            if (l.segments[i].contains(help->pos()) || l.legend[i].contains(help->pos())) {
                QToolTip::showText(help->globalPos(), segmentToolTip(m_segments[i]), this);
                return true;
            }
        if (l.header.contains(help->pos()) && m_formula) {
            const QString text = m_formula(QStringLiteral("training.step_time_s"))
                + QStringLiteral("<br>") + m_formula(QStringLiteral("training.bottleneck"));
            QToolTip::showText(help->globalPos(), text, this);
            return true;
        }
        QToolTip::hideText();
        event->ignore();
        return true;
    }
    return QWidget::event(event);
}

} // namespace envelope::ui
