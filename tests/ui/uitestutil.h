// Shared helpers of the widget tests: an offscreen test main (hotspot's testutils pattern) and
// a plan with an explicit architecture, so the tests do not depend on which presets ship.
#pragma once

#include <QApplication>
#include <QString>
#include <QtTest>

#include <memory>

#include "document/plandocument.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "document/settings.h"

namespace envelope::uitest {

// Llama-2 7B written out (Touvron et al. 2023, table 2 / its config.json) on 8 x H100 SXM.
inline const char* kLlama7bPlan = R"({
  "format": "envelope.plan", "version": 1, "name": "Llama-2 7B SFT",
  "model": {"name": "Llama-2 7B", "layers": 32, "hidden": 4096, "ffn_hidden": 11008,
            "ffn": "swiglu", "heads": 32, "kv_heads": 32, "head_dim": 128, "vocab": 32000,
            "norm": "rmsnorm", "max_positions": 4096},
  "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8},
  "training": {"recipe": "bf16-mixed-16", "zero_stage": 1, "micro_batch": 2, "grad_accum": 8,
               "seq_len": 4096, "recompute": "selective"}
})";

inline PresetLibrary presets()
{
    Expected<PresetLibrary> library = builtinPresets();
    return library ? *library : PresetLibrary {};
}

inline Plan llama7bPlan()
{
    Expected<Plan> plan = readPlan(kLlama7bPlan, presets());
    if (!plan)
        qFatal("test plan does not read: %s", plan.error().toString().c_str());
    return *plan;
}

// A panel test's fixture: fresh settings, a document holding llama7bPlan(), and the panel shown
// at 1400x900. False when the window never got exposed.
template <class Panel>
bool openPanel(std::unique_ptr<ui::Settings>& settings, std::unique_ptr<ui::PlanDocument>& document,
    std::unique_ptr<Panel>& panel)
{
    settings = std::make_unique<ui::Settings>();
    document = std::make_unique<ui::PlanDocument>(presets());
    document->reset(llama7bPlan());
    panel = std::make_unique<Panel>(document.get(), settings.get());
    panel->resize(1400, 900);
    panel->show();
    return QTest::qWaitForWindowExposed(panel.get());
}

// Tears the fixture down in the reverse order (the panel refers to the document and settings).
template <class Panel>
void closePanel(std::unique_ptr<ui::Settings>& settings,
    std::unique_ptr<ui::PlanDocument>& document, std::unique_ptr<Panel>& panel)
{
    panel.reset();
    document.reset();
    settings.reset();
}

} // namespace envelope::uitest

// Widget tests run headless unless the caller chose a platform.
#define ENVELOPE_UI_TEST_MAIN(TestObject)                                                          \
    int main(int argc, char** argv)                                                                \
    {                                                                                              \
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))                                        \
            qputenv("QT_QPA_PLATFORM", "offscreen");                                               \
        QApplication app(argc, argv);                                                              \
        app.setAttribute(Qt::AA_Use96Dpi, true);                                                   \
        TestObject test;                                                                           \
        return QTest::qExec(&test, argc, argv);                                                    \
    }
