// File access shared by envelope-cli and the app (envelope_io: Qt-free, separate from
// envelope_core, whose estimator does no I/O): reading text files with a size cap and the
// user's preset folder. One loader, so the CLI and the GUI see the same user presets.
#pragma once

#include <string>
#include <vector>

#include "base/expected.h"
#include "plan/presets.h"

namespace envelope::io {

// The whole file as text, at most 64 MB. Anything but a regular file (a fifo, /dev/zero, a
// socket) is refused before it is opened, so no path can hang or exhaust memory. Errors name
// the file and the reason (missing, a folder, not a regular file, too large).
Expected<std::string> readTextFile(const std::string& path);

// `path`, or standard input when it is "-" (the CLI convention: `envelope-cli estimate -`),
// read to its end with the same 64 MB cap; a terminal on stdin is refused rather than waited on.
Expected<std::string> readTextInput(const std::string& path);

// $XDG_CONFIG_HOME/envelope/presets, or ~/.config/envelope/presets; empty when neither
// XDG_CONFIG_HOME nor HOME is set.
std::string userPresetDir();

// The built-in presets with every *.json in userPresetDir() merged over them by id, in file
// name order. An unreadable or invalid user file is an error naming the file and JSON path.
Expected<PresetLibrary> loadPresets();

// The same, for the app: a user file that cannot be read or merged is skipped with a warning
// naming it (the app still opens); the built-in presets are always there.
PresetLibrary loadPresetsSkippingBad(std::vector<std::string>& warnings);

} // namespace envelope::io
