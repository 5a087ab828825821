#include "charts/rltimeline.h"

#include <QPainter>
#include <QPainterPath>
#include <QStringList>

#include <algorithm>
#include <cmath>

#include "base/units.h"
#include "charts/tenantpalette.h"
#include "estimate/estimate.h"

namespace envelope::ui {
namespace {
// Okabe-Ito hues for the three phases (distinct from the HBM line's vermillion).
const QColor kRolloutColor(0x56, 0xB4, 0xE9);
const QColor kForwardColor(0x00, 0x9E, 0x73);
const QColor kTrainColor(0xE6, 0x9F, 0x00);

QString duration(double s)
{
    return QString::fromStdString(formatDuration(s));
}

struct TimeUnit {
    double seconds;
    QString suffix;
};

// The unit a span of time reads best in: seconds below two minutes, minutes below two hours.
TimeUnit unitFor(double spanS)
{
    if (spanS >= 7200)
        return { 3600, QStringLiteral(" h") };
    if (spanS >= 120)
        return { 60, QStringLiteral(" min") };
    return { 1, QStringLiteral(" s") };
}

// "4.12 min", "11.1 s": three significant figures; a tick's "250 s" keeps its round value.
QString inUnit(double s, const TimeUnit& unit, bool tick = false)
{
    const double v = s / unit.seconds;
    if (tick)
        return QString::number(v, 'g', 4) + unit.suffix;
    const int decimals = v < 10 ? 2 : (v < 100 ? 1 : 0);
    return QString::number(v, 'f', decimals) + unit.suffix;
}

// A tick spacing of 1, 2 or 5 x 10^k giving about `count` ticks over `span`.
double niceStep(double span, int count)
{
    if (span <= 0)
        return 1;
    const double raw = span / count;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : { 1.0, 2.0, 5.0, 10.0 })
        if (raw <= m * magnitude)
            return m * magnitude;
    return 10 * magnitude;
}
} // namespace

