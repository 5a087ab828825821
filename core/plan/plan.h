// The Plan: everything the user asked for (design.md, "Plan JSON — envelope.plan version 1").
//
// A Plan holds both how each choice was written (a preset id, an object, a path) so that it
// writes back the way it was read, and the resolved values the estimator uses. Resolution
// against presets happens when a plan is read (planio.h) or when the UI picks a preset.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "model/model.h"
#include "plan/engine.h"
#include "plan/framework.h"
#include "plan/recipe.h"
#include "plan/workload.h"

namespace envelope {

struct ModelChoice {
    enum class Form {
        Preset,           // "llama-2-7b"
        PresetOverrides,  // {"preset": "llama-2-7b", "layers": 16, ...}
        Architecture,     // a full architecture object
        HfConfig,         // {"hf_config": "path/config.json"} relative to the plan file
        Params,           // {"params": 7e9, optional "layers", "hidden", "heads"}
        HubId             // {"hf_id": "OWNER/NAME[@REVISION]"}: the Hub's config.json
    };
    Form form = Form::Preset;
    std::string presetId;       // Preset / PresetOverrides
    std::string overridesJson;  // PresetOverrides: the override keys as a JSON object text
    std::string hfConfigPath;   // HfConfig, as written in the plan
    std::string hubId;          // HubId, as written in the plan
    ModelArch arch;             // resolved architecture (always filled)

    bool operator==(const ModelChoice&) const = default;
};

struct GpuChoice {
    std::string presetId;  // empty when written as an object
    Gpu gpu;               // resolved

    bool operator==(const GpuChoice&) const = default;
};

struct RecipeChoice {
    std::string presetId;  // empty for a custom {"weights":..,"gradients":..,"master":..,"optimizer":..}
    Recipe recipe;         // resolved

    bool operator==(const RecipeChoice&) const = default;
};

// Activation checkpointing policy.
enum class Recompute {
    None,       // every saved tensor of every layer is kept
    Selective,  // attention core (scores, softmax, dropout) recomputed (Korthikanti et al. 2022)
    Full,       // only each layer's input kept; one layer's working set rebuilt at a time
    EveryK      // a checkpoint every `recomputeEvery` layers; segments rebuilt during backward
};

struct ActivationModel {
    enum class Kind {
        Tensors,  // per-tensor count of the actual block, Korthikanti-style (default)
        SimpleSbh // the seeds' k·L·B·S·h·bytes: bytesPerSbhPerLayer = k x bytes (12 x 2 = 24)
    };
    Kind kind = Kind::Tensors;
    double bytesPerSbhPerLayer = 24;
    // Implementation profile: "fused" (flash/fused kernels, Megatron/TE-like) or "eager"
    // (PyTorch eager keeps extra copies). A multiplier the user can calibrate from a measurement.
    double calibration = 1.0;

    bool operator==(const ActivationModel&) const = default;
};

struct OverheadConfig {
    double fixedBytes = 2.5e9;    // CUDA context + NCCL/communication buffers per GPU
    double fragmentation = 0.10;  // allocator fragmentation, a fraction of everything else

    bool operator==(const OverheadConfig&) const = default;
};

// LoRA / QLoRA adapters (plan key `training.lora`; training/lora.h).
struct LoraConfig {
    enum Target : unsigned { Q = 1, K = 2, V = 4, O = 8, Gate = 16, Up = 32, Down = 64 };
    bool enabled = false;
    int rank = 16;
    double alpha = 32;
    unsigned targets = Q | K | V | O | Gate | Up | Down;
    int baseBits = 16; // 16, 8 or 4 (NF4)
    bool doubleQuant = false;

