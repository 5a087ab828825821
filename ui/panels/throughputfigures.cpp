#include "panels/throughputfigures.h"

#include <cmath>

#include <QGridLayout>
#include <QLabel>

#include "estimate/estimate.h"
#include "widgets/formulatooltips.h"
#include "widgets/throughputformat.h"
#include "widgets/valuelabel.h"

namespace envelope::ui {

ThroughputFigures::ThroughputFigures(FormulaToolTips* toolTips, QWidget* parent)
    : QWidget(parent)
    , m_toolTips(toolTips)
    , m_grid(new QGridLayout(this))
{
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(12);
    m_grid->setVerticalSpacing(2);
    m_grid->setColumnStretch(1, 1);
    addSection(tr("Speed"));
    addRow(tr("Tokens/s"), QStringLiteral("training.tokens_per_s"),
        tr("Whole job: global batch tokens / step time"));
    addRow(tr("  per GPU"), QStringLiteral("training.tokens_per_s_per_gpu"));
    addRow(tr("Global batch"), QStringLiteral("training.global_batch_tokens"));
    addSection(tr("Work and utilisation"));
    addRow(tr("FLOPs/token"), QStringLiteral("training.flops_per_token"),
        tr("Model FLOPs per token (what MFU counts)"));
    addRow(tr("  hardware"), QStringLiteral("training.hardware_flops_per_token"),
        tr("With the forward that recompute repeats (what HFU counts)"));
    addRow(tr("Peak / GPU"), QStringLiteral("training.peak_flops_per_gpu"));
    addRow(tr("Timing"), QStringLiteral("training.timing_source"),
        tr("How the step was timed: op by op from the GPU's measured kernel tables, from its "
           "specs when it has none, or the plan's MFU override; ± the expected error "
           "(docs/validation-timing.md)"));
    addRow(tr("MFU (achieved)"), QStringLiteral("training.effective_mfu"),
        tr("Model FLOPs over the whole step (exposed communication and the pipeline bubble "
           "included); under an MFU override, the override → what the step achieves"));
    addRow(tr("HFU"), QStringLiteral("training.hfu"),
        tr("Hardware FLOPs (recompute included) over the whole step"));
    addRow(tr("Observed MFU"), QStringLiteral("training.observed_mfu"),
        tr("From the plan's measured step time or tokens/s"));
    addRow(tr("Observed HFU"), QStringLiteral("training.observed_hfu"));
    m_trainSection = addSection(QString());
    addRow(tr("Time"), QStringLiteral("training.train_time_s"));
    addRow(tr("GPU-hours"), QStringLiteral("training.gpu_hours"));
    addRow(tr("Cost"), QStringLiteral("training.cost"), tr("GPU-hours x the GPU's price per hour"));
}

QLabel* ThroughputFigures::addSection(const QString& title)
{
    auto* label = new QLabel(title, this);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    label->setContentsMargins(0, m_grid->rowCount() > 0 ? 6 : 0, 0, 0);
    m_grid->addWidget(label, m_grid->rowCount(), 0, 1, 2);
    return label;
}

QLabel* ThroughputFigures::addRow(
    const QString& caption, const QString& figure, const QString& help)
{
    const int row = m_grid->rowCount();
    auto* captionLabel = new QLabel(caption, this);
    captionLabel->setForegroundRole(QPalette::PlaceholderText);
    QLabel* value = new ValueLabel(this);
    value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    QFont font = value->font();
    font.setBold(!caption.startsWith(QLatin1Char(' ')));
    value->setFont(font);
    for (QLabel* label : { captionLabel, value }) {
        label->setToolTip(help);
        m_toolTips->attach(label, figure);
    }
    m_grid->addWidget(captionLabel, row, 0);
    m_grid->addWidget(value, row, 1);
    m_rows[figure] = { captionLabel, value };
    return value;
}

void ThroughputFigures::setRowVisible(const QString& figure, bool visible)
{
    const Row& row = m_rows.at(figure);
    row.caption->setVisible(visible);
    row.value->setVisible(visible);
}

void ThroughputFigures::setCompute(const TrainingCompute& c, const Plan& plan, bool runs)
{
    const auto set = [this](const char* figure, const QString& text) {
        m_rows.at(QString::fromLatin1(figure)).value->setText(text);
    };
    // Figures a plan that does not fit never reaches: greyed, "does not fit".
    const auto setIfRuns = [this, runs](const char* figure, const QString& text) {
        QLabel* value = m_rows.at(QString::fromLatin1(figure)).value;
        value->setText(runs ? text : tr("does not fit"));
        value->setForegroundRole(runs ? QPalette::WindowText : QPalette::PlaceholderText);
    };
    setIfRuns("training.tokens_per_s", tokenRateText(c.tokensPerS));
    setIfRuns("training.tokens_per_s_per_gpu", tokenRateText(c.tokensPerSPerGpu));
    set("training.global_batch_tokens", tokensText(c.globalBatchTokens));
    set("training.flops_per_token", flopsText(c.flopsPerToken));
    set("training.hardware_flops_per_token", flopsText(c.hardwareFlopsPerToken));
    set("training.peak_flops_per_gpu", flopRateText(c.peakFlopsPerGpu));
    // An `mfu` override shows what the plan set and what the step achieves; an op-timed step
    // has MFU only as an output, and its timing source beside it.
    setIfRuns("training.effective_mfu",
        plan.training.mfuOverride
            ? tr("%1 → %2").arg(percentText(plan.training.mfu), percentText(c.effectiveMfu))
            : percentText(c.effectiveMfu));
    set("training.timing_source",
        tr("%1 ± %2%").arg(QString::fromStdString(c.timingSource)).arg(std::lround(100 * c.uncertainty)));
    setIfRuns("training.hfu", percentText(c.hfu));
    set("training.observed_mfu", c.observedMfu ? percentText(*c.observedMfu) : QString());
    set("training.observed_hfu", c.observedHfu ? percentText(*c.observedHfu) : QString());
    setRowVisible(QStringLiteral("training.observed_mfu"), c.observedMfu.has_value());
    setRowVisible(QStringLiteral("training.observed_hfu"), c.observedHfu.has_value());
    m_trainSection->setText(tr("To train %1").arg(tokensText(plan.training.trainTokens)));
    setIfRuns("training.train_time_s", durationText(c.trainTimeS));
    setIfRuns("training.gpu_hours", gpuHoursText(c.gpuHours));
    setIfRuns("training.cost", usdText(c.cost));
}

QLabel* ThroughputFigures::valueLabel(const QString& figure) const
{
    const auto it = m_rows.find(figure);
    return it == m_rows.end() ? nullptr : it->second.value;
}

QString ThroughputFigures::valueText(const QString& figure) const
{
    const QLabel* label = valueLabel(figure);
    return label && !label->isHidden() ? label->text() : QString();
}

} // namespace envelope::ui
