// File access for envelope-cli (the core does no I/O): reading text files and the user's preset
// folder.
#pragma once

#include <string>

#include "base/expected.h"
#include "plan/presets.h"

namespace envelope::cli {

// The whole file as text. Errors name the file and the reason (missing, a folder, too large).
Expected<std::string> readTextFile(const std::string& path);

// $XDG_CONFIG_HOME/envelope/presets, or ~/.config/envelope/presets; empty when neither
// XDG_CONFIG_HOME nor HOME is set.
std::string userPresetDir();

// The built-in presets with every *.json in userPresetDir() merged over them by id, in file
// name order. An unreadable or invalid user file is an error naming the file and JSON path.
Expected<PresetLibrary> loadPresets();

} // namespace envelope::cli
