// Explanations of the training-memory figures: each formula with the worst stage's values
// substituted and its source. Only runs when an Explainer is given (never on the hot path).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "training/detail.h"
#include "base/units.h"

namespace envelope {
namespace {

constexpr const char* kZeroSource
    = "ZeRO (Rajbhandari et al. 2020) sec. 5, Psi x (2 + 2 + K) with K = 12 and its stages P_os, "
      "P_os+g, P_os+g+p; seed 002 (ZeRO-2 corrected to 2P + 14P/N)";
constexpr const char* kKorthikanti
    = "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, "
      "sec. 4.1-4.3, 5 and Table 2, generalised to the block (docs/formulas-training.md)";
constexpr const char* kSeedsSimple
    = "seeds 002/003 (k x L x B x S x h x bytes, k = 12), seed 001 (every k: L/k + k layers), "
      "seed 002 (gradient checkpointing: int(sqrt(L)) layers)";

constexpr const char* kBnbSource
    = "bitsandbytes optim/optimizer.py Optimizer2State.init_state (uint8 state1/state2, fp32 "
      "absmax1/absmax2 per 256-element block since 0.44.0, aa57bd89 'Change 8bit optimizer "
      "blocksize 2048->256'; 2048 before, as in Dettmers et al. 2022, 8-bit Optimizers via "
      "Block-wise Quantization, sec. 2; optim_bits 32: fp32 states)";
constexpr const char* kInBackwardSource
    = "torchtune optimizer_in_bwd (training.create_optim_in_bwd_wrapper, "
      "register_optim_in_bwd_hooks: one optimizer per parameter stepped in a "
      "register_post_accumulate_grad_hook, then p.grad = None); PyTorch tutorial 'How to save "
      "memory by fusing the optimizer step into the backward pass'";

// GB with two decimals; small figures (token ids, masks) in MB so they do not read as 0.
std::string gb(double bytes)
{
    if (bytes != 0 && std::fabs(bytes) < 1e8)
        return fmt::format("{:.2f} MB", bytes / kMB);
    return formatBytes(bytes, ByteUnits::GB, 2);
}
std::string num(double x)
{
    return fmt::format("{:.4g}", x);
}

// "P / shard" text for a dense + expert parameter split.
std::string paramsOver(const StageParams& p, double shard, double expertShard)
{
    if (p.expert <= 0)
        return fmt::format("{} / {}", num(p.dense), num(shard));
    return fmt::format(
        "({} / {} + {} experts / {})", num(p.dense), num(shard), num(p.expert), num(expertShard));
}

void explainParams(const TrainingSetup& s, const StageMemory& w, Explainer& ex)
{
    const StageParams& p = w.params;
    std::string text = fmt::format("stage {} of {} holds layers {}..{}: {} dense x {}", w.stage,
        s.pp, p.firstLayer, p.endLayer - 1, p.denseLayers, num(s.denseLayerParams));
    if (p.moeLayers > 0)
        text += fmt::format(" + {} MoE x ({} + {} routed experts / (tp x ep = {}))", p.moeLayers,
            num(s.moeLayerParams), num(s.moeLayerExpertParams), s.tp * s.ep);
    if (p.embedding > 0)
        text += fmt::format(" + embedding {}", num(p.embedding));
    if (p.head > 0)
        text += fmt::format(" + LM head and final norm {}", num(p.head));
    text += fmt::format(" = {} (matrices / tp = {}, norms replicated)", num(p.total()), s.tp);
    ex.add("training.params_on_worst_gpu", std::move(text), p.total(), "params",
        "Megatron-LM (Shoeybi et al. 2019; Narayanan et al. 2021): TP splits each matrix, PP "
        "gives each stage ceil(L/pp) layers or training.stage_layers, embedding on the first stage, LM head on the last "
        "(a tied head keeps a copy there); EP splits routed experts");
}

void explainLora(
    const TrainingSetup& s, const TrainingConfig& config, const StageMemory& w, Explainer& ex)
{
    const StageParams& p = w.params;
    const MemoryBreakdown& m = w.perGpu;
    const LoraConfig& l = config.lora;
    constexpr const char* kLora = "LoRA (Hu et al. 2021): W + B A, A rank x in, B out x rank, the "
                                  "base frozen; QLoRA (Dettmers et al. 2023): NF4 with a fp32 absmax "
                                  "per 64 weights, double quantization 8-bit absmax + fp32 per 256";
    ex.add("training.per_gpu_bytes.weights",
        fmt::format("frozen base: (linear params {} x {} B at {} bits{} + embedding/head {} x {} B) "
                    "/ shard {} = {}",
            num(p.total() - p.embedding - p.head), num(s.loraBaseBytes), l.baseBits,
            l.doubleQuant ? " + double-quantized scales" : (l.baseBits == 4 ? " + fp32 absmax / 64" : ""),
            num(p.embedding + p.head), num(s.weightBytes), num(w.shards.weights), gb(m.weights)),
        m.weights, "bytes", kLora);
    ex.add("training.per_gpu_bytes.gradients", "the frozen base has no gradients = 0", 0.0,
        "bytes", kLora);
    ex.add("training.per_gpu_bytes.optimizer",
        "the frozen base has no optimizer state (the adapters' is in per_gpu_bytes.lora) = 0", 0.0,
        "bytes", kLora);
    ex.add("training.per_gpu_bytes.lora",
        fmt::format("adapters {} params x (weights {} B / {} + gradients {} B / {} + optimizer {} B "
                    "/ {}) = {} (rank {}, {} layers on this GPU)",
            num(w.loraParams), num(s.weightBytes), num(w.shards.weights), num(s.gradientBytes),
            num(w.shards.gradients), num(s.masterBytes + s.momentBytes), num(w.shards.optimizer),
            gb(m.lora), l.rank, p.denseLayers + p.moeLayers),
        m.lora, "bytes", kLora);
}

void explainStates(
    const TrainingSetup& s, const TrainingConfig& config, const StageMemory& w, Explainer& ex)
{
    const StageParams& p = w.params;
    const MemoryBreakdown& m = w.perGpu;
    const std::string recipe = config.recipe.recipe.name.empty()
        ? std::string("custom recipe")
        : fmt::format("recipe '{}'", config.recipe.recipe.name);

    if (s.lora) {
        explainLora(s, config, w, ex);
        return;
    }
    ex.add("training.per_gpu_bytes.weights",
        s.offloadParams
            ? fmt::format("offload_params: the {} B/param weights live in host memory = 0",
                num(s.weightBytes))
            : fmt::format("weight_bytes x params / shard (dp from ZeRO-3, else 1) = {} x {} = {}",
                num(s.weightBytes), paramsOver(p, w.shards.weights, w.shards.expertWeights),
                gb(m.weights)),
        m.weights, "bytes", fmt::format("{}; {}", kZeroSource, recipe));

    ex.add("training.per_gpu_bytes.gradients",
        s.optimizerInBackward && !s.gradientsOffloaded()
            ? fmt::format("optimizer_in_backward: one parameter's gradient at a time, the largest "
                          "tensor: gradient_bytes x {} = {} x {} = {} (instead of {} x {})",
                num(s.largestTensorParams), num(s.gradientBytes), num(s.largestTensorParams),
                gb(m.gradients), num(s.gradientBytes),
                paramsOver(p, w.shards.gradients, w.shards.expertGradients))
            : s.gradientsOffloaded()
            ? std::string("offload_optimizer with ZeRO >= 2: each reduced gradient bucket "
                          "streams to the host for the CPU optimizer = 0")
            : fmt::format(
                "gradient_bytes x params / shard (dp from ZeRO-2, else 1) = {} x {} = {}{}",
                num(s.gradientBytes), paramsOver(p, w.shards.gradients, w.shards.expertGradients),
                gb(m.gradients),
                s.offloadOptimizer ? " (offload below ZeRO-2: the full gradient is reduced on "
                                     "the GPU before its copy to the host)"
                                   : ""),
        m.gradients, "bytes", fmt::format("{}; {}", kZeroSource, recipe));

    const Recipe& r = config.recipe.recipe;
    const bool bnb8bit = config.optimizer == OptimizerKind::AdamW8bit
        || config.optimizer == OptimizerKind::PagedAdamW8bit;
    const std::string moments = r.optimizerBytes
        ? fmt::format("custom optimizer state {} B", num(*r.optimizerBytes))
        : bnb8bit ? fmt::format("{} moments ({}) x (1 B uint8 + {} B fp32 absmax / {}-element "
                                "block) = {} B",
                        momentCount(config.optimizer), optimizerId(config.optimizer),
                        num(kBnbAbsmaxBytes), num(kBnb8bitBlock), num(s.momentBytes))
        : config.optimizer == OptimizerKind::PagedAdamW
        ? fmt::format("{} moments (paged-adamw, bitsandbytes optim_bits 32) x {} B fp32",
              momentCount(config.optimizer), num(kBnb32bitMomentBytes))
        : fmt::format("{} moments ({}) x {} B", momentCount(config.optimizer),
            optimizerId(config.optimizer), num(r.momentBytes));
    ex.add("training.per_gpu_bytes.optimizer",
        s.offloadOptimizer
            ? std::string("offload_optimizer: master copy and moments live in host memory = 0")
            : fmt::format(
                "(master {} B + {}) x params / shard (dp from ZeRO-1, else 1) = {} x {} = {}",
                num(s.masterBytes), moments, num(s.masterBytes + s.momentBytes),
                paramsOver(p, w.shards.optimizer, w.shards.expertOptimizer), gb(m.optimizer)),
        m.optimizer, "bytes",
        optimizerSetsMomentWidth(config.optimizer) && !r.optimizerBytes
            ? fmt::format("{}; {}; {}", kZeroSource, kBnbSource, recipe)
            : fmt::format("{}; {}", kZeroSource, recipe));
}

// bitsandbytes paged state and optimizer in backward (issue 24).
void explainOptimizerPlacement(const TrainingSetup& s, const StageMemory& w, Explainer& ex)
{
    if (s.pagedOptimizer)
        ex.add("training.paged_optimizer_bytes",
            s.offloadOptimizer
                ? std::string("offload_optimizer: the state lives in host memory = 0")
                : fmt::format("moments {} B x {} optimizer params = {}: allocated by "
                              "bitsandbytes in CUDA unified memory (cudaMallocManaged), counted "
                              "on the GPU in per_gpu_bytes.optimizer and the total while it fits, "
                              "and left out of allocated_bytes / allocator_reserved_bytes "
                              "(outside torch's caching allocator). The driver evicts pages to "
                              "the host only when the GPU is oversubscribed; Envelope does not "
                              "count on that: a plan over HBM stays 'over', its eviction traffic "
                              "unpriced",
                    num(s.momentBytes),
                    s.lora ? num(w.loraParams / w.shards.optimizer)
                           : paramsOver(w.params, w.shards.optimizer, w.shards.expertOptimizer),
                    gb(w.pagedBytes)),
            w.pagedBytes, "bytes",
            "bitsandbytes optim/optimizer.py get_state_buffer (is_paged and numel >= 1e5: "
            "F.get_paged, cuda managed memory; page_mng prefetches it before each step); "
            "functional.py get_paged (cget_managed_ptr)");
    if (s.optimizerInBackward)
        ex.add("training.optimizer_in_backward_gradient_bytes",
            s.lora ? fmt::format("gradient_bytes {} x one layer's adapters {} = {} (the adapters' "
                                 "gradients are consumed as they are produced)",
                         num(s.gradientBytes),
                         num(std::max(s.loraDenseLayerParams, s.loraMoeLayerParams)),
                         gb(w.inBackwardGradientBytes))
                   : fmt::format("gradient_bytes x the largest parameter tensor = {} x {} = {} "
                                 "(each gradient is stepped and freed as it is produced; the "
                                 "step's temporaries are that tensor's, during the backward; "
                                 "grad_accum must be 1)",
                         num(s.gradientBytes), num(s.largestTensorParams),
                         gb(w.inBackwardGradientBytes)),
            w.inBackwardGradientBytes, "bytes", kInBackwardSource);
}

void explainLayer(const ModelArch& arch, const TrainingSetup& s, const TrainingConfig& config,
    const StageMemory& w, const TrainingMemory& r, Explainer& ex)
{
    const ActivationCosts& c = s.activations;
    const double ab = config.recipe.recipe.activationBytes;
    const double tSp = config.sequenceParallel ? s.tp : 1;
    std::string text;
    if (c.simple) {
        text = fmt::format("bytes_per_sbh_per_layer x (activation_bytes / 2) x b x s x h / (tp x "
                           "cp) = {} x ({} / 2) x {} x {} x {} / ({} x {}) = {}",
            num(config.activationModel.bytesPerSbhPerLayer), num(ab), config.microBatch,
            config.seqLen, arch.hidden, s.tp, s.cp, gb(c.dense.full));
    } else {
        const bool moe = w.params.moeLayers > 0 && arch.moe;
        const LayerTerms t = layerTerms(arch, config, ab, moe);
        text = fmt::format(
            "per token: replicated (norm inputs {} + norm outputs {} + dropout masks {} + MLA "
            "latents {} + MoE dispatch/combine {}) / {} + split (Q/K/V/out {} + scores {} + "
            "flash stats {} + FFN {}) / tp {}; x tokens b x s / cp = {} x {} / {}",
            num(t.normInputs), num(t.normOutputs), num(t.dropoutMasks), num(t.latents),
            num(t.moeTokens), num(tSp), num(t.attention), num(t.scores), num(t.flashStats),
            num(t.ffn), s.tp, config.microBatch, config.seqLen, s.cp);
        const LayerActivation& a = moe ? c.moe : c.dense;
        switch (config.recompute) {
        case Recompute::None:
            text += fmt::format(" = {} (no recompute)", gb(a.full));
            break;
        case Recompute::Selective:
            text += fmt::format(
                " = {}, minus the s^2 scores (selective) = {}", gb(a.full), gb(a.selective));
            break;
        case Recompute::Full:
        case Recompute::EveryK:
            text += fmt::format(" = {} rebuilt; kept: the layer input activation_bytes x h / {} "
                                "x tokens = {}",
                gb(a.full), num(tSp), gb(a.checkpoint));
            break;
        }
    }
    if (!c.simple && (config.recomputeOps != 0 || config.fp8Activations != 0))
        text += fmt::format("; recompute_ops [{}{}{}] and fp8_activations [{}{}{}] applied to the "
                            "terms above (DeepSeek-AI 2024 sec. 3.2.3: RMSNorm and MLA "
                            "up-projections recomputed; sec. 3.3.3: MoE and SwiGLU inputs cached "
                            "in FP8, SwiGLU output recomputed)",
            config.recomputeOps & RecomputeNorm ? "norm " : "",
            config.recomputeOps & RecomputeMlaUp ? "mla_up " : "",
            config.recomputeOps & RecomputeSwiglu ? "swiglu" : "",
            config.fp8Activations & Fp8MoeInputs ? "moe_inputs " : "",
            config.fp8Activations & Fp8SwigluInputs ? "swiglu_inputs " : "",
            config.fp8Activations & Fp8AttentionOutput ? "attention_output" : "");
    if (!c.simple && fp8KeepsLinearInputs(config, ab))
        text += "; FP8 recipe under Transformer Engine (framework fp8_saves_linear_inputs): each "
                "linear keeps its input at 1 B (the norm outputs, MLA's normalised latents, the "
                "output- and down-projection inputs, the dispatched expert inputs)";
    ex.add("training.activation_bytes_per_layer", std::move(text), r.activationBytesPerLayer,
        "bytes", c.simple ? kSeedsSimple : kKorthikanti);
}

void explainActivations(const ModelArch& arch, const TrainingSetup& s, const TrainingConfig& config,
    const StageMemory& w, const TrainingMemory& r, Explainer& ex)
{
    explainLayer(arch, s, config, w, r, ex);
    const ActivationCosts& c = s.activations;
    const StageActivation& a = w.activation;

    ex.add("training.micro_batches_in_flight",
        s.dualPipe
            ? fmt::format("DualPipe: PP + 1 chunk-micro-batches over the rank's two chunks (stages "
                          "s and pp - 1 - s) = min((pp + 1) / 2, grad_accum) = min({} / 2, {}) "
                          "micro-batches through both chunks -> {}",
                s.pp + 1, config.gradAccum, r.microBatchesInFlight)
            : config.virtualStages > 1 && s.pp > 1
            ? fmt::format("interleaved 1F1B, stage 0: min(2(pp-1) + (v-1)pp + 1, m v) / v "
                          "= min(2 x {} + {} x {} + 1, {} x {}) / {} -> {}",
                s.pp - 1, config.virtualStages - 1, s.pp, config.gradAccum, config.virtualStages,
                config.virtualStages, r.microBatchesInFlight)
            : fmt::format("1F1B, stage 0: min(pp, grad_accum) = min({}, {}) = {}", s.pp,
                config.gradAccum, r.microBatchesInFlight),
        r.microBatchesInFlight, "",
        "Narayanan et al. 2021 sec. 2.2 (1F1B); Korthikanti et al. 2022 sec. 4.3; DeepSeek-AI "
        "2024 sec. 3.2.1 Table 2 (DualPipe PP + 1, 2x parameters; ZB1P as 1F1B: PP)");

    ex.add("training.embedding_activation_bytes",
        c.simple
            ? std::string("included in the seeds' k x L x B x S x h = 0")
            : fmt::format("in flight x tokens x (8 B token id + dropout mask h / {}) "
                          "= {} x {} x (8 + {}) = {}",
                num(config.sequenceParallel ? s.tp : 1),
                num(w.stage == 0 || s.dualPipe
                        ? a.inFlight
                        : microBatchesInFlight(0, s.pp, config.virtualStages, config.gradAccum)),
                num(c.tokens), arch.dropout > 0 ? arch.hidden : 0, gb(r.embeddingActivationBytes)),
        r.embeddingActivationBytes, "bytes", c.simple ? kSeedsSimple : kKorthikanti);

    const LossKind loss = config.effectiveLoss();
    if (!c.simple && loss != LossKind::Fused && loss != LossKind::Default) {
        ex.add("training.logits_bytes",
            fmt::format("tokens x (2 x activation_bytes x h / {} + loss bytes per logit x vocab / "
                        "tp) = {} x (2 x {} x {} / {} + {} x {} / {}) = {} (loss \"{}\", "
                        "framework \"{}\")",
                num(config.sequenceParallel ? s.tp : 1), num(c.tokens),
                num(config.recipe.recipe.activationBytes), arch.hidden,
                num(config.sequenceParallel ? s.tp : 1), num(c.lossBytesPerLogit), arch.vocab, s.tp,
                gb(r.logitsBytes), lossKindId(loss), config.framework.id),
            r.logitsBytes, "bytes",
            loss == LossKind::Compiled
                ? "torch.compile'd cross entropy (torchtitan components/loss.py since bbb1b616e, "
                  "2025-04-02, with training.compile; torchtune compile_loss): the upcast and "
                  "log-softmax are fused and recomputed in the backward from the saved logits, "
                  "which writes their gradient in the logits' dtype: logits 2 + gradient 2 = 4 B "
                  "per logit"
                : loss == LossKind::Eager
                ? "eager cross entropy on upcast logits (torchtitan train.py "
                  "cross_entropy(pred.float()), transformers logits.float()): forward holds "
                  "logits 2 + fp32 copy 4 + fp32 log-softmax 4 = 10 B; the loss backward holds "
                  "log-softmax 4 + its gradient 4 + the input gradient 4 = 12 B per logit"
                : "torchtune CEWithChunkedOutputLoss: logits kept in the activation dtype, the "
                  "fp32 upcast, log-softmax and gradients (12 B) one of 8 chunks at a time");
    } else {
        ex.add("training.logits_bytes",
            c.simple
                ? std::string("included in the seeds' k x L x B x S x h = 0")
                : fmt::format("tokens x (2 x activation_bytes x h / {} + (activation_bytes "
                              "+ 4 fp32) x vocab / tp) = {} x (2 x {} x {} / {} + ({} + 4) "
                              "x {} / {}) = {}",
                    num(config.sequenceParallel ? s.tp : 1), num(c.tokens),
                    num(config.recipe.recipe.activationBytes), arch.hidden,
                    num(config.sequenceParallel ? s.tp : 1), num(config.recipe.recipe.activationBytes),
                    arch.vocab, s.tp, gb(r.logitsBytes)),
            r.logitsBytes, "bytes",
            c.simple ? kSeedsSimple
                     : "Korthikanti et al. 2022 sec. 4.3 (4sbh/t (1 + v/h)), plus the logits in the "
                       "activation dtype alongside the loss's fp32 copy");
    }

    ex.add("training.per_gpu_bytes.activations",
        fmt::format("(stage {}: layers {} x in flight {} + recompute working set {} + "
                    "embedding {} + output layer {}{}) x calibration {} = {}",
            w.stage, gb(a.layers / (a.inFlight > 0 ? a.inFlight : 1)), num(a.inFlight),
            gb(a.workingSet), gb(a.embedding), gb(a.output),
            config.activationOffload
                ? fmt::format(" + offload buffer {}; {} offloaded layers' {} x in flight moved "
                              "to the host",
                    gb(a.offloadBuffer), num(a.offloadedLayers),
                    gb(a.offloaded / (a.inFlight > 0 ? a.inFlight : 1)))
                : std::string(),
            num(a.calibration), gb(w.perGpu.activations)),
        w.perGpu.activations, "bytes", c.simple ? kSeedsSimple : kKorthikanti);
    if (config.activationOffload) {
        const int stageLayers = w.params.denseLayers + w.params.moeLayers;
        ex.add("training.activation_offload_bytes",
            fmt::format("kept layer activations x offloaded layers / stage layers = ({} + {}) x "
                        "{} / {} x calibration {} = {} to pinned host memory (stays on the GPU: "
                        "the {} layers not offloaded, the output layer, the embedding and the "
                        "layer being rebuilt; under full recompute only the checkpointed layer "
                        "inputs move)",
                gb(a.layers), gb(a.offloaded), num(a.offloadedLayers), stageLayers,
                num(a.calibration), gb(r.activationOffloadBytes),
                num(stageLayers - a.offloadedLayers)),
            r.activationOffloadBytes, "bytes",
            "torchtune training/_activation_offloading.py OffloadActivations (every saved tensor "
            ">= 1 KiB but parameters; the output head under NoOpManager; with activation "
            "checkpointing only the checkpointed tensors, docs memory_optimizations.rst); "
            "Megatron --cpu-offloading-num-layers (0..layers - 1) through Transformer Engine "
            "get_cpu_offload_context");
        ex.add("training.activation_offload_buffer_bytes",
            fmt::format("offload_buffer_layers x one layer's kept activations (one micro-batch) = "
                        "min({}, {}) x {} x calibration {} = {}",
                num(config.framework.offloadBufferLayers), num(a.offloadedLayers),
                gb(a.perLayer), num(a.calibration), gb(r.activationOffloadBufferBytes)),
            r.activationOffloadBufferBytes, "bytes",
            fmt::format("framework \"{}\": {}", config.framework.id,
                config.framework.source.empty() ? std::string("presets/frameworks.json")
                                                : config.framework.source));
    }
}

void explainFrameworkBuffers(const TrainingSetup& s, const TrainingConfig& config,
    const StageMemory& w, const TrainingMemory& r, Explainer& ex)
{
    const FrameworkProfile& fw = config.framework;
    const std::string source = fmt::format("framework \"{}\"{}: {}", fw.id,
        fw.version.empty() ? std::string()
                           : fmt::format(" version {} ({})", fw.version, fw.versionChanges),
        fw.source.empty() ? std::string("presets/frameworks.json") : fw.source);
    std::string text;
    if (w.ppUnshardedBytes > 0)
        text = fmt::format("FSDP + PP keeps the stage unsharded: params {} x (all-gathered {} B + "
                           "fp32 gradient accumulation 4 B) = {}",
            num(w.params.total()), num(s.computeBytes), gb(w.ppUnshardedBytes));
    else if (w.prefetchBytes > 0)
        text = fmt::format("FSDP all-gather{}: {} layers x {} params x {} B = {}",
            s.offloadParams ? " (parameters offloaded: each layer is copied in and gathered on "
                              "the GPU before it runs)"
                            : "",
            num(s.offloadParams ? std::max(1.0, fw.prefetchLayers) : fw.prefetchLayers),
            num(s.layerParamsMax), num(s.lora ? s.loraBaseBytes : s.computeBytes),
            gb(w.prefetchBytes));
    else if (w.bucketBytes > 0)
        text = fmt::format("gradient-reduction bucket = {}", gb(w.bucketBytes));
    else
        text = fmt::format("no buffers beyond the overhead allowance (ZeRO {}, framework {})",
            s.zeroStage, fw.id);
    if (w.fp8CastBytes > 0)
        text += fmt::format("; + FP8 weight casts fp8_weight_cast_bytes {} x unsharded params = "
                            "{} (Float8 linears keep the fp8 copy of each all-gathered weight)",
            num(fw.fp8WeightCastBytes), gb(w.fp8CastBytes));
    ex.add("training.buffer_bytes", std::move(text), r.bufferBytes, "bytes", source);
    ex.add("training.optimizer_temp_bytes",
        fmt::format("optimizer_temp_bytes x local optimizer params = {} x {} = {} (during the "
                    "step, after the activations are freed)",
            num(fw.optimizerTempBytes),
            s.lora ? fmt::format(
                "{} LoRA adapter params / {}", num(w.loraParams), num(w.shards.optimizer))
                   : paramsOver(w.params, w.shards.optimizer, w.shards.expertOptimizer),
            gb(r.optimizerTempBytes)),
        r.optimizerTempBytes, "bytes", source);
    const double states = w.perGpu.weights + w.perGpu.gradients + w.perGpu.optimizer + w.perGpu.lora;
    if (config.lora.enabled)
        ex.add("training.lora_trainable_params",
            fmt::format("layers x sum over targets of rank x (in + out) = {} (rank {})",
                num(r.loraTrainableParams), config.lora.rank),
            r.loraTrainableParams, "params",
            "LoRA (Hu et al. 2021): A is rank x in, B is out x rank for each adapted matrix; q: h -> "
            "heads x head_dim, k/v: h -> kv_heads x head_dim, o: heads x head_dim -> h, gate/up: "
            "h -> ffn, down: ffn -> h");
    if (s.optimizerInBackward)
        ex.add("training.allocated_bytes",
            fmt::format("weights + optimizer{} + one gradient (+ LoRA adapters) + activations + "
                        "buffers + that parameter's step temporaries = {} + {} + {} + {} = {} "
                        "(optimizer_in_backward: the step runs inside the backward)",
                w.pagedBytes > 0 ? " (less the paged state)" : "",
                gb(states - w.pagedBytes), gb(w.perGpu.activations), gb(r.bufferBytes),
                gb(r.optimizerTempBytes), gb(r.allocatedBytes)),
            r.allocatedBytes, "bytes", kInBackwardSource);
    else if (w.gradientsFillAsActivationsFree)
        ex.add("training.allocated_bytes",
            fmt::format("weights + optimizer + max(activations + buffers + output-layer "
                        "gradient, gradients + optimizer temporaries) = {} + max({} + {} + {}, "
                        "{} + {}) = {} (one GPU, grad_accum 1, zero_grad(set_to_none=True): the "
                        "gradients fill as the activations are freed)",
                gb(w.perGpu.weights + w.perGpu.optimizer - w.pagedBytes), gb(w.perGpu.activations),
                gb(r.bufferBytes), gb(w.firstGradientBytes), gb(w.perGpu.gradients),
                gb(r.optimizerTempBytes), gb(r.allocatedBytes)),
            r.allocatedBytes, "bytes",
            "torch autograd allocates each parameter's .grad in the backward when it is None "
            "(torch.optim.Optimizer.zero_grad set_to_none=True, the default since PyTorch 2.0; "
            "torchtune full_finetune_single_device, transformers Trainer); "
                + source);
    else
        ex.add("training.allocated_bytes",
            fmt::format("weights + gradients + optimizer{} (+ LoRA adapters) + max(activations + "
                        "buffers, optimizer temporaries) = {} + max({} + {}, {}) = {}",
                w.pagedBytes > 0 ? " (less the paged state, outside torch's allocator)" : "",
                gb(states - w.pagedBytes), gb(w.perGpu.activations), gb(r.bufferBytes),
                gb(r.optimizerTempBytes), gb(r.allocatedBytes)),
            r.allocatedBytes, "bytes",
            "what torch.cuda.max_memory_allocated() and peak active bytes report: live tensors "
            "only");
    ex.add("training.allocator_reserved_bytes",
        fmt::format("allocated + fragmentation x {} = {} + {} x {} = {}",
            config.framework.contiguousStateBuffers ? "transient (contiguous state buffers)"
                                                    : "allocated",
            gb(r.allocatedBytes), num(s.fragmentation), gb(w.fragmentedBytes), gb(r.reservedBytes)),
        r.reservedBytes, "bytes",
        "what torch.cuda.max_memory_reserved() reports (torchtitan's logged 'memory'): the caching "
        "allocator's peak, without the CUDA context or NCCL's own buffers; the device view "
        "per_gpu_bytes.total adds the fixed overhead");
}

} // namespace

void explainTrainingMemory(const ModelArch& arch, const TrainingSetup& setup,
    const TrainingConfig& config, const Cluster& cluster, const KeyStages& stages,
    const TrainingMemory& result, Explainer& ex)
{
    const StageMemory& worst = stages.worst;
    const StageMemory& binding = stages.binding;
    const StageMemory& host = stages.host;
    const MemoryBreakdown& m = worst.perGpu;
    ex.add("training.data_parallel",
        fmt::format("gpus / (tp x pp x cp) = {} / ({} x {} x {}) = {}", cluster.gpus, setup.tp,
            setup.pp, setup.cp, result.dataParallel),
        result.dataParallel, "", "Megatron-LM 3D parallelism (Narayanan et al. 2021)");
    ex.add("training.shard_group",
        config.hsdpShard > 0 && setup.zeroStage >= 3
            ? fmt::format("HSDP: shard within hsdp_shard = {} ranks, replicate across {} groups",
                config.hsdpShard,
                num(worst.dataParallel * (config.framework.shardOverCp ? setup.cp : 1)
                    / double(config.hsdpShard)))
            : fmt::format("ZeRO states sharded over {} = {}",
                config.framework.shardOverCp && setup.cp > 1 ? "dp x cp" : "dp",
                num(worst.shardGroup)),
        worst.shardGroup, "ranks",
        "ZeRO (Rajbhandari et al. 2020); torchtitan FSDP over the dp_shard x cp mesh "
        "(parallelize_llama.py: dp_shard_cp) and HSDP (data_parallel_replicate_degree); "
        "Megatron-Core's grad buffers and distributed optimizer over intra_dp_cp_group "
        "(distributed_data_parallel.py); PyTorch FSDP2 fully_shard with a 2-D mesh (replicate, "
        "shard)");
    ex.add("training.worst_stage",
        fmt::format("the pipeline stage with the largest total of {} stages: {}", setup.pp,
            result.worstStage),
        result.worstStage, "",
        "first stage: embedding and pp micro-batches in flight; last: LM head and logits");
    explainParams(setup, worst, ex);
    explainStates(setup, config, worst, ex);
    explainOptimizerPlacement(setup, worst, ex);
    explainActivations(arch, setup, config, worst, result, ex);

    const double before = m.weights + m.gradients + m.optimizer + m.activations;
    explainFrameworkBuffers(setup, config, worst, result, ex);
    const bool contiguous = config.framework.contiguousStateBuffers;
    const std::string fragmentationSource
        = fmt::format("fragmentation f = {} ({}): {}", num(setup.fragmentation),
            config.expandableSegments ? "expandable_segments on" : "default caching allocator",
            contiguous ? "on the transient allocations only: parameters and gradients sit in "
                         "contiguous buffers allocated once (Megatron-Core ParamAndGradBuffer)"
                       : "on everything the caching allocator serves");
    if (result.bufferBytes > 0 || result.optimizerTempBytes > 0
        || worst.gradientsFillAsActivationsFree || contiguous)
        ex.add("training.per_gpu_bytes.overhead",
            fmt::format("fixed + (allocated - weights - gradients - optimizer - activations) + "
                        "f x {} = {} + ({} - {} - {}) + {} x {} = {}",
                contiguous ? "transient" : "allocated", gb(setup.fixedBytes),
                gb(result.allocatedBytes), gb(m.weights + m.gradients + m.optimizer + m.lora),
                gb(m.activations), num(setup.fragmentation), gb(worst.fragmentedBytes),
                gb(m.overhead)),
            m.overhead, "bytes",
            "the framework's buffers (training.buffer_bytes) or optimizer temporaries, less the "
            "gradients that fill as activations free (one GPU, set_to_none), the CUDA context + "
            "NCCL (fixed) and the allocator's share; "
                + fragmentationSource + "; presets/frameworks.json");
    else
        ex.add("training.per_gpu_bytes.overhead",
            fmt::format("fixed + fragmentation x (weights + gradients + optimizer + activations) "
                        "= {} + {} x {} = {}",
                gb(setup.fixedBytes), num(setup.fragmentation), gb(before), gb(m.overhead)),
            m.overhead, "bytes",
            "seed 003 (~2 GB CUDA context + ~1 GB NCCL buffers, 5-15% fragmentation); seed 002 "
            "(CUDA workspace 1-2 GB); zeros reproduce the seeds' examples; "
                + fragmentationSource);
    ex.add("training.per_gpu_bytes.total",
        fmt::format("weights + gradients + optimizer + activations + overhead = {} + {} + {} "
                    "+ {} + {} = {}",
            gb(m.weights), gb(m.gradients), gb(m.optimizer), gb(m.activations), gb(m.overhead),
            gb(m.total())),
        m.total(), "bytes", "sum of the figures above (most-loaded GPU)");
    ex.add("training.gpu_memory_bytes",
        fmt::format("usable HBM of one GPU = {}", gb(setup.gpuMemoryBytes)), setup.gpuMemoryBytes,
        "bytes", "GPU preset (memory as the driver reports it)");
    ex.add("training.fits",
        fmt::format("total {} {} usable HBM {} -> {}", gb(m.total()), result.fits ? "<=" : ">",
            gb(setup.gpuMemoryBytes), result.fits ? "fits" : "does not fit"),
        result.fits ? 1.0 : 0.0, "", "per-GPU total against the GPU's usable memory");
    ex.add("training.verdict",
        fmt::format("total {} against usable {} (HBM {} x usable_fraction {:.2f}) and HBM {} -> "
                    "{}",
            gb(m.total()), gb(result.usableBytes), gb(setup.gpuMemoryBytes),
            setup.gpuMemoryBytes > 0 ? result.usableBytes / setup.gpuMemoryBytes : 0.0,
            gb(setup.gpuMemoryBytes), verdictId(result.verdict)),
        result.verdict == Verdict::Fits ? 1.0 : (result.verdict == Verdict::Tight ? 0.5 : 0.0), "",
        "fits <= usable fraction of HBM < tight <= HBM < over; the usable line leaves room for "
        "allocator spikes (seed 003: fragmentation 5-15%)");

    // min_gpus counts only a verdict of `fits`: at or below the usable line, not merely HBM.
    const double room = result.usableBytes - setup.fixedBytes;
    std::string minText;
    if (result.minGpus == 1 && worst.gradientsFillAsActivationsFree) {
        minText = fmt::format("1: one GPU fits (total {} <= usable {}), its gradients filling as "
                              "the activations free (training.allocated_bytes)",
            gb(m.total()), gb(result.usableBytes));
    } else if (result.minGpus > 0) {
        const double dp = result.minGpus / (double(setup.tp) * setup.pp * setup.cp);
        minText = fmt::format(
            "smallest dp (a multiple of ep = {}) whose verdict is fits: fixed + unsharded + "
            "sharded / dp <= usable = {} on every stage (each part with its fragmentation share "
            "f = {}); stage {}: dp >= sharded / (usable - fixed - unsharded) = {} / ({} - {}) = "
            "{:.3f} -> dp {} x tp x pp x cp {} = {}",
            setup.ep, gb(result.usableBytes), num(setup.fragmentation), binding.stage,
            gb(binding.shardedBytesAtDp1), gb(room), gb(binding.unshardedBytes),
            binding.shardedBytesAtDp1 > 0
                ? binding.shardedBytesAtDp1 / (room - binding.unshardedBytes)
                : 1.0,
            num(dp), setup.tp * setup.pp * setup.cp, result.minGpus);
    } else {
        minText = fmt::format(
            "0: on stage {} what data parallelism cannot shard (ZeRO stage {}: activations and "
            "unsharded states, with fragmentation f = {}) is {}, against usable - fixed = {}",
            binding.stage, setup.zeroStage, num(setup.fragmentation), gb(binding.unshardedBytes),
            gb(room));
    }
    ex.add("training.min_gpus", std::move(minText), result.minGpus, "",
        "ZeRO (Rajbhandari et al. 2020) sec. 5: sharded states shrink as 1/dp; tp x pp x cp "
        "kept fixed");

    const int gpusPerNode = std::clamp(cluster.gpusPerNode, 1, std::max(cluster.gpus, 1));
    std::string hostText;
    if (!setup.offloadOptimizer && !setup.offloadParams && !config.activationOffload) {
        hostText = "no offload = 0";
    } else {
        std::string parts;
        if (setup.offloadOptimizer)
            parts = fmt::format("(master {} + moments {} + fp32 gradients {}) B x {}",
                num(setup.masterBytes), num(setup.momentBytes), num(kHostGradientBytes),
                paramsOver(host.params, host.shards.optimizer, host.shards.expertOptimizer));
        if (setup.offloadParams)
            parts += fmt::format("{}weight_bytes {} x {}", parts.empty() ? "" : " + ",
                num(setup.weightBytes),
                paramsOver(host.params, host.shards.weights, host.shards.expertWeights));
        if (config.activationOffload)
            parts += fmt::format("{}offloaded activations {} x calibration {}",
                parts.empty() ? "" : " + ", gb(host.activation.offloaded),
                num(host.activation.calibration));
        hostText = fmt::format("per GPU of stage {}: {} = {}; x GPUs per node {} = {}", host.stage,
            parts, gb(host.hostBytes), gpusPerNode, gb(result.hostBytesPerNode));
    }
    ex.add("training.host_bytes_per_node", std::move(hostText), result.hostBytesPerNode, "bytes",
        "ZeRO-Offload (Ren et al. 2021) sec. 4; ZeRO-Infinity (Rajbhandari et al. 2021); "
        "activation offload: pinned host copies (torchtune OffloadActivations use_pin_memory, "
        "Transformer Engine cpu_offload)");
}

} // namespace envelope
