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
    MaxMicroBatch, // largest micro-batch that fits on the plan's GPUs, then tokens/s
    // Serving (searchServing): TP x replicas x weight bits x KV bits for serving.concurrency
    // sequences of serving.context tokens, within serving.max_ttft_s / max_itl_s when given.
    ServingMaxThroughput, // most decode tokens/s on the plan's GPUs
    ServingMinGpus, // fewest GPUs, then decode tokens/s
    // Most goodput on the plan's GPUs: the highest Poisson request rate whose percentiles meet
    // serving.slo under serving.workload's lengths (serving.goodput_rps of the applied plan).
    ServingMaxGoodput,
    // RL (searchRl): trainer, reference and rollout pools (disjoint) or one colocated pool.
    RlMaxStepsPerHour // most RL steps per hour on the plan's GPUs
};

// What a goal searches: the training layout, the serving fleet or the RL pools.
enum class SearchKind { Training, Serving, Rl };
SearchKind searchKind(SearchGoal goal);
std::string_view searchKindId(SearchKind kind); // "training" "serving" "rl"

std::string_view searchGoalId(SearchGoal goal); // "min-gpus" "max-throughput" ...
bool parseSearchGoal(std::string_view id, SearchGoal& out);

// The line between "fits" and "tight" (design.md training.usable_fraction; the core's verdict
// replaces this once it exists): fits when total <= usable x HBM, tight up to HBM, else over.
enum class FitVerdict { Fits, Tight, Over };
std::string_view fitVerdictId(FitVerdict v); // "fits" "tight" "over"
FitVerdict fitVerdict(double perGpuBytes, double gpuMemoryBytes, double usableFraction);
// The fits line a search applies: the option when set, else the plan's training.usable_fraction.
double searchUsableFraction(const Plan& plan, const std::optional<double>& option);

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

// A serving fleet: `replicas` engines of `tp` GPUs each share the plan's serving.concurrency
// sequences, ceil(concurrency / replicas) each (as core/rl splits completions over engines).
struct ServingLayout {
    int clusterGpus = 1; // cluster.gpus of the plan (min-gpus: engine GPUs x replicas)
    int tp = 1, replicas = 1;
    // serving.ep and serving.dp_attention: a MoE engine of `ep` GPUs whose attention runs in
    // ep / tp data-parallel ranks (ep 1: the plain TP engine).
    int ep = 1;
    bool dpAttention = false;
    int weightBits = 16, kvBits = 16;
    int concurrency = 1; // sequences per replica: serving.concurrency of the applied plan
    // xPyD layouts (serving.disaggregation; serving-max-goodput, and serving-min-gpus under an
    // SLO): x prefill workers and y decode workers, each pool its own engine layout. tp, ep,
    // dpAttention and replicas above are then the decode pool's (the pool that holds the
    // sequences and sets ITL), concurrency one decode worker's.
    std::optional<ServingDisaggregation> disaggregation;
    int engineGpus() const { return dpAttention ? ep : tp; }

    bool operator==(const ServingLayout&) const = default;
};

// The figures of one replica as estimateServing gives them, and the fleet's rate.
struct ServingCandidate {
    ServingLayout layout;
    int gpus = 1; // engine GPUs x replicas: the GPUs the fleet uses
    double perGpuBytes = 0; // serving per-GPU total (weights + activations + KV + overhead)
    double gpuMemoryBytes = 0;
    double maxSequences = 0; // per replica, at serving.context
    double ttftS = 0, itlS = 0;
    // Fleet decode tokens/s = target concurrency / ITL: every sequence gets a token each ITL
    // (the fullest replica's step; the others step no slower).
    double tokensPerS = 0;
    bool fits = false; // serving.fits: the replica's share of the concurrency fits
    // serving-max-goodput only: the fleet's goodput under the plan's workload and SLO and the
    // most requests/s it sustains (serving.goodput_rps, serving.capacity_rps of the applied
    // plan); `tokensPerS` is then the output tokens/s at that goodput. `sloNote` says why the
    // goodput is what it is (which objective the next rate misses, or why none is met).
    std::optional<double> goodputRps;
    double capacityRps = 0;
    std::string sloNote;
};

// RL pools. Disjoint: trainer, reference and rollout GPUs (PPO's critic and reward pools stay
// the plan's); colocated: every role on the cluster's GPUs in turn.
struct RlLayout {
    int clusterGpus = 1; // cluster.gpus: the budget (colocated: the one pool)
    RlPlacement placement = RlPlacement::Disjoint;
    int trainerGpus = 1, referenceGpus = 0, rolloutGpus = 1;
    int rolloutTp = 1; // serving.tp: GPUs per rollout engine
    // serving.gpu_memory_utilization: the engine's share of each GPU (colocated: what the
    // resident trainer leaves it; verl's rollout.gpu_memory_utilization).
    double gpuMemoryUtilization = 0.9;

