#include "controls/speculativecontrols.h"
#include "controls/showvalue.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>

#include "controls/choicecombo.h"
#include "document/plandocument.h"
#include "plan/fields.h"

namespace envelope::ui {

ServingSpeculative SpeculativeControls::defaultSpeculative(const ModelArch& arch)
{
    ServingSpeculative s;
    const bool mtp = arch.mtpLayers > 0;
    s.kind = mtp ? SpeculativeKind::Mtp : SpeculativeKind::Eagle;
    s.tokens = mtp ? 1 : 3;
    s.acceptance = 0.7;
    return s;
}

SpeculativeControls::SpeculativeControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Speculative decoding"), document, parent)
    , m_kind(new ChoiceCombo(this))
    , m_tokens(new QSpinBox(this))
    , m_acceptance(new QDoubleSpinBox(this))
    , m_note(new QLabel(this))
{
    m_enabled = addSwitch(tr("&Draft ahead"),
        tr("A draft proposes tokens the model verifies in one forward (serving.speculative)"),
        [](Plan& p, bool on) {
            if (on)
                p.serving.speculative = defaultSpeculative(p.model.arch);
            else
                p.serving.speculative.reset();
        },
        tr("Speculative decoding"));

    m_kind->addItem(tr("MTP module (the checkpoint's)"), int(SpeculativeKind::Mtp));
    m_kind->addItem(tr("EAGLE head (one layer)"), int(SpeculativeKind::Eagle));
    m_kind->addItem(tr("Draft model (from the plan)"), int(SpeculativeKind::Draft));
    m_kind->setToolTip(tr("MTP: the multi-token-prediction module DeepSeek-V3 and GLM-4.5 ship. "
                          "EAGLE: a one-layer head trained for the model. A draft model is set "
                          "in the plan file (serving.speculative.draft_model)."));
    m_kindCaption = addWideRow(tr("D&raft:"), m_kind);
    connect(m_kind, &QComboBox::activated, this, [this](int index) {
        const auto kind = SpeculativeKind(m_kind->itemData(index).toInt());
        edit(tr("Draft: %1").arg(m_kind->itemText(index)), [kind](Plan& p) {
            if (p.serving.speculative && kind != SpeculativeKind::Draft) {
                p.serving.speculative->kind = kind;
                p.serving.speculative->draftModel.reset();
            }
        });
    });

    m_tokens->setRange(1, planfields::kMaxSpeculativeTokens);
    m_tokens->setKeyboardTracking(false);
    m_tokens->setToolTip(tr("Tokens the draft proposes per sequence and step (vLLM "
                            "num_speculative_tokens)"));
    form()->addRow(tr("Draft &tokens:"), m_tokens);
    connect(m_tokens, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("Draft tokens %1").arg(v),
            [v](Plan& p) {
                if (p.serving.speculative)
                    p.serving.speculative->tokens = v;
            },
            kSpeculativeTokensControl);
    });

    m_acceptance->setRange(0, 1);
    m_acceptance->setDecimals(2);
    m_acceptance->setSingleStep(0.05);
    m_acceptance->setKeyboardTracking(false);
    m_acceptance->setToolTip(tr("Chance each drafted token is accepted, given the ones before it. "
                                "It depends on the workload: DeepSeek reports 0.85-0.90 for "
                                "MTP's second token. vLLM's logged draft acceptance rate is "
                                "(tokens per step - 1) / draft tokens."));
    form()->addRow(tr("&Acceptance:"), m_acceptance);
    connect(m_acceptance, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        edit(
            tr("Acceptance %1").arg(v, 0, 'f', 2),
            [v](Plan& p) {
                if (p.serving.speculative)
                    p.serving.speculative->acceptance = v;
            },
            kSpeculativeAcceptanceControl);
    });

    m_note->setWordWrap(true);
    form()->addRow(m_note);
    connect(document, &PlanDocument::resultsChanged, this, &SpeculativeControls::refresh);
    refresh();
}

void SpeculativeControls::refresh()
{
    const Plan& plan = document()->plan();
    const std::optional<ServingSpeculative>& spec = plan.serving.speculative;
    const QSignalBlocker b0(m_enabled), b1(m_kind), b2(m_tokens), b3(m_acceptance);
    const bool on = spec.has_value();
    m_enabled->setChecked(on);
    for (QWidget* w : std::initializer_list<QWidget*> { m_kindCaption, m_kind, m_tokens, m_acceptance })
        form()->setRowVisible(w, on);
    // MTP only for a checkpoint that ships the module; a draft model only as the plan gives it.
    if (auto* model = qobject_cast<QStandardItemModel*>(m_kind->model())) {
        model->item(0)->setEnabled(plan.model.arch.mtpLayers > 0);
        model->item(2)->setEnabled(on && spec->kind == SpeculativeKind::Draft);
    }
    if (!on) {
        m_note->setText(tr("Off: one token per sequence and decode step."));
        return;
    }
    m_kind->setCurrentIndex(m_kind->findData(int(spec->kind)));
    showValue(m_tokens, spec->tokens);
    showValue(m_acceptance, spec->acceptance);
    const ServingEstimate& s = document()->results().estimate.serving;
    if (!s.speculative) {
        m_note->clear();
        return;
    }
    const SpeculativeEstimate& e = *s.speculative;
    const QString draft = QString::fromStdString(e.draftName);
    m_note->setText(s.fits
            ? tr("%1: %2 tokens per step at %3 sequences; a step takes %4 (plain: %5), so "
                 "%6× the tokens/s. Draft weights %7 per GPU.")
                  .arg(draft)
                  .arg(e.meanTokensPerStep, 0, 'f', 2)
                  .arg(plan.serving.concurrency)
                  .arg(QString::fromStdString(formatDuration(e.stepS)),
                      QString::fromStdString(formatDuration(e.plainStepS)))
                  .arg(e.speedup, 0, 'f', 2)
                  .arg(QString::fromStdString(formatBytesScaled(e.draftWeightsBytesPerGpu, document()->units())))
            : tr("%1: %2 tokens per step; the batch does not fit, so no step time.")
                  .arg(draft)
                  .arg(e.meanTokensPerStep, 0, 'f', 2));
}

} // namespace envelope::ui
