#include "controls/parallelismcontrols.h"

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
    m_pp = addDegree(tr("Pipeline p&arallel:"), tr("PP: splits the layers into stages"), kPpControl,
        &TrainingConfig::pp);
    m_cp = addDegree(tr("Conte&xt parallel:"), tr("CP: splits each sequence across GPUs"),
        kCpControl, &TrainingConfig::cp);
    m_ep = addDegree(tr("Expe&rt parallel:"), tr("EP: spreads MoE experts across GPUs"), kEpControl,
        &TrainingConfig::ep);

    m_sequenceParallel = new QCheckBox(tr("Se&quence parallel (with TP)"), this);
    m_sequenceParallel->setToolTip(
        tr("Shards norm and dropout activations over the TP group (Korthikanti et al. 2022)"));
    form()->addRow(QString(), m_sequenceParallel);
    connect(m_sequenceParallel, &QCheckBox::toggled, this, [this](bool on) {
        edit(on ? tr("Sequence parallel on") : tr("Sequence parallel off"),
            [on](Plan& p) { p.training.sequenceParallel = on; });
    });
    refresh();
}

QSpinBox* ParallelismControls::addDegree(
    const QString& label, const QString& tip, int mergeId, int TrainingConfig::*field)
{
    auto* spin = new QSpinBox(this);
    spin->setRange(1, 1 << 16);
    spin->setKeyboardTracking(false);
    spin->setToolTip(tip);
    form()->addRow(label, spin);
    const QString name = QString(label).remove(QLatin1Char('&')).remove(QLatin1Char(':'));
    connect(spin, &QSpinBox::valueChanged, this, [this, name, mergeId, field](int v) {
        edit(
            tr("%1 %2").arg(name).arg(v), [field, v](Plan& p) { p.training.*field = v; }, mergeId);
    });
    return spin;
}

void ParallelismControls::refresh()
{
    const TrainingConfig& t = this->document()->plan().training;
    const QSignalBlocker b0(m_zero), b1(m_tp), b2(m_pp), b3(m_cp), b4(m_ep), b5(m_sequenceParallel);
    m_zero->setCurrentIndex(t.zeroStage);
    m_tp->setValue(t.tp);
    m_pp->setValue(t.pp);
    m_cp->setValue(t.cp);
    m_ep->setValue(t.ep);
    m_sequenceParallel->setChecked(t.sequenceParallel);
}

} // namespace envelope::ui