    bool operator==(const LoraConfig&) const = default;
};

// What selective recompute adds to the hardware FLOPs behind `training.hfu`.
enum class HfuConvention {
    Forward, // the forward FLOPs the recompute re-runs (the attention core's 4 b s^2 h per layer)
    Korthikanti // Korthikanti et al. 2022 Table 5: the attention term counted twice, s/(3h)
};

// `training.pp_schedule`: the pipeline schedule, for what a stage keeps in flight.
enum class PpSchedule {
    OneFOneB, // "1f1b" (interleaved when virtual_stages > 1; Narayanan et al. 2021)
    ZeroBubble, // "zb1p": Qi et al. 2024 ZB-H1, backward split into B and W: in flight as 1F1B
    DualPipe // "dualpipe": DeepSeek-AI 2024 sec. 3.2.1, Table 2: 2x parameters, PP + 1 in flight
};

// `training.recompute_ops`: ops recomputed in the backward on top of `recompute` (bit flags).
enum RecomputeOp : unsigned { RecomputeNorm = 1u, RecomputeMlaUp = 2u, RecomputeSwiglu = 4u };
// `training.fp8_activations`: saved activations cached in FP8 (bit flags).
enum Fp8Activation : unsigned {
    Fp8MoeInputs = 1u,
    Fp8SwigluInputs = 2u,
    Fp8AttentionOutput = 4u
};

struct TrainingConfig {
    RecipeChoice recipe;
    OptimizerKind optimizer = OptimizerKind::AdamW;
    int zeroStage = 0;  // 0..3 (FSDP full shard = 3), sharded over the data-parallel group
    int tp = 1, pp = 1, cp = 1, ep = 1;
    bool sequenceParallel = false;
    int virtualStages = 1;  // interleaved 1F1B: model chunks per pipeline rank
    // `training.stage_layers`: transformer layers per pipeline stage, first to last (pp entries
    // summing to the model's layers; Megatron's --decoder-first/last-pipeline-num-layers and
    // --pipeline-model-parallel-layout, torchtitan's *_stage_less_layers). Empty: ceil(L / pp)
    // consecutive layers per stage, the last taking what remains (pipelineStageLayers).
    std::vector<int> stageLayers;
    // `training.mtp_layers`: multi-token-prediction modules trained with the model (DeepSeek-V3
    // sec. 2.2; Megatron --mtp-num-layers, which Megatron-Bridge's DeepSeek-V3 recipe sets to
    // 1). Each is a projection of [norm(h); norm(embedding)] (2h -> h), one transformer block
    // of the model's last kind and the shared LM head and loss again, all on the last pipeline
    // stage, which also keeps its own copy of the shared embedding when pp > 1.
    int mtpLayers = 0;
    int microBatch = 1;
    int gradAccum = 1;
    int seqLen = 4096;
    Recompute recompute = Recompute::Selective;
    int recomputeEvery = 1;  // k for Recompute::EveryK
    bool flashAttention = true;
    bool offloadOptimizer = false;
    bool offloadParams = false;
    // Kernel efficiency behind the step time when `mfuOverride` (the plan set `mfu`): compute
    // = FLOPs / (peak x mfu). Without an override the step is timed from ops and `mfu` only
    // holds the framework's default for the budget solver's "what if" figures.
    double mfu = 0.45;
    bool mfuOverride = false;
    // `training.efficiency_scale`: divides every compute op's time (envelope-cli calibrate fits
    // it to a measured run); 1 = the tables as measured.
    double efficiencyScale = 1.0;
    double trainTokens = 2e12;  // token budget for time/cost to train
    double commOverlap = 0.0;   // fraction of DP/TP communication hidden behind compute
    // The line between the verdicts `fits` and `tight`: a total above this fraction of HBM
    // leaves too little for allocator spikes and NCCL growth to call it a comfortable fit.
    double usableFraction = 0.9;
    ActivationModel activationModel;
    OverheadConfig overhead;
    FrameworkProfile framework;          // `training.framework`, resolved from the presets
    LossKind loss = LossKind::Default;   // `training.loss`; Default = the framework's
    LoraConfig lora;                     // `training.lora`; off unless given
    bool asyncTp = false;                // `training.async_tp`: TP collectives overlap the matmuls
    // `training.overlap_grad_reduce` / `training.overlap_param_gather` (Megatron-LM's
    // --overlap-grad-reduce / --overlap-param-gather; DDP's bucketed all-reduce): below ZeRO-3
    // the gradient reduction hides behind the last micro-batch's backward and the updated
    // weights' all-gather behind the first micro-batch's forward, a bucket at a time. Unset:
    // the framework's dp_overlap decides (docs/formulas-compute.md sec. 4).
    std::optional<bool> overlapGradReduce;
    std::optional<bool> overlapParamGather;
    int hsdpShard = 0;                   // `training.hsdp_shard`: HSDP shard group; 0 = full shard
    HfuConvention hfuConvention = HfuConvention::Forward; // `training.hfu_convention`
    bool compile = false;                // `training.compile`: torch.compile on the model
    PpSchedule ppSchedule = PpSchedule::OneFOneB; // `training.pp_schedule`
    unsigned recomputeOps = 0;           // `training.recompute_ops` (RecomputeOp flags)
    unsigned fp8Activations = 0;         // `training.fp8_activations` (Fp8Activation flags)
    // `training.expandable_segments`: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (the
    // framework's launcher default when the plan gives none; resolved when the plan is read).
    bool expandableSegments = false;
    // `training.optimizer_in_backward` (torchtune optimizer_in_bwd): each parameter is stepped
    // in a post-accumulate-grad hook as its gradient is produced, and the gradient freed; needs
    // grad_accum 1.
    bool optimizerInBackward = false;
    // `training.activation_offload`: the saved activations of the first
    // `activationOffloadLayers` layers of each stage (0 = every layer) go to pinned host memory
    // in the forward and come back in the backward (torchtune enable_activation_offloading,
    // Megatron --cpu-offloading --cpu-offloading-num-layers).
    bool activationOffload = false;
    int activationOffloadLayers = 0;
    // The loss the step runs: the plan's, else the framework's, compiled when torch.compile
    // covers the loss (FrameworkProfile::compileLoss) and the framework's loss is eager.
    LossKind effectiveLoss() const
    {
        if (loss != LossKind::Default)
            return loss;
        if (compile && framework.compileLoss && framework.loss == LossKind::Eager)
            return LossKind::Compiled;
        return framework.loss;
    }
    // Eager PyTorch kernels, unless torch.compile fuses them (training.compile).
    bool eagerKernels() const { return framework.eagerKernels && !compile; }
    std::optional<double> observedStepTimeS;
    std::optional<double> observedTokensPerS;
    // Budget solver (seed 001 ex. 3): any two of budget, deadline, MFU give the third.
    std::optional<double> budgetUsd;
    std::optional<double> deadlineS;

