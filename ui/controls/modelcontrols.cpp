#include "controls/modelcontrols.h"
#include "controls/showvalue.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>

#include "controls/choicecombo.h"
#include "controls/hubimportbox.h"
#include "document/modelimport.h"
#include "hubid.h"
#include "hubsettings.h"
#include "document/plandocument.h"
#include "controls/sliderspin.h"
#include "base/units.h"

namespace envelope::ui {
namespace {
constexpr double kBillion = 1e9;
}

ModelControls::ModelControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Model"), document, parent)
    , m_preset(new ChoiceCombo(this))
    , m_import(new QPushButton(tr("&Import config.json…"), this))
    , m_hub(new HubImportBox(this))
    , m_size(new SliderSpin(SliderSpin::Scale::Log, 0.1, 2000, 1, this))
    , m_shapeNote(new QLabel(this))
    , m_context(new SliderSpin(SliderSpin::Scale::TokenLengths, 256, 1 << 20, 0, this))
    , m_microBatch(new SliderSpin(SliderSpin::Scale::PowersOfTwo, 1, 512, 0, this))
    , m_gradAccum(new QSpinBox(this))
{
    m_preset->addItem(tr("Custom model"), QString());
    // Grouped by family, the name's leading word ("Llama-3 8B" -> Llama; Mixtral is Mistral's).
    QList<ChoiceCombo::GroupedChoice> choices;
    for (const ModelPreset& preset : document->presets().models) {
        const QString name = QString::fromStdString(preset.arch.name.empty() ? preset.id : preset.arch.name);
        QString family;
        for (const QChar c : name) {
            if (!c.isLetter())
                break;
            family += c;
        }
        if (family.compare(QStringLiteral("Mixtral"), Qt::CaseInsensitive) == 0)
            family = QStringLiteral("Mistral");
        else if (family.compare(QStringLiteral("gpt"), Qt::CaseInsensitive) == 0)
            family = QStringLiteral("GPT");
        choices.push_back({ family.isEmpty() ? tr("Other") : family, name, QString::fromStdString(preset.id) });
    }
    m_preset->addGrouped(choices);
    m_import->setToolTip(tr("Import a model's Hugging Face config.json"));
    m_preset->setToolTip(tr("Architecture presets; each follows its model card / config.json"));
    m_size->setSuffix(tr(" B params"));
    m_size->setToolTip(tr("Moving off a preset uses a standard Llama-like shape of this size"));
    m_shapeNote->setWordWrap(true);
    m_shapeNote->setForegroundRole(QPalette::PlaceholderText);
    m_context->setSuffix(tr(" tokens"));
    m_context->setToolTip(tr("Sequence length per sample (slider: powers of two)"));
    m_microBatch->setToolTip(tr("Sequences per GPU per forward/backward pass"));
    // The boxes take what a plan may hold (docs/plan-format.md); the sliders span the usual.
    m_context->setSpinRange(1, 100'000'000);
    m_microBatch->setSpinRange(1, 1'000'000);
    m_gradAccum->setRange(1, 1 << 16);
    m_gradAccum->setKeyboardTracking(false);
    m_gradAccum->setToolTip(tr("Micro-batches accumulated per optimizer step"));

    addWideRow(tr("&Preset:"), m_preset); // "DeepSeek-V3 (671B, 37B active)" shown whole
    form()->addRow(QString(), m_import);
    form()->addRow(tr("Hub id:"), m_hub); // no mnemonic: Alt+H and Alt+F are taken
    form()->addRow(QString(), m_hub->statusLabel());
    form()->addRow(tr("Mode&l size:"), m_size);
    form()->addRow(QString(), m_shapeNote);
    form()->addRow(tr("&Context:"), m_context);
    form()->addRow(tr("&Micro-batch:"), m_microBatch);
    form()->addRow(tr("&Grad accum:"), m_gradAccum);

    connect(m_preset, &QComboBox::activated, this, &ModelControls::onPresetPicked);
    connect(m_import, &QPushButton::clicked, this, &ModelControls::importRequested);
    connect(m_hub, &HubImportBox::imported, this, &ModelControls::onHubImported);
    connect(m_size, &SliderSpin::valueEdited, this, &ModelControls::onSizeEdited);
    connect(m_context, &SliderSpin::valueEdited, this, [this](double v) {
        edit(
            tr("Context %1").arg(v), [v](Plan& p) { p.training.seqLen = static_cast<int>(v); },
            kContextControl);
    });
    connect(m_microBatch, &SliderSpin::valueEdited, this, [this](double v) {
        edit(
            tr("Micro-batch %1").arg(v),
            [v](Plan& p) { p.training.microBatch = static_cast<int>(v); }, kMicroBatchControl);
    });
    connect(m_gradAccum, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("Grad accumulation %1").arg(v), [v](Plan& p) { p.training.gradAccum = v; },
            kGradAccumControl);
    });
    refresh();
}