RlTimeline::RlTimeline(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QSize RlTimeline::sizeHint() const
{
    return { 600, minimumSizeHint().height() };
}

QSize RlTimeline::minimumSizeHint() const
{
    const int line = fontMetrics().height();
    return { 300, 3 * (line + 12) + 2 * line + 24 };
}

void RlTimeline::setStep(const RlEstimate& rl, bool overlapped)
{
    m_segments.clear();
    m_rows = { tr("Rollout"), tr("Frozen forwards"), tr("Train") };
    m_overlapped = overlapped;
    m_staleness = rl.staleness;
    m_updatesPerSync = rl.updatesPerSync;
    m_partial = rl.partialRollouts;
    m_runs = rl.fits;
    auto finite = [](double v) { return std::isfinite(v) && v > 0 ? v : 0.0; };
    m_stepS = finite(rl.stepS);
    m_bottleneck = QString::fromStdString(rl.bottleneck);
    const double g = finite(rl.rolloutS), w = finite(rl.weightSyncS);
    const double r = g + w, f = finite(rl.referenceS), t = finite(rl.trainS);
    m_segments.push_back({ tr("rollout"), 0, 0, g, kRolloutColor });
    if (overlapped) {
        // The rollout runs beside the forwards and the update (streamed in N parts, drawn as
        // one); the trainer starts after its wait for the first completions, and the step ends
        // with the weight sync both pools pause for (docs/formulas-rl.md §4).
        const double idle = finite(rl.trainerIdleS);
        const double syncStart = std::max(g, m_stepS - w);
        m_segments.push_back({ tr("weight sync"), 0, syncStart, syncStart + w, kForwardColor });
        m_segments.push_back(
            { tr("forwards (reference, old log-probs)"), 1, idle, idle + f, kForwardColor });
        m_segments.push_back({ tr("train"), 2, idle + f, idle + f + t, kTrainColor });
    } else {
        // The rollout row ends with the weight sync that brings the engines the new weights.
        m_segments.push_back({ tr("weight sync"), 0, g, r, kForwardColor });
        m_segments.push_back(
            { tr("forwards (reference, old log-probs)"), 1, r, r + f, kForwardColor });
        m_segments.push_back({ tr("train"), 2, r + f, r + f + t, kTrainColor });
    }
    update();
}

RlTimeline::Layout RlTimeline::layoutFor(int width) const
{
    Layout l;
    const QFontMetrics fm = fontMetrics();
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics bfm(bold);
    const int line = fm.height();
    // The row labels right-aligned before the bars, measured in the font each is drawn in.
    int labelWidth = 0;
    for (int i = 0; i < m_rows.size(); ++i)
        labelWidth
            = std::max(labelWidth, (isBottleneckRow(i) ? bfm : fm).horizontalAdvance(m_rows[i]));
    l.left = labelWidth + 16;
    l.right = width - 16;
    l.top = line + 10;
    l.rowHeight = line + 12;
    const double span = std::max(m_stepS, 1e-9);
    l.scale = (l.right - l.left) / span;
    // One unit for the bars' labels and the axis: the step's (s, min or h).
    const TimeUnit unit = unitFor(span);

    // What lets generation run ahead: "one-step off-policy", "staleness 0.5, partial
    // rollouts, 4 updates per sync", or "4 updates per sync" alone (streamed, on-policy).
    QStringList how;
    if (m_staleness > 0)
        how << (m_staleness == 1 ? tr("one-step off-policy") : tr("staleness %1").arg(m_staleness));
    if (m_partial)
        how << tr("partial rollouts");
    if (m_updatesPerSync > 1)
        how << tr("%1 updates per sync").arg(m_updatesPerSync);
    const QString title = !m_runs
        ? tr("Does not fit: no step runs (greyed: %1 if the memory allowed)").arg(duration(m_stepS))
        : m_overlapped
        ? tr("One step, %1 (rollout overlaps training): %2")
              .arg(how.join(QStringLiteral(", ")), duration(m_stepS))
        : !how.isEmpty()
        ? tr("One step, %1, phases in turn on shared GPUs: %2")
              .arg(how.join(QStringLiteral(", ")), duration(m_stepS))
        : tr("One step, synchronous: %1").arg(duration(m_stepS));
    l.texts.push_back({ QRectF(l.left, 2, bfm.horizontalAdvance(title), line), title, true });
    for (int i = 0; i < m_rows.size(); ++i) {
        const bool boldRow = isBottleneckRow(i);
        const int w = (boldRow ? bfm : fm).horizontalAdvance(m_rows[i]);
        const int y = l.top + i * l.rowHeight;
        l.texts.push_back({ QRectF(labelWidth + 8 - w, y + (l.rowHeight - line) / 2, w, line),
            m_rows[i], boldRow });
    }
    for (const Segment& s : m_segments) {
        if (s.endS <= s.startS)
            continue;
        const QRectF box(l.left + s.startS * l.scale, l.top + s.row * l.rowHeight + 3,
            std::max(1.0, (s.endS - s.startS) * l.scale), l.rowHeight - 6);
        l.boxes.push_back(box);
        // A segment too thin for its time in the step's unit (the weight sync beside a
        // 10-minute rollout) is named, with its time in its own unit, beside the bar.
        QString text = inUnit(s.endS - s.startS, unit);
        if (fm.horizontalAdvance(text) + 8 >= (s.endS - s.startS) * l.scale)
            text = tr("%1 %2").arg(s.name, duration(s.endS - s.startS));
        const int w = fm.horizontalAdvance(text);
        double x = box.center().x() - w / 2.0; // inside when it fits
        if (w + 8 >= box.width())
            x = box.right() + 4 + w <= width ? box.right() + 4 : box.left() - 4 - w;
        l.texts.push_back({ QRectF(x, box.center().y() - line / 2.0, w, line), text, false,
            w + 8 < box.width() });
    }

    // The time axis: ticks in the same unit, each label kept in the widget and clear of the
    // previous one.
    l.axisY = l.top + int(m_rows.size()) * l.rowHeight + 2;
    const double step = niceStep(span / unit.seconds, 8) * unit.seconds;
    double lastRight = -1e9;
    for (double t = 0; t <= span * 1.0001; t += step) {
        const double x = l.left + t * l.scale;
        l.ticks.push_back(x);
        const QString label = inUnit(t, unit, true);
        const int w = fm.horizontalAdvance(label);
        const double labelX = std::clamp(x - w / 2.0, 0.0, double(width - w));
        if (labelX < lastRight + 6)
            continue;
        l.texts.push_back({ QRectF(labelX, l.axisY + 5, w, line), label, false });
        lastRight = labelX + w;
    }
    return l;
}

bool RlTimeline::isBottleneckRow(int row) const
{
    return (row == 0 && m_bottleneck == QLatin1String("rollout"))
        || (row > 0 && m_bottleneck == QLatin1String("training"));
}

std::vector<DrawnText> RlTimeline::texts() const
{
    std::vector<DrawnText> out;
    for (const LaidText& t : layoutFor(width()).texts)
        out.push_back({ t.rect, t.text });
    return out;
}

void RlTimeline::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    const Layout l = layoutFor(width());
    QFont bold = font();
    bold.setBold(true);

    std::size_t box = 0;
    for (const Segment& s : m_segments) {
        if (s.endS <= s.startS)
            continue;
        QPainterPath path;
        path.addRoundedRect(l.boxes[box++], 3, 3);
        // A job that does not fit: greyed bars, what it would take, not a real step.
        const QColor fill = m_runs ? s.color : QColor::fromHsl(s.color.hslHue(), 0, 200);
        p.fillPath(path, fill);
        p.setPen(QPen(fill.darker(130), 1));
        p.drawPath(path);
    }
    for (const LaidText& t : l.texts) {
        p.setFont(t.bold ? bold : font());
        p.setPen(t.onBar ? QColor(Qt::black) : palette().color(QPalette::Text));
        p.drawText(t.rect, Qt::AlignCenter, t.text);
    }

    QColor axis = palette().color(QPalette::Text);
    axis.setAlphaF(0.5f);
    p.setPen(axis);
    p.drawLine(l.left, l.axisY, l.right, l.axisY);
    for (double x : l.ticks)
        p.drawLine(QPointF(x, l.axisY), QPointF(x, l.axisY + 4));
    p.setPen(QPen(capacityLineColor(), 1.6, Qt::DashLine));
    p.drawLine(QPointF(l.left + m_stepS * l.scale, l.top - 4),
        QPointF(l.left + m_stepS * l.scale, l.axisY));
}

} // namespace envelope::ui
