// Serving budget: KV cache per token, quantized weights, the KV budget as serving engines compute
// it, PagedAttention capacity, contiguous pre-allocation waste, decode/prefill rooflines.
//
// Sources: Kwon et al. 2023 (PagedAttention / vLLM); DeepSeek-V2/V3 reports (MLA); seeds 000, 002.
// Every formula and convention: docs/formulas-serving.md.
#pragma once

#include <optional>

#include "base/expected.h"
#include "ops/ops.h"
#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

// KV-cache bytes per token for the whole model at `kvBits` (16, 8 or 4; quantized formats add
// their scale overhead). MHA/GQA/MQA: 2 x layers x kv_heads x head_dim x bytes; MLA:
// layers x (kv_lora_rank + qk_rope_head_dim) x bytes.
// Quantized KV (bits < 16) stores, per cached vector (one head's K or V, or one MLA latent) and
// token, an fp16 scale and an fp16 zero point (4 B): LMDeploy's online int8/int4 KV cache
// (per-head, per-token asymmetric), KIVI (Liu et al. 2024).
double kvBytesPerToken(const ModelArch& arch, int kvBits);

// What a KV format stores (docs/formulas-serving.md sec. 1): bytes per cached value, and per
// cached vector (one head's K or V, or one MLA latent, of one token) the scales it adds.
// kv_bits alone reads as the per-token formats (16: bf16, 8: INT8, 4: INT4, each with an fp16
// scale and zero per vector); the plan's engine may cache otherwise (servingKvFormat: vLLM's
// 8-bit cache is FP8 with one scale per layer, 163,840 B a token for Llama-3-70B, not 168,960).
struct KvStorage {
    double bytesPerValue = 2;
    double bytesPerVector = 0;
};
KvStorage kvStorage(KvCacheFormat format);
// DeepSeek Sparse Attention's indexer keys per token and layer: index_head_dim FP8 values and an
// fp32 scale per 128 (0 for dense MLA). DeepSeek-V3.2: 128 + 4 = 132 B.
double indexerKeyBytes(const MlaConfig& mla);
KvCacheFormat kvFormatOfBits(int kvBits);
double kvBytesPerToken(const ModelArch& arch, KvCacheFormat format);
double kvBytesForTokens(const ModelArch& arch, KvCacheFormat format, double tokens);
double kvBytesPerTokenPerGpu(const ModelArch& arch, KvCacheFormat format, int tp);

// The fixed state linear-attention layers (Gated DeltaNet: Qwen3-Next, Qwen3.5) keep per
// sequence on one GPU of a `tp` group, as vLLM sizes it
// (MambaStateShapeCalculator.gated_delta_net_state_shape): per layer the conv state
// (2 key_heads d_k + value_heads d_v) / tp x (kernel - 1) in bf16 and the recurrent state
// value_heads / tp x d_v x d_k, in bf16 or, with `float32Recurrent` (the model's
// mamba_ssm_dtype, or SGLang's --mamba-ssm-dtype default), in fp32
// (MambaStateDtypeCalculator.gated_delta_net_state_dtype). Qwen3-Next at tp 1 in bf16:
// 36 x 548,864 x 2 B = 39.5 MB.
double linearStateBytesPerSequence(const ModelArch& arch, int tp, bool float32Recurrent = false);

// Whether the engine keeps `arch`'s recurrent state in fp32: the model says so (its config's
// mamba_ssm_dtype) or the engine does whatever the model says.
bool float32RecurrentState(const ModelArch& arch, const EngineProfile& engine);

