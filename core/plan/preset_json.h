// JSON forms of a GPU and a precision recipe, shared by the preset files (presets.cpp) and the
// plan's inline objects (planio_read.cpp, planio_write.cpp). Internal to the core.
//
// GPU keys: name memory_bytes bf16_tflops fp8_tflops hbm_gbps intra_node_gbps inter_node_gbps
// host_link_gbps host_memory_gbps (optional: PCIe Gen5 x16 64 GB/s, DGX H100 76.8 GB/s)
// price_per_hour (GB/s = 1e9 bytes/s, per direction; dense TFLOPS). Recipe keys: name
// description source weights gradients master moment_bytes activation_bytes compute, and for a
// custom recipe "optimizer" (bytes/param of optimizer state, used as given).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/expected.h"
#include "hardware/hardware.h"
#include "plan/recipe.h"

namespace envelope {

class FieldReader;

// Reads the GPU fields from `f` into `gpu`. With `requireFigures`, memory, BF16 peak and the
// bandwidths must all be given (presets and the plan's inline GPU); otherwise absent keys keep
// the values already in `gpu`.
void readGpuFields(FieldReader& f, Gpu& gpu, bool requireFigures);
nlohmann::json gpuToJson(const Gpu& gpu);

// A custom recipe as the plan writes it: {"weights","gradients","master","optimizer"} plus the
// optional name, moment_bytes, activation_bytes and compute.
Expected<Recipe> customRecipeFromJson(const nlohmann::json& object, const std::string& path);
nlohmann::json customRecipeToJson(const Recipe& recipe);

std::string_view computeDtypeId(ComputeDtype dtype); // "bf16" "fp8" "tf32"
bool parseComputeDtype(std::string_view id, ComputeDtype& out);

// TFLOPS / GB/s <-> FLOP/s / bytes/s such that reading what was written gives the same double.
double fromScaled(double written, double scale);
double toScaled(double value, double scale);

} // namespace envelope