    bool operator==(const RlLayout&) const = default;
};

struct RlCandidate {
    RlLayout layout;
    int gpus = 1; // rl.total_gpus
    double peakBytesPerGpu = 0; // the fullest role's per-GPU total (colocated: the peak phase)
    double gpuMemoryBytes = 0;
    double stepS = 0, rolloutS = 0, trainS = 0, referenceS = 0;
    double stepsPerHour = 0;
    bool fits = false; // rl.fits
    bool rolloutBound = false; // rl.bottleneck == "rollout"
};

// `--fix PATH=VALUE`: one field held at a value. Paths: cluster.gpus, cluster.gpus_per_node,
// training.{tp,pp,cp,ep,virtual_stages,zero_stage,micro_batch,grad_accum,seq_len,recompute,
// recompute_every,sequence_parallel,offload_optimizer,offload_params}, serving.{tp,ep,weight_bits,
// kv_bits,disaggregation (true: xPyD layouts only, false: aggregated only)},
// rl.{placement,trainer_gpus,reference_gpus,rollout_gpus}.
struct FixedField {
    std::string path;
    int number = 0; // integers and booleans (0/1); rl.placement: 0 disjoint, 1 colocated
    Recompute recompute = Recompute::Selective; // training.recompute
};
Expected<FixedField> parseFixedField(std::string_view assignment); // "training.tp=8"

struct SearchOptions {
    SearchGoal goal = SearchGoal::MaxThroughput;
    int top = 10; // candidates kept, best first
    std::vector<FixedField> fixed;
    int maxGpus = 0; // 0: min-gpus 65,536; other goals the plan's cluster.gpus
    int gpusPerNode = 0; // 0: the plan's
    // fits = total <= usable x HBM; unset: the plan's training.usable_fraction (one fit rule
    // for estimate, solve, the RL table and the GUI badge).
    std::optional<double> usableFraction;
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
    // Serving latency limits; unset: the plan's serving.max_ttft_s / max_itl_s (none: no limit).
    std::optional<double> maxTtftS, maxItlS;
    // Estimates the search may run (training: full layouts plus the memory probe of each
    // layout group; serving, RL: layouts) before it stops and reports `capped` (0: no cap).
    // whatMakesItFit sets one so the summary's suggestion stays within a frame.
    long long maxEstimates = 0;
    const std::atomic<bool>* cancel = nullptr; // checked between layout groups
    std::function<void(double)> progress; // fraction done, between layout groups
    // Streaming: the best candidates so far (at most `top`, best first), between layout groups
    // whenever they changed. The kind's own callback is called; the others are ignored.
    std::function<void(const std::vector<Candidate>&)> partialTraining;
    std::function<void(const std::vector<ServingCandidate>&)> partialServing;
    std::function<void(const std::vector<RlCandidate>&)> partialRl;
};

struct RejectCount {
    std::string reason; // "memory", "divisibility", "host-memory", "deadline", "budget"
    long long count = 0;
};

// What every search reports, whatever it searched.
struct SearchTally {
    SearchGoal goal = SearchGoal::MaxThroughput;
    long long searched = 0; // layouts in the space (pruned ones included)
    long long evaluated = 0; // layouts that ran the full estimate
    long long estimates = 0; // estimates run, memory probes of layout groups included
    long long feasible = 0;
    std::vector<RejectCount> rejected;
    double elapsedS = 0;
    bool cancelled = false;
    bool capped = false; // stopped at SearchOptions::maxEstimates: the space was not finished
};

struct SearchResult : SearchTally {
    std::vector<Candidate> candidates; // best first, at most `top`
    std::vector<Candidate> pareto; // x = paretoX ascending, tokens/s rising
    std::string paretoX; // "per_gpu_bytes_total" or "cost"
    std::vector<Candidate> feasibleList; // keepAllFeasible only
    std::optional<Candidate> nearestMiss; // least over usable memory, when nothing fits
    // When layouts fit in memory but not the plan's deadline (min-cost) or budget (min-time):
    // the fastest, or the cheapest, of them.
    std::optional<Candidate> nearestConstraintMiss;
    double usableFraction = 0.9;
    // Set when the best was moved up for its headroom (preferHeadroom): why, with both layouts'
    // figures. Empty when the ranking stands as the goal orders it.
    std::string headroomNote;
};

