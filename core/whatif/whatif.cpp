#include "whatif/whatif.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "search/fit.h"
#include "plan/planio.h"
#include "training/memory.h"

namespace envelope {
namespace {

TrainingMemory memoryOf(const Plan& plan, const ParamCounts& counts)
{
    return estimateTrainingMemory(plan.model.arch, counts, plan.training, plan.cluster,
                                  plan.gpu.gpu);
}

// Applies an axis value to a copy of the plan.
Plan withAxis(const Plan& plan, SweepAxis axis, int value)
{
    Plan p = plan;
    if (axis == SweepAxis::SeqLen)
        p.training.seqLen = value;
    else
        p.training.microBatch = value;
    return p;
}

constexpr int kMinSeqLen = 256;
constexpr int kMaxSeqLen = 1 << 20;  // 1M tokens, the UI's context slider range
constexpr int kMaxMicroBatch = 512;

int axisMax(SweepAxis axis) { return axis == SweepAxis::SeqLen ? kMaxSeqLen : kMaxMicroBatch; }

}  // namespace

std::vector<Variant> zeroStageVariants(const Plan& plan)
{
    const ParamCounts counts = countParameters(plan.model.arch);
    std::vector<Variant> out;
    out.reserve(4);
    for (int stage = 0; stage <= 3; ++stage) {
        Variant v;
        v.label = stage == 3 ? "ZeRO-3 / FSDP" : fmt::format("ZeRO-{}", stage);
        v.plan = plan;
        v.plan.training.zeroStage = stage;
        v.memory = memoryOf(v.plan, counts);
        v.current = stage == plan.training.zeroStage;
        out.push_back(std::move(v));
    }
    return out;
}

std::vector<Variant> recomputeVariants(const Plan& plan)
{
    const ParamCounts counts = countParameters(plan.model.arch);
    std::vector<Variant> out;
    constexpr std::array modes{Recompute::None, Recompute::Selective, Recompute::Full};
    for (Recompute mode : modes) {
        Variant v;
        v.label = std::string(recomputeId(mode));
        v.plan = plan;
        v.plan.training.recompute = mode;
        v.memory = memoryOf(v.plan, counts);
        v.current = mode == plan.training.recompute;
        out.push_back(std::move(v));
    }
    return out;
}

std::vector<SweepPoint> sweep(const Plan& plan, SweepAxis axis)
{
    const ParamCounts counts = countParameters(plan.model.arch);
    std::vector<SweepPoint> out;
    const int first = axis == SweepAxis::SeqLen ? kMinSeqLen : 1;
    for (int value = first; value <= axisMax(axis); value *= 2) {
        const TrainingMemory m = memoryOf(withAxis(plan, axis, value), counts);
        out.push_back({static_cast<double>(value), m.perGpu.total(), m.fits});
    }
    return out;
}

double largestFitting(const Plan& plan, SweepAxis axis)
{
    // Memory grows monotonically with context and micro-batch, so bisect on the integer axis.
    const ParamCounts counts = countParameters(plan.model.arch);
    auto fitsAt = [&](int value) { return memoryOf(withAxis(plan, axis, value), counts).fits; };
    int lo = 1;
    int hi = axisMax(axis);
    if (!fitsAt(lo))
        return 0;
    if (fitsAt(hi))
        return hi;
    while (hi - lo > 1) {  // invariant: fits(lo) && !fits(hi)
        const int mid = lo + (hi - lo) / 2;
        (fitsAt(mid) ? lo : hi) = mid;
    }
    return lo;
}

// The step time of a plan (compute only: the memory side is not needed).
double stepTimeOf(const Plan& plan)
{
    EstimateOptions options;
    options.training = options.serving = options.rl = false;
    return estimate(plan, options).compute.stepTimeS;
}

// ", step +27 ms (+0.8%)" or ", no step-time cost": what a memory saver costs (issue 11).
std::string costText(double costS, double baseS)
{
    if (!std::isfinite(costS) || !std::isfinite(baseS) || baseS <= 0)
        return std::string();
    if (std::fabs(costS) < 1e-9 * baseS)
        return ", no step-time cost";
    return fmt::format(", step {}{} ({:+.1f}%)", costS > 0 ? "+" : "-",
        formatDuration(std::fabs(costS)), 100 * costS / baseS);
}

std::vector<FitSuggestion> suggestFits(const Plan& plan, ByteUnits units)
{
    const ParamCounts counts = countParameters(plan.model.arch);
    const TrainingMemory base = memoryOf(plan, counts);
    if (base.fits)
        return {};
    const double baseStepS = stepTimeOf(plan);

    std::vector<FitSuggestion> out;
    auto consider = [&](Plan changed, const std::string& what) {
        const TrainingMemory m = memoryOf(changed, counts);
        const double saved = base.perGpu.total() - m.perGpu.total();
        if (saved <= 0)
            return;
        FitSuggestion s;
        s.stepTimeCostS = stepTimeOf(changed) - baseStepS;
        s.description = fmt::format(
            "{} saves {}{}", what, formatBytes(saved, units), costText(s.stepTimeCostS, baseStepS));
        s.savedBytes = saved;
        s.makesItFit = m.fits;
        s.verdict = m.verdict;
        s.plan = std::move(changed);
        out.push_back(std::move(s));
    };

    const TrainingConfig& t = plan.training;
    for (int stage = t.zeroStage + 1; stage <= 3; ++stage) {
        Plan p = plan;
        p.training.zeroStage = stage;
        consider(p, stage == 3 ? "ZeRO-3 (FSDP)" : fmt::format("ZeRO-{}", stage));
    }
    if (t.recompute == Recompute::None) {
        Plan p = plan;
        p.training.recompute = Recompute::Selective;
        consider(p, "selective recompute");
    }
    if (t.recompute != Recompute::Full) {
        Plan p = plan;
        p.training.recompute = Recompute::Full;
        consider(p, "full recompute");
    }
    if (!t.flashAttention) {
        Plan p = plan;
        p.training.flashAttention = true;
        consider(p, "flash attention");
    }
    if (t.tp > 1 && !t.sequenceParallel) {
        Plan p = plan;
        p.training.sequenceParallel = true;
        consider(p, "sequence parallel");
    }
    if (!t.offloadOptimizer) {
        Plan p = plan;
        p.training.offloadOptimizer = true;
        consider(p, "optimizer offload to CPU");
    }
    if (t.microBatch > 1) {
        // Same global batch: fewer sequences per micro-batch, more accumulation steps.
        // In 64 bits: 46341 x 46341 overflows int. A product past int is past every limit, and
        // the validation below drops any plan beyond what readPlan accepts.
        const long long accum = static_cast<long long>(t.gradAccum) * t.microBatch;
        if (accum <= std::numeric_limits<int>::max()) {
            Plan p = plan;
            p.training.microBatch = 1;
            p.training.gradAccum = static_cast<int>(accum);
            consider(
                p, fmt::format("micro-batch {} -> 1 (grad-accum x{})", t.microBatch, t.microBatch));
        }
    }
    if (base.minGpus > plan.cluster.gpus) {
        FitSuggestion s;
        const int more = base.minGpus - plan.cluster.gpus;
        s.description = fmt::format("needs {} more GPU{} ({} in all)", more, more == 1 ? "" : "s",
                                    base.minGpus);
        s.makesItFit = true;
        s.plan = plan;
        s.plan.cluster.gpus = base.minGpus;
        s.verdict = memoryOf(s.plan, counts).verdict;
        s.stepTimeCostS = stepTimeOf(s.plan) - baseStepS;
        s.description += costText(s.stepTimeCostS, baseStepS);
        out.push_back(std::move(s));
    } else if (base.minGpus == 0 && t.zeroStage < 3) {
        // Replicated states never shrink with more GPUs; sharding them does.
        Plan p = plan;
        p.training.zeroStage = 3;
        const TrainingMemory sharded = memoryOf(p, counts);
        if (sharded.minGpus > 0) {
            FitSuggestion s;
            s.description = fmt::format("ZeRO-3 (FSDP) on {} GPUs", sharded.minGpus);
            s.makesItFit = true;
            s.plan = p;
            s.plan.cluster.gpus = std::max(sharded.minGpus, plan.cluster.gpus);
            s.verdict = memoryOf(s.plan, counts).verdict;
            s.stepTimeCostS = stepTimeOf(s.plan) - baseStepS;
            s.description += costText(s.stepTimeCostS, baseStepS);
            out.push_back(std::move(s));
        }
    }

    // Offer only plans a user could have written: each must pass the same validation as a plan
    // file (grad_accum within range, gpus a multiple of tp x pp x cp, ...), so Apply never
    // installs a plan the reader would refuse. A plan built in code that is already invalid
    // (a test's bare GPU) keeps the suggestions that add no problem of their own.
    const std::optional<Error> baseError = validatePlan(plan);
    std::erase_if(out, [&](const FitSuggestion& s) {
        const std::optional<Error> e = validatePlan(s.plan);
        if (!e)
            return false;
        return !baseError || e->path != baseError->path || e->message != baseError->message;
    });

    // Fitting first, comfortable before tight; among those the cheapest in step time (a saver
    // that fits for free beats one that costs seconds), then the larger saving. Changes that do
    // not fit alone rank by bytes saved: they are partial steps.
    std::stable_sort(out.begin(), out.end(), [](const FitSuggestion& a, const FitSuggestion& b) {
        if (a.makesItFit != b.makesItFit)
            return a.makesItFit;
        if (a.makesItFit) {
            if (a.verdict != b.verdict)
                return a.verdict < b.verdict;
            const double scale = 1e-9 * (std::fabs(a.stepTimeCostS) + std::fabs(b.stepTimeCostS));
            if (std::fabs(a.stepTimeCostS - b.stepTimeCostS) > scale)
                return a.stepTimeCostS < b.stepTimeCostS;
        }
        return a.savedBytes > b.savedBytes;
    });

    // No single change fits on the user's GPUs: ask the planner, which changes the layout,
    // ZeRO, recompute, offload and GPU count together (issue 11 item 7), and lead with it.
    const bool fitsHere = std::any_of(out.begin(), out.end(), [&](const FitSuggestion& s) {
        return s.makesItFit && s.plan.cluster.gpus == plan.cluster.gpus;
    });
    if (!fitsHere) {
        // Bounded (search/fit.h, kFitEstimateCap): this runs on the GUI thread with every edit.
        const FitAnswer answer = whatMakesItFit(plan, FitScope::FullLayout);
        if (const std::optional<Candidate>& fit = answer.fit) {
            FitSuggestion s;
            s.description = describeChanges(plan, fit->layout);
            s.savedBytes = base.perGpu.total() - fit->perGpuBytes;
            s.makesItFit = true;
            s.plan = applyLayout(plan, fit->layout);
            out.insert(out.begin(), std::move(s));
        } else if (answer.capped) {
            FitSuggestion s;
            s.description = fmt::format("the quick search stopped after {} estimates without a "
                                        "fit: Find a plan searches every layout",
                answer.estimates);
            s.plan = plan;
            out.push_back(std::move(s));
        }
    }
    return out;
}

namespace {

// Leaf paths of `to` that differ from `from`: "training.zero_stage" -> "3".
void changedLeaves(const nlohmann::json& from, const nlohmann::json& to, const std::string& path,
    std::vector<std::pair<std::string, std::string>>& out)
{
    if (to.is_object()) {
        for (const auto& [key, value] : to.items()) {
            const std::string child = path.empty() ? key : path + "." + key;
            const nlohmann::json none;
            changedLeaves(from.is_object() && from.contains(key) ? from[key] : none, value,
                child, out);
        }
        return;
    }
    if (from != to)
        out.emplace_back(path, to.dump());
}

} // namespace

void attachWhatMakesItFit(const Plan& plan, Estimate& estimate, ByteUnits units)
{
    estimate.whatMakesItFitSearched = true;
    estimate.whatMakesItFit.reset();
    estimate.whatMakesItFitNote.clear();
    // training.fits (tight included): the plan runs, and suggestFits has nothing to offer.
    if (estimate.training.verdict != Verdict::Over)
        return;
    // suggestFits ranks a comfortable fit before a tight one.
    const std::vector<FitSuggestion> suggestions = suggestFits(plan, units);
    const auto fit = std::find_if(suggestions.begin(), suggestions.end(),
        [](const FitSuggestion& s) { return s.makesItFit; });
    if (fit == suggestions.end()) {
        // suggestFits ends with the planner's note when its quick search ran out of budget.
        const bool capped = !suggestions.empty()
            && suggestions.back().description.starts_with("the quick search");
        estimate.whatMakesItFitNote = capped
            ? suggestions.back().description
            : "no change the planner tries makes it fit: solve --goal min-gpus searches every "
              "layout";
        return;
    }
    FitChangeSummary summary;
    const nlohmann::json before = nlohmann::json::parse(writePlan(plan));
    const nlohmann::json after = nlohmann::json::parse(writePlan(fit->plan));
    changedLeaves(before, after, "", summary.changes);
    std::erase_if(summary.changes, [](const auto& c) { return c.first == "name"; });
    summary.gpus = fit->plan.cluster.gpus;
    summary.description = fit->description;
    estimate.whatMakesItFit = std::move(summary);
}

}  // namespace envelope
