#include "controls/rlcontrols.h"
#include "controls/showvalue.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <cmath>

#include "controls/choicecombo.h"
#include "controls/sliderspin.h"
#include "document/plandocument.h"

namespace envelope::ui {

RlControls::RlControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("RL post-training"), document, parent)
    , m_algorithm(new ChoiceCombo(this))
    , m_placement(new ChoiceCombo(this))
    , m_prompts(new SliderSpin(SliderSpin::Scale::Log, 1, 4096))
    , m_groupSize(new QSpinBox(this))
{
    m_algorithm->addItem(tr("PPO (critic + reward model)"), int(RlAlgorithm::Ppo));
    m_algorithm->addItem(tr("GRPO (group baseline)"), int(RlAlgorithm::Grpo));
    m_algorithm->addItem(tr("DPO (offline, no rollout)"), int(RlAlgorithm::Dpo));
    form()->addRow(tr("&Algorithm:"), m_algorithm);
    connect(m_algorithm, &QComboBox::activated, this, [this](int index) {
        const auto a = RlAlgorithm(m_algorithm->itemData(index).toInt());
        edit(tr("RL algorithm %1").arg(QString::fromLatin1(rlAlgorithmId(a).data()).toUpper()),
            [a](Plan& p) { p.rl.algorithm = a; });
    });

    m_placement->addItem(tr("Disjoint pools"), int(RlPlacement::Disjoint));
    m_placement->addItem(tr("Colocated (time-shared)"), int(RlPlacement::Colocated));
    m_placement->setToolTip(tr("Disjoint: each role on its own GPUs. Colocated: every role on "
                               "every GPU, phases taking turns (verl hybrid engine)"));
    form()->addRow(tr("&Placement:"), m_placement);
    connect(m_placement, &QComboBox::activated, this, [this](int index) {
        const auto pl = RlPlacement(m_placement->itemData(index).toInt());
        edit(tr("RL placement %1").arg(QString::fromLatin1(rlPlacementId(pl).data())),
            [pl](Plan& p) { p.rl.placement = pl; });
    });

    m_trainerGpus = addGpus(tr("&Trainer GPUs:"),
        tr("Policy being trained (weights, grads, "
           "optimizer, activations)"),
        1, kRlTrainerGpusControl, &RlConfig::trainerGpus);
    m_rolloutGpus = addGpus(tr("&Rollout GPUs:"), tr("Inference engine generating responses"), 0,
        kRlRolloutGpusControl, &RlConfig::rolloutGpus);
    m_referenceGpus
        = addGpus(tr("Re&ference GPUs:"), tr("Frozen reference model for the KL term (0 = none)"),
            0, kRlReferenceGpusControl, &RlConfig::referenceGpus);
    m_criticGpus = addGpus(tr("&Critic GPUs:"), tr("PPO value model (0 = as many as the trainer)"),
        0, kRlCriticGpusControl, &RlConfig::criticGpus);
    m_rewardGpus
        = addGpus(tr("Re&ward GPUs:"), tr("PPO reward model (0 = as many as the reference)"), 0,
            kRlRewardGpusControl, &RlConfig::rewardGpus);

    m_prompts->setToolTip(tr("Prompts per step"));
    form()->addRow(tr("Pro&mpts / step:"), m_prompts);
    connect(m_prompts, &SliderSpin::valueEdited, this, [this](double v) {
        const int n = int(std::lround(v));
        edit(
            tr("Prompts per step %1").arg(n),
            [n](Plan& p) {
                // Each update trains at least one prompt's group.
                p.rl.prompts = n;
                p.rl.updatesPerSync = std::min(p.rl.updatesPerSync, n);
            },
            kRlPromptsControl);
    });
    m_groupSize->setRange(1, 1024);
    m_groupSize->setKeyboardTracking(false);
    m_groupSize->setToolTip(tr("Completions sampled per prompt"));
    form()->addRow(tr("&Group size:"), m_groupSize);
    connect(m_groupSize, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("Group size %1").arg(v), [v](Plan& p) { p.rl.groupSize = v; }, kRlGroupSizeControl);
    });
    m_promptLen = addLength(
        tr("Prompt &length:"), tr("Tokens per prompt"), kRlPromptLenControl, &RlConfig::promptLen);
    m_responseLen = addLength(tr("Respo&nse length:"), tr("Tokens generated per completion"),
        kRlResponseLenControl, &RlConfig::responseLen);

    m_kl = addSwitch(
        tr("&KL to the reference"),
        tr("A frozen reference model scores every completion for the KL penalty"),
        [](Plan& p, bool on) { p.rl.kl = on; }, tr("KL"));
    m_offPolicy = addSwitch(
        tr("&Off-policy pipeline"),
        tr("Rollout of step k+1 overlaps training on step k (disjoint pools); the staleness "
           "below bounds how far ahead"),
        [](Plan& p, bool on) {
            // Off: on-policy, and nothing can be carried; on: one step unless a bound is set.
            p.rl.offPolicyPipeline = on;
            if (!on || (p.rl.staleness && *p.rl.staleness < 1))
                p.rl.staleness.reset();
            if (!on)
                p.rl.partialRollouts = false;
        },
        tr("Off-policy pipeline"));
    m_staleness = new QDoubleSpinBox(this);
    m_staleness->setRange(0, kMaxStaleness);
    m_staleness->setDecimals(2);
    m_staleness->setSingleStep(0.1);
    m_staleness->setKeyboardTracking(false);
    m_staleness->setToolTip(
        tr("Steps of completions generation may run ahead of training: a count of policy "
           "versions (AReaL max_head_offpolicyness) or a fraction of a step (verl "
           "staleness_threshold, 0.1-0.5); 0 = on-policy"));
    form()->addRow(tr("&Staleness bound:"), m_staleness);
    connect(m_staleness, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        edit(
            tr("Staleness bound %1").arg(v), [v](Plan& p) {
                p.rl.staleness = v;
                // off_policy_pipeline means a whole step ahead; nothing is carried on-policy.
                if (v < 1)
                    p.rl.offPolicyPipeline = false;
                if (v <= 0)
                    p.rl.partialRollouts = false;
            },
            kRlStalenessControl);
    });
    m_partial = addSwitch(
        tr("&Partial rollouts"),
        tr("Unfinished sequences carry into the next step (interruptible generation), so the "
           "engine does not wait for its longest responses"),
        [](Plan& p, bool on) { p.rl.partialRollouts = on; }, tr("Partial rollouts"));
    m_updatesPerSync = addSpin(tr("&Updates per sync:"),
        tr("The step's update in N parts, each trained as soon as its completions are generated, "
           "with one weight sync per step (verl fully_async trigger_parameter_sync_step); "
           "disjoint pools overlap the rest of the rollout"),
        1, 4096, kRlUpdatesPerSyncControl, [](Plan& p, int v) { p.rl.updatesPerSync = v; });
    refresh();
}

