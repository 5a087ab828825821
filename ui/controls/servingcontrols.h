// Serving group: the engine whose memory accounting sizes the KV pool, context, concurrency, KV
// and weight precision, tensor and expert parallelism, data-parallel attention, disaggregated
// prefill / decode pools and the engine's memory fraction (vLLM gpu_memory_utilization, SGLang
// mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction).
// Every change is one undoable PlanDocument edit.
#pragma once

#include "controls/plancontrolgroup.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;

namespace envelope::ui {

class SliderSpin;

// Merge ids of the serving controls (after the training panel's ControlId values).
enum ServingControlId {
    kServingContextControl = 100,
    kServingConcurrencyControl,
    kServingTpControl,
    kServingUtilizationControl,
    kServingEpControl,
    kServingPrefillPoolControl,
    kServingDecodePoolControl,
    kServingRedundantExpertsControl,
};

class ServingControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit ServingControls(PlanDocument* document, QWidget* parent = nullptr);

    SliderSpin* contextControl() const { return m_context; }
    SliderSpin* concurrencyControl() const { return m_concurrency; }
    QComboBox* kvBitsCombo() const { return m_kvBits; }
    QComboBox* weightBitsCombo() const { return m_weightBits; }
    QComboBox* attentionFormatCombo() const { return m_attentionFormat; }
    QComboBox* expertFormatCombo() const { return m_expertFormat; }
    QSpinBox* tpControl() const { return m_tp; }
    SliderSpin* utilizationControl() const { return m_utilization; } // percent
    QComboBox* engineCombo() const { return m_engine; }
    QSpinBox* epControl() const { return m_ep; }
    QCheckBox* dpAttentionSwitch() const { return m_dpAttention; }
    QSpinBox* redundantExpertsControl() const { return m_redundant; }
    QCheckBox* disaggregationSwitch() const { return m_disaggregation; }
    // workers, tp, dp of the prefill (0) or decode (1) pool.
    QSpinBox* poolControl(int pool, int field) const { return m_pool[pool][field]; }

protected:
    void refresh() override;

private:

    QComboBox* m_engine;
    SliderSpin* m_context;
    SliderSpin* m_concurrency;
    QComboBox* m_kvBits;
    QComboBox* m_weightBits;
    QComboBox* m_attentionFormat;
    QComboBox* m_expertFormat;
    QSpinBox* m_tp;
    QSpinBox* m_ep;
    QCheckBox* m_dpAttention;
    QSpinBox* m_redundant = nullptr;
    QCheckBox* m_disaggregation;
    QLabel* m_poolLabel[2] = {};
    QWidget* m_poolRow[2] = {};
    QSpinBox* m_pool[2][3] = {};
    SliderSpin* m_utilization;
};

} // namespace envelope::ui
