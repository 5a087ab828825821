#include "controls/throughputcontrols.h"

#include <QFormLayout>
#include <QSlider>

#include "document/plandocument.h"
#include "controls/sliderspin.h"

namespace envelope::ui {
namespace {
constexpr double kBillion = 1e9;
constexpr double kPercent = 100;
constexpr int kSliderMinimumWidth = 40;
} // namespace

ThroughputControls::ThroughputControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Assumptions"), document, parent)
    , m_mfu(new SliderSpin(SliderSpin::Scale::Linear, 5, 90, 1, this))
    , m_trainTokens(new SliderSpin(SliderSpin::Scale::Log, 1, 1e5, 1, this))
    , m_overlap(new SliderSpin(SliderSpin::Scale::Linear, 0, 100, 0, this))
{
    m_mfu->setSuffix(tr(" %"));
    m_mfu->setToolTip(tr("Model FLOPs utilisation while computing: 35-55% is typical of large "
                         "dense training on H100/A100 (PaLM 46%, Megatron-LM 52%)"));
    m_trainTokens->setSuffix(tr(" B"));
    m_trainTokens->setToolTip(tr("Billions of tokens to train on, for time, GPU-hours and cost"));
    m_overlap->setSuffix(tr(" %"));
    m_overlap->setToolTip(tr("Share of the communication that hides behind compute "
                             "(at most the compute time)"));
    // The column is narrow: let the sliders give way before the exact values do.
    for (SliderSpin* control : { m_mfu, m_trainTokens, m_overlap })
        control->slider()->setMinimumWidth(kSliderMinimumWidth);
    // In a narrow column a label goes above its field rather than clipping it.
    form()->setRowWrapPolicy(QFormLayout::WrapLongRows);
    // The step is timed from measured kernels; the MFU slider is an explicit override of that
    // (issue 22), so its label says so.
    form()->addRow(tr("M&FU override:"), m_mfu);
    m_mfu->setToolTip(tr("Without an override the step is timed op by op from the GPU's measured "
                         "kernel tables and MFU is an output. Dragging this sets a fixed kernel "
                         "efficiency instead."));
    form()->addRow(tr("To&kens:"), m_trainTokens);
    form()->addRow(tr("O&verlap:"), m_overlap);

    connect(m_mfu, &SliderSpin::valueEdited, this, [this](double v) {
        edit(
            tr("MFU override %1%").arg(v),
            [v](Plan& p) {
                p.training.mfu = v / kPercent;
                p.training.mfuOverride = true;
            },
            kMfuControl);
    });
    connect(m_trainTokens, &SliderSpin::valueEdited, this, [this](double v) {
        edit(
            tr("Token budget %1B").arg(v), [v](Plan& p) { p.training.trainTokens = v * kBillion; },
            kTrainTokensControl);
    });
    connect(m_overlap, &SliderSpin::valueEdited, this, [this](double v) {
        edit(
            tr("Communication overlap %1%").arg(v),
            [v](Plan& p) { p.training.commOverlap = v / kPercent; }, kCommOverlapControl);
    });
    refresh();
}

void ThroughputControls::refresh()
{
    const TrainingConfig& t = document()->plan().training;
    m_mfu->setValue(t.mfu * kPercent);
    m_trainTokens->setValue(t.trainTokens / kBillion);
    m_overlap->setValue(t.commOverlap * kPercent);
}

} // namespace envelope::ui
