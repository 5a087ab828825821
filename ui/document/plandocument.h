// The one open plan (Tiled's Document pattern): the Plan, its undo stack, file path and
// modified flag. Every change asks the core for fresh figures and emits them; panels draw only
// what this object hands them. The display units are the Settings' (the one place they live):
// a units change recomputes (suggestion texts carry formatted bytes) and emits resultsChanged
// once, so every panel redraws once, with the new units and fresh texts together.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

#include "document/trainingresults.h"
#include "plan/plan.h"
#include "plan/presets.h"
#include "document/pins.h"
#include "document/trainingresults.h"

class QThread;
class QUndoStack;

namespace envelope::ui {

class Settings;

class PlanDocument : public QObject {
    Q_OBJECT
public:
    // `settings` (not owned, may be null: then GB) supplies the display units.
    explicit PlanDocument(
        PresetLibrary presets, Settings* settings = nullptr, QObject* parent = nullptr);
    ~PlanDocument() override;

    const PresetLibrary& presets() const { return m_presets; }
    const Plan& plan() const { return m_plan; }

    // Figures of the last plan that passed validation (the last valid estimate stays drawn).
    const TrainingResults& results() const { return m_results; }
    // Empty when the current plan is valid, else validatePlan's message ("path: message").
    QString validationMessage() const { return m_validationMessage; }
    bool isValid() const { return m_validationMessage.isEmpty(); }

    // The core's explanations for the current valid plan, computed on first use after a change.
    const std::vector<Explanation>& explanations();
    const Explanation* explanation(const QString& figure);

    QUndoStack* undoStack() const { return m_undoStack; }

    // An edit by the user: pushed as an undo command. Consecutive edits with the same
    // `mergeId` (>= 0) merge into one undo step, so dragging a slider is one step.
    void edit(const Plan& plan, const QString& description, int mergeId = -1);

    // Replaces the plan without an undo step (used by undo commands themselves).
    void setPlan(const Plan& plan);

    // A new or opened plan: clears undo history and marks the document clean.
    void reset(const Plan& plan, const QString& filePath = {});

    QString filePath() const { return m_filePath; }
    void setFilePath(const QString& path);
    bool isModified() const;
    void markSaved(); // the current state is what is on disk

    // Pinned snapshots (document/pins.h). A new or opened plan starts with none; MainWindow
    // restores a saved plan's pins after opening it. Pinning is not an edit of the plan.
    const std::vector<PinnedPlan>& pins() const { return m_pins; }
    bool pinCurrent(); // false when the plan is not valid (nothing trustworthy to keep)
    void setPins(std::vector<PinnedPlan> pins);
    void clearPins(); // an edit the user saves, unlike setPins (what is on disk)

    // The display units every panel formats bytes in (Settings::units()).
    ByteUnits units() const;

    // "What makes it fit" (suggestFits, a bounded planner search) never runs on the GUI thread
    // (issue 22: it made every slider step on a plan that does not fit take 11-16 ms): after
    // each edit of a plan that does not fit it runs on a worker, results().suggestionsPending
    // says so meanwhile, and resultsChanged is emitted again when the suggestions land. Edits
    // while it runs queue one search of the latest plan; stale results are dropped.
    // Blocks until the current plan's suggestions have landed (tests, screenshots).
    void waitForFitSearch();

signals:
    void planChanged();
    void resultsChanged();
    void validationChanged(const QString& message);
    void filePathChanged(const QString& path);
    void modifiedChanged(bool modified);
    void pinsChanged();

private:
    void recompute();
    struct FitJob;
    void startFitSearch();
    void fitSearchFinished(std::shared_ptr<FitJob> job); // by value: it resets m_fitJob

    PresetLibrary m_presets;
    Plan m_plan;
    TrainingResults m_results;
    Plan m_resultsPlan; // the plan m_results belong to (the last valid one)
    QString m_validationMessage;
    std::optional<std::vector<Explanation>> m_explanations;
    QUndoStack* m_undoStack;
    QString m_filePath;
    Settings* m_settings;
    std::vector<PinnedPlan> m_pins;
    bool m_pinsModified = false;
    std::shared_ptr<FitJob> m_fitJob; // the search running on m_fitThread
    QThread* m_fitThread = nullptr;
    bool m_fitQueued = false; // a newer plan waits for the running search to end
};

} // namespace envelope::ui