    bool operator==(const TrainingConfig&) const = default;
};

// How the serving KV pool is sized (plan key `serving.engine`; each engine's figures per version
// in presets/engines.json): docs/formulas-serving.md, "Engines' accounting".
enum class ServingEngine {
    Vllm,    // torch total x gpu_memory_utilization - weights - profiled peak - non-torch
    Sglang,  // (torch total - startup) x mem_fraction_static - weights
    Trtllm,  // free_gpu_memory_fraction x (torch total - weights - activation peak - non-torch)
    Generic  // memory x utilization - weights - activation peak - runtime_overhead_bytes
};

// Speculative decoding (plan key `serving.speculative`, issue 27): a draft proposes `tokens`
// tokens per sequence each step and the model verifies them in one forward of tokens + 1
// positions (Leviathan et al. 2023; Chen et al. 2023). docs/formulas-serving.md, "Speculative
// decoding".
enum class SpeculativeKind {
    Mtp,   // the checkpoint's multi-token-prediction module (DeepSeek-V3, GLM-4.5: mtp_layers)
    Eagle, // an EAGLE head: one decoder layer of the model's width over its hidden states
    Draft  // a separate, smaller model with the same tokenizer (`draft_model`)
};
struct ServingSpeculative {
    SpeculativeKind kind = SpeculativeKind::Mtp;
    int tokens = 1;          // k: draft tokens proposed per sequence and step
    // alpha: the chance that each drafted token is accepted, given the ones before it were
    // (Leviathan et al.'s acceptance rate). A step then advances (1 - alpha^(k+1)) / (1 - alpha)
    // tokens; vLLM's logged "draft acceptance rate" is (that - 1) / k.
    double acceptance = 0.7;
    std::optional<ModelChoice> draftModel; // kind Draft only

