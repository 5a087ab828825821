#include "controls/servingcontrols.h"
#include "controls/showvalue.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include <cmath>
#include <tuple>

#include "controls/choicecombo.h"
#include "document/plandocument.h"
#include "controls/sliderspin.h"
#include "plan/planio.h"
#include "serving/serving.h"

namespace envelope::ui {

namespace {

// Redundant experts are copies over EP ranks: a layout without EP cannot keep them.
void dropRedundantExpertsWithoutEp(Plan& p)
{
    if (!servingHasExpertParallel(p.serving))
        p.serving.redundantExperts = 0;
}

} // namespace

ServingControls::ServingControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Serving"), document, parent)
    , m_engine(new ChoiceCombo(this))
    , m_context(new SliderSpin(SliderSpin::Scale::TokenLengths, 256, 1 << 20))
    , m_concurrency(new SliderSpin(SliderSpin::Scale::Log, 1, 4096))
    , m_tp(new QSpinBox(this))
    , m_ep(new QSpinBox(this))
    , m_dpAttention(nullptr)
    , m_disaggregation(nullptr)
    , m_utilization(new SliderSpin(SliderSpin::Scale::Linear, 10, 100))
{
    // The engine sizes the KV pool its own way (presets/engines.json); the version row is the
    // plan's serving.engine_version, or the engine's default.
    m_engine->addItem(tr("vLLM"), static_cast<int>(ServingEngine::Vllm));
    m_engine->addItem(tr("SGLang"), static_cast<int>(ServingEngine::Sglang));
    m_engine->addItem(tr("TensorRT-LLM"), static_cast<int>(ServingEngine::Trtllm));
    m_engine->addItem(tr("Generic (seeds' formula)"), static_cast<int>(ServingEngine::Generic));
    m_engine->setToolTip(tr("The engine whose memory accounting sizes the KV pool"));
    form()->addRow(tr("E&ngine:"), m_engine);
    connect(m_engine, &QComboBox::activated, this, [this](int index) {
        const auto engine = static_cast<ServingEngine>(m_engine->itemData(index).toInt());
        const PresetLibrary& presets = this->document()->presets();
        edit(tr("Serving engine %1").arg(m_engine->itemText(index)),
            [engine, &presets](Plan& p) {
                // A version names a release of the engine it was written for: another engine
                // starts from its own default row.
                if (p.serving.engine != engine)
                    p.serving.engineVersion.clear();
                p.serving.engine = engine;
                resolveServingEngine(presets, p.serving);
            });
    });

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

    // Formats with the scales each stores (serving.kv_format, serving.weight_format); each item
    // sets the format and its bits.
    m_kvBits = new ChoiceCombo(this);
    const std::pair<QString, KvCacheFormat> kvFormats[] = {
        { tr("16-bit (bf16)"), KvCacheFormat::Bf16 },
        { tr("FP8 (scale per layer)"), KvCacheFormat::Fp8 },
        { tr("INT8 (scale per token)"), KvCacheFormat::Int8 },
        { tr("INT4 (scale per token)"), KvCacheFormat::Int4 },
        { tr("NVFP4 (scale per 16)"), KvCacheFormat::Nvfp4 },
    };
    for (const auto& [text, format] : kvFormats)
        m_kvBits->addItem(text, static_cast<int>(format));
    m_kvBits->setToolTip(tr("KV cache format: FP8 as vLLM, SGLang and TensorRT-LLM store it; "
                            "INT8/INT4 add an fp16 scale + zero point per head and token"));
    form()->addRow(tr("&KV cache:"), m_kvBits);
    connect(m_kvBits, &QComboBox::activated, this, [this](int index) {
        const auto format = static_cast<KvCacheFormat>(m_kvBits->itemData(index).toInt());
        edit(tr("KV cache %1").arg(m_kvBits->itemText(index)), [format](Plan& p) {
            p.serving.kvBits = kvCacheFormatBits(format);
            // 16 bits stays the plan's default spelling.
            p.serving.kvFormat = format == KvCacheFormat::Bf16 ? KvCacheFormat::Auto : format;
        });
    });
    m_weightBits = new ChoiceCombo(this);
    const std::tuple<QString, WeightFormat, int> weightFormats[] = {
        { tr("16-bit (bf16)"), WeightFormat::Auto, 16 },
        { tr("8-bit, group scales (GPTQ)"), WeightFormat::Auto, 8 },
        { tr("4-bit, group scales (GPTQ/AWQ)"), WeightFormat::Auto, 4 },
        { tr("FP8"), WeightFormat::Fp8, 8 },
        { tr("FP8, 128×128 blocks"), WeightFormat::Fp8Block, 8 },
        { tr("INT8 (W8A8)"), WeightFormat::Int8, 8 },
        { tr("NVFP4 (scale per 16)"), WeightFormat::Nvfp4, 4 },
        { tr("MXFP4 (scale per 32)"), WeightFormat::Mxfp4, 4 },
        { tr("INT4 (W4A16, group scales)"), WeightFormat::Int4, 4 },
    };
    for (const auto& [text, format, bits] : weightFormats)
        m_weightBits->addItem(text, QList<QVariant> { static_cast<int>(format), bits });
    m_weightBits->setToolTip(tr("Weight format of the linear layers, with the scales each stores"));
    form()->addRow(tr("&Weights:"), m_weightBits);
    connect(m_weightBits, &QComboBox::activated, this, [this](int index) {
        const QList<QVariant> data = m_weightBits->itemData(index).toList();
        const auto format = static_cast<WeightFormat>(data.value(0).toInt());
        const int bits = data.value(1).toInt();
        edit(tr("Weights %1").arg(m_weightBits->itemText(index)), [format, bits](Plan& p) {
            p.serving.weightBits = bits;
            p.serving.weightFormat = format;
        });
    });

    // A mixed checkpoint's module groups (serving.attention_weight_format,
    // serving.expert_weight_format): "same" or a stored format of their own.
    const std::pair<QString, WeightFormat> groupFormats[] = {
        { tr("BF16"), WeightFormat::Bf16 },
        { tr("FP8"), WeightFormat::Fp8 },
        { tr("FP8 blocks"), WeightFormat::Fp8Block },
        { tr("INT8"), WeightFormat::Int8 },
        { tr("NVFP4"), WeightFormat::Nvfp4 },
        { tr("MXFP4"), WeightFormat::Mxfp4 },
        { tr("INT4"), WeightFormat::Int4 },
    };
    m_attentionFormat = new ChoiceCombo(this);
    m_expertFormat = new ChoiceCombo(this);
    for (QComboBox* combo : { m_attentionFormat, m_expertFormat }) {
        combo->addItem(tr("Same as weights"), -1);
        for (const auto& [text, format] : groupFormats)
            combo->addItem(text, static_cast<int>(format));
    }
    m_attentionFormat->setToolTip(tr("Attention projections (q, k, v, o) stored in their own format, "
                                     "as mixed checkpoints ship them (Llama 4 FP8: attention bf16); "
                                     "Same: the weights' format"));
    m_expertFormat->setToolTip(tr("Routed experts stored in their own format (gpt-oss: MXFP4 "
                                  "experts, the rest bf16; Kimi K2 Thinking: INT4 experts); Same: "
                                  "the weights' format"));
    form()->addRow(tr("Atte&ntion weights:"), m_attentionFormat);
    form()->addRow(tr("E&xpert weights:"), m_expertFormat);
    const auto connectGroup = [this](QComboBox* combo, std::optional<WeightFormat> ServingConfig::*group,
                                  QString name) {
        connect(combo, &QComboBox::activated, this, [this, combo, group, name](int index) {
            const int data = combo->itemData(index).toInt();
            const std::optional<WeightFormat> format = data < 0
                ? std::nullopt
                : std::optional<WeightFormat>(static_cast<WeightFormat>(data));
            edit(tr("%1 weights %2").arg(name, combo->itemText(index)),
                [group, format](Plan& p) { p.serving.*group = format; });
        });
    };
    connectGroup(m_attentionFormat, &ServingConfig::attentionWeightFormat, tr("Attention"));
    connectGroup(m_expertFormat, &ServingConfig::expertWeightFormat, tr("Expert"));

    m_tp->setRange(1, 64);
    m_tp->setKeyboardTracking(false);
    m_tp->setToolTip(
        tr("Tensor-parallel GPUs per replica: weights and KV heads split across them"));
    form()->addRow(tr("&Tensor parallel:"), m_tp);
    connect(m_tp, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("Serving TP %1").arg(v), [v](Plan& p) { p.serving.tp = v; }, kServingTpControl);
    });

    // Expert parallelism and data-parallel attention (MoE models; docs/plan-format.md).
    m_ep->setRange(1, 4096);
    m_ep->setKeyboardTracking(false);
    m_ep->setToolTip(tr("Expert parallel (serving.ep): inside the TP group it must divide it; "
                        "with data-parallel attention the engine is this many GPUs"));
    form()->addRow(tr("E&xpert parallel:"), m_ep);
    connect(m_ep, &QSpinBox::valueChanged, this, [this](int v) {
        edit(tr("Serving EP %1").arg(v), [v](Plan& p) {
            p.serving.ep = v;
            dropRedundantExpertsWithoutEp(p);
        }, kServingEpControl);
    });
    m_dpAttention = addSwitch(tr("&Data-parallel attention"),
        tr("serving.dp_attention: attention runs as ep / tp ranks, each with its own sequences "
           "and KV pool; whole experts spread over the engine's GPUs (SGLang "
           "--enable-dp-attention)"),
        [](Plan& p, bool on) {
            p.serving.dpAttention = on;
            // An engine of one node's GPUs when EP does not yet span more than the TP group.
            if (on && p.serving.ep <= p.serving.tp)
                p.serving.ep = p.serving.tp * std::max(2, p.cluster.gpusPerNode / std::max(p.serving.tp, 1));
        });
    m_redundant = addSpin(tr("Red&undant experts:"),
        tr("serving.redundant_experts: extra copies of the busiest experts over the EP ranks "
           "(DeepSeek-V3: 32; vLLM EPLB, SGLang --ep-num-redundant-experts); each GPU holds "
           "ceil((E + R) / ep) experts"),
        0, kMaxRedundantExperts, kServingRedundantExpertsControl,
        [](Plan& p, int v) { p.serving.redundantExperts = v; });
    m_disaggregation = addSwitch(tr("Disaggregated &prefill / decode"),
        tr("serving.disaggregation: prompts computed on a prefill pool, their KV sent to a "
           "decode pool; each pool its own workers, TP and attention ranks"),
        [](Plan& p, bool on) {
            if (!on) {
                p.serving.disaggregation.reset();
                dropRedundantExpertsWithoutEp(p);
                return;
            }
            // Both pools start as one engine of the current layout.
            const ServingParallel par = servingParallel(p.serving);
            ServingPool pool;
            pool.tp = par.tp;
            pool.dp = par.dp;
            pool.ep = par.dp > 1 ? par.tp * par.dp : par.ep;
            p.serving.disaggregation = ServingDisaggregation { pool, pool };
        });
    const char* poolNames[2] = { QT_TR_NOOP("Prefill pool:"), QT_TR_NOOP("Decode pool:") };
    const char* fieldTips[3] = { QT_TR_NOOP("workers (engine instances)"),
        QT_TR_NOOP("attention tensor parallel"), QT_TR_NOOP("attention ranks (dp)") };
    for (int i = 0; i < 2; ++i) {
        m_poolRow[i] = new QWidget(this);
        auto* row = new QHBoxLayout(m_poolRow[i]);
        row->setContentsMargins(0, 0, 0, 0);
        for (int f = 0; f < 3; ++f) {
            auto* spin = new QSpinBox(m_poolRow[i]);
            spin->setRange(1, f == 0 ? 100'000 : 4096);
            spin->setKeyboardTracking(false);
            spin->setPrefix(f == 0 ? QString() : f == 1 ? tr("tp ") : tr("dp "));
            spin->setSuffix(f == 0 ? tr(" ×") : QString());
            spin->setToolTip(tr(fieldTips[f]));
            row->addWidget(spin, 1);
            m_pool[i][f] = spin;
            connect(spin, &QSpinBox::valueChanged, this, [this, i, f](int v) {
                edit(
                    tr("%1 %2").arg(undoName(tr(i == 0 ? "Prefill pool:" : "Decode pool:"))).arg(v),
                    [i, f, v](Plan& p) {
                        if (!p.serving.disaggregation)
                            return;
                        ServingPool& pool
                            = i == 0 ? p.serving.disaggregation->prefill : p.serving.disaggregation->decode;
                        (f == 0 ? pool.workers : f == 1 ? pool.tp : pool.dp) = v;
                        // Attention ranks spread the experts over the worker; one rank keeps
                        // EP inside its TP group.
                        if (pool.dp > 1)
                            pool.ep = pool.tp * pool.dp;
                        else if (pool.ep > 1 && pool.tp % pool.ep != 0)
                            pool.ep = 1;
                        dropRedundantExpertsWithoutEp(p);
                    },
                    i == 0 ? kServingPrefillPoolControl : kServingDecodePoolControl);
            });
        }
        form()->addRow(tr(poolNames[i]), m_poolRow[i]);
        m_poolLabel[i] = qobject_cast<QLabel*>(form()->labelForField(m_poolRow[i]));
    }

    m_utilization->setSuffix(tr(" %"));
    form()->addRow(tr("&Memory fraction:"), m_utilization);
    connect(m_utilization, &SliderSpin::valueEdited, this, [this](double v) {
        const double fraction = std::round(v) / 100.0;
        // The engine's own fraction: SGLang's and TensorRT-LLM's are separate plan keys.
        edit(
            tr("GPU memory fraction %1").arg(fraction, 0, 'f', 2),
            [fraction](Plan& p) {
                if (p.serving.engine == ServingEngine::Sglang)
                    p.serving.memFractionStatic = fraction;
                else if (p.serving.engine == ServingEngine::Trtllm)
                    p.serving.freeGpuMemoryFraction = fraction;
                else
                    p.serving.gpuMemoryUtilization = fraction;
            },
            kServingUtilizationControl);
    });
    refresh();
}

