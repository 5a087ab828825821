#include "panels/summarystrip.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include "charts/memoryview.h"
#include "document/trainingresults.h"
#include "widgets/appresources.h"
#include "widgets/flowlayout.h"
#include "widgets/valuelabel.h"

namespace envelope::ui {

SummaryStrip::SummaryStrip(QWidget* parent)
    : QFrame(parent)
{
    setFrameShape(QFrame::StyledPanel);
    // Read once: setResults compares against them on every slider step.
    m_fitsBadgeStyle = loadStyleSheet(QStringLiteral("fit-badge"), fitsColor());
    m_tightBadgeStyle = loadStyleSheet(QStringLiteral("fit-badge"), tightColor());
    m_overflowBadgeStyle = loadStyleSheet(QStringLiteral("fit-badge"), overflowColor());
    m_overflowStyle = loadStyleSheet(QStringLiteral("overflow-text"), overflowColor());
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::AlternateBase);
    // Cards flow onto a second row in a narrow window rather than clipping their figures.
    m_layout = new FlowLayout(this, 18, 6);
    m_layout->setContentsMargins(10, 6, 10, 6);
    m_badge = new QLabel(this);
    m_badge->setAlignment(Qt::AlignCenter);
    m_badge->setMinimumWidth(120);
    QFont badgeFont = m_badge->font();
    badgeFont.setBold(true);
    badgeFont.setPointSizeF(badgeFont.pointSizeF() * 1.2);
    m_badge->setFont(badgeFont);
    m_layout->addWidget(m_badge);
    m_total = addCard(tr("Per GPU"));
    m_headroom = addCard(tr("Headroom"), &m_headroomCaption);
    m_minGpus = addCard(tr("Min GPUs"));
    m_largest = addCard(tr("Largest tenant"));
    m_vsPinned = addCard(tr("vs pinned"), &m_vsPinnedCaption);
    m_vsPinned->parentWidget()->setVisible(false); // shown once a plan is pinned

    // The best single change takes the rest of the row; a long one ("micro-batch 16 -> 1
    // (grad-accum x16) saves 52.4 GB (not enough alone)") wraps within it, and below 260 px
    // it moves to a row of its own.
    m_apply = new QToolButton;
    m_apply->setText(tr("Appl&y"));
    m_apply->setToolTip(tr("Apply this change to the plan (Undo reverts it)"));
    m_apply->setVisible(false);
    // Keeps its place when hidden, so crossing the fit line re-lays out nothing.
    QSizePolicy policy = m_apply->sizePolicy();
    policy.setRetainSizeWhenHidden(true);
    m_apply->setSizePolicy(policy);
    connect(m_apply, &QToolButton::clicked, this, &SummaryStrip::applySuggestionRequested);
    m_suggestion = addCard(tr("What makes it fit"), nullptr, m_apply);
    m_suggestion->setWordWrap(true);
    m_layout->setLastItemElastic(260);
}

ValueLabel* SummaryStrip::addCard(const QString& title, QLabel** captionOut, QWidget* trailing)
{
    auto* card = new QWidget(this);
    auto* column = new QVBoxLayout(card);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    auto* caption = new QLabel(title, card);
    caption->setForegroundRole(QPalette::PlaceholderText);
    auto* value = new ValueLabel(card);
    value->setGrowOnly(true);
    QFont font = value->font();
    font.setPointSizeF(font.pointSizeF() * 1.25);
    font.setBold(true);
    value->setFont(font);
    if (captionOut)
        *captionOut = caption;
    column->addWidget(caption);
    if (trailing) {
        auto* row = new QHBoxLayout;
        row->setSpacing(8);
        row->addWidget(value);
        row->addWidget(trailing, 0, Qt::AlignVCenter);
        row->addStretch(1);
        column->addLayout(row);
    } else {
        column->addWidget(value);
    }
    m_layout->addWidget(card);
    return value;
}

