#include "controls/hardwarecontrols.h"
#include "controls/showvalue.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include "charts/memoryview.h"
#include "controls/choicecombo.h"
#include "document/plandocument.h"
#include "plan/fields.h"

namespace envelope::ui {

HardwareControls::HardwareControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Hardware"), document, parent)
    , m_gpu(new ChoiceCombo(this))
    , m_gpuNote(new QLabel(this))
    , m_gpus(new QSpinBox(this))
{
    m_gpu->addItem(tr("Custom GPU"), QString());
    // Grouped by vendor, the name's first word ("NVIDIA H100 SXM5 80GB" -> NVIDIA, listed as
    // "H100 SXM5 80GB" so that typing "H1" in the open list finds it).
    QList<ChoiceCombo::GroupedChoice> choices;
    for (const GpuPreset& preset : document->presets().gpus) {
        const QString name = QString::fromStdString(preset.gpu.name.empty() ? preset.id : preset.gpu.name);
        const qsizetype space = name.indexOf(QLatin1Char(' '));
        const QString vendor = space > 0 ? name.left(space) : tr("Other");
        choices.push_back({ vendor, space > 0 ? name.mid(space + 1) : name, QString::fromStdString(preset.id) });
    }
    m_gpu->addGrouped(choices);
    m_gpuNote->setForegroundRole(QPalette::PlaceholderText);
    m_gpuNote->setWordWrap(true);
    m_gpus->setRange(1, planfields::kMaxGpus); // the plan's cluster.gpus range (issue 26)
    m_gpus->setKeyboardTracking(false);
    m_gpus->setGroupSeparatorShown(true);
    m_gpus->setToolTip(tr("GPUs in the job (tp x pp x cp x data-parallel)"));

    form()->addRow(tr("GP&U:"), m_gpu);
    form()->addRow(QString(), m_gpuNote);
    form()->addRow(tr("GPU cou&nt:"), m_gpus);

    connect(m_gpu, &QComboBox::activated, this, [this](int index) {
        const GpuPreset* preset
            = this->document()->presets().findGpu(m_gpu->itemData(index).toString().toStdString());
        if (!preset) {
            refresh();
            return;
        }
        edit(tr("GPU %1").arg(m_gpu->itemText(index)), [preset](Plan& p) {
            p.gpu.presetId = preset->id;
            p.gpu.gpu = preset->gpu;
        });
    });
    connect(m_gpus, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("%1 GPUs").arg(v), [v](Plan& p) { p.cluster.gpus = v; }, kGpuCountControl);
    });
    // The HBM note follows the display units, which change the results but not the plan.
    connect(document, &PlanDocument::resultsChanged, this, &HardwareControls::refresh);
    refresh();
}

void HardwareControls::refresh()
{
    const Plan& plan = this->document()->plan();
    {
        const QSignalBlocker block(m_gpu);
        const int index = m_gpu->findData(QString::fromStdString(plan.gpu.presetId));
        m_gpu->setCurrentIndex(plan.gpu.presetId.empty() ? 0 : std::max(index, 0));
        // A plan's own GPU shows by its name, as the Serving tab's header does (issue 23).
        const std::string& name = plan.gpu.gpu.name;
        m_gpu->setItemText(0,
            plan.gpu.presetId.empty() && !name.empty() ? tr("Custom: %1").arg(QString::fromStdString(name))
                                                        : tr("Custom GPU"));
    }
    const Gpu& gpu = plan.gpu.gpu;
    m_gpuNote->setText(
        tr("%1 HBM, %2 TFLOP/s BF16, %3 GPUs per node")
            .arg(bytesText(gpu.memoryBytes, this->document()->units()))
            .arg(gpu.bf16Flops / 1e12, 0, 'f', 0)
            .arg(plan.cluster.gpusPerNode));
    const QSignalBlocker block(m_gpus);
    showValue(m_gpus, plan.cluster.gpus);
}

} // namespace envelope::ui
