#include "controls/servingcontrols.h"

#include <QComboBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>

#include <cmath>

#include "controls/choicecombo.h"
#include "document/plandocument.h"
#include "controls/sliderspin.h"

namespace envelope::ui {

ServingControls::ServingControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Serving"), document, parent)
    , m_context(new SliderSpin(SliderSpin::Scale::PowersOfTwo, 256, 1 << 20))
    , m_concurrency(new SliderSpin(SliderSpin::Scale::Log, 1, 4096))
    , m_tp(new QSpinBox(this))
    , m_utilization(new SliderSpin(SliderSpin::Scale::Linear, 10, 100))
{
    m_context->setSuffix(tr(" tok"));
    // The boxes take what a plan may hold (docs/plan-format.md); the sliders span the usual.
    m_context->setSpinRange(1, 100'000'000);
    m_concurrency->setSpinRange(1, 10'000'000);
    m_context->setToolTip(tr("Tokens per sequence, prompt + generated (max_model_len)"));
    form()->addRow(tr("&Context:"), m_context);
    connect(m_context, &SliderSpin::valueEdited, this, [this](double v) {
        const int tokens = int(std::lround(v));
        edit(
            tr("Serving context %1").arg(tokens), [tokens](Plan& p) { p.serving.context = tokens; },
            kServingContextControl);
    });

    m_concurrency->setToolTip(tr("Sequences decoded together (max_num_seqs)"));
    form()->addRow(tr("C&oncurrency:"), m_concurrency);
    connect(m_concurrency, &SliderSpin::valueEdited, this, [this](double v) {
        const int n = int(std::lround(v));
        edit(
            tr("Concurrency %1").arg(n), [n](Plan& p) { p.serving.concurrency = n; },
            kServingConcurrencyControl);
    });

    m_kvBits = addBitsCombo(tr("&KV cache:"),
        tr("KV cache precision; 8/4-bit add a fp16 scale + zero point per head and token"),
        &ServingConfig::kvBits, tr("KV cache"));
    m_weightBits = addBitsCombo(tr("&Weights:"),
        tr("Weight precision; 8/4-bit add GPTQ/AWQ group scales (group 128)"),
        &ServingConfig::weightBits, tr("Weights"));

    m_tp->setRange(1, 64);
    m_tp->setKeyboardTracking(false);
    m_tp->setToolTip(
        tr("Tensor-parallel GPUs per replica: weights and KV heads split across them"));
    form()->addRow(tr("&Tensor parallel:"), m_tp);
    connect(m_tp, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("Serving TP %1").arg(v), [v](Plan& p) { p.serving.tp = v; }, kServingTpControl);
    });

    m_utilization->setSuffix(tr(" %"));
    m_utilization->setToolTip(
        tr("vLLM gpu_memory_utilization: the share of HBM the engine may use"));
    form()->addRow(tr("GPU memory &util.:"), m_utilization);
    connect(m_utilization, &SliderSpin::valueEdited, this, [this](double v) {
        const double fraction = std::round(v) / 100.0;
        edit(
            tr("GPU memory utilization %1").arg(fraction, 0, 'f', 2),
            [fraction](Plan& p) { p.serving.gpuMemoryUtilization = fraction; },
            kServingUtilizationControl);
    });
    refresh();
}

QComboBox* ServingControls::addBitsCombo(
    const QString& label, const QString& tip, int ServingConfig::*field, const QString& what)
{
    auto* combo = new ChoiceCombo(this);
    combo->addItem(tr("16-bit (bf16)"), 16);
    combo->addItem(tr("8-bit"), 8);
    combo->addItem(tr("4-bit"), 4);
    combo->setToolTip(tip);
    form()->addRow(label, combo);
    connect(combo, &QComboBox::activated, this, [this, combo, field, what](int index) {
        const int bits = combo->itemData(index).toInt();
        edit(tr("%1 %2-bit").arg(what).arg(bits),
            [field, bits](Plan& p) { p.serving.*field = bits; });
    });
    return combo;
}

void ServingControls::refresh()
{
    const ServingConfig& s = document()->plan().serving;
    const QSignalBlocker b0(m_kvBits), b1(m_weightBits), b2(m_tp);
    m_context->setValue(s.context);
    m_concurrency->setValue(s.concurrency);
    m_kvBits->setCurrentIndex(m_kvBits->findData(s.kvBits));
    m_weightBits->setCurrentIndex(m_weightBits->findData(s.weightBits));
    m_tp->setValue(s.tp);
    m_utilization->setValue(std::round(s.gpuMemoryUtilization * 100));
}

} // namespace envelope::ui