// Bytes of one linear-layer weight in the plan's format: serving.weight_format, or under Auto
// quantizedBytesPerWeight(weight_bits, quant_group_size).
double servingWeightBytes(const ServingConfig& config);
// Bytes of one weight stored in `format`: bf16 2; fp8 / int8 1; fp8-block 1 + 4 / 128^2;
// nvfp4 0.5 + 1/16; mxfp4 0.5 + 1/32; int4 and Auto quantizedBytesPerWeight(bits, groupSize)
// (int4 at 4 bits, Auto at `weightBits`).
double weightFormatBytes(WeightFormat format, int weightBits, int groupSize);
// The linear layers' bytes per weight by module group (serving.weight_format, and the
// attention and routed-expert formats where the plan gives them their own).
struct ServingFormatBytes {
    double linear = 2, attention = 2, experts = 2;
};
ServingFormatBytes servingFormatBytes(const ServingConfig& config);

// The engine's layout for the op lists (ops/ops.h): TP, EP and data-parallel attention, each
// module group's GEMM dtype in its stored format on this GPU (4-bit floats: NVFP4 where the
// kernel tables have it, else int4 weight-only; 8 bits: FP8 where the GPU has it, else int8
// weight-only), and the KV cache's bytes per element.
InferenceLayout servingInferenceLayout(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu);

// Tokens whose KV a sequence of `tokens` tokens keeps: min(tokens, sliding_window) when the
// architecture uses sliding-window attention (every layer, as Mistral v0.1), else `tokens`.
double kvTokensKept(const ModelArch& arch, double tokens);

// KV bytes of one sequence of `tokens` tokens, whole model: kvBytesPerToken x kvTokensKept.
double kvBytesForTokens(const ModelArch& arch, int kvBits, double tokens);

// KV heads one GPU of a tensor-parallel group of `tp` holds: max(1, kv_heads / tp), the heads
// replicated when tp > kv_heads (vLLM ModelConfig.get_num_kv_heads). MLA caches one latent per
// token that every rank keeps whole, so it reports 1 and the per-GPU figure is not divided.
int kvHeadsPerGpu(const ModelArch& arch, int tp);

// KV bytes per token on one GPU of a `tp` group (kvBytesPerToken x kvHeadsPerGpu / kv_heads).
double kvBytesPerTokenPerGpu(const ModelArch& arch, int kvBits, int tp);

// Bytes per quantized weight at `weightBits` with one fp16 scale and one `weightBits` zero
// point per `groupSize` weights (GPTQ/AWQ checkpoint layout; groupSize <= 0 = per channel,
// negligible). 16 bits = 2 B, no scales.
double quantizedBytesPerWeight(int weightBits, int groupSize);

// The model's weights on one serving GPU. Linear layers are quantized; embeddings, LM head,
// learned positions and norms stay 16-bit (as GPTQ/AWQ leave them). TP splits the matrices
// (and the vocab-parallel embedding/head); norms and positions are replicated.
struct ServingWeights {
    double quantizedParams = 0; // linear-layer weights, at weightBits + scales
    double expertParams = 0;    // of them, the routed experts (EP spreads these)
    double embeddingParams = 0; // embedding + LM head, 16-bit, split by tp
    double attentionParams = 0; // of the linear weights, the attention projections
    double replicatedParams = 0; // norms + learned positions, 16-bit, on every rank
    double bytesPerQuantized = 2; // serving.weight_format: the linears outside the groups below
    double bytesPerAttention = 2; // serving.attention_weight_format (or weight_format)
    double bytesPerExpert = 2;    // serving.expert_weight_format (or weight_format)
    double totalBytes = 0; // whole model
    double perGpuBytes = 0; // one GPU of the tp group
};
// `expertShare`: the share of the routed experts one GPU holds (0: 1 / tp, the experts split
// with the other linears). Data-parallel attention holds ceil(E / ep) of E experts whole.
ServingWeights servingWeights(const ParamCounts& counts, int layers, int weightBits, int groupSize,
    int tp, double expertShare = 0);
// The same in the plan's formats (servingFormatBytes).
ServingWeights servingWeights(
    const ParamCounts& counts, int layers, const ServingConfig& config, int tp, double expertShare = 0);