QSpinBox* RlControls::addGpus(
    const QString& label, const QString& tip, int minimum, int mergeId, int RlConfig::*field)
{
    return addSpin(
        label, tip, minimum, 4096, mergeId, [field](Plan& p, int v) { p.rl.*field = v; });
}

SliderSpin* RlControls::addLength(
    const QString& label, const QString& tip, int mergeId, int RlConfig::*field)
{
    auto* control = new SliderSpin(SliderSpin::Scale::TokenLengths, 16, 1 << 17);
    control->setSuffix(tr(" tok"));
    control->setToolTip(tip);
    form()->addRow(label, control);
    const QString name = undoName(label);
    connect(control, &SliderSpin::valueEdited, this, [this, name, mergeId, field](double v) {
        const int n = int(std::lround(v));
        edit(
            tr("%1 %2").arg(name).arg(n), [field, n](Plan& p) { p.rl.*field = n; }, mergeId);
    });
    return control;
}

void RlControls::refresh()
{
    const RlConfig& r = document()->plan().rl;
    const QSignalBlocker b0(m_algorithm), b1(m_placement), b2(m_trainerGpus), b3(m_rolloutGpus),
        b4(m_referenceGpus), b5(m_criticGpus), b6(m_rewardGpus), b7(m_groupSize), b8(m_kl),
        b9(m_offPolicy), b10(m_staleness), b11(m_partial), b12(m_updatesPerSync);
    m_algorithm->setCurrentIndex(m_algorithm->findData(int(r.algorithm)));
    m_placement->setCurrentIndex(m_placement->findData(int(r.placement)));
    showValue(m_trainerGpus, r.trainerGpus);
    showValue(m_rolloutGpus, r.rolloutGpus);
    showValue(m_referenceGpus, r.referenceGpus);
    showValue(m_criticGpus, r.criticGpus);
    showValue(m_rewardGpus, r.rewardGpus);
    m_prompts->setValue(r.prompts);
    showValue(m_groupSize, r.groupSize);
    m_promptLen->setValue(r.promptLen);
    m_responseLen->setValue(r.responseLen);
    m_kl->setChecked(r.kl);
    const double staleness = rlStaleness(r);
    m_offPolicy->setChecked(staleness >= 1);
    showValue(m_staleness, staleness);
    m_partial->setChecked(r.partialRollouts);
    m_updatesPerSync->setMaximum(std::max(1, r.prompts));
    showValue(m_updatesPerSync, r.updatesPerSync);
    const bool ppo = r.algorithm == RlAlgorithm::Ppo;
    m_criticGpus->setEnabled(ppo);
    m_rewardGpus->setEnabled(ppo);
    m_rolloutGpus->setEnabled(r.algorithm != RlAlgorithm::Dpo);
    m_offPolicy->setEnabled(
        r.placement == RlPlacement::Disjoint && r.algorithm != RlAlgorithm::Dpo);
    m_staleness->setEnabled(r.algorithm != RlAlgorithm::Dpo);
    m_partial->setEnabled(r.algorithm != RlAlgorithm::Dpo && staleness > 0);
    m_updatesPerSync->setEnabled(r.algorithm != RlAlgorithm::Dpo);
}

} // namespace envelope::ui
