// Shared helpers of the widget tests: an offscreen test main (hotspot's testutils pattern), a
// plan with an explicit architecture, so the tests do not depend on which presets ship, a panel
// fixture, and what a user's typing and the tests' comparisons need.
#pragma once

#include <QAbstractSpinBox>
#include <QApplication>
#include <QString>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>

#include "document/plandocument.h"
#include "document/settings.h"
#include "window/mainwindow.h"
#include "plan/planio.h"
#include "plan/presets.h"

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

// Replaces the spin box's text by `text` and commits it with Enter, as a user types.
inline void typeInto(QAbstractSpinBox* spin, const QString& text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

// Saves a PNG of `widget` as `name` under $ENVELOPE_SCREENSHOT_DIR, when set, for review.
inline void keepScreenshot(QWidget* widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("ENVELOPE_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        QVERIFY(widget->grab().save(dir + QLatin1Char('/') + name, "PNG"));
}

// Equal to 1e-9 relative (absolute below 1): a drawn value against the core's figure.
inline bool close(double a, double b)
{
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
}

// A panel test's fixture: fresh settings, a document holding llama7bPlan() that takes its units
// from those settings, and the panel shown at 1400x900. The test class derives from it and
// calls openPanel() in init() and closePanel() in cleanup().
template <class Panel> class PanelTest : public QObject {
protected:
    // False when the window never got exposed.
    bool openPanel()
    {
        m_settings = std::make_unique<ui::Settings>();
        m_doc = std::make_unique<ui::PlanDocument>(presets(), m_settings.get());
        m_doc->reset(llama7bPlan());
        m_panel = std::make_unique<Panel>(m_doc.get());
        m_panel->resize(1400, 900);
        m_panel->show();
        return QTest::qWaitForWindowExposed(m_panel.get());
    }

    // Tears the fixture down in the reverse order (the panel refers to the document and settings).
    void closePanel()
    {
        m_panel.reset();
        m_doc.reset();
        m_settings.reset();
    }

    std::unique_ptr<ui::Settings> m_settings;
    std::unique_ptr<ui::PlanDocument> m_doc;
    std::unique_ptr<Panel> m_panel;
};

// A main-window test's fixture: fresh settings and the whole window on `plan` at `size`, shown.
// The test class derives from it and calls openWindow() in init() and closeWindow() in cleanup().
class WindowTest : public QObject {
protected:
    // False when the window never got exposed.
    bool openWindow(const Plan& plan = llama7bPlan(), QSize size = { 1280, 800 })
    {
        m_settings = std::make_unique<ui::Settings>();
        m_window = std::make_unique<ui::MainWindow>(presets(), m_settings.get());
        m_window->document()->reset(plan);
        m_window->resize(size);
        m_window->show();
        return QTest::qWaitForWindowExposed(m_window.get());
    }

    // Closes without the unsaved-changes prompt, then drops the settings the window refers to.
    void closeWindow()
    {
        if (m_window)
            m_window->document()->markSaved();
        m_window.reset();
        m_settings.reset();
    }

    std::unique_ptr<ui::Settings> m_settings;
    std::unique_ptr<ui::MainWindow> m_window;
};

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