    bool operator==(const ServingSpeculative&) const = default;
};

// `serving.kv_format`: how the KV cache stores a value (docs/formulas-serving.md sec. 1).
// Auto: the engine's format at serving.kv_bits (8 bits: FP8 in vLLM, SGLang and TensorRT-LLM,
// per-token INT8 in the generic engine; 4 bits: per-token INT4).
enum class KvCacheFormat {
    Auto,
    Bf16,  // 16-bit
    Fp8,   // e4m3 / e5m2 with one scale per layer (vLLM --kv-cache-dtype fp8): 1 B, no per-token scale
    Int8,  // per-token asymmetric (LMDeploy, KIVI): 1 B + an fp16 scale and zero per vector
    Int4,  // the same at 4 bits
    Nvfp4  // e2m1 with an e4m3 scale per 16 values (TensorRT-LLM on Blackwell): 0.5625 B
};
// `serving.weight_format`: how the linear layers' weights are stored. Auto: bf16 at 16 bits,
// else group-quantized (GPTQ / AWQ: an fp16 scale and a zero per serving.quant_group_size).
enum class WeightFormat {
    Auto,
    Bf16,
    Fp8,      // per-tensor or per-channel scale (ModelOpt / compressed-tensors FP8): 1 B
    Fp8Block, // 128 x 128 blocks with an fp32 scale each (DeepSeek-V3, Qwen3-FP8): 1 B + 4 / 16,384
    Int8,     // W8A8 per-channel (SmoothQuant, compressed-tensors): 1 B
    Nvfp4,    // e2m1 with an e4m3 scale per 16 (ModelOpt NVFP4): 0.5625 B
    Mxfp4,    // e2m1 with an e8m0 scale per 32 (OCP MX; gpt-oss's experts): 0.53125 B
    Int4      // W4A16 with an fp16 scale and a 4-bit zero per serving.quant_group_size (AWQ,
              // GPTQ, compressed-tensors pack-quantized: Kimi K2 Thinking's experts)
};

// One pool of a disaggregated deployment (`serving.disaggregation.prefill` / `.decode`):
// `workers` engine instances of tp x dp GPUs each. dp > 1 is data-parallel attention (dp
// ranks of tp GPUs, each with its own batch and KV cache) with the experts spread over all
// of them (ep = tp x dp, the DeepSeek / SGLang large-EP layout); dp = 1 keeps one TP group
// whose experts may be split ep ways inside it.
struct ServingPool {
    int workers = 1;
    int tp = 1;
    int ep = 1;
    int dp = 1;
    int gpus() const { return workers * tp * dp; }
    bool operator==(const ServingPool&) const = default;
};

// `serving.disaggregation` (issue 27): prompts are prefilled on one pool of GPUs and decoded
// on another; each request's KV cache moves between them over the inter-node link.
struct ServingDisaggregation {
    ServingPool prefill;
    ServingPool decode;
    bool operator==(const ServingDisaggregation&) const = default;
};

struct ServingConfig {
    ServingEngine engine = ServingEngine::Vllm;
    // `serving.engine_version` as the plan gives it, and the engine's profile at the nearest
    // modelled version (resolved from the presets when the plan is read; empty for a config
    // built in code, which then takes vLLM 0.19's figures).
    std::string engineVersion;
    EngineProfile engineProfile;
    std::optional<double> memFractionStatic;     // SGLang `--mem-fraction-static`
    std::optional<double> freeGpuMemoryFraction; // TensorRT-LLM `free_gpu_memory_fraction`
    int maxNumSeqs = 1024;        // vLLM max_num_seqs: the sampler warm-up's rows
    int weightBits = 16;          // 16, 8 or 4
    int kvBits = 16;              // 16, 8 or 4
    KvCacheFormat kvFormat = KvCacheFormat::Auto;   // agrees with kvBits (readPlan checks)
    WeightFormat weightFormat = WeightFormat::Auto; // agrees with weightBits
    // `serving.attention_weight_format` / `serving.expert_weight_format`: a module group kept in
    // another format than serving.weight_format, as mixed checkpoints ship them (gpt-oss: routed
    // experts MXFP4, attention bf16; Llama 4 FP8: attention bf16, FFN FP8; Kimi K2 Thinking:
    // routed experts INT4, the rest bf16). Attention: the q, k, v, o projections (MLA's down
    // and up projections, linear attention's). Experts: the routed experts' FFNs. Unset
    // ("same"): serving.weight_format. Embeddings, LM head and norms stay 16-bit either way.
    std::optional<WeightFormat> attentionWeightFormat;
    std::optional<WeightFormat> expertWeightFormat;
    int quantGroupSize = 128;     // per-group scales for 4/8-bit formats (elements per scale)
    int tp = 1;                   // attention tensor parallel (the engine's GPUs without dp attention)
    // `serving.ep`: expert parallel. Without dp attention the experts of one TP group are
    // split ep ways inside it (ep divides tp; vLLM --enable-expert-parallel, SGLang --ep-size);
    // with `serving.dp_attention` an engine is ep GPUs whose attention runs data-parallel in
    // ep / tp ranks of tp GPUs, each with its own sequences and KV cache (SGLang
    // --enable-dp-attention, vLLM --data-parallel-size with --enable-expert-parallel).
    int ep = 1;
    bool dpAttention = false;
    // `serving.redundant_experts`: extra copies of the busiest routed experts spread over the EP
    // ranks to even their load (DeepSeek-V3 sec. 3.4: 32; vLLM --enable-eplb with
    // eplb_config.num_redundant_experts, SGLang --ep-num-redundant-experts). A GPU then holds
    // ceil((E + R) / ep) experts of every MoE layer; each expert pool's layout, both pools of a
    // disaggregated deployment included.
    int redundantExperts = 0;
    std::optional<ServingDisaggregation> disaggregation;
    // Not a plan key: the GPUs of one NVLink domain, filled from the cluster where the plan is
    // estimated (servingOfPlan), so that an engine wider than the domain (wide EP across
    // nodes) prices its all-to-alls over the network. 0: the engine is inside one domain.
    int nvlinkDomainGpus = 0;
    int context = 8192;           // tokens per sequence (prompt + generated)
    int concurrency = 64;         // sequences decoded together
    int blockSize = 16;           // PagedAttention tokens per block
    double gpuMemoryUtilization = 0.9;
    int maxBatchedTokens = 8192;  // prefill chunk that sets the forward activation peak
    int averageLength = 0;        // for contiguous pre-allocation waste; 0 = context / 4
    double runtimeOverheadBytes = 1.5e9;  // CUDA graphs, sampler, allocator slack
    double decodeEfficiency = 0.8;        // achieved fraction of the HBM roofline
    // Latency limits the planner's serving search keeps to (seconds); unset: no limit.
    std::optional<double> maxTtftS;       // time to first token of a `context`-token prompt
    std::optional<double> maxItlS;        // inter-token latency at `concurrency`
    // Serving under load (issue 27): the request mix and rate, and the latency objectives.
    // Without a workload, `context` and `concurrency` describe one static batch (as before).
    std::optional<ServingWorkload> workload;
    std::optional<ServingSlo> slo;
    std::optional<ServingSpeculative> speculative;
    // The engine's scheduler (docs/formulas-serving.md, "The engine's step"); unset: the engine
    // version's default. `serving.mixed_batches`: decodes and prompt tokens in one step (SGLang
    // --enable-mixed-chunk); `serving.chunked_prefill`: a prompt may split over steps (vLLM
    // --enable-chunked-prefill, TensorRT-LLM enable_chunked_prefill); `serving.scheduler_steps`:
    // decode steps per scheduling (vLLM V0 --num-scheduler-steps); `serving.overlap_scheduler`:
    // the next step formed while one runs (SGLang --disable-overlap-schedule, TensorRT-LLM
    // disable_overlap_scheduler, vLLM --async-scheduling).
    std::optional<bool> mixedBatches;
    std::optional<bool> chunkedPrefill;
    std::optional<bool> overlapScheduler;
    int schedulerSteps = 1;

