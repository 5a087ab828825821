// The result value types: every figure the core computes for a Plan (design.md, "Result
// JSON"), as estimate() (estimate/estimate.h) fills them. Plain values, below the formulas that
// fill their parts (training/, compute/, serving/, rl/) and the readers that print them
// (report/, export/, plan/'s result reader): none of those needs the orchestrator's header.
//
// All bytes are per GPU unless named otherwise; times in seconds.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/explain.h"
#include "result/tenants.h"

namespace envelope {

// A memory verdict: `Fits` at or below the usable fraction of HBM, `Tight` above it but within
// HBM, `Over` above HBM (or no HBM given).
enum class Verdict { Fits, Tight, Over };
std::string_view verdictId(Verdict v); // "fits" "tight" "over"
Verdict memoryVerdict(double totalBytes, double hbmBytes, double usableFraction);

struct TrainingMemory {
    MemoryBreakdown perGpu;        // the most-loaded GPU (worst pipeline stage)
    double gpuMemoryBytes = 0;     // usable HBM of one GPU
    bool fits = false;             // perGpu.total() <= gpuMemoryBytes
    Verdict verdict = Verdict::Over; // fits / tight (above usableBytes) / over (above HBM)
    double usableBytes = 0; // gpuMemoryBytes x training.usable_fraction
    int minGpus = 0;               // smallest GPU count that fits growing DP; 0 = none does
    double hostBytesPerNode = 0;   // CPU RAM needed per node by offloading
    int dataParallel = 1;          // gpus / (tp * pp * cp)
    int worstStage = 0;            // 0-based pipeline stage of perGpu
    // Details behind the activation figure.
    double activationBytesPerLayer = 0;  // one layer, one micro-batch, as kept during forward
    double embeddingActivationBytes = 0; // embedding output kept for backward
    double logitsBytes = 0;              // output logits (+ fp32 loss copy) on the last stage
    int microBatchesInFlight = 1;        // 1F1B keeps pp micro-batches on the first stage
    double paramsOnWorstGpu = 0;         // parameters held (before ZeRO) by the worst GPU
    // The three views of the peak (training.framework decides what is in them):
    double allocatedBytes = 0;  // peak live tensors (torch.cuda.max_memory_allocated)
    double reservedBytes = 0;   // caching allocator's peak (torch.cuda.max_memory_reserved)
    // perGpu.total() is the device view (nvidia-smi): reserved + CUDA context + NCCL.
    double bufferBytes = 0;         // FSDP prefetch, FSDP+PP unsharded state, gradient buckets
    double optimizerTempBytes = 0;  // the optimizer step's temporaries (foreach AdamW)
    double loraTrainableParams = 0; // training.lora: adapter parameters of the whole model
    // bitsandbytes paged optimizer state counted on the device (cudaMallocManaged: in
    // per_gpu_bytes.optimizer and the total, not in the allocated / reserved views).
    double pagedOptimizerBytes = 0;
    // training.activation_offload: kept activations per GPU moved to pinned host memory (all
    // micro-batches in flight), and the offloaded layers' share left on the GPU while moving.
    double activationOffloadBytes = 0;
    double activationOffloadBufferBytes = 0;
};

struct Communication {
    double dpS = 0;      // data-parallel gradient sync (all-reduce or ZeRO RS + AG) per step
    double tpS = 0;      // tensor-parallel all-reduces per step
    double ppS = 0;      // pipeline point-to-point per step
    double cpS = 0;      // context-parallel KV exchange per step
    double epS = 0;      // expert-parallel all-to-all per step
    double exposedS = 0; // communication not hidden behind compute
    double ppBubbleFraction = 0;  // (p-1)/(m+p-1), divided by v when interleaved
    double ppBubbleS = 0;
    double dpBytes = 0;  // bytes each GPU sends for DP per step
    double tpBytes = 0;  // bytes each GPU all-reduces for TP per step
    // Offload (ZeRO-Offload / ZeRO-Infinity): bytes each GPU moves over its host link per step,
    // their time at host_link_gbps, and the CPU optimizer step at host_memory_gbps. Not hidden.
    double offloadBytes = 0;
    double offloadS = 0;
    double cpuOptimizerS = 0;
    // Activation offload (training.activation_offload): bytes each GPU sends to the host in the
    // forward and reads back in the backward per step (both directions), their time at
    // host_link_gbps on a side stream, and the part of it the compute does not cover.
    double activationOffloadBytes = 0;
    double activationOffloadS = 0;
    double activationOffloadExposedS = 0;
};

struct TrainingCompute {
    double flopsPerToken = 0;          // model FLOPs (what MFU counts), training
    double hardwareFlopsPerToken = 0;  // with recompute's extra forward (what HFU counts)
    double forwardFlopsPerToken = 0;   // inference / reference model forward
    double globalBatchTokens = 0;      // micro_batch x grad_accum x dp x seq_len
    double peakFlopsPerGpu = 0;        // at the recipe's compute dtype
    int gpus = 0;                      // GPUs the job uses: dp x tp x pp x cp
    double stepFlops = 0;              // model FLOPs of one step: flopsPerToken x batch tokens
    double computeTimeS = 0;           // the slowest stage's ops x micro-batches (or FLOPs / mfu)
    // The pipeline rank whose micro-batch sets the pace (its layers: pipelineStageLayers; under
    // DualPipe rank k runs stages k and pp - 1 - k); 0 without op timing.
    int slowestStage = 0;
    double stepTimeS = 0;              // compute + exposed communication + bubble
    double effectiveMfu = 0;           // step FLOPs / (gpus x peak x step time): mfu after losses
    double hfu = 0;                    // the same with hardware FLOPs (recompute included)
    double tokensPerS = 0;             // whole job
    double tokensPerSPerGpu = 0;
    double trainTimeS = 0;             // trainTokens / tokensPerS
    double gpuHours = 0;
    double cost = 0;                   // USD at the GPU's price
    Communication communication;
    // Op timing (docs/formulas-compute.md, "Step time from ops"). "measured kernels" when most of the op time
    // came from the GPU's measured tables, "spec estimate" when from its specs, "mfu override"
    // when the plan's `mfu` set the compute time instead of the ops.
    std::string timingSource;
    double measuredShare = 0;  // share of the op time timed from measured tables
    double gemmS = 0;          // per step on the slowest stage: the layers' and head's GEMMs
    double attentionS = 0;     // the attention core (flash forward / backward, or unfused)
    double elementwiseS = 0;   // norms, activations, RoPE, residuals, loss: at HBM bandwidth
    double recomputeS = 0;     // the part of the three above that recompute re-runs
    double optimizerS = 0;     // the optimizer step, memory-bound, not overlapped
    // Expected relative error of stepTimeS for this kind of plan and timing source, from
    // docs/validation.md (a planning doc should say "14.6 s +- 8%").
    double uncertainty = 0;
    // The largest term on the step's critical path: "compute", "dp-comm", "tp-comm",
    // "pp-bubble", ... Communication overlapped with a longer compute is off the path; compute
    // hidden behind a longer overlapped communication is off it too.
    std::string bottleneck;
    double bottleneckS = 0; // that term's seconds on the critical path
    double bottleneckShare = 0; // bottleneckS / stepTimeS
    std::optional<double> observedMfu;
    std::optional<double> observedHfu;
    // Budget solver (seed 001 ex. 3; the plan's mfu is always given, so budget and/or deadline
    // select what is solved for):
    std::optional<int> affordableGpus;         // budget + deadline: floor(budget / (price x h))
    std::optional<double> requiredMfu;         // deadline: model FLOPs / (gpus x peak x deadline)
    std::optional<double> achievableDeadlineS; // budget + mfu: train time, when the budget covers it
    std::optional<int> gpusForDeadline;   // deadline + mfu: GPUs that finish in time
    std::optional<double> budgetTokens;   // budget + mfu: tokens the budget buys at this plan
};

// A serving deployment under its workload (issue 27; docs/formulas-serving.md, "Serving under
// load"). Per-request figures are over the simulated requests after the warm-up; rates are for
// the whole deployment of `replicas` engines.
struct ServingLoad {
    std::string latencyKind;       // "simulated" (percentiles from the event simulation)
    std::string scheduler;         // how the simulated engine schedules (schedulerDescription)
    int replicas = 1;              // engines of serving.tp GPUs: cluster.gpus / tp
    int requests = 0;              // simulated requests per engine, warm-up excluded
    double offeredRateRps = 0;     // requests/s offered (closed loop: what the users send)
    double requestRateRps = 0;     // requests/s completed
    double capacityRps = 0;        // the most requests/s the deployment sustains (saturated)
    bool saturated = false;        // offered above capacity: the queue grows without bound
    double meanConcurrency = 0;    // requests in the engine (queued, prefilling, decoding)
    double meanBatch = 0;          // sequences decoded per step, time-weighted
    double ttftMeanS = 0, ttftP50S = 0, ttftP90S = 0, ttftP99S = 0;
    double tpotMeanS = 0, tpotP50S = 0, tpotP90S = 0, tpotP99S = 0;
    double itlMeanS = 0;           // every decode gap, token-weighted
    double e2eMeanS = 0;
    double meanInputTokens = 0, meanOutputTokens = 0;
    double outputTokensPerS = 0;         // deployment
    double outputTokensPerSPerGpu = 0;
    double outputTokensPerSPerUser = 0;  // 1 / mean TPOT: the interactivity a user sees
    // With an SLO: whether the offered load meets it, the first objective it misses, and the
    // highest Poisson request rate that meets every objective (0: none does; see sloNote).
    std::optional<bool> meetsSlo;
    std::string sloMiss;
    std::optional<double> goodputRps;
    std::string sloNote;
    std::vector<std::string> notes; // assumptions the figures rest on
};

// serving.speculative's figures at `concurrency` (core/serving/serving.h; docs/formulas-serving.md,
// "Speculative decoding").
struct SpeculativeEstimate {
    std::string kind;               // "mtp" | "eagle" | "draft"
    std::string draftName;          // the draft's architecture
    int tokens = 0;                 // k, drafted per sequence and step
    double acceptance = 0;          // alpha, per drafted token
    double meanTokensPerStep = 1;   // (1 - alpha^(k+1)) / (1 - alpha): tokens a step advances
    double draftAcceptanceRate = 0; // (meanTokensPerStep - 1) / k: the rate vLLM logs
    double verifyStepS = 0;         // the model's forward over k + 1 tokens per sequence
    double draftStepS = 0;          // k draft passes
    double stepS = 0;               // verify + draft: one engine step
    double plainStepS = 0;          // the same batch's decode step without speculation
    double speedup = 0;             // plainStepS / (stepS / meanTokensPerStep)
    int draftLayers = 0;            // layers the draft keeps weights and KV for
    double draftWeightsBytesPerGpu = 0;
    double draftKvBytesPerTokenPerGpu = 0;
    double draftPrefillS = 0;       // the draft's pass over a `context`-token prompt
};

// One pool of a disaggregated deployment (serving.disaggregation; docs/formulas-serving.md,
// "Disaggregated prefill and decode"): its layout and one GPU's memory.
struct ServingPoolEstimate {
    int workers = 0, tp = 1, ep = 1, dp = 1;
    int gpus = 0;                    // workers x tp x dp
    double weightsBytesPerGpu = 0;
    double kvBudgetBytes = 0;        // per GPU
    double maxTokens = 0;            // token slots of one attention rank's pool
    double maxSequences = 0;         // of `context` tokens, one worker (all its ranks)
    MemoryBreakdown perGpu;          // decode: with the KV of its share of the concurrency
    bool fits = false;               // prefill: one prompt's KV fits; decode: the concurrency does
};

struct DisaggregationEstimate {
    ServingPoolEstimate prefill, decode;
    // One `context`-token prompt's KV cache (whole model) moved from a prefill worker to a
    // decode worker, each GPU sending its share over its own NIC.
    double kvTransferBytes = 0;
    double kvTransferS = 0;
    double prefillTimeS = 0;         // one `context`-token prompt on a prefill worker
    // Rates of each pool at saturation: prompt tokens/s the prefill pool computes (prompts
    // batched to max_batched_tokens), output tokens/s the decode pool emits at `concurrency`.
    double prefillTokensPerS = 0;
    double decodeTokensPerS = 0;
    double requestsPerS = 0;         // the slower pool's request rate at `context` / 2 each way
    std::string bottleneck;          // "prefill" or "decode": the pool that sets requestsPerS
};

struct ServingEstimate {
    double kvBytesPerToken = 0;      // whole model, one token
    std::string kvFormat;            // the KV cache's format (serving.kv_format, resolved)
    double linearStateBytesPerSequence = 0; // per GPU: linear-attention layers' fixed state
    double weightsBytesPerGpu = 0;
    double activationPeakBytes = 0;  // forward at max batched tokens
    double overheadBytes = 0;
    double kvBudgetBytes = 0;        // per GPU
    double maxTokens = 0;            // token slots (whole blocks) across the TP group
    double blocks = 0;
    double maxSequences = 0;         // at `context`, rounded up to whole blocks
    double contiguousWasteBytes = 0; // pre-allocating `context` when the average is shorter
    double decodeTokensPerS = 0;     // at `concurrency`
    double prefillTimeS = 0;         // one `context`-token prompt
    double ttftS = 0;
    double itlS = 0;
    double computeBoundConcurrency = 0;
    bool fitsWeights = false; // weights + activations + overhead leave a positive KV budget
    MemoryBreakdown perGpu;          // with kvCache = the KV of `concurrency` x `context`
    // Details behind the figures above (docs/formulas-serving.md).
    double kvBytesPerTokenPerGpu = 0;   // after TP splits (or replicates) the KV heads
    int kvHeadsPerGpu = 0;
    // The engine's own line: vLLM / generic torch total x gpu_memory_utilization, SGLang startup
    // + (torch total - startup) x mem_fraction_static (its static share), TensorRT-LLM torch
    // total less the (1 - free_gpu_memory_fraction) share of the free memory it leaves.
    double usableBytes = 0;
    double torchTotalBytes = 0;         // the total the engine sizes from (vLLM: CUDA's)
    // The engine whose accounting sized the pool, its modelled version ("" for generic) and the
    // fraction it applied: vLLM gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM
    // free_gpu_memory_fraction (presets/engines.json).
    std::string engine;
    std::string engineVersion;
    std::string engineVersionNote;      // the plan's version when another row stands in for it
    double memoryFraction = 0;
    double startupBytes = 0;            // SGLang: held before the weights load
    double forwardPeakBytes = 0;        // vLLM: the profiled forward's peak
    double samplerPeakBytes = 0;        // vLLM: the sampler warm-up's peak
    double weightBytesPerParam = 0;     // quantized linear layers, scales included
    double contiguousWasteFraction = 0; // 1 - average / context (kept tokens)
    double contiguousSequences = 0;     // sequences a max-length pre-allocation admits
    double pagedSequencesAtAverage = 0; // sequences PagedAttention admits at the average length
    double decodeMemoryS = 0;           // HBM time of one decode step at `concurrency`
    double decodeComputeS = 0;          // compute time of the same step
    // Op timing of the decode step behind itlS (docs/formulas-serving.md, "Step time from
    // ops"): its GEMMs, attention over the KV caches, elementwise work and TP / EP collectives.
    std::string timingSource;           // "measured kernels" | "spec estimate"
    double uncertainty = 0;             // expected relative error of itlS (the decode step)
    double ttftUncertainty = 0;         // expected relative error of ttftS
    double decodeGemmS = 0, decodeAttentionS = 0, decodeElementwiseS = 0, decodeCommS = 0;
    // The requested `concurrency` sequences of `context` tokens fit: concurrency <= maxSequences
    // (so the weights fit too). The serving verdict; fitsWeights is the weaker statement.
    bool fits = false;
    // One request alone: the prefill of a `context`-token prompt, and a decode step of one
    // sequence at `context` (issue 27: today's single-request figures).
    double ttftMinS = 0;
    double itlMinS = 0;
    // Under serving.workload (core/serving/load.h): set when the plan has a workload.
    std::optional<ServingLoad> load;
    // Under serving.speculative: itlS is then stepS / meanTokensPerStep, and the draft's weights
    // and KV are in weightsBytesPerGpu and kvBytesPerTokenPerGpu.
    std::optional<SpeculativeEstimate> speculative;
    // The engine's layout (serving.ep, serving.dp_attention): expert parallel, its attention
    // ranks (each with its own sequences and KV pool: maxTokens and blocks are one rank's,
    // maxSequences the engine's) and the GPUs of one engine.
    int ep = 1;
    int attentionRanks = 1;
    int engineGpus = 1;
    // Under serving.disaggregation: both pools. The figures above are then the decode pool's
    // (its memory, ITL, capacity) but TTFT, which is the prefill pool's prompt plus the KV
    // transfer.
    std::optional<DisaggregationEstimate> disaggregation;
};

struct RoleEstimate {
    std::string role;  // "trainer", "reference", "rollout", "old-policy", "critic", "reward"
    int gpus = 0;
    MemoryBreakdown perGpu;
    bool fits = false; // within HBM and laid out (training.fits' rule)
    // One fit rule with training: total vs training.usable_fraction of HBM (the rollout engine:
    // its own gpu_memory_utilization share, which it keeps by construction).
    Verdict verdict = Verdict::Over;
    // Non-empty when the role cannot be laid out on its pool (the trainer's tp x pp x cp, whole
    // engines of serving.tp): names the field and the minimum. perGpu is then a lower bound.
    std::string problem;
};

struct RlEstimate {
    std::vector<RoleEstimate> perRole;
    double rolloutTokens = 0;  // generated + prompt tokens per step
    double rolloutS = 0;
    double referenceS = 0;     // reference (and reward, critic) forward time
    // The policy's own forward over the step's tokens for the old log-probs (verl's
    // compute_log_prob, OpenRLHF's make_experience), on the trainer's GPUs; 0 when
    // rl.old_log_prob_forward is off.
    double oldLogProbS = 0;
    // New weights from trainer to rollout engines each step: bf16 weights / rollout tp per GPU
    // over the link between the pools (colocated: resharded in place over the node's links).
    double weightSyncS = 0;
    double trainS = 0;
    double stepS = 0;          // synchronous, or max(...) when off-policy pipelined
    double stepsPerHour = 0;
    std::string bottleneck;    // "rollout" or "training"
    int suggestedRolloutGpus = 0; // the split that balances rollout and training (disjoint
    int suggestedTrainerGpus = 0; // pools only; 0 and 0 when colocated: no split exists)
    // False when no split of the rollout + trainer GPUs lets the trainer fit (the suggestion is
    // then the current split, kept only so the numbers stay defined).
    bool suggestionFits = true;
    // Details (docs/formulas-rl.md).
    double trainTokens = 0;        // tokens the policy trains on per step
    int totalGpus = 0;             // GPUs of all pools (colocated: the one shared pool)
    bool fits = false;             // every role (colocated: the peak phase) fits
    Verdict verdict = Verdict::Over; // the worst role's (colocated: the peak phase's)
    std::string problem;           // the first role that cannot be laid out on its pool
    double rolloutPhaseBytes = 0;  // colocated: per GPU during rollout
    double trainingPhaseBytes = 0; // colocated: per GPU during training
    double colocatedPeakBytes = 0; // colocated: max of the phases + overhead
    // The rollout engine as plan.serving's engine accounts it (docs/formulas-rl.md §2).
    double rolloutKvPoolBytes = 0;        // per GPU: the KV pool the engine allocates
    double rolloutMaxSequences = 0;       // prompt + response sequences one engine runs at once
    double rolloutSequencesPerEngine = 0; // ceil(completions / engines)
    double rolloutWaves = 0;              // ceil(sequences per engine / max sequences)
    // Response lengths (rl.response_len_mean under the cap response_len): the mean the tokens
    // and KV follow, and the decode steps the step waits for its longest sequence beyond the
    // engine's full batches (the straggler tail; 0 when every response is response_len long).
    double meanResponseTokens = 0;
    double rolloutTailSteps = 0;
    // Off-policy generation (rl.staleness, rl.partial_rollouts, rl.updates_per_sync;
    // docs/formulas-rl.md §4): the bound k in effect (a fraction of a step under verl's
    // staleness_threshold), the updates per weight sync, whether the rollout overlaps the
    // update (disjoint pools, k > 0 or N > 1), whether unfinished sequences are carried, the
    // sequences one engine decodes at once, and the carried sequences' KV recomputed under the
    // new weights each step.
    double staleness = 0;
    int updatesPerSync = 1;
    bool overlapped = false;
    // Per step, on disjoint pools: the rollout pool waiting for the update and the trainer
    // waiting for completions (verl fully_async's rollouter/idle_ratio and trainer/idle_ratio
    // times the step); 0 when colocated (one pool, taking turns).
    double rolloutIdleS = 0;
    double trainerIdleS = 0;
    bool partialRollouts = false;
    double rolloutRunningBatch = 0;
    double rolloutReprefillS = 0;
};

// The planner's "what makes it fit" for a training plan that does not fit (issue 28): the
// fields it changes, the GPUs it needs and a sentence. `training.what_makes_it_fit` in the
// result JSON (null when the plan fits). Not computed by estimate() (it searches): the CLI's
// estimate fills it through whatif's attachWhatMakesItFit.
struct FitChangeSummary {
    std::vector<std::pair<std::string, std::string>> changes; // JSON path -> JSON value text
    int gpus = 0;
    std::string description;
};

struct Estimate {
    double params = 0;
    double activeParams = 0;
    TrainingMemory training;
    TrainingCompute compute;
    ServingEstimate serving;
    RlEstimate rl;
    std::vector<std::string> warnings;  // e.g. "tp=3 does not divide heads=32"
    // Filled on request (attachWhatMakesItFit): searched, and the answer (none: the plan fits,
    // or no layout fits within the planner's budget; `whatMakesItFitNote` says which).
    bool whatMakesItFitSearched = false;
    std::optional<FitChangeSummary> whatMakesItFit;
    std::string whatMakesItFitNote;
    std::vector<Explanation> explain;   // filled only with EstimateOptions::explain
};

}  // namespace envelope