void ModelControls::onPresetPicked(int index)
{
    const std::string id = m_preset->itemData(index).toString().toStdString();
    const ModelPreset* preset = this->document()->presets().findModel(id);
    if (!preset) {
        refresh(); // "Custom model" is shown, not chosen
        return;
    }
    edit(tr("Model %1").arg(m_preset->itemText(index)), [preset](Plan& p) {
        p.model = ModelChoice {};
        p.model.form = ModelChoice::Form::Preset;
        p.model.presetId = preset->id;
        p.model.arch = preset->arch;
    });
}

void ModelControls::onSizeEdited(double billions)
{
    const double params = billions * kBillion;
    edit(
        tr("Model size %1B").arg(billions, 0, 'f', 1),
        [params](Plan& p) {
            p.model = ModelChoice {};
            p.model.form = ModelChoice::Form::Params;
            p.model.arch = standardShapeForParams(params);
            p.model.arch.declaredParams = params;
        },
        kModelSizeControl);
}

// As a config.json file is imported (MainWindow::importHfConfigFile), but named by its Hub id
// ({"hf_id": ...}), the id its name when the config names none; one undo step.
void ModelControls::onHubImported(const HubImport& result)
{
    // Saved as {"hf_id": ...}: the plan names the model by its id, portable to any machine
    // (reopened from the cache here, fetched by envelope-cli elsewhere).
    ModelChoice model = importedHubModel(result.arch, result.id.toStdString());
    const std::optional<CheckpointFormats> formats = result.formats;
    edit(tr("Import %1").arg(result.id), [model, formats](Plan& p) {
        p.model = model;
        if (formats)
            applyCheckpointFormats(p.serving, *formats);
    });
}

void ModelControls::refresh()
{
    const Plan& plan = this->document()->plan();
    const ModelArch& arch = plan.model.arch;
    {
        const QSignalBlocker block(m_preset);
        const bool preset = plan.model.form == ModelChoice::Form::Preset;
        const int index
            = preset ? m_preset->findData(QString::fromStdString(plan.model.presetId)) : 0;
        m_preset->setCurrentIndex(std::max(index, 0));
    }
    // Size shows the core's exact count (declared for a bare count, counted otherwise).
    m_size->setValue(this->document()->results().estimate.params / kBillion);

    // MLA caches one latent per token, not KV heads (issue 23: "128 heads (128 KV)").
    const QString attention = arch.mla
        ? (arch.mla->sparse()
                  ? tr("%1 heads, MLA latent %2 + %3, sparse top-%4")
                        .arg(arch.heads)
                        .arg(arch.mla->kvLoraRank)
                        .arg(arch.mla->qkRopeHeadDim)
                        .arg(arch.mla->indexTopK)
                  : tr("%1 heads, MLA latent %2 + %3").arg(arch.heads).arg(arch.mla->kvLoraRank).arg(arch.mla->qkRopeHeadDim))
        : tr("%1 heads (%2 KV)").arg(arch.heads).arg(arch.kvHeadsOrDefault());
    const QString moe = arch.moe
        ? tr(", %1 experts top-%2").arg(arch.moe->experts).arg(arch.moe->topK)
        : QString();
    const QString shape = tr("%1 layers, hidden %2, %3%4")
                              .arg(arch.layers)
                              .arg(arch.hidden)
                              .arg(attention, moe);
    switch (plan.model.form) {
    case ModelChoice::Form::Params:
        m_shapeNote->setText(
            tr("Standard Llama-like shape for %1: %2")
                .arg(QString::fromStdString(formatCount(arch.declaredParams.value_or(0))))
                .arg(shape));
        break;
    case ModelChoice::Form::HfConfig: {
        // A config fetched by Hub id is named by its id, not its path in the cache.
        const std::optional<hub::HubId> id = hub::hubIdFromCachePath(
            plan.model.hfConfigPath, hub::hubSettingsFromEnvironment().cacheDir);
        m_shapeNote->setText(
            (id ? tr("Imported from the Hugging Face Hub, %1: %2")
                      .arg(QString::fromStdString(id->toString()))
                : tr("Imported from %1: %2").arg(QString::fromStdString(plan.model.hfConfigPath)))
                .arg(shape));
        break;
    }
    case ModelChoice::Form::HubId:
        m_shapeNote->setText(tr("Imported from the Hugging Face Hub, %1: %2")
                                 .arg(QString::fromStdString(plan.model.hubId))
                                 .arg(shape));
        break;
    default:
        m_shapeNote->setText(shape);
        break;
    }
    m_context->setValue(plan.training.seqLen);
    m_microBatch->setValue(plan.training.microBatch);
    const QSignalBlocker block(m_gradAccum);
    showValue(m_gradAccum, plan.training.gradAccum);
}

} // namespace envelope::ui