    bool operator==(const ServingConfig&) const = default;
};

enum class RlAlgorithm { Ppo, Grpo, Dpo };
enum class RlPlacement { Disjoint, Colocated };

struct RlConfig {
    RlAlgorithm algorithm = RlAlgorithm::Grpo;
    RlPlacement placement = RlPlacement::Disjoint;
    int trainerGpus = 4;
    int referenceGpus = 1;   // 0 = no reference (KL off)
    int rolloutGpus = 3;
    int criticGpus = 0;      // PPO: defaults to trainerGpus when 0
    int rewardGpus = 0;      // PPO reward model: defaults to referenceGpus when 0
    int prompts = 32;        // prompts per step
    int groupSize = 8;       // completions per prompt
    int promptLen = 512;
    int responseLen = 3584;
    double oldPolicyBytesPerParam = 0;  // 0, 1 or 2: the old-policy snapshot
    bool kl = true;                     // GRPO/PPO KL to the reference
    std::optional<double> rolloutTokensPerS;  // measured; otherwise the decode roofline
    std::optional<double> trainTokensPerS;    // measured trainer rate; otherwise 6 P / MFU
    bool offPolicyPipeline = false;     // one-step-off-policy: rollout overlaps training
    // Mean response length when responses vary (GRPO on reasoning tasks: a long tail up to the
    // cap response_len). Unset: every response is response_len long (the seeds' arithmetic).
    std::optional<double> responseLenMean;
    // The policy recomputes the rollout's log-probs with a forward of its own before the update
    // (verl compute_log_prob, OpenRLHF make_experience; TRL only with num_iterations > 1).
    bool oldLogProbForward = true;
    // Bounded staleness k: generation may run at most k steps' completions ahead of training
    // (AReaL max_head_offpolicyness: rollout paused once (version + k + 1) batches are out;
    // verl fully_async staleness_threshold: at most (1 + k) batches between two weight syncs).
    // A count of versions for AReaL, a fraction of a step for verl (0.1-0.5). With k > 0
    // disjoint pools overlap generation with training. Unset: 1 with off_policy_pipeline,
    // else 0.
    std::optional<double> staleness;
    // Partial (interruptible) rollouts (AReaL interruptible generation, verl fully_async
    // partial_rollout, slime): a step takes the completions that are done and carries the
    // unfinished ones into the next, so the engine runs a full batch instead of waiting for its
    // longest responses. A carried sequence's KV is recomputed under the new weights.
    bool partialRollouts = false;
    // Passes of the update over each step's completions (verl actor.ppo_epochs, OpenRLHF
    // --train.max_epochs, TRL num_iterations): the update's time is that many passes.
    int updateEpochs = 1;
    // Updates per weight sync N (verl fully_async trigger_parameter_sync_step): the step's
    // completions are trained in N updates of 1/N each, every one as soon as its share is
    // generated (streaming), and the new weights reach the engines once per step. On disjoint
    // pools the update overlaps the rest of the rollout; colocated pools take turns anyway.
    int updatesPerSync = 1;

