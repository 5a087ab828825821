// A Hugging Face config.json import as the plan's model, one rule for a file chosen or dropped
// (MainWindow::importHfConfigFile) and a config fetched by Hub id (HubImportBox, issue 23).
#pragma once

#include <string>

#include "plan/plan.h"
#include "plan/planio.h"

namespace envelope::ui {

// The model as `{"hf_config": configPath}` (absolute in memory; saving writes it relative to
// the plan's folder), named `fallbackName` when the config names nothing. An empty
// `configPath` (a Hub fetch with no cache folder) keeps the architecture inline instead.
ModelChoice importedHfModel(
    ModelArch arch, const std::string& configPath, const std::string& fallbackName);

// The model as `{"hf_id": id}`, named `id` (as readPlan names it).
ModelChoice importedHubModel(ModelArch arch, const std::string& id);

// A plan's {"hf_id": ...} as the app reads it on the GUI thread: from the Hub cache only (no
// network on the GUI thread); a miss says how to fetch it.
HubReader hubCacheReader();

} // namespace envelope::ui
