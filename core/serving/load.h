// Serving under load (issue 27): a deployment of engines serving a workload of requests, with
// TTFT / TPOT percentiles, throughput per GPU and per user, and goodput under an SLO.
//
// One engine runs iteration-level (continuous) batching as its scheduler does (engineScheduler):
// with mixed batches (vLLM V1) each step decodes one token of every running sequence and spends
// the rest of `max_batched_tokens` on prompt chunks, first come first served; without (SGLang,
// vLLM V0) a step computes prompts alone, before any decode; a request is admitted while the KV
// pool holds its whole length and fewer than `max_num_seqs` run. An event simulation
// (deterministic for a seed) replays that scheduler over sampled requests; a closed form gives
// the steady state of a closed loop of fixed-length requests, and the test checks one against
// the other. Every formula: docs/formulas-serving.md, "Serving under load".
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "plan/lengths.h"
#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

// What bounds one engine's scheduler.
struct EngineLimits {
    double kvTokens = 0;       // token slots of the KV pool (ServingEstimate::maxTokens)
    int blockSize = 16;        // a request holds whole blocks
    int maxNumSeqs = 1024;     // running sequences at most
    int maxBatchedTokens = 8192; // tokens one step computes (decodes + prompt chunks)
    // The scheduler (engineScheduler): a step carries decodes and prompt tokens together
    // (vLLM V1, TensorRT-LLM's in-flight batching) or a prompt step runs alone, first (vLLM V0
    // without chunked prefill, SGLang); a prompt may split over steps; decode steps per
    // scheduling (vLLM V0 --num-scheduler-steps).
    bool mixedBatches = true;
    bool chunkedPrefill = true;
    int schedulerSteps = 1;
    bool overlapScheduler = false; // a request that arrives during a step joins the one after next
    // Time a request spends outside the steps (EngineProfile::requestOverheadS), added to its
    // TTFT and end-to-end latency; 0 for a pool its requests reach from another (decode).
    double requestOverheadS = 0;
};

// The plan's engine scheduler: serving.mixed_batches, serving.chunked_prefill and
// serving.scheduler_steps, unset ones from the engine version's defaults (presets/engines.json),
// each with why ("vLLM 0.6 default: off at max_model_len 4096 <= 32768").
struct EngineScheduler {
    bool mixedBatches = true, chunkedPrefill = true, overlapScheduler = false;
    int schedulerSteps = 1;
    std::string mixedWhy, chunkedWhy, overlapWhy;
};
EngineScheduler engineScheduler(const ServingConfig& config);
// The scheduler in words, with why each part holds (serving.load.scheduler): "prompt steps
// alone, before decodes (SGLang 0.5's default); chunked prompts (SGLang 0.5's default)".
std::string schedulerDescription(const ServingConfig& config);

// The engine's step: decodeS(batch, mean KV tokens) for one decode step of `batch` sequences,
// prefillS(tokens) for one prompt of `tokens` computed tokens. A step that carries both costs
// their sum (the weights are read once in a real fused step: an upper bound by one weight read).
struct StepTimes {
    std::function<double(double batch, double meanKvTokens)> decodeS;
    std::function<double(double tokens)> prefillS;
    // Optional: decodeS(batch, kv) = first + second x kv for this batch (a table linear in the
    // KV length), so that a simulation step at an unchanged batch costs a multiply-add.
    std::function<std::pair<double, double>(double batch)> decodeLine;
    // Tokens a decode step advances each running sequence: 1, or under speculative decoding
    // the mean accepted length (1 - alpha^(k+1)) / (1 - alpha), decodeS then the verify + draft
    // step. Each sequence takes ceil((output - 1) / tokensPerStep) steps.
    double tokensPerStep = 1;
    // A step that carries prompt tokens is launched outside CUDA graphs: it takes at least this
    // (eagerHostFloorS, the host's launches). prefillS stays the GPU's time, so prompts that
    // share a step pay the floor once.
    double promptHostFloorS = 0;
};

// Step times from the plan's op model, on a grid (batch in powers of two up to `maxBatch`, KV
// length linear between two points, prompts in powers of two) so that a simulation step costs a
// lookup, not an op timing. Interpolation: log-linear in batch and prompt length, linear in KV.
StepTimes tabulatedStepTimes(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    double maxBatch, double maxTokens);

// Deterministic 64-bit generator (SplitMix64, Steele et al. 2014) and the draws the workload
// needs; std's distributions differ between standard libraries, these do not.
class Draws {
public:
    explicit Draws(std::uint64_t seed) : m_state(seed) { }
    std::uint64_t next();
    double uniform();                       // [0, 1)
    double exponential(double rate);        // mean 1 / rate
    double normal();                        // Box-Muller, standard
    double length(const LengthDistribution& d, double cap); // tokens, 1..cap
private:
    std::uint64_t m_state;
};

// The log-normal with this mean and 90th percentile: sigma solves
// ln(p90 / mean) = 1.2816 sigma - sigma^2 / 2 (its smaller root), mu = ln(mean) - sigma^2 / 2.
struct LogNormal {
    double mu = 0, sigma = 0;
};
LogNormal logNormalFromMeanP90(double mean, double p90);

