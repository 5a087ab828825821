#include "checks.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "serving/load.h"
#include "search/search.h"
#include "whatif/whatif.h"

namespace envelope::fuzz {

const PresetLibrary& presets()
{
    static const PresetLibrary library = [] {
        Expected<PresetLibrary> lib = builtinPresets();
        if (!lib)
            fail("built-in presets: " + lib.error().toString());
        return std::move(lib).value();
    }();
    return library;
}

const ReadOptions& readOptions()
{
    static const ReadOptions options = [] {
        ReadOptions o;
        o.readFile = [](const std::string&) -> Expected<std::string> {
            return std::string(R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64,
                "n_head": 2, "vocab_size": 100, "n_positions": 128})");
        };
        return o;
    }();
    return options;
}

void fail(const std::string& what)
{
    std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
    std::abort();
}

void checkRefusal(const Error& error, bool needsPath)
{
    if (error.message.empty())
        fail("a refusal without a message");
    if (needsPath && error.path.empty())
        fail("a refusal without a JSON path: " + error.toString());
    if (error.toString().size() > 5000)
        fail("an unbounded message");
}

namespace {

void finite(double v, const char* figure)
{
    if (!std::isfinite(v))
        fail(std::string("an accepted plan gives a non-finite ") + figure);
}

// Every number in the result JSON: null is written only for a non-finite figure, or for a
// rate, time or cost a section withholds because its plan does not fit (the section then says
// "throughput_valid": false), or a TTFT withheld above capacity ("latency_valid": false;
// docs/plan-format.md, "Numbers in the result").
void noNulls(const nlohmann::json& j, const std::string& path)
{
    if (j.is_null())
        fail("result JSON has null (a non-finite figure) at " + path);
    if (j.is_object()) {
        const auto said = [&](const char* marker) {
            const auto valid = j.find(marker);
            return valid != j.end() && valid->is_boolean() && !valid->get<bool>();
        };
        const bool withheld = said("throughput_valid") || said("latency_valid");
        for (const auto& [key, value] : j.items())
            if (!(withheld && value.is_null()))
                noNulls(value, path + "." + key);
    }
    if (j.is_array())
        for (std::size_t i = 0; i < j.size(); ++i)
            noNulls(j[i], path + "[" + std::to_string(i) + "]");
}

// The planner, as the Find-a-plan tab and `envelope-cli plan` run it, with a small estimate cap
// so one input stays milliseconds: every candidate it offers applies to a plan that validates
// and re-estimates to exactly the figures the candidate claims (docs/planner.md).
constexpr long long kPlannerEstimates = 48;

} // namespace

void checkPlanner(const Plan& plan)
{
    SearchOptions options;
    options.top = 3;
    options.maxEstimates = kPlannerEstimates;
    options.goal = SearchGoal::MaxThroughput;
    for (const Candidate& c : search(plan, options).candidates) {
        const Plan applied = applyLayout(plan, c.layout);
        if (auto error = validatePlan(applied))
            fail("a training candidate is invalid: " + error->toString());
        const Estimate e = estimate(applied);
        if (e.training.perGpu.total() != c.perGpuBytes || e.compute.stepTimeS != c.stepTimeS
            || e.compute.tokensPerS != c.tokensPerS)
            fail("a training candidate does not re-estimate to its figures");
    }
    options.goal = SearchGoal::ServingMaxThroughput;
    for (const ServingCandidate& c : searchServing(plan, options).candidates) {
        const Plan applied = applyServingLayout(plan, c.layout);
        if (auto error = validatePlan(applied))
            fail("a serving candidate is invalid: " + error->toString());
        const ServingEstimate s = estimate(applied).serving;
        if (s.perGpu.total() != c.perGpuBytes || s.itlS != c.itlS || s.ttftS != c.ttftS
            || s.fits != c.fits)
            fail("a serving candidate does not re-estimate to its figures");
    }
    options.goal = SearchGoal::RlMaxStepsPerHour;
    for (const RlCandidate& c : searchRl(plan, options).candidates) {
        const Plan applied = applyRlLayout(plan, c.layout);
        if (auto error = validatePlan(applied))
            fail("an RL candidate is invalid: " + error->toString());
        const RlEstimate r = estimate(applied).rl;
        if (r.stepsPerHour != c.stepsPerHour || r.stepS != c.stepS || r.fits != c.fits
            || r.totalGpus != c.gpus)
            fail("an RL candidate does not re-estimate to its figures");
    }
}

void checkAccepted(const Plan& plan, const PresetLibrary& library)
{
    EstimateOptions options;
    options.explain = true;
    Estimate e = estimate(plan, options);
    attachServingGoodput(plan, e); // as `envelope-cli estimate` does: goodput_rps searched
    finite(e.training.perGpu.total(), "training.per_gpu_bytes.total");
    finite(e.compute.stepTimeS, "training.step_time_s");
    finite(e.compute.tokensPerS, "training.tokens_per_s");
    finite(e.compute.trainTimeS, "training.train_time_s");
    finite(e.compute.gpuHours, "training.gpu_hours");
    finite(e.compute.cost, "training.cost");
    for (const Explanation& x : e.explain)
        finite(x.value, x.figure.c_str());
    noNulls(nlohmann::json::parse(writeResult(plan, e)), "result");

    // What-if: every suggestion is a valid plan and is what it says.
    for (const FitSuggestion& s : suggestFits(plan)) {
        if (auto error = validatePlan(s.plan))
            fail("suggestion \"" + s.description + "\" is invalid: " + error->toString());
        const Estimate changed = estimate(s.plan);
        if (changed.training.fits != s.makesItFit)
            fail(
                "suggestion \"" + s.description + "\" claims fits=" + std::to_string(s.makesItFit));
    }

    // estimate(read(write(plan))) == estimate(plan).
    const Expected<Plan> again = readPlan(writePlan(plan), library, readOptions());
    if (!again)
        fail("a written plan does not read back: " + again.error().toString());
    const Estimate e2 = estimate(*again);
    if (e2.training.perGpu.total() != e.training.perGpu.total()
        || e2.compute.stepTimeS != e.compute.stepTimeS)
        fail("estimate changes over a write/read round trip");
}

} // namespace envelope::fuzz
