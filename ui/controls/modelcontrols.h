// Model group: preset, Hugging Face import (a config.json file, or a Hub id fetched in the
// background), size (log slider), context, micro-batch, grad accum.
#pragma once

#include "controls/choicecombo.h"
#include "controls/plancontrolgroup.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace envelope::ui {

class HubImportBox;
struct HubImport;
class SliderSpin;

class ModelControls : public PlanControlGroup {
    Q_OBJECT
public:
    explicit ModelControls(PlanDocument* document, QWidget* parent = nullptr);

    QComboBox* presetCombo() const { return m_preset; }
    SliderSpin* sizeControl() const { return m_size; }
    SliderSpin* contextControl() const { return m_context; }
    SliderSpin* microBatchControl() const { return m_microBatch; }
    QSpinBox* gradAccumControl() const { return m_gradAccum; }
    QLabel* shapeNote() const { return m_shapeNote; }
    HubImportBox* hubImportBox() const { return m_hub; }

signals:
    void importRequested();

protected:
    void refresh() override;

private:
    void onPresetPicked(int index);
    void onSizeEdited(double billions);
    void onHubImported(const HubImport& result);

    ChoiceCombo* m_preset;
    QPushButton* m_import;
    HubImportBox* m_hub;
    SliderSpin* m_size;
    QLabel* m_shapeNote;
    SliderSpin* m_context;
    SliderSpin* m_microBatch;
    QSpinBox* m_gradAccum;
};

} // namespace envelope::ui
