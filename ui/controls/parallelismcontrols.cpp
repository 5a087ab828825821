#include "controls/parallelismcontrols.h"
#include "controls/showvalue.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>

#include "controls/choicecombo.h"
#include "document/plandocument.h"

namespace envelope::ui {

ParallelismControls::ParallelismControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Parallelism"), document, parent)
    , m_zero(new ChoiceCombo(this))
{
    // What each stage partitions over the data-parallel group (Rajbhandari et al. 2019, fig. 1).
    m_zero->addItem(tr("0 — replicated (DDP)"));
    m_zero->addItem(tr("1 — optimizer state sharded"));
    m_zero->addItem(tr("2 — + gradients sharded"));
    m_zero->addItem(tr("3 — + weights sharded (FSDP)"));
    addWideRow(tr("ZeRO &stage:"), m_zero); // "3 — + weights sharded (FSDP)" shown whole
    connect(m_zero, &QComboBox::activated, this, [this](int stage) {
        edit(tr("ZeRO stage %1").arg(stage), [stage](Plan& p) { p.training.zeroStage = stage; });
    });

    m_tp = addDegree(tr("&Tensor parallel:"), tr("TP: splits every matrix across GPUs in a node"),
        kTpControl, &TrainingConfig::tp);
    // A plan's own stage split (training.stage_layers) is for its pipeline depth: another depth
    // takes the default split.
    m_pp = addSpin(tr("Pipeline p&arallel:"), tr("PP: splits the layers into stages"), 1, 1 << 16,
        kPpControl, [](Plan& p, int v) {
            if (v != p.training.pp)
                p.training.stageLayers.clear();
            p.training.pp = v;
        });
    m_cp = addDegree(tr("Conte&xt parallel:"), tr("CP: splits each sequence across GPUs"),
        kCpControl, &TrainingConfig::cp);
    m_ep = addDegree(tr("Expe&rt parallel:"), tr("EP: spreads MoE experts across GPUs"), kEpControl,
        &TrainingConfig::ep);

    m_sequenceParallel = addSwitch(
        tr("Se&quence parallel (with TP)"),
        tr("Shards norm and dropout activations over the TP group (Korthikanti et al. 2022)"),
        [](Plan& p, bool on) { p.training.sequenceParallel = on; }, tr("Sequence parallel"));
    refresh();
}

QSpinBox* ParallelismControls::addDegree(
    const QString& label, const QString& tip, int mergeId, int TrainingConfig::*field)
{
    return addSpin(
        label, tip, 1, 1 << 16, mergeId, [field](Plan& p, int v) { p.training.*field = v; });
}

void ParallelismControls::refresh()
{
    const TrainingConfig& t = this->document()->plan().training;
    const QSignalBlocker b0(m_zero), b1(m_tp), b2(m_pp), b3(m_cp), b4(m_ep), b5(m_sequenceParallel);
    m_zero->setCurrentIndex(t.zeroStage);
    showValue(m_tp, t.tp);
    showValue(m_pp, t.pp);
    // The layers each stage holds, as the estimate splits them (the plan's stage_layers or
    // ceil(L / pp) each, the last taking the rest).
    const std::vector<int> split = pipelineStageLayers(t, this->document()->plan().model.arch.layers);
    const QString stages = QString::fromStdString(stageLayersText(split));
    const QString mtp = t.mtpLayers > 0
        ? tr("\nThe last stage also runs %n MTP module(s) (training.mtp_layers)", nullptr,
              t.mtpLayers)
        : QString();
    m_pp->setToolTip(tr("PP: splits the layers into stages\nLayers per stage, first to last: %1%2%3")
                         .arg(stages,
                             t.stageLayers.empty() ? QString() : tr(" (the plan's stage_layers)"),
                             mtp));
    showValue(m_cp, t.cp);
    showValue(m_ep, t.ep);
    m_sequenceParallel->setChecked(t.sequenceParallel);
}

} // namespace envelope::ui
