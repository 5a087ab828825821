// Internals of the planner shared by search.cpp (the loop), space.cpp (the axes) and
// ranking.cpp (goals, ranking, Pareto front). Not part of the public core API.
#pragma once

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

// Orders candidates for a goal: true when `a` ranks strictly before `b`.
bool ranksBefore(SearchGoal goal, const Candidate& a, const Candidate& b);

// The Pareto front's x axis for a goal (smaller is better; y is tokens/s, larger is better).
const char* paretoAxis(SearchGoal goal);
double paretoX(SearchGoal goal, const Candidate& c);

// Keeps the best `top` candidates, best first, without allocating once reserved.
class TopList {
public:
    TopList(SearchGoal goal, int top);
    void offer(const Candidate& c);
    std::vector<Candidate> take() { return std::move(m_items); }

private:
    SearchGoal m_goal;
    size_t m_top;
    std::vector<Candidate> m_items;
};

// The non-dominated candidates: none has both a smaller-or-equal x and a larger-or-equal
// tokens/s than another.
class ParetoFront {
public:
    explicit ParetoFront(SearchGoal goal);
    void offer(const Candidate& c);
    std::vector<Candidate> take() { return std::move(m_items); }

private:
    SearchGoal m_goal;
    std::vector<Candidate> m_items; // x ascending, tokens/s ascending
};

} // namespace envelope::searchdetail