    bool operator==(const RlConfig&) const = default;
};

// rl.staleness's largest value: AReaL's runs use 4-8; beyond 1,000 versions is no bound at all.
inline constexpr int kMaxStaleness = 1000;
// serving.redundant_experts' largest value (DeepSeek-V3 runs 32 and 64).
inline constexpr int kMaxRedundantExperts = 65'536;
// The staleness bound k a plan's RL job runs with (rl.staleness, or 1 with
// off_policy_pipeline, else 0); 0..kMaxStaleness, possibly a fraction of a step.
double rlStaleness(const RlConfig& c);
// How the reports and explain name a staleness bound k > 0: "one step off-policy" (k = 1,
// Noukhovitch et al.'s term) or "staleness k" ("staleness 0.5").
std::string rlStalenessName(double staleness);
// What lets an RL job's pools run ahead of each other, as reports and explain name it:
// "staleness 0.5, partial rollouts, 4 updates per sync"; the bound only when above 0 (with
// "partial rollouts" after it when `partialRollouts`), the updates only when above 1; "" when
// neither.
std::string rlAsyncText(double staleness, bool partialRollouts, int updatesPerSync);
// The serving weights' formats in words: "16-bit weights", "bf16 weights with experts in
// mxfp4", "fp8 weights with attention in bf16" (serving.weight_format, then the module
// groups given their own).
std::string servingWeightFormatText(const ServingConfig& serving);
// training.mtp_layers' largest value (DeepSeek-V3 trains 1; Megatron takes any count).
inline constexpr int kMaxMtpLayers = 16;

// Transformer layers per pipeline stage, first to last, for a model of `layers` layers:
// training.stage_layers when it has pp entries summing to `layers`, else ceil(L / pp)
// consecutive layers per stage with the last taking what remains (so the first stage, which
// also holds the embedding and the most micro-batches in flight, is never the lighter one).
// Always pp entries, each >= 0. Memory and step time read the same layout.
std::vector<int> pipelineStageLayers(const TrainingConfig& c, int layers);
// The first layer of stage `stage` (0..pp; stage pp gives the layers) of that split, without
// building it: what the per-estimate paths use.
int pipelineStageStart(const TrainingConfig& c, int layers, int stage);
// A split as reports show it, runs of equal stages once: 15 stages of 4 and one of 1 ->
// "4 x 15, 1".
std::string stageLayersText(const std::vector<int>& stages);

struct Plan {
    std::string name = "Untitled plan";
    ModelChoice model;
    GpuChoice gpu;
    Cluster cluster;
    TrainingConfig training;
    ServingConfig serving;
    RlConfig rl;