// The routed experts' share on the fullest GPU of the engine: 1 / tp inside a TP group (EP there
// moves whole experts between the group's ranks, the bytes stay), ceil(E / ep) / E under
// data-parallel attention, ceil((E + R) / ep) / E with R = serving.redundant_experts.
double servingExpertShare(const ModelArch& arch, const ServingConfig& config);

// vLLM 0.19 (V1 engine) sizes its KV pool in Worker.determine_available_memory, before CUDA
// graph capture (the graph pool is allocated afterwards and logged separately):
//   KV = torch total_memory x gpu_memory_utilization - weights - profiled activation peak
//        - non-torch memory
// docs/formulas-serving.md, "vLLM's accounting".
inline constexpr double kVllmModelDtypeBytes = 2.0; // bf16/fp16 activations and logits
// vLLM 0.19's non-torch memory for a config built in code; a plan's come from
// presets/engines.json (the same figures).
inline constexpr double kVllmNonTorchBytes = 0.25 * 1073741824.0;   // TP 1 (startup logs)
inline constexpr double kVllmNonTorchTpBytes = 2.07 * 1073741824.0; // TP >= 2: NCCL buffers

// SGLang's default mem_fraction_static for this config's TP size, device and engine version
// (presets/engines.json: by TP size in 0.4, from the memory reserved by device class in 0.5).
double sglangMemFractionStatic(const ServingConfig& config, const Gpu& gpu);

// The memory fraction the plan's engine applies: vLLM and generic gpu_memory_utilization, SGLang
// mem_fraction_static (the plan's, else sglangMemFractionStatic), TensorRT-LLM
// free_gpu_memory_fraction (the plan's, else the version's default, else 0.9).
double servingMemoryFraction(const ServingConfig& config, const Gpu& gpu);
// Its plan key: "gpu_memory_utilization", "mem_fraction_static" or "free_gpu_memory_fraction".
std::string_view servingMemoryFractionKey(ServingEngine engine);

struct VllmProfile {
    double torchTotalBytes = 0;
    double forwardPeakBytes = 0;  // profile_run forward at max_num_batched_tokens
    double samplerPeakBytes = 0;  // _dummy_sampler_run over max_num_seqs rows
    double activationPeakBytes = 0; // the larger of the two
    double nonTorchBytes = 0;
};
VllmProfile vllmProfile(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu);

// Transient activation peak of one inference forward over `tokens` tokens (vLLM profiles this
// at max_num_batched_tokens), on one GPU of a `tp` group: the largest working set of one layer
// (residual, norm output and the widest of attention or FFN intermediates, bf16) plus the fp32
// logits of `sequences` sampled positions.
double inferenceActivationPeakBytes(const ModelArch& arch, double tokens, double sequences, int tp);

// Forward FLOPs of a `tokens`-token prompt (prefill): 2 x active params x tokens plus causal
// attention (QK^T and AV over the kept key window).
double prefillFlops(const ModelArch& arch, const ParamCounts& counts, double tokens);

// Forward FLOPs of one decoded token whose sequence holds `contextTokens` tokens.
double decodeFlopsPerToken(const ModelArch& arch, const ParamCounts& counts, double contextTokens);

// One decode step of `batch` sequences of `contextTokens` tokens on one GPU of a `tp` group.
struct DecodeStep {
    double weightReadBytes = 0; // MoE: only the experts the batch touches
    double kvReadBytes = 0;
    double memoryS = 0; // bytes / (HBM x efficiency)
    double computeS = 0; // FLOPs / (tp x bf16 peak)
    double stepS = 0; // max of the two
};
DecodeStep decodeStep(const ModelArch& arch, const ParamCounts& counts, const ServingConfig& config,
    const Gpu& gpu, double batch, double contextTokens);

// One engine decode step of `batch` sequences at `contextTokens` from its ops (issue 22;
// docs/formulas-serving.md, "Step time from ops"), seconds: decodeStepTiming's stepS. Under
// serving.speculative a step advances decodeTokensPerStep(config) tokens, so the time per
// generated token (`itl_s`) is decodeTokenTime.
double decodeStepTime(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    double batch, double contextTokens);
double decodeTokenTime(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    double batch, double contextTokens);

