// The preset JSON files, embedded at build time (cmake/EmbedPresets.cmake). Internal to the core.
#pragma once

namespace envelope::presets_data {
extern const char* const models;
extern const char* const gpus;
extern const char* const recipes;
extern const char* const frameworks;
extern const char* const engines;
extern const char* const default_plan;
// presets/kernels/*.json, null-terminated, with their paths.
extern const char* const kernel_files[];
extern const char* const kernel_names[];
}  // namespace envelope::presets_data
