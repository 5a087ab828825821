// Serving capacity against context length: the curve the serving panel draws. Each point is
// the plan's serving estimate with `serving.context` set to a power of two from 256 to 1M
// tokens (docs/formulas-serving.md: max_sequences = floor(blocks / ceil(min(n, W) / block))).
#pragma once

#include <optional>
#include <vector>

#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

struct ServingSweepPoint {
    double context = 0; // tokens per sequence
    double maxSequences = 0; // sequences the KV budget holds at this context (PagedAttention)
    double kvBudgetBytes = 0; // per GPU; the same at every context
    double decodeTokensPerS = 0; // at min(concurrency, maxSequences) sequences, 0 when none fit
    bool fitsConcurrency = false; // the plan's concurrency fits at this context
};

inline constexpr int kServingSweepMinLog2 = 8; // 256 tokens
inline constexpr int kServingSweepMaxLog2 = 20; // 1,048,576 tokens

// One point per power of two 2^8..2^20, in increasing context. Pure; the plan must have passed
// validation (planio.h).
std::vector<ServingSweepPoint> servingContextSweep(const Plan& plan);

// The throughput-interactivity curve (issue 27): output tokens/s per GPU against tokens/s per
// user as the decode batch grows, one point per power of two from 1 sequence to the most the
// engine runs at once (max_num_seqs, or what its KV pool holds at the KV length). Decode steps
// only, at a fixed KV length (the workload's mean input + half its mean output, else
// `serving.context`): an upper bound on both axes, since prompts share the steps under load.
//   per user = tokens per step / step(B),   per GPU = B x tokens per step / step(B) / tp
struct InteractivityPoint {
    double batch = 0;              // sequences decoding together
    double tokensPerSPerUser = 0;  // one sequence's decode rate
    double tokensPerSPerGpu = 0;   // the engine's decode rate over its tp GPUs
    double stepS = 0;              // the engine step at that batch
};
struct InteractivityCurve {
    double kvTokens = 0;           // the KV length every point is timed at
    double maxBatch = 0;           // the largest batch the engine runs
    std::vector<InteractivityPoint> points;          // as the plan decodes (speculative if set)
    std::vector<InteractivityPoint> plainPoints;     // without speculation; empty when off
    // The plan's static batch (serving.concurrency) when it fits the pool (batch 0 otherwise).
    InteractivityPoint current;
    // The per-user rate the SLO's TPOT objective asks for (1 / tpot_p90_s, else p50, else p99);
    // 0 without one.
    double sloTokensPerSPerUser = 0;
};
inline constexpr int kInteractivityMaxPoints = 24;  // 1 .. 2^23 sequences at most

// Pure; the plan must have passed validation. Empty points when the weights leave no KV pool.
InteractivityCurve servingInteractivityCurve(const Plan& plan);

// Latency against request rate (issue 27, the Serving tab's chart under a workload): the
// workload's lengths offered as a Poisson stream at fractions of the deployment's capacity
// (serving.load.capacity_rps), each run through the event simulation as estimateServingLoad
// runs the plan's own load (1,000 requests per engine, the same seed), so each point is the
// p90 TTFT and TPOT a user would see at that rate, and whether the SLO holds there.
struct ServingRatePoint {
    double rateRps = 0;            // offered requests/s over the deployment
    double ttftP90S = 0, tpotP90S = 0;
    bool saturated = false;        // the queue grows: TTFT unbounded
    std::optional<bool> meetsSlo;  // with an SLO
};
struct ServingRateCurve {
    double capacityRps = 0;
    std::vector<ServingRatePoint> points; // rising rates, 5% to 95% of the capacity
};
inline constexpr double kServingRateFractions[]
    = { 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95 };

// Whether the curve has points: a workload the plan's KV pool serves, with a capacity.
// `estimate` is estimate(plan)'s.
bool servingRateCurveApplies(const Plan& plan, const Estimate& estimate);
// Empty where servingRateCurveApplies is false. Eleven simulations (~1-2 ms each): the app runs
// it on its worker thread.
ServingRateCurve servingRateCurve(const Plan& plan, const Estimate& estimate);

} // namespace envelope
