#include "controls/schedulercontrols.h"
#include "controls/showvalue.h"

#include <QComboBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>

#include "controls/choicecombo.h"
#include "document/plandocument.h"
#include "serving/load.h"

namespace envelope::ui {

namespace {

constexpr int kDefault = -1;

std::optional<bool> choiceOf(const QComboBox* combo, int index)
{
    const int data = combo->itemData(index).toInt();
    return data == kDefault ? std::nullopt : std::optional<bool>(data == 1);
}

int dataOf(const std::optional<bool>& value)
{
    return value ? (*value ? 1 : 0) : kDefault;
}

void setItemEnabled(QComboBox* combo, int data, bool enabled)
{
    if (auto* model = qobject_cast<QStandardItemModel*>(combo->model()))
        if (QStandardItem* item = model->item(combo->findData(data)))
            item->setEnabled(enabled);
}

// vLLM V0 mixes decodes and prompt tokens exactly when chunked prefill is on: a choice of one
// carries the other, as validatePlan requires.
void coupleUnderV0(Plan& p, bool mixedChosen)
{
    ServingConfig& s = p.serving;
    if (s.engineProfile.mixedBatches != EngineProfile::Mixing::WhenChunked)
        return;
    if (mixedChosen && s.mixedBatches && s.chunkedPrefill)
        s.chunkedPrefill = s.mixedBatches;
    else if (!mixedChosen && s.chunkedPrefill && s.mixedBatches)
        s.mixedBatches = s.chunkedPrefill;
}

} // namespace

SchedulerControls::SchedulerControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Engine scheduler"), document, parent)
    , m_mixed(new ChoiceCombo(this))
    , m_chunked(new ChoiceCombo(this))
    , m_overlap(new ChoiceCombo(this))
    , m_steps(new QSpinBox(this))
{
    const struct {
        QComboBox* combo;
        QString label, tip, name;
        std::optional<bool> ServingConfig::*key;
        bool mixed;
    } rows[] = {
        { m_mixed, tr("&Mixed steps:"),
            tr("serving.mixed_batches: decodes and prompt tokens in one step (vLLM V1, "
               "TensorRT-LLM), or prompt steps alone before the decodes (SGLang without "
               "--enable-mixed-chunk, vLLM V0 without chunked prefill)"),
            tr("Mixed steps"), &ServingConfig::mixedBatches, true },
        { m_chunked, tr("C&hunked prefill:"),
            tr("serving.chunked_prefill: a prompt split over steps of max_num_batched_tokens, "
               "or computed whole in one step"),
            tr("Chunked prefill"), &ServingConfig::chunkedPrefill, false },
        { m_overlap, tr("&Overlap scheduler:"),
            tr("serving.overlap_scheduler: the next step formed while one runs (SGLang, "
               "TensorRT-LLM; vLLM --async-scheduling), so a request arriving during a step "
               "joins the step after next"),
            tr("Overlap scheduler"), &ServingConfig::overlapScheduler, false },
    };
    for (const auto& row : rows) {
        row.combo->addItem(tr("Engine default"), kDefault);
        row.combo->addItem(tr("On"), 1);
        row.combo->addItem(tr("Off"), 0);
        row.combo->setToolTip(row.tip);
        form()->addRow(row.label, row.combo);
        QComboBox* combo = row.combo;
        const auto key = row.key;
        const bool mixed = row.mixed;
        const QString name = row.name;
        connect(combo, &QComboBox::activated, this, [this, combo, key, mixed, name](int index) {
            const std::optional<bool> value = choiceOf(combo, index);
            edit(tr("%1: %2").arg(name, value ? (*value ? tr("on") : tr("off")) : tr("default")),
                [key, value, mixed](Plan& p) {
                    p.serving.*key = value;
                    if (key == &ServingConfig::overlapScheduler && value && *value)
                        p.serving.schedulerSteps = 1;
                    if (key != &ServingConfig::overlapScheduler)
                        coupleUnderV0(p, mixed);
                });
        });
    }

    m_steps->setRange(1, 64);
    m_steps->setKeyboardTracking(false);
    m_steps->setToolTip(tr("serving.scheduler_steps: decode steps per scheduling (vLLM V0's "
                           "--num-scheduler-steps); a sequence that ends inside a burst "
                           "finishes at its end"));
    form()->addRow(tr("Scheduler &steps:"), m_steps);
    connect(m_steps, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("Scheduler steps %1").arg(v),
            [v](Plan& p) {
                p.serving.schedulerSteps = v;
                if (v > 1 && p.serving.overlapScheduler && *p.serving.overlapScheduler)
                    p.serving.overlapScheduler.reset();
            },
            kSchedulerStepsControl);
    });
    refresh();
}

void SchedulerControls::refresh()
{
    const ServingConfig& s = document()->plan().serving;
    const EngineProfile& e = s.engineProfile;
    const bool generic = s.engine == ServingEngine::Generic || e.id.empty();
    // What the engine does with each key unset, and why (the core's resolution).
    ServingConfig defaults = s;
    defaults.mixedBatches.reset();
    defaults.chunkedPrefill.reset();
    defaults.overlapScheduler.reset();
    defaults.schedulerSteps = 1;
    const EngineScheduler d = engineScheduler(defaults);
    const auto onOff = [this](bool on) { return on ? tr("on") : tr("off"); };
    const struct {
        QComboBox* combo;
        std::optional<bool> value;
        bool byDefault;
        std::string why;
    } rows[] = {
        { m_mixed, s.mixedBatches, d.mixedBatches, d.mixedWhy },
        { m_chunked, s.chunkedPrefill, d.chunkedPrefill, d.chunkedWhy },
        { m_overlap, s.overlapScheduler, d.overlapScheduler, d.overlapWhy },
    };
    for (const auto& row : rows) {
        const QSignalBlocker block(row.combo);
        row.combo->setItemText(0, tr("Engine default (%1)").arg(onOff(row.byDefault)));
        row.combo->setItemData(0, QString::fromStdString(row.why), Qt::ToolTipRole);
        row.combo->setCurrentIndex(row.combo->findData(dataOf(row.value)));
    }
    // Choices the engine version does not have (validatePlan's rules): greyed, not refused.
    const bool v0 = e.multiStepScheduling;
    setItemEnabled(m_mixed, 0, generic || e.mixedBatches != EngineProfile::Mixing::Always);
    setItemEnabled(m_overlap, 1, generic || (!v0 && s.schedulerSteps <= 1));
    {
        const QSignalBlocker block(m_steps);
        showValue(m_steps, s.schedulerSteps);
    }
    m_steps->setEnabled(generic || v0 || s.schedulerSteps > 1);
    const QString engine = QString::fromStdString(
        e.version.empty() ? e.name : e.name + " " + e.version);
    setToolTip(generic ? tr("The generic engine takes every scheduler key")
                       : tr("%1's scheduler: %2").arg(engine,
                             QString::fromStdString(schedulerDescription(s))));
}

} // namespace envelope::ui
