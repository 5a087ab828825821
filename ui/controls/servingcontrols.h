// Serving group: the engine whose memory accounting sizes the KV pool, context, concurrency, KV
// and weight precision, tensor parallelism and the engine's memory fraction (vLLM
// gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction).
// Every change is one undoable PlanDocument edit.
#pragma once

#include "controls/plancontrolgroup.h"

class QComboBox;
class QSpinBox;

namespace envelope::ui {

class SliderSpin;

// Merge ids of the serving controls (after the training panel's ControlId values).
enum ServingControlId {
    kServingContextControl = 100,
    kServingConcurrencyControl,
    kServingTpControl,
    kServingUtilizationControl,
};

class ServingControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit ServingControls(PlanDocument* document, QWidget* parent = nullptr);

    SliderSpin* contextControl() const { return m_context; }
    SliderSpin* concurrencyControl() const { return m_concurrency; }
    QComboBox* kvBitsCombo() const { return m_kvBits; }
    QComboBox* weightBitsCombo() const { return m_weightBits; }
    QSpinBox* tpControl() const { return m_tp; }
    SliderSpin* utilizationControl() const { return m_utilization; } // percent
    QComboBox* engineCombo() const { return m_engine; }

protected:
    void refresh() override;

private:
    QComboBox* addBitsCombo(
        const QString& label, const QString& tip, int ServingConfig::*field, const QString& what);

    QComboBox* m_engine;
    SliderSpin* m_context;
    SliderSpin* m_concurrency;
    QComboBox* m_kvBits;
    QComboBox* m_weightBits;
    QSpinBox* m_tp;
    SliderSpin* m_utilization;
};

} // namespace envelope::ui