void ServingControls::refresh()
{
    const Plan& plan = document()->plan();
    const ServingConfig& s = plan.serving;
    const QSignalBlocker b0(m_kvBits), b1(m_weightBits), b2(m_tp), b3(m_engine);
    m_engine->setCurrentIndex(m_engine->findData(static_cast<int>(s.engine)));
    const QString version = s.engineProfile.version.empty()
        ? QString()
        : tr(" (modelled version %1)").arg(QString::fromStdString(s.engineProfile.version));
    m_engine->setToolTip(tr("The engine whose memory accounting sizes the KV pool%1").arg(version));
    if (s.engine == ServingEngine::Sglang) {
        m_utilization->setToolTip(tr("SGLang mem_fraction_static: the share of the free memory "
                                     "for weights and the KV pool%1")
                                      .arg(s.memFractionStatic ? QString() : tr(" (the engine's default)")));
    } else if (s.engine == ServingEngine::Trtllm) {
        m_utilization->setToolTip(tr("TensorRT-LLM free_gpu_memory_fraction: the KV pool's share of "
                                     "the memory free after the weights and activations"));
    } else {
        m_utilization->setToolTip(
            tr("vLLM gpu_memory_utilization: the share of HBM the engine may use"));
    }
    m_context->setValue(s.context);
    m_concurrency->setValue(s.concurrency);
    m_kvBits->setCurrentIndex(m_kvBits->findData(static_cast<int>(servingKvFormat(s))));
    // "bf16" written out is the 16-bit item.
    const WeightFormat shownFormat = s.weightFormat == WeightFormat::Bf16 ? WeightFormat::Auto : s.weightFormat;
    for (int i = 0; i < m_weightBits->count(); ++i) {
        const QList<QVariant> data = m_weightBits->itemData(i).toList();
        if (data.value(0).toInt() == static_cast<int>(shownFormat) && data.value(1).toInt() == s.weightBits)
            m_weightBits->setCurrentIndex(i);
    }
    m_attentionFormat->setCurrentIndex(m_attentionFormat->findData(
        s.attentionWeightFormat ? static_cast<int>(*s.attentionWeightFormat) : -1));
    m_expertFormat->setCurrentIndex(m_expertFormat->findData(
        s.expertWeightFormat ? static_cast<int>(*s.expertWeightFormat) : -1));
    showValue(m_tp, s.tp);
    const bool moe = plan.model.arch.moe && plan.model.arch.moe->experts > 0;
    // A dense model has no routed experts: its format stays as the plan gives it but applies
    // to nothing.
    m_expertFormat->setEnabled(moe || s.expertWeightFormat.has_value());
    const bool disaggregated = s.disaggregation.has_value();
    {
        const QSignalBlocker b4(m_ep), b5(m_dpAttention), b6(m_disaggregation), b7(m_redundant);
        showValue(m_ep, s.ep);
        showValue(m_redundant, s.redundantExperts);
        m_dpAttention->setChecked(s.dpAttention);
        m_disaggregation->setChecked(disaggregated);
    }
    // EP and attention ranks are for models with routed experts; under disaggregation each
    // pool says its own layout.
    m_ep->setEnabled(moe && !disaggregated);
    m_dpAttention->setEnabled(moe && !disaggregated);
    m_redundant->setEnabled(moe && servingHasExpertParallel(s));
    m_tp->setEnabled(!disaggregated);
    for (int i = 0; i < 2; ++i) {
        m_poolRow[i]->setVisible(disaggregated);
        if (m_poolLabel[i])
            m_poolLabel[i]->setVisible(disaggregated);
        if (!disaggregated)
            continue;
        const ServingPool& pool = i == 0 ? s.disaggregation->prefill : s.disaggregation->decode;
        const int values[3] = { pool.workers, pool.tp, pool.dp };
        for (int f = 0; f < 3; ++f) {
            const QSignalBlocker block(m_pool[i][f]);
            showValue(m_pool[i][f], values[f]);
        }
        m_pool[i][2]->setEnabled(moe);
    }
    m_utilization->setValue(std::round(servingMemoryFraction(s, plan.gpu.gpu) * 100));
}

} // namespace envelope::ui
