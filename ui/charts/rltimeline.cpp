#include "charts/rltimeline.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

#include "estimate/estimate.h"
#include "charts/tenantpalette.h"
#include "base/units.h"

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
    auto finite = [](double v) { return std::isfinite(v) && v > 0 ? v : 0.0; };
    m_stepS = finite(rl.stepS);
    m_bottleneck = QString::fromStdString(rl.bottleneck);
    const double r = finite(rl.rolloutS), f = finite(rl.referenceS), t = finite(rl.trainS);
    if (overlapped) {
        // Step k's rollout runs beside step k-1's forwards and update (one-step off-policy).
        m_segments.push_back({ tr("rollout"), 0, 0, r, kRolloutColor });
        m_segments.push_back({ tr("reference / critic forward"), 1, 0, f, kForwardColor });
        m_segments.push_back({ tr("train"), 2, f, f + t, kTrainColor });
    } else {
        m_segments.push_back({ tr("rollout"), 0, 0, r, kRolloutColor });
        m_segments.push_back({ tr("reference / critic forward"), 1, r, r + f, kForwardColor });
        m_segments.push_back({ tr("train"), 2, r + f, r + f + t, kTrainColor });
    }
    update();
}

void RlTimeline::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    const QFontMetrics fm = fontMetrics();
    const int line = fm.height();
    int labelWidth = 0;
    for (const QString& row : m_rows)
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(row));
    const int left = labelWidth + 16;
    const int right = width() - 16;
    const int top = line + 10;
    const int rowHeight = line + 12;
    const double span = std::max(m_stepS, 1e-9);
    const double scale = (right - left) / span;
    auto xAt = [&](double s) { return left + s * scale; };

    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(left, 0, right - left, line + 4), Qt::AlignLeft | Qt::AlignVCenter,
        m_overlapped ? tr("One step, one-step off-policy (rollout overlaps training): %1")
                           .arg(duration(m_stepS))
                     : tr("One step, synchronous: %1").arg(duration(m_stepS)));
    p.setFont(font());

    // Rows and their labels; the bottleneck's label in bold.
    for (int i = 0; i < m_rows.size(); ++i) {
        const int y = top + i * rowHeight;
        const bool bottleneck = (i == 0 && m_bottleneck == QLatin1String("rollout"))
            || (i > 0 && m_bottleneck == QLatin1String("training"));
        p.setFont(bottleneck ? bold : font());
        p.setPen(palette().color(QPalette::Text));
        p.drawText(
            QRect(0, y, labelWidth + 8, rowHeight), Qt::AlignRight | Qt::AlignVCenter, m_rows[i]);
    }
    p.setFont(font());

    for (const Segment& s : m_segments) {
        if (s.endS <= s.startS)
            continue;
        const QRectF box(xAt(s.startS), top + s.row * rowHeight + 3,
            std::max(1.0, (s.endS - s.startS) * scale), rowHeight - 6);
        QPainterPath path;
        path.addRoundedRect(box, 3, 3);
        p.fillPath(path, s.color);
        p.setPen(QPen(s.color.darker(130), 1));
        p.drawPath(path);
        const QString text = duration(s.endS - s.startS);
        const int w = fm.horizontalAdvance(text);
        if (w + 8 < box.width()) {
            p.setPen(Qt::black);
            p.drawText(box, Qt::AlignCenter, text);
        } else {
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QPointF(box.right() + 4, box.center().y() + fm.ascent() / 2.0 - 1), text);
        }
    }

    // Time axis with ticks, and the step's end.
    const int axisY = top + int(m_rows.size()) * rowHeight + 2;
    QColor axis = palette().color(QPalette::Text);
    axis.setAlphaF(0.5f);
    p.setPen(axis);
    p.drawLine(left, axisY, right, axisY);
    const double step = niceStep(span, 8);
    for (double s = 0; s <= span * 1.0001; s += step) {
        const double x = xAt(s);
        p.drawLine(QPointF(x, axisY), QPointF(x, axisY + 4));
        const QString label = QString::number(s, 'g', 4) + QStringLiteral(" s");
        p.drawText(QRectF(x - 40, axisY + 4, 80, line), Qt::AlignHCenter | Qt::AlignTop, label);
    }
    p.setPen(QPen(capacityLineColor(), 1.6, Qt::DashLine));
    p.drawLine(QPointF(xAt(m_stepS), top - 4), QPointF(xAt(m_stepS), axisY));
}

} // namespace envelope::ui