// Prefill of `sequences` prompts of `tokens` tokens each on one GPU of the engine's tp group,
// from its ops (the same ops TTFT is timed from), seconds, and at least eagerHostFloorS: the
// step is launched outside CUDA graphs. The RL rollout's prompt phase.
double prefillTime(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    double sequences, double tokens);
// The same forward's GPU time alone, without the host floor (what a step sums over its prompts).
double prefillOpsTime(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    double sequences, double tokens);

// The host's launch time of one eagerly launched step (a prompt step), the floor under its GPU
// time: layers (the draft's too) x the engine's eager_host_s_per_layer (presets/engines.json;
// 0.3 ms, from eager-against-graph decode measurements). 0 for an engine that replays graphs.
double eagerHostFloorS(const ModelArch& arch, const ServingConfig& config);

// A request's time outside the engine's steps (the engine's request_overhead_s: API server,
// tokenizer, hand-off to the scheduler, its first token's way back), seconds: on every TTFT and
// end-to-end latency once. 0 where the engine has no measurement of it.
double requestOverheadS(const ServingConfig& config);

// Speculative decoding (serving.speculative; docs/formulas-serving.md, "Speculative decoding").
// Tokens one step advances a sequence when each of k drafted tokens is accepted with chance
// alpha given the ones before it (Leviathan et al. 2023, eq. 1): (1 - alpha^(k+1)) / (1 - alpha),
// k + 1 at alpha = 1. 1 without speculation.
double speculativeTokensPerStep(int tokens, double acceptance);
double decodeTokensPerStep(const ServingConfig& config);

// The draft's shape for one pass: "mtp" one layer of the model's own kind (a MoE layer for a MoE
// model, as DeepSeek-V3's MTP module), "eagle" one dense decoder layer of the model's width
// (Li et al. 2024), "draft" the draft model. `layers` of it keep weights and KV: the model's
// mtp_layers for MTP (vLLM cycles its passes through them), 1 for EAGLE.
struct SpeculativeDraft {
    ModelArch arch;         // one pass's layers (the draft model: all of them)
    int layers = 0;         // layers with weights and KV
    bool fuseHidden = false; // the 2h -> h projection of MTP / EAGLE
    bool sharesEmbedding = false; // MTP and EAGLE use the model's embedding and LM head
};
SpeculativeDraft speculativeDraft(const ModelArch& target, const ServingSpeculative& spec);

// The draft's weights on one GPU of the engine's tp group (MTP / EAGLE: its layers and the fc
// projection at the serving weight format; a draft model: servingWeights of it) and its KV
// bytes per token per GPU.
double speculativeDraftWeightsBytesPerGpu(const SpeculativeDraft& draft, const ServingConfig& config);
double speculativeDraftKvBytesPerTokenPerGpu(const SpeculativeDraft& draft, const ServingConfig& config);

// One engine decode step of `batch` sequences at `contextTokens`, from its ops: without
// speculation the plain step; with it the verify forward over k + 1 tokens per sequence plus
// k draft passes. stepS advances every sequence tokensPerStep tokens on average.
struct DecodeStepTiming {
    double plainS = 0, verifyS = 0, draftS = 0, stepS = 0, tokensPerStep = 1;
};
DecodeStepTiming decodeStepTiming(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, double batch, double contextTokens);

// Pure; `counts` must be countParameters(arch). `timed` false skips the op timing (ITL, TTFT,
// decode rate stay 0) for callers that need only the memory figures (the RL engine's pool).
ServingEstimate estimateServing(const ModelArch& arch, const ParamCounts& counts,
    const ServingConfig& config, const Gpu& gpu, Explainer* ex = nullptr, bool timed = true);

} // namespace envelope
