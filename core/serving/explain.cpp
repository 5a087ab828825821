// Explanations of the serving figures: each formula with the plan's values substituted and its
// source. Only runs when an Explainer is given (never on the fast path).
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "model/attention.h"
#include "kernels/timing.h"
#include "serving/detail.h"
#include "base/units.h"

namespace envelope {
namespace {

constexpr const char* kVllm
    = "vLLM (Kwon et al. 2023, PagedAttention) Worker.determine_num_available_blocks: "
      "total x gpu_memory_utilization - peak (weights + profiled activations + non-torch)";
constexpr const char* kPaged
    = "Kwon et al. 2023 sec. 4.1-4.2 (KV blocks of block_size tokens); seed 002 "
      "pagedattention_capacity (pages = floor(bytes / bytes_per_page), pages_per_seq = "
      "ceil(len / page))";
constexpr const char* kRoofline
    = "memory roofline of decoding (Williams et al. 2009 roofline; Pope et al. 2022 "
      "'Efficiently Scaling Transformer Inference' sec. 2): each step reads the weights once and "
      "every sequence's KV";

std::string num(double x)
{
    return fmt::format("{:.4g}", x);
}

std::string kvFormula(const ModelArch& arch, const ServingConfig& config, double value)
{
    const KvCacheFormat format = servingKvFormat(config);
    const KvStorage kv = kvStorage(format);
    const double bytes = kv.bytesPerValue;
    const bool scaled = kv.bytesPerVector > 0;
    const std::string scale
        = scaled ? fmt::format(" + {} B scale/zero", num(kv.bytesPerVector)) : std::string();
    const std::string name = fmt::format(" [{}{}]", kvCacheFormatId(format),
        format == KvCacheFormat::Fp8 ? ": one scale per layer, none per token"
            : format == KvCacheFormat::Nvfp4 ? ": an e4m3 scale per 16 values"
            : scaled ? ": an fp16 scale and zero per vector and token"
                     : "");
    if (arch.mla) {
        // DeepSeek Sparse Attention adds the indexer's own FP8 keys to every layer's latent.
        const bool dsa = arch.mla->sparse();
        return fmt::format("MLA{}: L x ((kv_lora_rank + qk_rope_head_dim) x kv_bytes{}{}) = {} x "
                           "(({} + {}) x {}{}{}) = {}{}",
            dsa ? " + DSA indexer" : "", scaled ? " + scale" : "",
            dsa ? " + index_head_dim FP8 + an fp32 scale per 128" : "", cacheLayers(arch),
            arch.mla->kvLoraRank, arch.mla->qkRopeHeadDim, num(bytes), scale,
            dsa ? " + " + num(indexerKeyBytes(*arch.mla)) : std::string(),
            servingBytesText(value), name);
    }
    const int kvHeads = arch.kvHeadsOrDefault();
    const int headDim = arch.headDimOrDefault();
    const char* kind = kvHeads == arch.heads ? "MHA" : (kvHeads == 1 ? "MQA" : "GQA");
    return fmt::format("{}: 2 (K, V) x L x kv_heads x (head_dim x kv_bytes{}) = 2 x {} x {} x ({} "
                       "x {}{}) = {}{}",
        kind, scaled ? " + scale" : "", cacheLayers(arch), kvHeads, headDim, num(bytes), scale,
        servingBytesText(value), name);
}

} // namespace

std::string servingBytesText(double bytes)
{
    const double a = std::fabs(bytes);
    if (a != 0 && a < 1e6)
        return fmt::format("{:.1f} KB ({} B)", bytes / kKB, num(bytes));
    if (a != 0 && a < 1e8)
        return fmt::format("{:.2f} MB", bytes / kMB);
    return formatBytes(bytes, ByteUnits::GB, 2);
}

void explainServing(const ModelArch& arch, const ParamCounts& counts, const ServingConfig& config,
    const Gpu& gpu, const ServingWeights& w, const ServingEstimate& r, Explainer& ex)
{
    const int tp = config.tp < 1 ? 1 : config.tp;
    ex.add("serving.kv_bytes_per_token", kvFormula(arch, config, r.kvBytesPerToken),
        r.kvBytesPerToken, "bytes",
        "seed 000 (2 x L x d x bytes, GQA divides by heads / kv_heads), seed 002 "
        "kv_cache_size_gb; DeepSeek-V2 sec. 2.1.2 (MLA caches c_KV and k^R); quantized KV: "
        "LMDeploy int8/int4 KV (per-head per-token scale + zero), KIVI (Liu et al. 2024)");
    if (!arch.attentionPattern.empty()) {
        const int full = countLayers(arch, LayerAttention::Full);
        const int sliding = countLayers(arch, LayerAttention::Sliding);
        const int chunked = countLayers(arch, LayerAttention::Chunked);
        const double kept = kvTokensKept(arch, config.context);
        ex.add("serving.kv_tokens_kept",
            fmt::format("per-layer pattern, mean over the {} KV layers: ({} full x {} + {} "
                        "sliding x min({}, {}) + {} chunked x min({}, {})) / {} = {}",
                cacheLayers(arch), full, config.context, sliding, config.context,
                arch.slidingWindow, chunked, config.context, arch.attentionChunk,
                cacheLayers(arch), num(kept)),
            kept, "tokens",
            "Gemma 2/3 and gpt-oss local/global layers, Llama 4 chunked attention (config.json "
            "layer_types); vLLM's hybrid KV cache manager frees blocks outside a layer's window");
    } else if (arch.slidingWindow > 0)
        ex.add("serving.kv_tokens_kept",
            fmt::format("sliding window: min(context, window) = min({}, {}) = {}", config.context,
                arch.slidingWindow, num(kvTokensKept(arch, config.context))),
            kvTokensKept(arch, config.context), "tokens",
            "Mistral 7B (Jiang et al. 2023) sec. 2: rolling buffer cache of W tokens");
    // A speculative draft's layers keep their KV in the same pool, and its weights load beside.
    const double draftKv = r.speculative ? r.speculative->draftKvBytesPerTokenPerGpu : 0.0;
    const double draftWeights = r.speculative ? r.speculative->draftWeightsBytesPerGpu : 0.0;
    const std::string plusDraftKv = r.speculative
        ? fmt::format(" + the {} draft's {} = {}", r.speculative->kind, servingBytesText(draftKv),
              servingBytesText(r.kvBytesPerTokenPerGpu))
        : std::string();
    ex.add("serving.kv_bytes_per_token_per_gpu",
        arch.mla ? fmt::format("MLA latent kept whole on every TP rank = {}{}",
            servingBytesText(r.kvBytesPerTokenPerGpu - draftKv), plusDraftKv)
                 : fmt::format("KV/token x kv_heads_per_gpu / kv_heads, kv_heads_per_gpu = max(1, "
                               "kv_heads / tp) = {} (tp {}) -> {}{}",
                     r.kvHeadsPerGpu, tp, servingBytesText(r.kvBytesPerTokenPerGpu - draftKv),
                     plusDraftKv),
        r.kvBytesPerTokenPerGpu, "bytes",
        "vLLM ModelConfig.get_num_kv_heads (KV heads replicated when tp > kv_heads)");

    // Under data-parallel attention each GPU holds ceil(E / ep) whole routed experts rather
    // than 1 / tp of every one.
    const double expertShare = servingExpertShare(arch, config);
    const bool expertsSpread = w.expertParams > 0 && std::abs(expertShare * tp - 1) > 1e-12;
    const auto formatText = [&](std::optional<WeightFormat> group) {
        const WeightFormat f = group.value_or(config.weightFormat);
        if (f == WeightFormat::Auto)
            return config.weightBits < 16 && config.quantGroupSize > 0
                ? fmt::format("{}-bit, fp16 scale + {}-bit zero per {} weights", config.weightBits,
                      config.weightBits, config.quantGroupSize)
                : fmt::format("{}-bit", config.weightBits);
        if (f == WeightFormat::Int4)
            return fmt::format("int4, fp16 scale + 4-bit zero per {} weights", config.quantGroupSize);
        return std::string(weightFormatId(f));
    };
    // The linear weights by module group: the attention projections and the routed experts
    // in their own formats where the plan gives them one.
    const bool ownAttention = config.attentionWeightFormat && w.attentionParams > 0;
    const bool ownExperts = config.expertWeightFormat && w.expertParams > 0;
    const double restParams = w.quantizedParams - (ownAttention ? w.attentionParams : 0)
        - (expertsSpread || ownExperts ? w.expertParams : 0);
    const bool bracketed = ownAttention || ownExperts || expertsSpread;
    std::string linear = fmt::format("{}linear {} x {} B/param [{}]", bracketed ? "(" : "",
        num(restParams), num(w.bytesPerQuantized), formatText(std::nullopt));
    if (ownAttention)
        linear += fmt::format(" + attention {} x {} B [{}]", num(w.attentionParams),
            num(w.bytesPerAttention), formatText(config.attentionWeightFormat));
    if (ownExperts && !expertsSpread)
        linear += fmt::format(" + routed experts {} x {} B [{}]", num(w.expertParams),
            num(w.bytesPerExpert), formatText(config.expertWeightFormat));
    linear += fmt::format("{} / tp {}", bracketed ? ")" : "", tp);
    if (expertsSpread)
        linear += fmt::format(" + routed experts {} x {} B{} x {} ({} of E on a GPU)",
            num(w.expertParams), num(w.bytesPerExpert),
            ownExperts ? fmt::format(" [{}]", formatText(config.expertWeightFormat)) : std::string(),
            num(expertShare),
            config.redundantExperts > 0 ? fmt::format("ceil((E + {} redundant) / ep)", config.redundantExperts)
                                        : std::string("ceil(E / ep)"));
    ex.add("serving.weights_bytes_per_gpu",
        fmt::format("{} + embedding/head {} x 2 B / tp {} + norms/positions {} x 2 B = {}{}",
            linear, num(w.embeddingParams), tp,
            num(w.replicatedParams), servingBytesText(r.weightsBytesPerGpu - draftWeights),
            r.speculative ? fmt::format(" + the {} draft's {} = {}", r.speculative->kind,
                                servingBytesText(draftWeights), servingBytesText(r.weightsBytesPerGpu))
                          : std::string()),
        r.weightsBytesPerGpu, "bytes",
        "GPTQ (Frantar et al. 2023) / AWQ (Lin et al. 2024) checkpoint layout: per-group fp16 "
        "scales and packed zeros, embeddings and LM head left in 16 bit; FP8 / NVFP4 / MXFP4 "
        "scales as docs/formulas-serving.md sec. 2 gives them; Megatron TP splits matrices; "
        "data-parallel attention holds whole experts (SGLang --enable-dp-attention)");
    const EngineProfile& engine = config.engineProfile;
    const std::string engineSource = engine.source.empty()
        ? std::string("presets/engines.json")
        : fmt::format("{} {} (presets/engines.json): {}", engine.name, engine.version, engine.source);
    if (config.engine == ServingEngine::Sglang) {
        const double m0 = r.torchTotalBytes - r.startupBytes;
        ex.add("serving.memory_fraction",
            config.memFractionStatic
                ? fmt::format("mem_fraction_static = {} (plan)", num(r.memoryFraction))
                : (engine.memFractionByTp.empty()
                        ? fmt::format("mem_fraction_static = round((memory - reserved) / memory, 3) "
                                      "= {} ({} {}: reserved by device class and tp = {}{})",
                              num(r.memoryFraction), engine.name, engine.version, config.tp,
                              config.speculative ? ", + the speculative reserve" : "")
                        : fmt::format("mem_fraction_static = {} ({} {}: by tp = {})",
                              num(r.memoryFraction), engine.name, engine.version, config.tp)),
            r.memoryFraction, "fraction", engineSource);
        ex.add("serving.activation_peak_bytes",
            fmt::format("forward of max_batched_tokens {}: {}, within SGLang's reserve for "
                        "activations and CUDA graphs (torch total - startup) x (1 - "
                        "mem_fraction_static) = ({} - {}) x (1 - {}) = {}",
                config.maxBatchedTokens, servingBytesText(r.activationPeakBytes),
                servingBytesText(r.torchTotalBytes), servingBytesText(r.startupBytes),
                num(r.memoryFraction), servingBytesText(m0 * (1 - r.memoryFraction))),
            r.activationPeakBytes, "bytes",
            "one layer's intermediates at a time (docs/formulas-serving.md); the reserve is "
            "SGLang's, left unallocated at startup");
        ex.add("serving.overhead_bytes",
            fmt::format("held before the weights load (CUDA context, distributed init): {}",
                servingBytesText(r.overheadBytes)),
            r.overheadBytes, "bytes", engineSource);
        ex.add("serving.kv_budget_bytes",
            fmt::format("(torch total - startup) x mem_fraction_static - weights = {} x {} - {} = "
                        "{}{}",
                servingBytesText(m0), num(r.memoryFraction), servingBytesText(r.weightsBytesPerGpu),
                servingBytesText(r.kvBudgetBytes),
                r.fitsWeights ? "" : " (nothing left: does not fit)"),
            r.kvBudgetBytes, "bytes",
            "SGLang ModelRunner.profile_max_num_token: rest_memory = available after the weights - "
            "total x (1 - mem_fraction_static)");
    } else if (config.engine == ServingEngine::Trtllm) {
        ex.add("serving.activation_peak_bytes",
            fmt::format("profiling forward of max_batched_tokens {}: {}", config.maxBatchedTokens,
                servingBytesText(r.activationPeakBytes)),
            r.activationPeakBytes, "bytes", "one layer's intermediates at a time (docs/formulas-serving.md)");
        ex.add("serving.overhead_bytes",
            fmt::format("runtime_overhead_bytes = {}", servingBytesText(r.overheadBytes)),
            r.overheadBytes, "bytes", "plan: the runtime's non-torch memory (no engine figure yet)");
        ex.add("serving.kv_budget_bytes",
            fmt::format("free_gpu_memory_fraction x (torch total - weights - activations - "
                        "overhead) = {} x ({} - {} - {} - {}) = {}{}",
                num(r.memoryFraction), servingBytesText(r.torchTotalBytes),
                servingBytesText(r.weightsBytesPerGpu), servingBytesText(r.activationPeakBytes),
                servingBytesText(r.overheadBytes), servingBytesText(r.kvBudgetBytes),
                r.fitsWeights ? "" : " (nothing left: does not fit)"),
            r.kvBudgetBytes, "bytes", engineSource);
    } else if (config.engine == ServingEngine::Vllm) {
        ex.add("serving.activation_peak_bytes",
            fmt::format("max(forward of max_num_batched_tokens {} x (2 h + MLP working set / tp) "
                        "x 2 B = {}, sampler warm-up max_num_seqs {} x vocab {} x (2 + 4 + 4 + 4) "
                        "B + hidden states = {}) = {}",
                config.maxBatchedTokens, servingBytesText(r.forwardPeakBytes), config.maxNumSeqs,
                arch.vocab, servingBytesText(r.samplerPeakBytes),
                servingBytesText(r.activationPeakBytes)),
            r.activationPeakBytes, "bytes",
            "vLLM 0.19 gpu_model_runner.profile_run: _dummy_run(max_num_tokens) then "
            "_dummy_sampler_run (logits, fp32 logits, softmax probs, exponential noise over the "
            "full vocabulary, not divided by TP); fused MoE intermediate caches");
        ex.add("serving.overhead_bytes",
            fmt::format("non-torch memory at tp {}: {}", config.tp, servingBytesText(r.overheadBytes)),
            r.overheadBytes, "bytes",
            "vLLM 0.19 startup logs on H100 (llm-d-planner accuracy/results/v0.19.0): 0.24-0.25 GiB "
            "at TP 1 (CUDA context growth), 2.07-2.10 GiB at TP >= 2 (NCCL and custom all-reduce "
            "buffers)");
        ex.add("serving.kv_budget_bytes",
            fmt::format("torch total x gpu_memory_utilization - weights - activation peak - "
                        "non-torch = {} x {} - {} - {} - {} = {}{}",
                servingBytesText(r.torchTotalBytes), num(config.gpuMemoryUtilization),
                servingBytesText(r.weightsBytesPerGpu), servingBytesText(r.activationPeakBytes),
                servingBytesText(r.overheadBytes), servingBytesText(r.kvBudgetBytes),
                r.fitsWeights ? "" : " (nothing left: does not fit)"),
            r.kvBudgetBytes, "bytes",
            "vLLM 0.19 V1 Worker.determine_available_memory: requested memory (total_memory x "
            "utilization) minus the profiled non-KV memory; the KV pool is sized before CUDA graph "
            "capture, whose pool comes on top ('Available KV cache memory' in the startup log)");
    } else {
        ex.add("serving.activation_peak_bytes",
            fmt::format("max_batched_tokens {} x (2 h + max(attention, FFN working set) / tp) x 2 B + "
                        "fp32 logits of min(tokens, concurrency) x vocab / tp = {}",
                config.maxBatchedTokens, servingBytesText(r.activationPeakBytes)),
            r.activationPeakBytes, "bytes",
            "vLLM profile_run: one forward at max_num_batched_tokens; inference keeps one layer's "
            "intermediates at a time (docs/formulas-serving.md)");
        ex.add("serving.overhead_bytes",
            fmt::format("runtime_overhead_bytes = {}", servingBytesText(r.overheadBytes)),
            r.overheadBytes, "bytes", "plan: CUDA graphs, sampler, allocator slack");
        ex.add("serving.kv_budget_bytes",
            fmt::format("memory x utilization - weights - activations - overhead = {} x {} - {} - {} "
                        "- {} = {}{}",
                servingBytesText(gpu.memoryBytes), num(config.gpuMemoryUtilization),
                servingBytesText(r.weightsBytesPerGpu), servingBytesText(r.activationPeakBytes),
                servingBytesText(r.overheadBytes), servingBytesText(r.kvBudgetBytes),
                r.fitsWeights ? "" : " (nothing left: does not fit)"),
            r.kvBudgetBytes, "bytes", kVllm);
    }
    ex.add("serving.blocks",
        fmt::format("floor(budget / (block_size x KV/token/GPU)) = floor({} / ({} x {})) = {}",
            servingBytesText(r.kvBudgetBytes), config.blockSize,
            servingBytesText(r.kvBytesPerTokenPerGpu), num(r.blocks)),
        r.blocks, "blocks", kPaged);
    ex.add("serving.max_tokens",
        fmt::format("blocks x block_size = {} x {} = {}", num(r.blocks), config.blockSize,
            num(r.maxTokens)),
        r.maxTokens, "tokens", kPaged);
    const double seqBlocks = std::ceil(kvTokensKept(arch, config.context) / std::max(config.blockSize, 1));
    const std::string ranks = r.attentionRanks > 1
        ? fmt::format(" x {} attention ranks", r.attentionRanks)
        : std::string();
    ex.add("serving.max_sequences",
        r.linearStateBytesPerSequence > 0
            ? fmt::format("floor(KV budget / (ceil({} tokens / {}) blocks x {} + linear-attention "
                          "state {})){} = floor({} / ({} x {} + {})){} = {}",
                  num(kvTokensKept(arch, config.context)), config.blockSize,
                  servingBytesText(config.blockSize * r.kvBytesPerTokenPerGpu),
                  servingBytesText(r.linearStateBytesPerSequence), ranks,
                  servingBytesText(r.kvBudgetBytes), num(seqBlocks),
                  servingBytesText(config.blockSize * r.kvBytesPerTokenPerGpu),
                  servingBytesText(r.linearStateBytesPerSequence), ranks, num(r.maxSequences))
            : fmt::format("floor(blocks / ceil({} tokens / {})){} = floor({} / {}){} = {}",
                  num(kvTokensKept(arch, config.context)), config.blockSize, ranks,
                  num(r.blocks), num(seqBlocks), ranks, num(r.maxSequences)),
        r.maxSequences, "sequences",
        r.linearStateBytesPerSequence > 0
            ? std::string(kPaged) + "; vLLM MambaStateShapeCalculator.gated_delta_net_state_shape "
                  + (float32RecurrentState(arch, config.engineProfile)
                          ? fmt::format("(the linear layers' conv state in bf16, their recurrent "
                                        "state in fp32: {})",
                                arch.linearAttention->float32State
                                    ? std::string("the config's mamba_ssm_dtype")
                                    : config.engineProfile.stateSource)
                          : std::string("(the linear layers' conv and recurrent state, bf16)"))
            : std::string(kPaged));
    ex.add("serving.contiguous_waste_bytes",
        fmt::format("max-length slots {} x (context - average) x KV/token/GPU; average {} of {} "
                    "tokens wastes {:.1f}% = {} (PagedAttention admits {} sequences at the "
                    "average length)",
            num(r.contiguousSequences),
            num(config.averageLength > 0 ? config.averageLength : config.context / 4.0),
            config.context, 100 * r.contiguousWasteFraction,
            servingBytesText(r.contiguousWasteBytes), num(r.pagedSequencesAtAverage)),
        r.contiguousWasteBytes, "bytes",
        "seed 002 (pre-allocating 8192 for 512-token averages wastes 94%); Kwon et al. 2023 "
        "sec. 3 (reservation and internal fragmentation)");
    ex.add("serving.per_gpu_bytes.kv_cache",
        fmt::format("concurrency x context x KV/token/GPU = {} x {} x {} = {}{}",
            config.concurrency, num(kvTokensKept(arch, config.context)),
            servingBytesText(r.kvBytesPerTokenPerGpu), servingBytesText(r.perGpu.kvCache),
            r.fits ? " (fits the budget)" : " (exceeds the KV budget)"),
        r.perGpu.kvCache, "bytes", "seed 000 (256 x 8192 x 328 KB = 670 GB on 70B)");

    const std::string table = gpu.kernels
        ? "kernel table presets/kernels/" + gpu.kernelsId + ".json"
        : std::string("no kernel table for this GPU: its specs x the documented defaults");
    if (r.speculative) {
        const SpeculativeEstimate& s = *r.speculative;
        const std::string leviathan = "Leviathan et al. 2023 (speculative decoding) eq. 1; "
                                      "docs/formulas-serving.md, 'Speculative decoding'";
        ex.add("serving.speculative.mean_tokens_per_step",
            fmt::format("(1 - alpha^(k+1)) / (1 - alpha) = (1 - {}^{}) / (1 - {}) = {} (k = {} "
                        "draft tokens, alpha = {} accepted each); vLLM logs the draft acceptance "
                        "rate (that - 1) / k = {}",
                num(s.acceptance), s.tokens + 1, num(s.acceptance), num(s.meanTokensPerStep),
                s.tokens, num(s.acceptance), num(s.draftAcceptanceRate)),
            s.meanTokensPerStep, "tokens", leviathan);
        ex.add("serving.speculative.draft_weights_bytes_per_gpu",
            fmt::format("{}: {} layer{} of {}{} at {} / tp {} = {}", s.kind, s.draftLayers,
                s.draftLayers == 1 ? "" : "s", s.draftName,
                s.kind == "draft" ? std::string(" (with its embedding and head)")
                                  : std::string(" + the 2h x h projection (embedding and LM head "
                                                "shared with the model)"),
                config.attentionWeightFormat || config.expertWeightFormat
                    ? fmt::format("{} B/param (attention {} B, routed experts {} B)",
                          num(r.weightBytesPerParam), num(servingFormatBytes(config).attention),
                          num(servingFormatBytes(config).experts))
                    : fmt::format("{} B/param", num(r.weightBytesPerParam)),
                tp, servingBytesText(s.draftWeightsBytesPerGpu)),
            s.draftWeightsBytesPerGpu, "bytes",
            "DeepSeek-V3 sec. 2.2 (MTP modules); EAGLE (Li et al. 2024); vLLM loads the draft "
            "beside the model");
        ex.add("serving.speculative.step_s",
            fmt::format("verify (the model over k + 1 = {} tokens per sequence: GEMMs at m = {}) "
                        "+ k = {} draft passes = {} + {} = {}",
                s.tokens + 1, num(double(config.concurrency) * (s.tokens + 1)), s.tokens,
                formatDuration(s.verifyStepS), formatDuration(s.draftStepS), formatDuration(s.stepS)),
            s.stepS, "s", "ops of the verify forward and the draft passes, timed as the decode step");
        ex.add("serving.speculative.speedup",
            fmt::format("plain step / (step / tokens per step) = {} / ({} / {}) = {}",
                formatDuration(s.plainStepS), formatDuration(s.stepS), num(s.meanTokensPerStep),
                num(s.speedup)),
            s.speedup, "x", leviathan);
    }
    if (r.speculative)
        ex.add("serving.itl_s",
            fmt::format("speculative engine step / tokens per step = {} / {} = {} (+-{:.0f}%, {}); "
                        "the plain step at {} sequences would be {}",
                formatDuration(r.speculative->stepS), num(r.speculative->meanTokensPerStep),
                formatDuration(r.itlS), 100 * r.uncertainty, r.timingSource, config.concurrency,
                formatDuration(r.speculative->plainStepS)),
            r.itlS, "s", "docs/formulas-serving.md, 'Speculative decoding'");
    else
    ex.add("serving.itl_s",
        fmt::format("one decode step of {} sequences at {} tokens, from its ops: GEMMs + "
                    "attention + elementwise + TP all-reduces = {} + {} + {} + {} = {} (+-{:.0f}%, "
                    "{}; engine scheduling and sampling not included); roofline bounds: memory {}, "
                    "compute {}",
            config.concurrency, config.context, formatDuration(r.decodeGemmS),
            formatDuration(r.decodeAttentionS), formatDuration(r.decodeElementwiseS),
            formatDuration(r.decodeCommS), formatDuration(r.itlS), 100 * r.uncertainty,
            r.timingSource, formatDuration(r.decodeMemoryS), formatDuration(r.decodeComputeS)),
        r.itlS, "s",
        "ops per layer at m = concurrency (docs/formulas-serving.md, 'Step time from ops') timed "
        "from " + table + "; each memory-bound kernel (norm, RoPE, residual, activation) its launch "
        "floor plus its bytes, " + formatDuration(launchFloor(false, gpu)) + " pointwise and "
        + formatDuration(launchFloor(true, gpu)) + " per row reduction, " + launchFloorSource(gpu));
    ex.add("serving.decode_tokens_per_s",
        fmt::format("concurrency / step = {} / {} = {} tokens/s", config.concurrency,
            formatDuration(r.itlS), num(r.decodeTokensPerS)),
        r.decodeTokensPerS, "tokens/s", kRoofline);
    const double hostFloor = eagerHostFloorS(arch, config);
    const std::string hostPart = hostFloor > 0
        ? fmt::format("; at least the host's eager launches, {} layers x {} = {}{}",
              std::lround(hostFloor / config.engineProfile.eagerHostSPerLayer),
              formatDuration(config.engineProfile.eagerHostSPerLayer),
              formatDuration(hostFloor),
              hostFloor >= r.prefillTimeS ? " (binding: the GPU waits on the host)" : "")
        : std::string();
    ex.add("serving.prefill_time_s",
        fmt::format("one {}-token prompt's forward from its ops (GEMMs at m = {}, causal flash "
                    "attention, TP all-reduces){} = {} ({}); {} FLOPs",
            config.context, config.context, hostPart, formatDuration(r.prefillTimeS),
            r.timingSource, num(prefillFlops(arch, counts, config.context))),
        r.prefillTimeS, "s",
        "ops per layer (docs/formulas-serving.md, 'Step time from ops') timed from " + table
            + (hostFloor > 0 ? "; " + config.engineProfile.hostSource : std::string()));
    const double front = requestOverheadS(config);
    ex.add("serving.ttft_s",
        front > 0
            ? fmt::format("max(prefill, chunks x step) + the request's time outside the steps = "
                          "max({}, ceil({} / {}) x {}) + {} = {} (+-{:.0f}%: the engine's "
                          "per-step time is not in the ops)",
                  formatDuration(r.prefillTimeS), config.context, config.maxBatchedTokens,
                  formatDuration(r.itlS), formatDuration(front), formatDuration(r.ttftS),
                  100 * r.ttftUncertainty)
            : fmt::format("max(prefill, chunks x step) = max({}, ceil({} / {}) x {}) = {} (+-{:.0f}%: "
                          "the engine's per-request and per-step time is not in the ops)",
                  formatDuration(r.prefillTimeS), config.context, config.maxBatchedTokens,
                  formatDuration(r.itlS), formatDuration(r.ttftS), 100 * r.ttftUncertainty),
        r.ttftS, "s", "vLLM chunked prefill: max_num_batched_tokens per engine step; the +- is "
                      "the median TTFT error over the published load points (docs/validation-timing.md)"
            + (front > 0 ? "; " + config.engineProfile.requestSource : std::string()));
    ex.add("serving.compute_bound_concurrency",
        r.computeBoundConcurrency > 0
            ? fmt::format("B where B F / (W + B K) = peak / HBM: ridge x W / (F - ridge x K) = {}",
                num(r.computeBoundConcurrency))
            : std::string("never (0): each sequence's KV read outweighs its FLOPs at the ridge "
                          "(F <= ridge x K)"),
        r.computeBoundConcurrency, "sequences", "roofline model (Williams et al. 2009)");
    ex.add("serving.fits",
        fmt::format("concurrency {} {} max_sequences {} at {} tokens -> {}", config.concurrency,
            r.fits ? "<=" : ">", num(r.maxSequences), config.context,
            r.fits ? "the requested concurrency fits" : "does not fit"),
        r.fits ? 1 : 0, "", kPaged);
    ex.add("serving.fits_weights",
        r.fitsWeights ? fmt::format(
            "weights + activations + overhead leave {} for KV", servingBytesText(r.kvBudgetBytes))
                      : std::string("weights + activations + overhead exceed memory x utilization"),
        r.fitsWeights ? 1 : 0, "", kVllm);
}

void explainDisaggregation(
    const ServingConfig& config, const Gpu& gpu, const ServingEstimate& r, Explainer& ex)
{
    if (!r.disaggregation || !config.disaggregation)
        return;
    const DisaggregationEstimate& g = *r.disaggregation;
    const ServingDisaggregation& d = *config.disaggregation;
    const std::string source = "disaggregated prefill and decode: Splitwise (Patel et al. 2024), "
                               "DistServe (Zhong et al. 2024), DeepSeek-AI inference system "
                               "overview (2025); docs/formulas-serving.md, \"Disaggregated "
                               "prefill and decode\"";
    const auto layout = [](const ServingPoolEstimate& p) {
        return fmt::format("{} worker(s) of tp {}{}{} = {} GPUs", p.workers, p.tp,
            p.dp > 1 ? fmt::format(" x dp {}", p.dp) : std::string(),
            p.ep > 1 ? fmt::format(", ep {}", p.ep) : std::string(), p.gpus);
    };
    ex.add("serving.disaggregation.prefill.weights_bytes_per_gpu",
        fmt::format("the prefill pool ({}): its weights per GPU as serving.weights_bytes_per_gpu "
                    "is for one engine of that layout = {}",
            layout(g.prefill), servingBytesText(g.prefill.weightsBytesPerGpu)),
        g.prefill.weightsBytesPerGpu, "bytes", source);
    const int links = std::max(1, std::min(d.prefill.tp, d.decode.tp));
    ex.add("serving.disaggregation.kv_transfer_s",
        fmt::format("one {}-token prompt's KV (kv_bytes_per_token x tokens = {}) / (min(prefill "
                    "tp, decode tp) = {} NICs x {}/s) = {}",
            config.context, servingBytesText(g.kvTransferBytes), links,
            servingBytesText(gpu.interNodeBytesPerS), formatDuration(g.kvTransferS)),
        g.kvTransferS, "s", source);
    ex.add("serving.ttft_s",
        fmt::format("prefill of one {}-token prompt on a prefill worker + its KV transfer = {} + "
                    "{} = {} (a lower bound: no queueing; serving.workload simulates it)",
            config.context, formatDuration(g.prefillTimeS), formatDuration(g.kvTransferS),
            formatDuration(r.ttftS)),
        r.ttftS, "s", source);
    ex.add("serving.disaggregation.prefill_tokens_per_s",
        fmt::format("context / prefill time x attention ranks x workers = {} / {} x {} x {} = "
                    "{:.0f} (prompts back to back; one {}-token prompt is compute-bound)",
            config.context, formatDuration(g.prefillTimeS), g.prefill.dp, g.prefill.workers,
            g.prefillTokensPerS, config.context),
        g.prefillTokensPerS, "tokens/s", source);
    ex.add("serving.disaggregation.decode_tokens_per_s",
        fmt::format("serving.concurrency / ITL x workers = {} / {} x {} = {:.0f}",
            config.concurrency, formatDuration(r.itlS), g.decode.workers, g.decodeTokensPerS),
        g.decodeTokensPerS, "tokens/s", source);
    ex.add("serving.disaggregation.requests_per_s",
        fmt::format("min(prefill tokens/s / mean input, decode tokens/s / mean output) = {:.3g} "
                    "requests/s; the {} pool is the bottleneck",
            g.requestsPerS, g.bottleneck),
        g.requestsPerS, "requests/s", source);
}

} // namespace envelope
