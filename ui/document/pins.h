// "Pin this plan" (issue 15): snapshots of plans kept beside the current one, so the memory
// chart can draw them ghosted next to it and the summary can show the deltas.
//
// Pins live in a sibling file, PLAN.pins.json next to PLAN.json (docs/plan-format.md, "Pins"):
// the plan file stays exactly one envelope.plan that envelope-cli, scripts and other tools read
// unchanged, while pins are the app's comparison workspace around it.
#pragma once

#include <QString>

#include <vector>

#include "estimate/estimate.h"
#include "plan/presets.h"

namespace envelope::ui {

struct PinnedPlan {
    QString label; // the plan's name when pinned
    Plan plan;
    Estimate estimate; // the core's figures for `plan`
};

// "/x/plan.json" -> "/x/plan.pins.json".
QString pinsPathFor(const QString& planPath);

// Writes the pins atomically (QSaveFile); with no pins, removes a stale file instead.
bool savePins(const QString& path, const std::vector<PinnedPlan>& pins, QString* error = nullptr);

// Reads the pins (and estimates them). A missing file is no pins; a bad one is an error naming
// the pin and the JSON path. `baseDir` resolves hf_config paths as for the plan itself.
std::vector<PinnedPlan> loadPins(
    const QString& path, const PresetLibrary& presets, QString* error = nullptr);

} // namespace envelope::ui