struct EngineRun {
    int requests = 0;               // measured (after the warm-up)
    double durationS = 0;           // of the measured part
    double requestsPerS = 0, outputTokensPerS = 0;
    double ttftMeanS = 0, ttftP50S = 0, ttftP90S = 0, ttftP99S = 0;
    double tpotMeanS = 0, tpotP50S = 0, tpotP90S = 0, tpotP99S = 0;
    double itlMeanS = 0, e2eMeanS = 0;
    double meanBatch = 0;           // decoding sequences per step, time-weighted
    double meanInEngine = 0;        // queued + running, time-weighted (Little's law: rate x e2e)
    double meanInputTokens = 0, meanOutputTokens = 0;
    bool backlog = false;           // the queue still grew at the end: above capacity
    bool tooLong = false;           // a request longer than the whole KV pool was drawn
    bool truncated = false;         // stopped at the step cap before every request finished
};

// One engine serving `requests` requests of `workload` (its concurrency or request rate already
// this engine's share). The first 10% of completions are a warm-up and not measured.
EngineRun simulateEngine(const ServingWorkload& workload, const EngineLimits& limits,
    const StepTimes& steps, double contextTokens, int requests, std::uint64_t seed);

// The steady state of a closed loop of `concurrency` users with fixed `input` / `output`
// lengths: each request spends k = ceil(input' / budget) steps in prefill and output - 1 in
// decode, so (output - 1) / (output - 1 + k) of the users decode at a time; a step costs
// decode(B, input + output / 2) + (users / (output - 1 + k)) x prefill(input'), with input' the
// prompt tokens not served from the prefix cache.
struct ClosedFormLoad {
    double stepS = 0, batch = 0, tpotS = 0, ttftS = 0, requestsPerS = 0, outputTokensPerS = 0;
};
ClosedFormLoad closedFormLoad(double input, double output, double concurrency,
    double prefixHitRate, const EngineLimits& limits, const StepTimes& steps);

// The deployment's figures: cluster.gpus / serving.tp engines share the workload, and whether
// it meets the SLO. `base` is the plan's serving estimate (its KV pool). With `goodput`, also
// the SLO's goodput, by bisection over the Poisson rate (a search of 13 simulations: the CLI
// asks for it, a slider step does not). Requests per simulation: `requests` per engine.
ServingLoad estimateServingLoad(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const ServingEstimate& base, int clusterGpus, bool goodput = false,
    int requests = 2000);

// What serving-max-goodput bisects: serving.goodput_rps and serving.slo_note exactly as
// estimateServingLoad(..., goodput = true) reports them, given the capacity_rps it reports
// (servingCapacityRps; under serving.disaggregation min(prefillRps x prefill ranks, decodeRps x
// decode ranks) of disaggregatedRankCapacities), without its run at the offered load, its notes
// and its capacity runs. Needs an SLO and a capacity above 0, else it is estimateServingLoad.
ServingLoad servingGoodputAt(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    const ServingEstimate& base, int clusterGpus, double capacityRps, int requests = 2000);

// The most requests/s an aggregated deployment (no serving.disaggregation) sustains under the
// workload's lengths: estimateServingLoad's capacity_rps alone, one simulation, 0 when a request
// is longer than the KV pool or there is no workload. serving-max-goodput bounds each layout's
// goodput with it before bisecting.
double servingCapacityRps(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    const ServingEstimate& base, int clusterGpus, int requests = 2000);

// Under serving.disaggregation: the requests/s one prefill rank and one decode rank sustain under
// the workload's lengths, each kept as full as its limits allow (0 for a pool whose KV cannot
// hold a request), and the attention ranks of one worker of each pool. estimateServingLoad's
// capacity_rps is min(prefillRps x prefill workers x prefillRanks, decodeRps x decode workers x
// decodeRanks), and each figure depends only on its own pool's layout: the xPyD search times
// each engine layout once per role and combines them for every split.
struct RankCapacities {
    double prefillRps = 0, decodeRps = 0;
    int prefillRanks = 1, decodeRanks = 1;
};
RankCapacities disaggregatedRankCapacities(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const ServingEstimate& base, int requests = 2000);

// Under serving.disaggregation with an SLO: one pool's rank alone, at a per-rank Poisson rate
// (the requests and seed of disaggregatedLoad's bisection). A rate meets the SLO only if the
// decode rank alone meets every objective on its own TPOT and TTFT wait with a bounded queue,
// and the prefill rank alone meets the TTFT objectives with its prompts' TTFT (the transfer and
// the decode wait only add to it). `capacityRps` is the rank's (disaggregatedRankCapacities).
// - `unloadedMiss`: the objective the rank misses even unloaded (requests a million times their
//   service time apart): no rate meets the SLO with this pool, whatever the other.
// - `boundRps` (with `bound`): the lowest per-rank rate a bisection from 1% of capacity finds
//   to miss (the capacity when none does; 0 when unloaded misses): serving.goodput_rps <=
//   bound x the pool's ranks where the percentiles grow with the rate.
// Each depends on its own pool's layout only: serving-max-goodput computes them once per layout
// and role and skips the xPyD splits they rule out.
enum class PoolSide { Prefill, Decode };
struct PoolAlone {
    std::string unloadedMiss;
    double boundRps = INFINITY;
};
PoolAlone disaggregatedPoolAlone(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const ServingEstimate& base, PoolSide side, double capacityRps, bool bound,
    int requests = 1000);

// Every load figure as a formula with its values and source (serving.ttft_p90_s, ...).
void explainServingLoad(const ServingConfig& config, const ServingEstimate& serving, Explainer& ex);

// Fills estimate.serving.load's goodput (serving.goodput_rps) when the plan has a workload and
// an SLO; `estimate` must be estimate(plan)'s. What `envelope-cli estimate` runs.
void attachServingGoodput(const Plan& plan, Estimate& estimate);

} // namespace envelope
