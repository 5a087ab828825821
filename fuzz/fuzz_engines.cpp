// Every engine-facing parser and writer a user can feed, behind one harness (CI runs each harness
// for its budget; one harness with a selector byte costs one budget, not eight). The first byte
// picks the surface, the rest is its input (docs/reliability.md):
//   0 DeepSpeed JSON import     1 torchtitan TOML import    2 Megatron arguments import
//   3 the TOML reader           4 the arguments reader      5 calibrate (measured figures)
//   6 --set PATH=VALUE lines    7 --fix PATH=VALUE lines    8 a plan through every exporter
// No crash, no overflow (UBSan), refusals say what is wrong and are bounded, warnings are
// bounded, an imported plan that reads is an accepted plan (checks.h), a calibrated plan
// validates, every exporter writes something for every valid plan.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "checks.h"
#include "estimate/calibrate.h"
#include "estimate/estimate.h"
#include "export/args.h"
#include "export/export.h"
#include "export/launcher.h"
#include "export/toml.h"
#include "plan/setpath.h"
#include "search/search.h"

namespace {

using namespace envelope;

std::vector<std::string> lines(std::string_view text)
{
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size() && out.size() < 16) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        out.emplace_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

// A warning echoes at most a few bounded quotes of the input (issue 26: 60 MB warning lines).
void checkWarnings(const std::vector<std::string>& warnings)
{
    for (const std::string& w : warnings)
        if (w.size() > 4000)
            fuzz::fail("an unbounded warning (" + std::to_string(w.size()) + " bytes)");
}

void importAndCheck(Engine engine, std::string_view text, std::uint8_t gpusByte)
{
    ImportOptions options;
    options.modelJson = "\"llama-2-7b\"";
    options.sourceName = "fuzz";
    // 0: no --gpus; else a count that reaches both small clusters and the 10^6 bound.
    if (gpusByte != 0)
        options.gpus = gpusByte < 200 ? int(gpusByte) : int(gpusByte - 199) * 50'000;
    const Expected<ImportedPlan> imported
        = importEngineConfig(engine, text, fuzz::presets(), options);
    if (!imported) {
        fuzz::checkRefusal(imported.error(), false);
        return;
    }
    checkWarnings(imported->warnings);
    const Expected<Plan> plan = readPlan(imported->planJson, fuzz::presets(), fuzz::readOptions());
    if (!plan) {
        fuzz::checkRefusal(plan.error(), false);
        return;
    }
    fuzz::checkAccepted(*plan);
}

double doubleAt(std::string_view bytes, std::size_t i)
{
    double v = 0;
    if (bytes.size() >= (i + 1) * sizeof v)
        std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
    return v;
}

void calibrateAndCheck(std::string_view bytes)
{
    static const Plan base
        = readPlan(fuzz::presets().defaultPlanJson, fuzz::presets()).value();
    if (bytes.empty())
        return;
    const std::uint8_t flags = static_cast<std::uint8_t>(bytes[0]);
    bytes.remove_prefix(1);
    Plan plan = base;
    plan.training.mfuOverride = flags & 1;
    CalibrationTarget target;
    target.metric = static_cast<MemoryMetric>((flags >> 1) % 3);
    // Raw doubles (NaN, infinities, negatives, denormals included) or scaled plausible ones.
    const bool raw = flags & 8;
    const double peak = doubleAt(bytes, 0), rate = doubleAt(bytes, 1);
    if (flags & 16)
        target.peakBytes = raw ? peak : std::fabs(std::fmod(peak, 1.0)) * 100e9;
    if (flags & 32)
        target.tokensPerS = raw ? rate : std::fabs(std::fmod(rate, 1.0)) * 1e7;
    else if (flags & 64)
        target.stepTimeS = raw ? rate : std::fabs(std::fmod(rate, 1.0)) * 1e3;
    const Expected<Calibration> fit = calibrate(plan, target);
    if (!fit) {
        fuzz::checkRefusal(fit.error(), true);
        return;
    }
    if (std::optional<Error> invalid = validatePlan(fit->plan))
        fuzz::fail("calibrate wrote a plan that does not validate: " + invalid->toString());
    for (const CalibrationChange& c : fit->changes)
        if (!std::isfinite(c.after) || !std::isfinite(c.estimateAfter))
            fuzz::fail("calibrate gives a non-finite figure for " + c.field);
    const Estimate e = estimate(fit->plan);
    if (!std::isfinite(e.training.perGpu.total()) || !std::isfinite(e.compute.tokensPerS))
        fuzz::fail("a calibrated plan estimates to a non-finite figure");
}

void exportEveryEngine(const Plan& plan)
{
    const Estimate e = estimate(plan);
    const std::string repo = modelRepository(plan, fuzz::presets());
    for (Engine engine : kAllEngines) {
        const EngineConfig config = exportPlan(plan, e, engine, repo);
        if (config.text.empty() || config.fileName.empty())
            fuzz::fail(std::string("an empty export to ") + std::string(engineId(engine)));
        // Each launcher wraps it, or refuses with a message; the job file is never empty and
        // keeps the plan's name on one comment line.
        for (Launcher launcher : kAllLaunchers) {
            const Expected<EngineConfig> job = withLauncher(config, plan, launcher);
            if (!job) {
                fuzz::checkRefusal(job.error(), false);
                continue;
            }
            if (job->companions.empty() || job->companions.back().text.empty()
                || job->launch.empty())
                fuzz::fail(std::string("an empty ") + std::string(launcherId(launcher)) + " job");
        }
        if (!engineImports(engine))
            continue;
        // The engine's file reads back (a refusal is allowed: the plan's model is not in it).
        ImportOptions options;
        options.modelJson = "\"llama-2-7b\"";
        options.gpus = plan.cluster.gpus;
        const Expected<ImportedPlan> back
            = importEngineConfig(engine, config.text, fuzz::presets(), options);
        if (!back)
            fuzz::checkRefusal(back.error(), false);
        else
            checkWarnings(back->warnings);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    const std::uint8_t selector = data[0] % 9, option = data[1];
    const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
    switch (selector) {
    case 0:
        importAndCheck(Engine::DeepSpeed, text, option);
        break;
    case 1:
        importAndCheck(Engine::TorchTitan, text, option);
        break;
    case 2:
        importAndCheck(Engine::Megatron, text, option);
        break;
    case 3: {
        const Expected<nlohmann::json> toml = exportdetail::parseToml(text);
        if (!toml)
            fuzz::checkRefusal(toml.error(), true);
        else
            toml->dump(); // walks every level: the nesting cap keeps this recursion short
        break;
    }
    case 4: {
        const Expected<std::vector<exportdetail::Argument>> args
            = exportdetail::parseArguments(text);
        if (!args)
            fuzz::checkRefusal(args.error(), false);
        break;
    }
    case 5:
        calibrateAndCheck(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
        break;
    case 6: {
        const Expected<std::string> edited
            = applySetsToText(fuzz::presets().defaultPlanJson, lines(text));
        if (!edited) {
            fuzz::checkRefusal(edited.error(), false);
            break;
        }
        const Expected<Plan> plan = readPlan(*edited, fuzz::presets(), fuzz::readOptions());
        if (!plan)
            fuzz::checkRefusal(plan.error(), false);
        else if (option & 1)
            exportEveryEngine(*plan);
        break;
    }
    case 7:
        for (const std::string& line : lines(text)) {
            const Expected<FixedField> fixed = parseFixedField(line);
            if (!fixed)
                fuzz::checkRefusal(fixed.error(), false);
        }
        break;
    case 8: {
        const Expected<Plan> plan = readPlan(text, fuzz::presets(), fuzz::readOptions());
        if (!plan)
            fuzz::checkRefusal(plan.error(), false);
        else
            exportEveryEngine(*plan);
        break;
    }
    }
    return 0;
}
