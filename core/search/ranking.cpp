// Goals, verdicts, the order candidates are ranked in, the top list and the Pareto front.
#include <cmath>
#include <algorithm>
#include <array>

#include "search/detail.h"

#include <fmt/format.h>

#include "base/units.h"

namespace envelope {
namespace {

struct GoalName {
    SearchGoal goal;
    std::string_view id;
};
constexpr std::array kGoals {
    GoalName { SearchGoal::MinGpus, "min-gpus" },
    GoalName { SearchGoal::MaxThroughput, "max-throughput" },
    GoalName { SearchGoal::MinCost, "min-cost" },
    GoalName { SearchGoal::MinTime, "min-time" },
    GoalName { SearchGoal::MaxSeqLen, "max-seq-len" },
    GoalName { SearchGoal::MaxMicroBatch, "max-micro-batch" },
    GoalName { SearchGoal::ServingMaxThroughput, "serving-max-throughput" },
    GoalName { SearchGoal::ServingMinGpus, "serving-min-gpus" },
    GoalName { SearchGoal::ServingMaxGoodput, "serving-max-goodput" },
    GoalName { SearchGoal::RlMaxStepsPerHour, "rl-max-steps-per-hour" },
};

// Work a layout hides from the step-time model: offload traffic over PCIe and recomputed
// forwards. Among layouts with equal ranked figures the one doing less of it is preferred, so
// a tie never recommends offload or recompute that buys nothing.
int hiddenWork(const Layout& l)
{
    int recompute = 0;
    switch (l.recompute) {
    case Recompute::None:
        recompute = 0;
        break;
    case Recompute::Selective:
        recompute = 1;
        break;
    case Recompute::EveryK:
        recompute = 2;
        break;
    case Recompute::Full:
        recompute = 3;
        break;
    }
    return (l.offloadParams ? 8 : 0) + (l.offloadOptimizer ? 4 : 0) + recompute;
}

} // namespace

std::string_view searchGoalId(SearchGoal goal)
{
    for (const GoalName& g : kGoals)
        if (g.goal == goal)
            return g.id;
    return "max-throughput";
}

bool parseSearchGoal(std::string_view id, SearchGoal& out)
{
    for (const GoalName& g : kGoals)
        if (g.id == id) {
            out = g.goal;
            return true;
        }
    return false;
}

SearchKind searchKind(SearchGoal goal)
{
    switch (goal) {
    case SearchGoal::ServingMaxThroughput:
    case SearchGoal::ServingMinGpus:
    case SearchGoal::ServingMaxGoodput:
        return SearchKind::Serving;
    case SearchGoal::RlMaxStepsPerHour:
        return SearchKind::Rl;
    default:
        return SearchKind::Training;
    }
}

std::string_view searchKindId(SearchKind kind)
{
    switch (kind) {
    case SearchKind::Serving:
        return "serving";
    case SearchKind::Rl:
        return "rl";
    case SearchKind::Training:
        break;
    }
    return "training";
}

std::string_view fitVerdictId(FitVerdict v)
{
    switch (v) {
    case FitVerdict::Fits:
        return "fits";
    case FitVerdict::Tight:
        return "tight";
    case FitVerdict::Over:
        break;
    }
    return "over";
}

double searchUsableFraction(const Plan& plan, const std::optional<double>& option)
{
    const double f = option ? *option : plan.training.usableFraction;
    return std::isfinite(f) ? std::clamp(f, 0.0, 1.0) : 0.9;
}

FitVerdict fitVerdict(double perGpuBytes, double gpuMemoryBytes, double usableFraction)
{
    if (!(gpuMemoryBytes > 0) || !(perGpuBytes <= gpuMemoryBytes))
        return FitVerdict::Over;
    return perGpuBytes <= usableFraction * gpuMemoryBytes ? FitVerdict::Fits : FitVerdict::Tight;
}

namespace searchdetail {

bool ranksBefore(SearchGoal goal, const Candidate& a, const Candidate& b)
{
    const Layout& la = a.layout;
    const Layout& lb = b.layout;
    const auto more = [](double x, double y) { return x > y; };
    switch (goal) {
    case SearchGoal::MinGpus:
        if (la.gpus != lb.gpus)
            return la.gpus < lb.gpus;
        break;
    case SearchGoal::MaxThroughput:
        break;
    case SearchGoal::MinCost:
        if (a.cost != b.cost)
            return a.cost < b.cost;
        break;
    case SearchGoal::MinTime:
        if (a.trainTimeS != b.trainTimeS)
            return a.trainTimeS < b.trainTimeS;
        if (a.cost != b.cost)
            return a.cost < b.cost;
        break;
    case SearchGoal::MaxSeqLen:
        if (la.seqLen != lb.seqLen)
            return la.seqLen > lb.seqLen;
        break;
    case SearchGoal::MaxMicroBatch:
        if (la.microBatch != lb.microBatch)
            return la.microBatch > lb.microBatch;
        break;
    default: // serving and RL goals rank their own candidates
        break;
    }
    if (a.tokensPerS != b.tokensPerS)
        return more(a.tokensPerS, b.tokensPerS);
    if (hiddenWork(la) != hiddenWork(lb))
        return hiddenWork(la) < hiddenWork(lb);
    if (la.gpus != lb.gpus)
        return la.gpus < lb.gpus;
    return a.perGpuBytes < b.perGpuBytes;
}

// Serving: fewest GPUs (serving-min-gpus only) or most goodput (serving-max-goodput only),
// then fleet tokens/s; ties go to more precision (the estimate does not charge quantization's
// accuracy loss), then a smaller TP group, then less memory per GPU.
bool ranksBefore(SearchGoal goal, const ServingCandidate& a, const ServingCandidate& b)
{
    const ServingLayout& la = a.layout;
    const ServingLayout& lb = b.layout;
    if (goal == SearchGoal::ServingMinGpus && a.gpus != b.gpus)
        return a.gpus < b.gpus;
    if (goal == SearchGoal::ServingMaxGoodput && a.goodputRps != b.goodputRps)
        return a.goodputRps.value_or(0) > b.goodputRps.value_or(0);
    if (a.tokensPerS != b.tokensPerS)
        return a.tokensPerS > b.tokensPerS;
    if (la.weightBits != lb.weightBits)
        return la.weightBits > lb.weightBits;
    if (la.kvBits != lb.kvBits)
        return la.kvBits > lb.kvBits;
    if (a.gpus != b.gpus)
        return a.gpus < b.gpus;
    if (la.tp != lb.tp)
        return la.tp < lb.tp;
    return a.perGpuBytes < b.perGpuBytes;
}

// RL: most steps per hour, then fewer GPUs, then disjoint pools (no phase swapping), then the
// least memory on the fullest GPU.
bool ranksBefore(SearchGoal, const RlCandidate& a, const RlCandidate& b)
{
    if (a.stepsPerHour != b.stepsPerHour)
        return a.stepsPerHour > b.stepsPerHour;
    if (a.gpus != b.gpus)
        return a.gpus < b.gpus;
    if (a.layout.placement != b.layout.placement)
        return a.layout.placement == RlPlacement::Disjoint;
    return a.peakBytesPerGpu < b.peakBytesPerGpu;
}

// min-gpus stops at one GPU count, so its front is drawn against memory like the others.
const char* paretoAxis(SearchGoal goal)
{
    switch (goal) {
    case SearchGoal::ServingMaxThroughput:
    case SearchGoal::ServingMinGpus:
    case SearchGoal::ServingMaxGoodput:
        return "gpus";
    case SearchGoal::RlMaxStepsPerHour:
        return "peak_bytes_per_gpu";
    case SearchGoal::MinCost:
    case SearchGoal::MinTime:
        return "cost";
    default:
        return "per_gpu_bytes_total";
    }
}

double paretoX(SearchGoal goal, const Candidate& c)
{
    switch (goal) {
    case SearchGoal::MinCost:
    case SearchGoal::MinTime:
        return c.cost;
    default:
        return c.perGpuBytes;
    }
}

} // namespace searchdetail

std::string preferHeadroom(std::vector<Candidate>& ranked, SearchGoal goal, double usableFraction)
{
    constexpr double kNearLine = 0.02; // within 2% of the usable line: no room for a spike
    constexpr double kNearTie = 0.02; // within 2% on the goal's figure: as good to a planner
    if (ranked.size() < 2)
        return {};
    const auto line = [&](const Candidate& c) { return usableFraction * c.gpuMemoryBytes; };
    const auto nearLine = [&](const Candidate& c) {
        return c.perGpuBytes > (1 - kNearLine) * line(c);
    };
    const Candidate& best = ranked.front();
    if (!nearLine(best))
        return {};
    const auto asGood = [&](const Candidate& c) {
        switch (goal) {
        case SearchGoal::MaxThroughput:
            return c.tokensPerS >= (1 - kNearTie) * best.tokensPerS;
        case SearchGoal::MinGpus:
            return c.layout.gpus == best.layout.gpus
                && c.tokensPerS >= (1 - kNearTie) * best.tokensPerS;
        case SearchGoal::MinCost:
            return c.cost <= (1 + kNearTie) * best.cost;
        case SearchGoal::MinTime:
            return c.trainTimeS <= (1 + kNearTie) * best.trainTimeS;
        default:
            return false;
        }
    };
    const auto roomy = std::find_if(ranked.begin() + 1, ranked.end(),
        [&](const Candidate& c) { return asGood(c) && !nearLine(c); });
    if (roomy == ranked.end())
        return {};
    const Candidate was = best;
    const Candidate now = *roomy;
    std::rotate(ranked.begin(), roomy, roomy + 1);
    const auto gb = [](double bytes) { return formatBytes(bytes, ByteUnits::GB); };
    const std::string figure = goal == SearchGoal::MinCost
        ? fmt::format("${:.0f} against ${:.0f}", now.cost, was.cost)
        : goal == SearchGoal::MinTime
        ? fmt::format("{} against {}", formatDuration(now.trainTimeS), formatDuration(was.trainTimeS))
        : fmt::format("{:.0f} against {:.0f} tokens/s", now.tokensPerS, was.tokensPerS);
    return fmt::format("ranked first for its headroom: {} per GPU under a {} usable line, where "
                       "the layout the goal alone ranks first holds {} (within {:.0f}% of the "
                       "line: an allocator spike away from out of memory) for less than {:.0f}% "
                       "more ({})",
        gb(now.perGpuBytes), gb(line(now)), gb(was.perGpuBytes), kNearLine * 100, kNearTie * 100,
        figure);
}

} // namespace envelope
