// Internals of the planner shared by search.cpp (the loop), space.cpp (the axes) and
// ranking.cpp (goals, ranking, Pareto front). Not part of the public core API.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "search/search.h"

namespace envelope::searchdetail {

// A recompute setting: the mode and, for every-k, k.
struct RecomputeChoice {
    Recompute mode = Recompute::Selective;
    int every = 1;
};

// Offload settings, in the order a tie prefers them (none first).
struct OffloadChoice {
    bool optimizer = false;
    bool params = false;
};

// The values each axis may take, after --fix and the structural rules.
struct Axes {
    std::vector<int> gpuCounts; // ascending (min-gpus stops at the first that fits)
    std::vector<int> seqLens; // descending for max-seq-len, else the plan's alone
    std::vector<int> tps, cps, zeros, virtualStages;
    std::vector<RecomputeChoice> recomputes;
    std::vector<OffloadChoice> offloads;
    std::vector<int> sequenceParallel; // 0, 1
    int fixedPp = 0, fixedEp = 0, fixedMicroBatch = 0; // 0 = free
    int gpusPerNode = 8;
    double globalBatchTokens = 0; // held fixed: micro_batch x grad_accum x dp x seq_len
};

Axes searchAxes(const Plan& plan, const SearchOptions& options);

// The value --fix holds `path` at (the last one given), or null.
const FixedField* fixedOf(const SearchOptions& o, std::string_view path);

// The powers of two up to `limit` dividing the attention heads (all when heads <= 0): the TP
// groups an engine or a trainer keeps inside a node.
std::vector<int> tpChoices(int heads, int limit);

// serving-max-goodput has something to rank by: a workload and an SLO with an objective.
inline bool hasGoodputObjective(const Plan& plan)
{
    return plan.serving.workload && plan.serving.slo && plan.serving.slo->any();
}

// Orders candidates for a goal: true when `a` ranks strictly before `b`.
bool ranksBefore(SearchGoal goal, const Candidate& a, const Candidate& b);
bool ranksBefore(SearchGoal goal, const ServingCandidate& a, const ServingCandidate& b);
bool ranksBefore(SearchGoal goal, const RlCandidate& a, const RlCandidate& b);
// Candidates the search keeps before preferHeadroom, so a roomier layout within 2% is still in
// the list when the caller asked for one.
inline constexpr int kHeadroomPool = 16;

// The Pareto front's axes for a goal: x smaller is better, y larger is better.
const char* paretoAxis(SearchGoal goal);
double paretoX(SearchGoal goal, const Candidate& c);
inline double paretoY(const Candidate& c)
{
    return c.tokensPerS;
}
inline double paretoX(SearchGoal, const ServingCandidate& c)
{
    return c.gpus;
}
inline double paretoY(const ServingCandidate& c)
{
    return c.tokensPerS;
}
inline double paretoX(SearchGoal, const RlCandidate& c)
{
    return c.peakBytesPerGpu;
}
inline double paretoY(const RlCandidate& c)
{
    return c.stepsPerHour;
}

// Keeps the best `top` candidates, best first, without allocating once reserved.
template <class C> class TopOf {
public:
    TopOf(SearchGoal goal, int top)
        : m_goal(goal)
        , m_top(static_cast<size_t>(std::max(top, 1)))
    {
        m_items.reserve(m_top + 1);
    }
    // True when `c` entered the list.
    bool offer(const C& c)
    {
        if (m_items.size() == m_top && !ranksBefore(m_goal, c, m_items.back()))
            return false;
        // Equal candidates keep their enumeration order (upper bound of the insertion point).
        auto at = std::upper_bound(m_items.begin(), m_items.end(), c,
            [this](const C& x, const C& y) { return ranksBefore(m_goal, x, y); });
        if (m_items.size() == m_top)
            m_items.pop_back();
        m_items.insert(at, c);
        return true;
    }
    const std::vector<C>& items() const { return m_items; }
    std::vector<C> take() { return std::move(m_items); }

private:
    SearchGoal m_goal;
    size_t m_top;
    std::vector<C> m_items;
};
using TopList = TopOf<Candidate>;

// The non-dominated candidates: none has both a smaller-or-equal x and a larger-or-equal y
// than another.
template <class C> class FrontOf {
public:
    explicit FrontOf(SearchGoal goal)
        : m_goal(goal)
    {
        m_items.reserve(64);
    }
    void offer(const C& c)
    {
        const double x = paretoX(m_goal, c);
        const double y = paretoY(c);
        // Dominated (or equalled) by a point at smaller-or-equal x with larger-or-equal y?
        for (const C& p : m_items) {
            if (paretoX(m_goal, p) > x)
                break;
            if (paretoY(p) >= y)
                return;
        }
        // Remove the points c dominates, then insert it in x order.
        std::erase_if(
            m_items, [&](const C& p) { return paretoX(m_goal, p) >= x && paretoY(p) <= y; });
        auto at = std::lower_bound(m_items.begin(), m_items.end(), x,
            [this](const C& p, double value) { return paretoX(m_goal, p) < value; });
        m_items.insert(at, c);
    }
    std::vector<C> take() { return std::move(m_items); }

private:
    SearchGoal m_goal;
    std::vector<C> m_items; // x ascending, y ascending
};
using ParetoFront = FrontOf<Candidate>;

// What the serving and RL searches share: the reject counts by reason, the top list, the front,
// the evaluation cap and the streaming of partial results between groups.
template <class C> class Collector {
public:
    Collector(const SearchOptions& o, std::function<void(const std::vector<C>&)> partial)
        : m_options(o)
        , m_partial(std::move(partial))
        , m_top(o.goal, o.top)
        , m_front(o.goal)
    { }
    void reject(const char* reason, long long n = 1)
    {
        for (RejectCount& r : m_rejected)
            if (r.reason == reason) {
                r.count += n;
                return;
            }
        m_rejected.push_back({ reason, n });
    }
    void accept(const C& c, SearchTally& tally, std::vector<C>& all)
    {
        ++tally.feasible;
        m_changed = m_top.offer(c) || m_changed;
        m_front.offer(c);
        if (m_options.keepAllFeasible)
            all.push_back(c);
    }
    // Between groups: false when the search must stop (cancelled or capped).
    bool between(SearchTally& tally, double fraction)
    {
        if (m_changed && m_partial)
            m_partial(m_top.items());
        m_changed = false;
        if (m_options.progress)
            m_options.progress(fraction);
        if (m_options.cancel && m_options.cancel->load(std::memory_order_relaxed))
            tally.cancelled = true;
        if (m_options.maxEstimates > 0 && tally.estimates >= m_options.maxEstimates)
            tally.capped = true;
        return !tally.cancelled && !tally.capped;
    }
    // The best so far, best first (at most the options' `top`).
    const std::vector<C>& best() const { return m_top.items(); }
    bool bestIsFull() const
    {
        return m_top.items().size() >= static_cast<size_t>(std::max(m_options.top, 1));
    }
    void finish(SearchTally& tally, std::vector<C>& candidates, std::vector<C>& pareto)
    {
        candidates = m_top.take();
        pareto = m_front.take();
        tally.rejected = std::move(m_rejected);
        tally.searched = tally.feasible;
        for (const RejectCount& r : tally.rejected)
            tally.searched += r.count;
    }

private:
    const SearchOptions& m_options;
    std::function<void(const std::vector<C>&)> m_partial;
    TopOf<C> m_top;
    FrontOf<C> m_front;
    std::vector<RejectCount> m_rejected;
    bool m_changed = false;
};

} // namespace envelope::searchdetail