void SummaryStrip::setResults(const TrainingResults& results, int gpus, ByteUnits units)
{
    const TrainingMemory& m = results.estimate.training;
    const double total = m.perGpu.total();
    m_total->setText(
        tr("%1 of %2").arg(bytesText(total, units), bytesText(m.gpuMemoryBytes, units)));

    const double room = m.gpuMemoryBytes - total;
    m_headroomCaption->setText(room >= 0 ? tr("Headroom") : tr("Overflow"));
    m_headroom->setText(bytesText(std::abs(room), units));

    // The core's three-valued verdict: fits under the usable line, tight above it, over HBM,
    // each in its own colour (a tight plan is not drawn green).
    m_badge->setText(m.verdict == Verdict::Fits ? tr("✔ FITS")
            : m.verdict == Verdict::Tight       ? tr("⚠ TIGHT")
                                                : tr("✘ DOES NOT FIT"));
    m_badge->setToolTip(m.verdict == Verdict::Tight
            ? tr("Above the usable line (%1): allocator spikes may run out of memory")
                  .arg(bytesText(m.usableBytes, units))
            : QString());
    // Style sheets re-polish the widget: set them only when the state flips.
    const QString& badgeStyle = m.verdict == Verdict::Fits ? m_fitsBadgeStyle
        : m.verdict == Verdict::Tight                        ? m_tightBadgeStyle
                                                             : m_overflowBadgeStyle;
    if (m_badge->styleSheet() != badgeStyle)
        m_badge->setStyleSheet(badgeStyle);
    const QString headroomStyle = room >= 0 ? QString() : m_overflowStyle;
    if (m_headroom->styleSheet() != headroomStyle)
        m_headroom->setStyleSheet(headroomStyle);

    if (m.minGpus <= 0)
        m_minGpus->setText(tr("none fits"));
    else
        m_minGpus->setText(tr("%1 (plan: %2)").arg(m.minGpus).arg(gpus));

    Tenant largest = kTenants.front();
    for (Tenant t : kTenants)
        if (tenantBytes(m.perGpu, t) > tenantBytes(m.perGpu, largest))
            largest = t;
    m_largest->setSwatch(tenantColor(largest));
    m_largest->setText(QStringLiteral("%1 %2").arg(
        tenantName(largest), bytesText(tenantBytes(m.perGpu, largest), units)));

    QString suggestion;
    if (m.fits)
        suggestion = tr("none needed");
    else if (results.suggestionsPending)
        suggestion = tr("searching…");
    else if (results.suggestions.empty())
        suggestion = tr("no layout fits up to 65,536 GPUs");
    else {
        const FitSuggestion& best = results.suggestions.front();
        const QString text = QString::fromStdString(best.description);
        suggestion = best.makesItFit ? text : tr("%1 (not enough alone)").arg(text);
    }
    if (m_suggestion->text() != suggestion) {
        m_suggestion->setText(suggestion);
        m_suggestion->setToolTip(suggestion);
    }
    // setVisible re-polishes and re-lays out even when nothing changes: only on a flip.
    const bool offer = !m.fits && !results.suggestions.empty();
    if (m_apply->isHidden() == offer)
        m_apply->setVisible(offer);
}

void SummaryStrip::setPinComparison(const QString& caption, const QString& text)
{
    m_vsPinnedCaption->setText(caption);
    m_vsPinned->setText(text);
    m_vsPinned->setToolTip(text);
    const bool show = !text.isEmpty();
    if (m_vsPinned->parentWidget()->isHidden() == show)
        m_vsPinned->parentWidget()->setVisible(show);
}

QString SummaryStrip::pinComparisonText() const
{
    return m_vsPinned->text();
}

QString SummaryStrip::totalText() const
{
    return m_total->text();
}
QString SummaryStrip::headroomText() const
{
    return m_headroom->text();
}
QString SummaryStrip::badgeText() const
{
    return m_badge->text();
}
QString SummaryStrip::badgeStyleSheet() const
{
    return m_badge->styleSheet();
}
QString SummaryStrip::minGpusText() const
{
    return m_minGpus->text();
}
QString SummaryStrip::largestText() const
{
    return m_largest->text();
}
QString SummaryStrip::suggestionText() const
{
    return m_suggestion->text();
}

} // namespace envelope::ui
