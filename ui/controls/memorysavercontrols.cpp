#include "controls/memorysavercontrols.h"
#include "controls/showvalue.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>

#include <array>

#include "controls/choicecombo.h"
#include "document/plandocument.h"

namespace envelope::ui {
namespace {
constexpr std::array kOptimizers { OptimizerKind::AdamW, OptimizerKind::Adam, OptimizerKind::Lion,
    OptimizerKind::SgdMomentum, OptimizerKind::Sgd, OptimizerKind::Adafactor,
    OptimizerKind::AdamW8bit, OptimizerKind::PagedAdamW, OptimizerKind::PagedAdamW8bit };
constexpr std::array kRecomputeModes { Recompute::None, Recompute::Selective, Recompute::Full,
    Recompute::EveryK };
} // namespace

MemorySaverControls::MemorySaverControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Memory savers"), document, parent)
    , m_recipe(new ChoiceCombo(this))
    , m_optimizer(new ChoiceCombo(this))
    , m_recompute(new ChoiceCombo(this))
    , m_every(new QSpinBox(this))
{
    m_recipe->addItem(tr("Custom recipe"), QString());
    for (const RecipePreset& preset : document->presets().recipes) {
        m_recipe->addItem(
            QString::fromStdString(preset.recipe.name.empty() ? preset.id : preset.recipe.name),
            QString::fromStdString(preset.id));
        m_recipe->setItemData(m_recipe->count() - 1,
            QString::fromStdString(preset.recipe.description), Qt::ToolTipRole);
    }
    for (OptimizerKind kind : kOptimizers)
        m_optimizer->addItem(
            QString::fromLatin1(optimizerId(kind).data(), qsizetype(optimizerId(kind).size())));
    m_recompute->addItem(tr("None — keep every activation"));
    m_recompute->addItem(tr("Selective — recompute attention core"));
    m_recompute->addItem(tr("Full — keep layer inputs only"));
    m_recompute->addItem(tr("Every k layers"));
    m_every->setRange(1, 1024);
    m_every->setPrefix(tr("k = "));
    m_every->setKeyboardTracking(false);
    m_every->setToolTip(tr("A checkpoint every k layers"));

    // The recipe and recompute choices are long: each gets the column's width under its label.
    addWideRow(tr("Precisi&on:"), m_recipe);
    form()->addRow(tr("Optimi&zer:"), m_optimizer);
    addWideRow(tr("Rec&ompute:"), m_recompute);
    form()->addRow(tr("Checkpoint every:"), m_every);

    connect(m_recipe, &QComboBox::activated, this, [this](int index) {
        const RecipePreset* preset = this->document()->presets().findRecipe(
            m_recipe->itemData(index).toString().toStdString());
        if (!preset) {
            refresh();
            return;
        }
        edit(tr("Precision %1").arg(m_recipe->itemText(index)), [preset](Plan& p) {
            p.training.recipe.presetId = preset->id;
            p.training.recipe.recipe = preset->recipe;
        });
    });
    connect(m_optimizer, &QComboBox::activated, this, [this](int index) {
        edit(tr("Optimizer %1").arg(m_optimizer->itemText(index)),
            [index](Plan& p) { p.training.optimizer = kOptimizers[std::size_t(index)]; });
    });
    connect(m_recompute, &QComboBox::activated, this, [this](int index) {
        edit(tr("Recompute %1")
                 .arg(QString::fromLatin1(recomputeId(kRecomputeModes[std::size_t(index)]).data())),
            [index](Plan& p) { p.training.recompute = kRecomputeModes[std::size_t(index)]; });
    });
    connect(m_every, &QSpinBox::valueChanged, this, [this](int k) {
        edit(
            tr("Recompute every %1 layers").arg(k), [k](Plan& p) { p.training.recomputeEvery = k; },
            kRecomputeEveryControl);
    });

    m_flash
        = addSwitch(tr("Flas&h attention"), tr("No s x s attention scores kept (Dao et al. 2022)"),
            [](Plan& p, bool on) { p.training.flashAttention = on; });
    m_offloadOptimizer = addSwitch(tr("Offloa&d optimizer to CPU"),
        tr("Optimizer state in host memory (ZeRO-Offload)"),
        [](Plan& p, bool on) { p.training.offloadOptimizer = on; });
    m_offloadParams = addSwitch(tr("Offload parameters to CPU"),
        tr("Weights in host memory between uses (ZeRO-Infinity)"),
        [](Plan& p, bool on) { p.training.offloadParams = on; });
    m_optimizerInBackward = addSwitch(tr("Optimizer in backward"),
        tr("training.optimizer_in_backward (torchtune optimizer_in_bwd): each parameter is stepped "
           "as its gradient arrives and the gradient freed, so one gradient is alive at a time; "
           "needs gradient accumulation 1"),
        [](Plan& p, bool on) { p.training.optimizerInBackward = on; });
    m_activationOffload = addSwitch(tr("Offload activations"),
        tr("training.activation_offload (torchtune enable_activation_offloading, Megatron "
           "--cpu-offloading): saved activations go to pinned host memory in the forward and "
           "come back in the backward, over the host link"),
        [](Plan& p, bool on) {
            p.training.activationOffload = on;
            if (!on)
                p.training.activationOffloadLayers = 0;
        });
    m_activationOffloadLayers = addSpin(tr("Offloaded layers:"),
        tr("Layers of each pipeline stage whose activations are offloaded (Megatron "
           "--cpu-offloading-num-layers); 0 = every layer (torchtune)"),
        0, 100'000, kActivationOffloadLayersControl,
        [](Plan& p, int v) { p.training.activationOffloadLayers = v; });
    m_activationOffloadLayers->setSpecialValueText(tr("all"));
    refresh();
}

void MemorySaverControls::refresh()
{
    const TrainingConfig& t = this->document()->plan().training;
    const QSignalBlocker b0(m_recipe), b1(m_optimizer), b2(m_recompute), b3(m_every), b4(m_flash),
        b5(m_offloadOptimizer), b6(m_offloadParams);
    const int recipeIndex = m_recipe->findData(QString::fromStdString(t.recipe.presetId));
    m_recipe->setCurrentIndex(t.recipe.presetId.empty() ? 0 : std::max(recipeIndex, 0));
    for (std::size_t i = 0; i < kOptimizers.size(); ++i)
        if (kOptimizers[i] == t.optimizer)
            m_optimizer->setCurrentIndex(int(i));
    for (std::size_t i = 0; i < kRecomputeModes.size(); ++i)
        if (kRecomputeModes[i] == t.recompute)
            m_recompute->setCurrentIndex(int(i));
    showValue(m_every, t.recomputeEvery);
    m_every->setEnabled(t.recompute == Recompute::EveryK);
    m_flash->setChecked(t.flashAttention);
    m_offloadOptimizer->setChecked(t.offloadOptimizer);
    m_offloadParams->setChecked(t.offloadParams);
    const QSignalBlocker b7(m_optimizerInBackward), b8(m_activationOffload),
        b9(m_activationOffloadLayers);
    m_optimizerInBackward->setChecked(t.optimizerInBackward);
    m_activationOffload->setChecked(t.activationOffload);
    showValue(m_activationOffloadLayers, t.activationOffloadLayers);
    m_activationOffloadLayers->setEnabled(t.activationOffload);
}

} // namespace envelope::ui
