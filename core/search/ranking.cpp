// Goals, verdicts, the order candidates are ranked in, the top list and the Pareto front.
#include <algorithm>
#include <array>

#include "search/detail.h"

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
    }
    if (a.tokensPerS != b.tokensPerS)
        return more(a.tokensPerS, b.tokensPerS);
    if (hiddenWork(la) != hiddenWork(lb))
        return hiddenWork(la) < hiddenWork(lb);
    if (la.gpus != lb.gpus)
        return la.gpus < lb.gpus;
    return a.perGpuBytes < b.perGpuBytes;
}

// min-gpus stops at one GPU count, so its front is drawn against memory like the others.
const char* paretoAxis(SearchGoal goal)
{
    switch (goal) {
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

TopList::TopList(SearchGoal goal, int top)
    : m_goal(goal)
    , m_top(static_cast<size_t>(std::max(top, 1)))
{
    m_items.reserve(m_top + 1);
}

void TopList::offer(const Candidate& c)
{
    if (m_items.size() == m_top && !ranksBefore(m_goal, c, m_items.back()))
        return;
    // Equal candidates keep their enumeration order (upper bound of the insertion point).
    auto at = std::upper_bound(m_items.begin(), m_items.end(), c,
        [this](const Candidate& x, const Candidate& y) { return ranksBefore(m_goal, x, y); });
    if (m_items.size() == m_top)
        m_items.pop_back();
    m_items.insert(at, c);
}

ParetoFront::ParetoFront(SearchGoal goal)
    : m_goal(goal)
{
    m_items.reserve(64);
}

void ParetoFront::offer(const Candidate& c)
{
    const double x = paretoX(m_goal, c);
    const double y = c.tokensPerS;
    // Dominated (or equalled) by a point at smaller-or-equal x with larger-or-equal y?
    for (const Candidate& p : m_items) {
        if (paretoX(m_goal, p) > x)
            break;
        if (p.tokensPerS >= y)
            return;
    }
    // Remove the points c dominates, then insert it in x order.
    std::erase_if(
        m_items, [&](const Candidate& p) { return paretoX(m_goal, p) >= x && p.tokensPerS <= y; });
    auto at = std::lower_bound(m_items.begin(), m_items.end(), x,
        [this](const Candidate& p, double value) { return paretoX(m_goal, p) < value; });
    m_items.insert(at, c);
}

} // namespace searchdetail
} // namespace envelope
