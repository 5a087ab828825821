// A user preset file on arbitrary bytes: no crash; a refusal names the file and path and
// leaves the library as it was (mergePresetFile works on a copy in io/files.cpp; here the
// library must at least stay usable); an accepted file's presets estimate to finite figures.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace envelope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    PresetLibrary library = fuzz::presets();
    if (auto error = mergePresetFile(library, text, "fuzz.json")) {
        fuzz::checkRefusal(*error, true);
        return 0;
    }
    // Every GPU the file added or changed runs the default plan (the built-in ones are checked
    // by the other harnesses; checking them all here made a run take 150 ms).
    const Expected<Plan> base = readPlan(library.defaultPlanJson, library);
    if (!base)
        fuzz::fail(
            "the default plan does not read with merged presets: " + base.error().toString());
    for (const GpuPreset& gpu : library.gpus) {
        const GpuPreset* builtin = fuzz::presets().findGpu(gpu.id);
        // A GPU compares equal to the built-in one with any kernel table of the same id: a
        // file that replaces the table is checked through the GPUs that use it.
        if (builtin && builtin->gpu == gpu.gpu && builtin->gpu.kernels.get() == gpu.gpu.kernels.get())
            continue;
        Plan plan = *base;
        plan.gpu.presetId.clear();
        plan.gpu.gpu = gpu.gpu;
        if (!validatePlan(plan))
            fuzz::checkAccepted(plan, library);
    }
    return 0;
}
