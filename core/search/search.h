// The planner: searches every training layout of a plan (TP, PP with virtual stages, CP, EP,
// DP, ZeRO 0-3, recompute, micro-batch x grad-accum at the plan's global batch in tokens,
// sequence parallel, offload) for a goal, and ranks what fits. Every figure comes from the
// core's own estimateTrainingMemory / estimateCompute, the functions estimate() calls, so a
// reported candidate re-estimates to exactly the figures it claims. docs/planner.md.
//
//   SearchOptions o;  o.goal = SearchGoal::MinGpus;
//   SearchResult r = search(plan, o);
//   Plan best = applyLayout(plan, r.candidates.front().layout);
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "plan/plan.h"

namespace envelope {

enum class SearchGoal {
    MinGpus, // fewest GPUs (whole nodes) with a fitting layout, then tokens/s
    MaxThroughput, // most tokens/s on the plan's GPUs
    MinCost, // cheapest run of train_tokens (within the deadline, when the plan has one)
    MinTime, // shortest run of train_tokens (within the budget, when the plan has one)
    MaxSeqLen, // longest sequence that fits on the plan's GPUs, then tokens/s
    MaxMicroBatch // largest micro-batch that fits on the plan's GPUs, then tokens/s
};

std::string_view searchGoalId(SearchGoal goal); // "min-gpus" "max-throughput" ...
bool parseSearchGoal(std::string_view id, SearchGoal& out);

// The line between "fits" and "tight" (design.md training.usable_fraction; the core's verdict
// replaces this once it exists): fits when total <= usable x HBM, tight up to HBM, else over.
enum class FitVerdict { Fits, Tight, Over };
std::string_view fitVerdictId(FitVerdict v); // "fits" "tight" "over"
FitVerdict fitVerdict(double perGpuBytes, double gpuMemoryBytes, double usableFraction);

// One point of the search space: the fields the planner changes.
struct Layout {
    int gpus = 1, gpusPerNode = 8;
    int tp = 1, pp = 1, cp = 1, ep = 1, virtualStages = 1;
    int zeroStage = 0;
    int microBatch = 1, gradAccum = 1, seqLen = 4096;
    Recompute recompute = Recompute::Selective;
    int recomputeEvery = 1;
    bool sequenceParallel = false;
    bool offloadOptimizer = false, offloadParams = false;

    bool operator==(const Layout&) const = default;
};

// The figures a candidate is ranked by, as estimate() gives them for applyLayout(plan, layout).
struct Candidate {
    Layout layout;
    double perGpuBytes = 0; // training.per_gpu_bytes.total
    double gpuMemoryBytes = 0; // HBM of one GPU
    FitVerdict verdict = FitVerdict::Over;
    double stepTimeS = 0;
    double tokensPerS = 0;
    double trainTimeS = 0;
    double cost = 0; // USD for train_tokens
    double hostBytesPerNode = 0;
};

// `--fix PATH=VALUE`: one field held at a value. Paths: cluster.gpus, cluster.gpus_per_node,
// training.{tp,pp,cp,ep,virtual_stages,zero_stage,micro_batch,grad_accum,seq_len,recompute,
// recompute_every,sequence_parallel,offload_optimizer,offload_params}.
struct FixedField {
    std::string path;
    int number = 0; // integers and booleans (0/1)
    Recompute recompute = Recompute::Selective; // training.recompute
};
Expected<FixedField> parseFixedField(std::string_view assignment); // "training.tp=8"

struct SearchOptions {
    SearchGoal goal = SearchGoal::MaxThroughput;
    int top = 10; // candidates kept, best first
    std::vector<FixedField> fixed;
    int maxGpus = 0; // 0: min-gpus 65,536; other goals the plan's cluster.gpus
    int gpusPerNode = 0; // 0: the plan's
    double usableFraction = 0.9; // fits = total <= usable x HBM
    // Host RAM per node for offloaded states: DGX H100 / A100 ship 2 TB (NVIDIA DGX datasheets).
    double hostBytesPerNode = 2e12;
    bool tpAcrossNodes = false; // TP groups stay inside a node unless allowed
    // Offload for the memory goals (min-gpus, max-seq-len, max-micro-batch); max-throughput,
    // min-cost and min-time consider it only when fixed (the step time does not charge it).
    bool allowOffload = true;
    // Memory lower bounds and the micro-batch cut before the full estimate; off only to check
    // that pruning changes nothing (tests).
    bool prune = true;
    bool keepAllFeasible = false; // fill SearchResult::feasibleList (CSV)
    const std::atomic<bool>* cancel = nullptr; // checked between layout groups
    std::function<void(double)> progress; // fraction done, between layout groups
};

struct RejectCount {
    std::string reason; // "memory", "divisibility", "host-memory", "deadline", "budget"
    long long count = 0;
};

struct SearchResult {
    SearchGoal goal = SearchGoal::MaxThroughput;
    long long searched = 0; // layouts in the space (pruned ones included)
    long long evaluated = 0; // layouts that ran the full estimate
    long long feasible = 0;
    std::vector<RejectCount> rejected;
    std::vector<Candidate> candidates; // best first, at most `top`
    std::vector<Candidate> pareto; // x = paretoX ascending, tokens/s rising
    std::string paretoX; // "per_gpu_bytes_total" or "cost"
    std::vector<Candidate> feasibleList; // keepAllFeasible only
    std::optional<Candidate> nearestMiss; // least over usable memory, when nothing fits
    // When layouts fit in memory but not the plan's deadline (min-cost) or budget (min-time):
    // the fastest, or the cheapest, of them.
    std::optional<Candidate> nearestConstraintMiss;
    double usableFraction = 0.9;
    double elapsedS = 0;
    bool cancelled = false;
};

// Searches the layouts of `plan` (which must have passed validatePlan) for `options.goal`.
// Every candidate passes validatePlan(applyLayout(plan, layout)) before it is reported.
SearchResult search(const Plan& plan, const SearchOptions& options);

// The plan with the layout's fields set (the same assignment the search evaluates).
Plan applyLayout(const Plan& plan, const Layout& layout);
Layout layoutOf(const Plan& plan);

// Fields that differ from the plan, as JSON path and JSON value text ("training.tp", "8").
struct FieldChange {
    std::string path;
    std::string json;
};
std::vector<FieldChange> layoutChanges(const Plan& plan, const Layout& layout);

// "ZeRO-3 + full recompute + EP 8 on 20 nodes": the changes in words.
std::string describeChanges(const Plan& plan, const Layout& layout);

} // namespace envelope
