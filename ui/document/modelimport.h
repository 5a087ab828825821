// A Hugging Face config.json import as the plan's model: a file chosen or dropped
// (MainWindow::importHfConfigFile) as its path, a config fetched by Hub id (HubImportBox, issue
// 23) as its id, which the app reads back from the Hub cache.
#pragma once

#include <string>

#include "plan/plan.h"
#include "plan/planio.h"

namespace envelope::ui {

// The model as `{"hf_config": configPath}` (absolute in memory; saving writes it relative to
// the plan's folder), named `fallbackName` when the config names nothing.
ModelChoice importedHfModel(
    ModelArch arch, const std::string& configPath, const std::string& fallbackName);

// The model as `{"hf_id": id}`, named `id` (as readPlan names it).
ModelChoice importedHubModel(ModelArch arch, const std::string& id);

// A plan's {"hf_id": ...} as the app reads it on the GUI thread: from the Hub cache only (no
// network on the GUI thread); a miss says how to fetch it.
HubReader hubCacheReader();

} // namespace envelope::ui
