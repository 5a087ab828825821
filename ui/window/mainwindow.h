// The main window: a tab per panel (Training first), the File / Edit / View menus, and the
// document's life cycle (new, open, save, recent files, last session, unsaved-changes prompt).
#pragma once

#include <QMainWindow>

#include <functional>
#include <optional>

#include "export/export.h"
#include "plan/presets.h"

class QAction;
class QActionGroup;
class QMenu;
class QTabWidget;

namespace envelope::ui {

class PlanDocument;
class PlanPanel;
class Settings;
class TrainingPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(PresetLibrary presets, Settings* settings, QWidget* parent = nullptr);
    ~MainWindow() override;

    PlanDocument* document() const { return m_document; }
    TrainingPanel* trainingPanel() const { return m_training; }
    QTabWidget* tabs() const { return m_tabs; }

    // Adds a tab (Serving, RL, ...) selectable as `--panel id`. Takes ownership.
    void addPanel(const QString& id, const QString& title, QWidget* panel);
    bool selectPanel(const QString& id); // false for an unknown id
    QStringList panelIds() const;

    // Plans. openFile keeps the current plan on failure and returns the error ("path: message").
    bool openFile(const QString& path, QString* error = nullptr);
    bool saveFile(const QString& path, QString* error = nullptr);
    void newPlan();
    void restoreSession(); // the last session's plan, else presets/default-plan.json
    bool importHfConfigFile(const QString& path, QString* error = nullptr);
    // A DeepSpeed / torchtitan / Megatron file as a new, untitled plan (mainwindowengines.cpp).
    // `model` is a preset id or a config.json path; `warnings` gets what the plan cannot hold.
    bool importEngineConfigFile(Engine engine, const QString& path, const QString& model,
        std::optional<int> gpus, QString* error = nullptr, QStringList* warnings = nullptr);

    // What to do with unsaved changes; by default a dialog. Tests replace it.
    void setSavePrompt(std::function<int()> prompt) { m_savePrompt = std::move(prompt); }
    bool maybeSave(); // true when it is fine to discard the current plan

    QAction* undoAction() const { return m_undo; }
    QAction* redoAction() const { return m_redo; }

public slots:
    void open();
    bool save();
    bool saveAs();
    void exportChartPng();
    void exportChartSvg();
    void exportWindowPng();
    void copySummaryMarkdown();
    void exportEngineConfig();
    void importEngineConfig();
    void calibrateFromRun(); // Tools → Calibrate from a measured run… (window/calibratedialog.h)
    void pinPlan();
    void clearPins();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // Before switching to Find a plan: tells it the kind of the tab the user comes from.
    void prepareSwitch(int index);
    void createMenus();
    void updateTitle();
    void updateRecentMenu();
    void showError(const QString& title, const QString& message);
    void loadDefaultPlan();
    QString exportPath(const QString& filter, const QString& suffix);

    Settings* m_settings;
    PlanDocument* m_document;
    QTabWidget* m_tabs;
    PlanPanel* m_planner = nullptr;
    TrainingPanel* m_training;
    QStringList m_panelIds;
    QMenu* m_recentMenu = nullptr;
    QAction* m_undo = nullptr;
    QAction* m_redo = nullptr;
    QActionGroup* m_unitsGroup = nullptr;
    std::function<int()> m_savePrompt;
};

} // namespace envelope::ui
