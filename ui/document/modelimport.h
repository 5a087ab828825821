// A Hugging Face config.json import as the plan's model, one rule for a file chosen or dropped
// (MainWindow::importHfConfigFile) and a config fetched by Hub id (HubImportBox, issue 23).
#pragma once

#include <string>

#include "plan/plan.h"

namespace envelope::ui {

// The model as `{"hf_config": configPath}` (absolute in memory; saving writes it relative to
// the plan's folder), named `fallbackName` when the config names nothing. An empty
// `configPath` (a Hub fetch with no cache folder) keeps the architecture inline instead.
ModelChoice importedHfModel(
    ModelArch arch, const std::string& configPath, const std::string& fallbackName);

} // namespace envelope::ui