struct ServingSearchResult : SearchTally {
    std::vector<ServingCandidate> candidates; // best first, at most `top`
    std::vector<ServingCandidate> pareto; // GPUs used ascending, tokens/s rising
    std::vector<ServingCandidate> feasibleList; // keepAllFeasible only
    // When nothing is feasible: the layout closest to it (the smallest worst ratio of need to
    // limit over sequences per replica, TTFT and ITL).
    std::optional<ServingCandidate> nearestMiss;
    std::optional<double> maxTtftS, maxItlS; // the limits applied
    int targetConcurrency = 0; // the plan's serving.concurrency, shared by the replicas
    // serving-max-goodput: layouts whose goodput was bisected (the rest were bounded out), and
    // xPyD pool goodput bounds computed (docs/planner.md, "Disaggregated prefill and decode").
    long long bisected = 0, poolBounds = 0;
};

struct RlSearchResult : SearchTally {
    std::vector<RlCandidate> candidates; // best first, at most `top`
    std::vector<RlCandidate> pareto; // peak bytes per GPU ascending, steps/hour rising
    std::vector<RlCandidate> feasibleList; // keepAllFeasible only
    std::optional<RlCandidate> nearestMiss; // least peak bytes per GPU, when nothing fits
};

// Issue 28's headroom preference, which search() applies to its ranking: a best layout within
// 2% of the usable line (76.9 GB on a 77.0 GB line) gives way to the best-ranked one that is
// not, when that one is within 2% on the goal's figure (tokens/s, cost, time; the same GPU count
// for min-gpus). Max-seq-len and max-micro-batch ask for the line and keep their order. Moves
// that one to the front, the rest in their order, and returns the sentence that says so (empty
// when nothing moved).
std::string preferHeadroom(std::vector<Candidate>& ranked, SearchGoal goal, double usableFraction);

// Searches the layouts of `plan` (which must have passed validatePlan) for `options.goal`
// (a training goal). Every candidate passes validatePlan(applyLayout(plan, layout)).
SearchResult search(const Plan& plan, const SearchOptions& options);

// Serving goals: every (engine layout, replicas, weight bits 16/8/4, KV bits 16/8) on the plan's
// GPUs (serving-max-throughput) or the fewest GPUs (serving-min-gpus), each replica estimated by
// estimateServing. Engine layouts: TP engines of a node or less; for a MoE model also engines
// of ep GPUs with data-parallel attention (ep = tp x 2, 4, ... within the fleet). Feasible:
// serving.fits, TTFT and ITL within the limits. serving-max-goodput (the plan has a workload and
// an SLO): every such layout on the plan's GPUs whose weights fit, ranked by the goodput the
// event simulation finds (estimateServingLoad), feasible when some rate meets the SLO; layouts
// are bisected in falling capacity order until a capacity cannot beat the top goodputs. Pure.
ServingSearchResult searchServing(const Plan& plan, const SearchOptions& options);
Plan applyServingLayout(const Plan& plan, const ServingLayout& layout);
ServingLayout servingLayoutOf(const Plan& plan);

// rl-max-steps-per-hour: disjoint pools (trainer: multiples of the training layout's
// tp x pp x cp; reference: powers of two and the plan's; rollout: every GPU left, whole
// engines of serving.tp) and the colocated pool, each estimated by estimateRl. Feasible:
// rl.fits. Pure.
RlSearchResult searchRl(const Plan& plan, const SearchOptions& options);
Plan applyRlLayout(const Plan& plan, const RlLayout& layout);
RlLayout rlLayoutOf(const Plan& plan);

// The plan with the layout's fields set (the same assignment the search evaluates).
Plan applyLayout(const Plan& plan, const Layout& layout);
Layout layoutOf(const Plan& plan);

// Fields that differ from the plan, as JSON path and JSON value text ("training.tp", "8").
struct FieldChange {
    std::string path;
    std::string json;
};
std::vector<FieldChange> layoutChanges(const Plan& plan, const Layout& layout);
std::vector<FieldChange> layoutChanges(const Plan& plan, const ServingLayout& layout);
std::vector<FieldChange> layoutChanges(const Plan& plan, const RlLayout& layout);

// "ZeRO-3 + full recompute + EP 8 on 20 nodes": the changes in words.
std::string describeChanges(const Plan& plan, const Layout& layout);
// "TP 2 x 4 replicas, 8-bit weights, 16-bit KV, 16 sequences each"; an xPyD layout: "2P6D: 2
// prefill workers of TP 8 and 6 decode workers of EP 16 (...), 8-bit weights, 16-bit KV"
std::string describeChanges(const Plan& plan, const ServingLayout& layout);
// A serving layout's engine and replica cells in the planner's tables (text, Markdown, the
// app's): "8", "1 (EP 16)", or for xPyD "P 8 / D 1 (EP 16)"; "4", or for xPyD "2P + 6D".
std::string servingEngineCell(const ServingLayout& layout);
std::string servingReplicasCell(const ServingLayout& layout);
// "disjoint: trainer 16, reference 2, rollout 46 (TP 2 engines)"
std::string describeChanges(const Plan& plan, const RlLayout& layout);

} // namespace envelope