    bool operator==(const Plan&) const = default;
};

// The serving engine's parallel layout: attention TP, expert parallel, attention DP ranks and
// the GPUs of one engine instance (tp x dp).
struct ServingParallel {
    int tp = 1, ep = 1, dp = 1;
    int gpus() const { return tp * dp; }
};
ServingParallel servingParallel(const ServingConfig& c);
// The engine of one disaggregated pool: the plan's serving config with the pool's layout.
ServingConfig servingPoolConfig(const ServingConfig& c, const ServingPool& pool);

// Whether any of the serving engine's expert pools spreads experts over EP ranks (serving.ep, or
// a disaggregated pool's ep, above 1): what serving.redundant_experts needs.
bool servingHasExpertParallel(const ServingConfig& c);

// The plan's serving config with its cluster's NVLink domain (nvlinkDomainGpus) filled in:
// what every estimate of the plan's engine uses.
ServingConfig servingOfPlan(const Plan& plan);

std::string_view recomputeId(Recompute r);  // "none" "selective" "full" "every-k"
bool parseRecompute(std::string_view id, Recompute& out);
std::string_view servingEngineId(ServingEngine e); // "vllm" "sglang" "trtllm" "generic"
bool parseServingEngine(std::string_view id, ServingEngine& out);
std::string_view kvCacheFormatId(KvCacheFormat f); // "auto" "bf16" "fp8" "int8" "int4" "nvfp4"
bool parseKvCacheFormat(std::string_view id, KvCacheFormat& out);
std::string_view weightFormatId(WeightFormat f); // "auto" "bf16" "fp8" "fp8-block" "int8" "nvfp4" "mxfp4" "int4"
bool parseWeightFormat(std::string_view id, WeightFormat& out);
// The bits a format stores a value in (Auto: 0, any).
int kvCacheFormatBits(KvCacheFormat f);
int weightFormatBits(WeightFormat f);
// The KV format the engine uses: the plan's, or under Auto the engine's at serving.kv_bits.
KvCacheFormat servingKvFormat(const ServingConfig& c);
std::string_view speculativeKindId(SpeculativeKind k); // "mtp" "eagle" "draft"
bool parseSpeculativeKind(std::string_view id, SpeculativeKind& out);
std::string_view rlAlgorithmId(RlAlgorithm a);  // "ppo" "grpo" "dpo"
bool parseRlAlgorithm(std::string_view id, RlAlgorithm& out);
std::string_view rlPlacementId(RlPlacement p);  // "disjoint" "colocated"
bool parseRlPlacement(std::string_view id, RlPlacement& out);

}  // namespace envelope
