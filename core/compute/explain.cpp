// Explanations of the compute figures: each formula with the plan's values substituted and its
// source. Only runs when an Explainer is given (never on the fast path).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "compute/detail.h"
#include "kernels/kerneltable.h"
#include "kernels/timing.h"
#include "base/units.h"

namespace envelope {
namespace {

constexpr const char* kFlopsSource
    = "Narayanan et al. 2021 eq. 3 (72 B s l h^2 (1 + s/6h + V/12lh) without recompute); "
      "Korthikanti et al. 2022 eqs. 7-8; PaLM (Chowdhery et al. 2022) app. B (6N + 12 L H Q T); "
      "seed 000; docs/formulas-compute.md sec. 1";
constexpr const char* kStepSource
    = "seed 001 (Time per Step: 6 Psi B S / (P x peak x MFU)); docs/formulas-compute.md sec. 2";
constexpr const char* kRingSource = "ring collectives (Patarasuk & Yuan 2009): all-reduce "
                                    "2(N-1)/N x bytes per GPU; seed 001; docs/formulas-compute.md "
                                    "sec. 4";

std::string num(double x)
{
    return fmt::format("{:.4g}", x);
}
// GB with two decimals; a per-message figure below 0.1 GB in MB so it does not read as 0.
std::string gb(double bytes)
{
    if (bytes != 0 && std::fabs(bytes) < 1e8)
        return fmt::format("{:.2f} MB", bytes / kMB);
    return formatBytes(bytes, ByteUnits::GB, 2);
}
std::string duration(double seconds)
{
    return std::isfinite(seconds) ? formatDuration(seconds) : std::string("infinite");
}
std::string pct(double fraction)
{
    return fmt::format("{:.1f}%", 100 * fraction);
}
const char* recomputeText(Recompute r)
{
    switch (r) {
    case Recompute::None:
        return "no recompute: hardware = model FLOPs";
    case Recompute::Selective:
        return "selective recompute";
    case Recompute::Full:
        return "full recompute re-runs every layer's forward (not the LM head)";
    case Recompute::EveryK:
        return "every-k recompute re-runs every layer's forward from its checkpoint";
    }
    return "";
}
const char* dtypeText(ComputeDtype d)
{
    switch (d) {
    case ComputeDtype::Bf16:
        return "BF16 peak";
    case ComputeDtype::Fp8:
        return "FP8 peak (BF16 if the GPU has none)";
    case ComputeDtype::Tf32:
        return "TF32 = BF16 peak / 2";
    }
    return "";
}
std::string linkText(const Link& l)
{
    return fmt::format("{} link {}/s, group {}", l.intraNode ? "intra-node" : "inter-node",
        l.bytesPerS > 0 ? gb(l.bytesPerS) : std::string("not given (time 0)"), l.group);
}

// What "selective" re-runs under the plan's framework (compute.cpp recomputeFlops).
std::string selectiveText(const TrainingConfig& config)
{
    if (config.recompute != Recompute::Selective)
        return "";
    const char* what = "the attention core's forward, 4 l s h";
    if (config.framework.selective == SelectivePolicy::PerOpSac)
        what = "every second matmul of a layer (k, o, up): 2 l (h kv d + heads d h + h ffn)";
    else if (config.framework.selective == SelectivePolicy::Full)
        what = "every layer's forward (the framework only checkpoints whole layers)";
    return fmt::format(" under framework '{}' ({}): {}", config.framework.id,
        selectivePolicyId(config.framework.selective), what);
}

std::string dpOverlapText(const TrainingConfig& config, const CommDetail& d)
{
    const std::string profile = fmt::format("framework '{}', dp_overlap {}", config.framework.id,
        dpOverlapId(config.framework.dpOverlap));
    const DpHidden& h = d.dpHidden;
    if (config.zeroStage >= 3) {
        if (!h.prefetch)
            return profile + ": the gathers and reductions run exposed";
        return fmt::format("{}: all-gathers prefetched a layer ahead, the first all-gather and "
                           "last reduce-scatter exposed: 1 - 1 / {} layers",
            profile, num(d.layersPerStage));
    }
    const auto source = [](const std::optional<bool>& plan) {
        return plan ? "plan" : "framework default";
    };
    std::string text = fmt::format("{}; overlap_grad_reduce {} ({})", profile,
        h.gradOn ? "on" : "off", source(config.overlapGradReduce));
    if (config.zeroStage >= 1)
        text += fmt::format(", overlap_param_gather {} ({})", h.paramOn ? "on" : "off",
            source(config.overlapParamGather));
    if (!h.gradOn && !h.paramOn)
        return text + ": the reduction runs after the backward";
    if (h.gradOn)
        text += fmt::format("; reduction hidden min({} x (1 - last bucket {}), last "
                            "micro-batch's backward {}) = {}",
            duration(d.dpGradS), pct(h.bucketShare), duration(h.backwardWindowS),
            duration(h.gradS));
    if (h.paramOn)
        text += fmt::format("; weight all-gather hidden min({} x (1 - first bucket {}), first "
                            "micro-batch's forward {}) = {}",
            duration(d.dpParamS), pct(h.bucketShare), duration(h.forwardWindowS),
            duration(h.paramS));
    return text;
}

void explainFlops(
    const TrainingConfig& config, const ComputeSetup& s, const TrainingCompute& r, Explainer& ex)
{
    const std::string attention
        = fmt::format("attention core 4 x l x s_att x heads x head_dim = 4 x {} x {} x {}",
            num(s.layers), num(s.attendedLen), num(s.attentionWidth));
    ex.add("training.matmul_params",
        fmt::format("active params - token/position embeddings (lookups) + tied LM head = {} "
                    "(LM head {})",
            num(s.matmulParams), num(s.headParams)),
        s.matmulParams, "params", kFlopsSource);
    ex.add("training.forward_flops_per_token",
        fmt::format("2 x P_mm + {} = 2 x {} + {} = {}", attention, num(s.matmulParams),
            num(s.attentionForwardPerToken), num(r.forwardFlopsPerToken)),
        r.forwardFlopsPerToken, "FLOPs", kFlopsSource);
    ex.add("training.flops_per_token",
        fmt::format("3 x forward (backward = 2 x forward) = 6 x P_mm + 12 x l x s_att x "
                    "heads x head_dim = 6 x {} + 3 x {} = {} (full s x s attention, no causal "
                    "halving)",
            num(s.matmulParams), num(s.attentionForwardPerToken), num(r.flopsPerToken)),
        r.flopsPerToken, "FLOPs", kFlopsSource);
    ex.add("training.hardware_flops_per_token",
        fmt::format("model FLOPs + recompute ({}) = {} + {} = {}",
            recomputeText(config.recompute) + selectiveText(config), num(r.flopsPerToken),
            num(r.hardwareFlopsPerToken - r.flopsPerToken), num(r.hardwareFlopsPerToken)),
        r.hardwareFlopsPerToken, "FLOPs",
        "Korthikanti et al. 2022 sec. 5-6 (model vs hardware FLOPs); seed 000 (8 P with "
        "full checkpointing)");
}

void explainTime(const TrainingConfig& config, const Gpu& gpu, const ComputeSetup& s,
    const TrainingCompute& r, Explainer& ex)
{
    ex.add("training.global_batch_tokens",
        fmt::format("micro_batch x grad_accum x dp x seq_len = {} x {} x {} x {} = {}",
            num(s.microBatch), s.microBatches, s.dp, num(s.seqLen), num(r.globalBatchTokens)),
        r.globalBatchTokens, "tokens", kStepSource);
    ex.add("training.peak_flops_per_gpu",
        fmt::format("{} of '{}' = {} TFLOP/s", dtypeText(config.recipe.recipe.compute), gpu.name,
            num(s.peakFlops / 1e12)),
        s.peakFlops, "FLOP/s", "GPU datasheet (dense, no sparsity); docs/formulas-compute.md");
    ex.add("training.step_flops",
        fmt::format("flops_per_token x global batch = {} x {} = {}", num(r.flopsPerToken),
            num(r.globalBatchTokens), num(r.stepFlops)),
        r.stepFlops, "FLOPs", kStepSource);
    if (config.mfuOverride) {
        const RecomputeFlops recompute = recomputeFlops(s, config);
        const double linear = 6 * s.layerMatmulParams + recompute.linear;
        ex.add("training.compute_time_s",
            fmt::format("(layer linears / peak + (LM head + attention core) / other peak) x batch / "
                        "(gpus x kernel efficiency mfu) = ({} / {} + {} / {}) x {} / ({} x {}) = {}"
                        "{}{}",
                num(linear), num(s.peakFlops), num(r.hardwareFlopsPerToken - linear),
                num(s.otherPeakFlops), num(r.globalBatchTokens), r.gpus, num(config.mfu),
                duration(r.computeTimeS),
                r.hardwareFlopsPerToken > r.flopsPerToken ? " (recompute's extra forward included)"
                                                          : "",
                s.otherPeakFlops != s.peakFlops ? "; FP8: the linears at the FP8 peak, the LM head "
                                                  "and attention core at the BF16 peak"
                                                : ""),
            r.computeTimeS, "s",
            "seed 001 (F_step / (P x peak x MFU)); the GPU runs the hardware FLOPs (Korthikanti et "
            "al. 2022 sec. 6), so the plan's mfu is the kernel efficiency (default: the framework's "
            "kernel_efficiency, presets/frameworks.json); FP8 linears only: torchao Float8Linear "
            "(torchtitan float8.py: module_filter_fn skips 'output'), Transformer Engine fp8_autocast "
            "(te.Linear / LayerNormLinear; DotProductAttention stays BF16)");
    } else {
        // Op timing (docs/formulas-compute.md, "Step time from ops"): the slowest stage's micro-batch, by op
        // class, times the micro-batches.
        const double m = s.microBatches;
        const std::string table = gpu.kernels
            ? fmt::format("kernel table presets/kernels/{}.json ({})", gpu.kernelsId, gpu.kernels->source)
            : std::string("no kernel table for this GPU: its specs x the documented defaults");
        // Which stage paces the pipeline, and the split it comes from.
        std::string stageText;
        const std::vector<int> split = pipelineStageLayers(config, static_cast<int>(s.layers));
        if (split.size() > 1) {
            const std::size_t k = static_cast<std::size_t>(r.slowestStage);
            const bool dual = config.ppSchedule == PpSchedule::DualPipe;
            const int layers = k < split.size() ? split[k] : 0;
            const int mirror = dual ? split[split.size() - 1 - k] : 0;
            stageText = dual
                ? fmt::format(", rank {} with stages {} and {} ({} + {} layers, each for half the "
                              "micro-batches)",
                    k, k, split.size() - 1 - k, layers, mirror)
                : fmt::format(", stage {} of {} with {} layers{}", k, split.size(), layers,
                    k == 0 ? " and the embedding"
                           : (k + 1 == split.size()
                                     ? (config.mtpLayers > 0
                                               ? fmt::format(", the LM head and {} MTP module(s) "
                                                             "(each a layer, a 2h x h projection "
                                                             "and the head again)",
                                                     config.mtpLayers)
                                               : std::string(" and the LM head"))
                                     : std::string()));
            stageText += fmt::format("; layers per stage {} ({})", stageLayersText(split),
                config.stageLayers.empty() ? "ceil(L / pp), the last the rest"
                                           : "training.stage_layers");
        }
        ex.add("training.compute_time_s",
            fmt::format("micro-batches x (GEMMs + attention core + elementwise) of the slowest "
                        "stage{} = {} x ({} + {} + {}) = {} ({}; {:.0f}% of the op time from "
                        "measured kernels; recompute {})",
                stageText, num(m), duration(r.gemmS / std::max(m, 1.0)),
                duration(r.attentionS / std::max(m, 1.0)),
                duration(r.elementwiseS / std::max(m, 1.0)), duration(r.computeTimeS), r.timingSource,
                100 * r.measuredShare, duration(r.recomputeS)),
            r.computeTimeS, "s",
            "ops per layer (GEMMs with their shapes after TP/EP, attention, elementwise at HBM "
            "bandwidth) timed from " + table + "; docs/formulas-compute.md, 'Step time from ops'");
        // The ceilings that bound this step's GEMMs: bf16's, and FP8's where the linears run FP8.
        std::string ceiling;
        for (const GemmDtype dtype : { GemmDtype::Bf16, GemmDtype::Fp8 }) {
            if (dtype == GemmDtype::Fp8 && config.recipe.recipe.compute != ComputeDtype::Fp8)
                continue;
            if (const GemmTable* g = gpu.kernels ? gpu.kernels->findGemm(dtype) : nullptr;
                g && g->ceilingFlopsPerS > 0)
                ceiling += fmt::format("; no {} GEMM faster than the GPU's maximum achievable {} "
                                       "matmul rate, {:.1f} TFLOP/s ({})",
                    gemmDtypeId(dtype), gemmDtypeId(dtype), g->ceilingFlopsPerS / 1e12, g->ceilingSource);
        }
        ex.add("training.time_breakdown.gemm_s",
            fmt::format("every GEMM of the slowest stage (forward, input and weight gradients, "
                        "recompute) x {} micro-batches = {}",
                num(m), duration(r.gemmS)),
            r.gemmS, "s", table + ceiling);
        ex.add("training.time_breakdown.attention_s",
            fmt::format("flash attention forward (table) and backward (2.5x the FLOPs at 0.8x the "
                        "forward's throughput) x {} micro-batches = {}",
                num(m), duration(r.attentionS)),
            r.attentionS, "s", table + "; FlashAttention-2 (Dao 2023), FlashAttention-3 (Shah et al. 2024) Fig. 5-6");
        const bool eager = config.eagerKernels();
        ex.add("training.time_breakdown.elementwise_s",
            fmt::format("(bytes the norms, activations, RoPE, residuals, softmax and loss stream{} / "
                        "(HBM {} GB/s x 0.8) + each kernel's launch floor, {} pointwise and {} "
                        "per row reduction) x {} micro-batches = {}",
                eager ? fmt::format(" (framework '{}' eager: RMSNorm 28 + 4a / 68 + 8a bytes per element "
                                    "forward / backward, RoPE 10a / 15a, SwiGLU 5a / 9a, a = activation bytes)",
                            config.framework.id)
                      : std::string(),
                num(gpu.hbmBytesPerS / 1e9), duration(launchFloor(false, gpu)),
                duration(launchFloor(true, gpu)), num(m), duration(r.elementwiseS)),
            r.elementwiseS, "s",
            std::string("memory-bound kernels at 80% of HBM (docs/formulas-compute.md, 'Step time from ops'")
                + (eager ? "; 'Eager kernels': the PyTorch modules' kernel chains counted from "
                           "transformers LlamaRMSNorm, apply_rotary_pos_emb and LlamaMLP)"
                         : ")")
                + "; launch floors " + launchFloorSource(gpu));
        ex.add("training.time_breakdown.optimizer_s",
            fmt::format("the optimizer step streams each local parameter's gradient, master, moments "
                        "and weights once / (HBM x 0.8) = {}",
                duration(r.optimizerS)),
            r.optimizerS, "s", "memory-bound fused / foreach Adam (docs/formulas-compute.md, 'Step time from ops')");
    }
    const Communication& c = r.communication;
    ex.add("training.step_time_s",
        fmt::format("compute + exposed communication + pipeline bubble + offload transfers + CPU "
                    "optimizer + optimizer step{} = {} + {} + {} + {} + {} + {}{} = {} (+-{:.0f}%, {})",
            config.activationOffload ? " + exposed activation offload" : "",
            duration(r.computeTimeS), duration(c.exposedS), duration(c.ppBubbleS),
            duration(c.offloadS), duration(c.cpuOptimizerS), duration(r.optimizerS),
            config.activationOffload ? " + " + duration(c.activationOffloadExposedS) : std::string(),
            duration(r.stepTimeS), 100 * r.uncertainty, r.timingSource),
        r.stepTimeS, "s",
        std::string(config.mfuOverride ? kStepSource
                                       : "the op-timed parts (docs/formulas-compute.md, 'Step time from ops')")
            + "; uncertainty: "
            + (r.timingSource == "measured kernels" && gpu.kernels
                      && gpu.kernels->trainingUncertainty > 0
                  ? gpu.kernels->validationSource
                  : std::string("the validation medians by timing source "
                                "(docs/validation-timing.md)")));
    if (config.offloadOptimizer || config.offloadParams) {
        ex.add("training.communication.offload_s",
            fmt::format("host-link bytes / host_link_gbps = {} / {} GB/s = {} ({})",
                num(c.offloadBytes), num(gpu.hostLinkBytesPerS / 1e9), duration(c.offloadS),
                config.offloadOptimizer
                    ? "optimizer offload: gradient shard down + 16-bit weights up"
                    : "parameter offload: the weight shard fetched per forward and backward"),
            c.offloadS, "s",
            "ZeRO-Offload (Ren et al. 2021) sec. 4.1; ZeRO-Infinity (Rajbhandari et al. 2021); "
            "PCIe Gen5 x16 64 GB/s per direction (PCI-SIG)");
        ex.add("training.communication.cpu_optimizer_s",
            fmt::format("optimizer shard x (2 x (master + moments) + fp32 gradient + weights) "
                        "bytes / host_memory_gbps {} GB/s = {}",
                num(gpu.hostMemoryBytesPerS / 1e9), duration(c.cpuOptimizerS)),
            c.cpuOptimizerS, "s",
            "ZeRO-Offload sec. 4.2 (the CPU Adam step is memory-bandwidth bound); host DRAM "
            "bandwidth per GPU (docs/formulas-compute.md)");
    }
    if (config.activationOffload) {
        ex.add("training.communication.activation_offload_s",
            fmt::format("2 x micro-batches x offloaded activations per micro-batch / "
                        "host_link_gbps = {} / {} GB/s = {} (down in the forward, back in the "
                        "backward)",
                num(c.activationOffloadBytes), num(gpu.hostLinkBytesPerS / 1e9),
                duration(c.activationOffloadS)),
            c.activationOffloadS, "s",
            "torchtune OffloadActivations (non-blocking copies to pinned memory); Megatron "
            "--cpu-offloading (Transformer Engine cpu_offload); host link per direction from the "
            "GPU preset (PCIe Gen5 x16 64 GB/s, PCI-SIG)");
        ex.add("training.communication.activation_offload_exposed_s",
            fmt::format("max(0, transfers - compute) = max(0, {} - {}) = {} (the copies run on a "
                        "side stream beside the compute)",
                duration(c.activationOffloadS), duration(r.computeTimeS),
                duration(c.activationOffloadExposedS)),
            c.activationOffloadExposedS, "s",
            "torchtune OffloadActivations use_streams=True (a separate CUDA stream overlaps the "
            "copies with compute); Transformer Engine AsyncDoubleBufferGroupOffloadHandler "
            "('completely hidden behind computation if computation time of a layer is longer "
            "than host-device communication time')");
    }
    if (config.optimizerInBackward)
        ex.add("training.time_breakdown.optimizer_in_backward",
            fmt::format("optimizer_in_backward: the same optimizer step {} runs inside the "
                        "backward, one parameter at a time on the compute stream: the step time "
                        "is unchanged",
                duration(r.optimizerS)),
            r.optimizerS, "s",
            "torchtune optimizer_in_bwd (post-accumulate-grad hooks on the default stream); "
            "README 'Optimization flags': +1.38% tokens/s, within run-to-run noise");
    ex.add("training.tokens_per_s",
        fmt::format("global batch / step time = {} / {} = {}", num(r.globalBatchTokens),
            duration(r.stepTimeS), num(r.tokensPerS)),
        r.tokensPerS, "tokens/s", kStepSource);
    ex.add("training.tokens_per_s_per_gpu",
        fmt::format(
            "tokens/s / gpus = {} / {} = {}", num(r.tokensPerS), r.gpus, num(r.tokensPerSPerGpu)),
        r.tokensPerSPerGpu, "tokens/s", "seed 000 (sustained FLOP/s / 6 P per GPU)");
    ex.add("training.effective_mfu",
        fmt::format("step FLOPs / (gpus x peak x step time) = {} / ({} x {} x {}) = {}",
            num(r.stepFlops), r.gpus, num(s.peakFlops), duration(r.stepTimeS), pct(r.effectiveMfu)),
        r.effectiveMfu, "", "MFU as defined by PaLM (Chowdhery et al. 2022) sec. 4.1");
    const double hfuFlops = hfuFlopsPerToken(s, config, r.hardwareFlopsPerToken);
    ex.add("training.hfu",
        fmt::format(
            "hardware FLOPs/token x batch / (gpus x peak x step time) = {} x {} / ({} x {} x "
            "{}) = {} (hfu_convention {})",
            num(hfuFlops), num(r.globalBatchTokens), r.gpus, num(s.peakFlops),
            duration(r.stepTimeS), pct(r.hfu),
            config.hfuConvention == HfuConvention::Korthikanti
                ? "korthikanti: selective recompute counts the attention term as s/(3h), "
                  "3x its forward"
                : "forward: the recompute's forward FLOPs"),
        r.hfu, "",
        "Korthikanti et al. 2022 sec. 6 (hardware FLOPs utilization) and Table 5 (their "
        "convention, hfu_convention korthikanti)");
    ex.add("training.train_time_s",
        fmt::format("train_tokens / tokens/s = {} / {} = {}", num(config.trainTokens),
            num(r.tokensPerS), duration(r.trainTimeS)),
        r.trainTimeS, "s", "seed 001 (Training Time)");
    ex.add("training.gpu_hours",
        fmt::format("gpus x train time / 3600 = {} x {} / 3600 = {}", r.gpus, num(r.trainTimeS),
            num(r.gpuHours)),
        r.gpuHours, "GPU-h", "seed 001 ex. 3");
    ex.add("training.cost",
        fmt::format("GPU-hours x price = {} x {} USD = {} USD", num(r.gpuHours),
            num(gpu.pricePerHour), num(r.cost)),
        r.cost, "USD", "seed 001 ex. 3");
}

void explainCommunication(const TrainingConfig& config, const ComputeSetup& s, const CommDetail& d,
    const TrainingCompute& r, Explainer& ex)
{
    const Communication& c = r.communication;
    const char* zero = config.zeroStage <= 0 ? "all-reduce 2g"
        : config.zeroStage < 3               ? "ZeRO-1/2 reduce-scatter g + all-gather w"
                                             : "ZeRO-3 reduce-scatter g + 2 all-gathers w (1.5x)";
    const bool hsdp = d.hsdpShard.group > 1;
    const int n = hsdp ? d.hsdpShard.group : d.dp.group;
    ex.add("training.communication.dp_bytes",
        fmt::format("(N-1)/N x {} B/param x params per GPU = {}/{} x {} x {}{} (+ experts {} "
                    "over dp/ep) = {}",
            zero, n > 1 ? n - 1 : 0, n, num(d.dpBytesPerParam), num(d.dpParams),
            hsdp ? fmt::format(" within the HSDP shard group, + 2 ({}-1)/{} x g x params / {} "
                               "all-reducing the gradient shard across the replicas = {}",
                d.dp.group / n, d.dp.group / n, n, gb(d.hsdpReplicaBytes))
                 : std::string(),
            num(d.expertDpParams), gb(c.dpBytes)),
        c.dpBytes, "bytes",
        "ZeRO (Rajbhandari et al. 2020) sec. 7 (communication volume); seed 001 (2 Psi bytes)");
    ex.add("training.communication.dp_s",
        fmt::format("dp bytes / bandwidth = {} over {}{} = {}", gb(c.dpBytes),
            hsdp ? linkText(d.hsdpShard) + " (shard group), the replica all-reduce over "
                 : std::string(),
            linkText(d.dp), duration(c.dpS)),
        c.dpS, "s", kRingSource);
    ex.add("training.communication.tp_bytes",
        fmt::format("2 (t-1)/t x (b x s/cp x h x bytes) x {} all-reduces x {} layers x {} "
                    "micro-batches = 2 x {}/{} x {} x {} x {} x {} = {}",
            d.tpAllReducesPerLayer, num(d.layersPerStage), s.microBatches, s.tp - 1, s.tp,
            gb(d.tpMessageBytes), d.tpAllReducesPerLayer, num(d.layersPerStage), s.microBatches,
            gb(c.tpBytes)),
        c.tpBytes, "bytes",
        "Megatron-LM (Shoeybi et al. 2019) sec. 3: 2 all-reduces forward + 2 backward per "
        "layer; +2 under full recompute (Korthikanti et al. 2022 sec. 5)");
    ex.add("training.communication.tp_s",
        fmt::format("tp bytes / bandwidth = {} over {} = {}", gb(c.tpBytes), linkText(d.tp),
            duration(c.tpS)),
        c.tpS, "s", kRingSource);
    ex.add("training.communication.pp_s",
        fmt::format("2 x m x v x (b x s/cp x h x bytes{}) / bandwidth = 2 x {} x {} x {} over "
                    "{} = {}",
            config.sequenceParallel ? " / tp" : "", s.microBatches, s.virtualStages,
            gb(d.ppMessageBytes), linkText(d.pp), duration(c.ppS)),
        c.ppS, "s", "Narayanan et al. 2021 sec. 4.1 (point-to-point between stages)");
    ex.add("training.communication.cp_s",
        s.cp <= 1
            ? std::string("no context parallelism (cp = 1) = 0")
            : fmt::format("3 x (cp-1) x K,V chunk x layers x m / bandwidth = 3 x {} x {} x {} x {} "
                          "over {} = {}",
                s.cp - 1, gb(d.cpChunkBytes), num(d.layersPerStage), s.microBatches, linkText(d.cp),
                duration(c.cpS)),
        c.cpS, "s", "ring attention (Liu et al. 2023); Megatron-Core context parallelism");
    ex.add("training.communication.ep_s",
        d.epBytes <= 0
            ? std::string("no expert parallelism (ep = 1 or a dense model) = 0")
            : fmt::format("4 all-to-alls x tokens x top-k x h x bytes x (ep-1)/ep x MoE layers x m "
                          "/ bandwidth = 4 x {} x {} x {} over {} = {}",
                gb(d.epMessageBytes), num(d.moeLayersPerStage), s.microBatches, linkText(d.ep),
                duration(c.epS)),
        c.epS, "s", "GShard (Lepikhin et al. 2020); DeepSpeed-MoE (Rajbhandari et al. 2022)");
    ex.add("training.communication.dp_overlap",
        fmt::format("1 - (1 - {}) x (1 - comm_overlap {}) = {} ({})", num(d.dpFrameworkOverlap),
            num(d.overlap), num(d.dpOverlap), dpOverlapText(config, d)),
        d.dpOverlap, "",
        "FSDP2 implicit forward/backward prefetch (pytorch.org/docs, torch.distributed.fsdp."
        "fully_shard); DDP gradient buckets (bucket_cap_mb, Li et al. 2020 sec. 3.2.3); "
        "DeepSpeed overlap_comm; Megatron-LM --overlap-grad-reduce and --overlap-param-gather (off "
        "by default; megatron/core/distributed/distributed_data_parallel.py, bucket_size "
        "max(40000000, 1000000 x dp)); Megatron-Bridge communication overlap (docs/training/"
        "communication-overlap.md: one DP chunk exposed)");
    ex.add("training.communication.tp_overlap",
        fmt::format("1 - (1 - {}) x (1 - comm_overlap {}) = {} ({})", config.asyncTp ? 1 : 0,
            num(d.overlap), num(d.tpOverlap),
            config.asyncTp ? "async TP: the collectives are decomposed and overlapped with the "
                             "matmuls"
                           : "TP collectives sit between dependent matmuls: exposed"),
        d.tpOverlap, "",
        "Wang et al. 2022 (Overlap Communication with Dependent Computation via Decomposition); "
        "torchtitan async TP (enable_async_tensor_parallel); Megatron --tp-comm-overlap");
    ex.add("training.communication.exposed_s",
        fmt::format("total - min(dp x {} + tp x {} + cp x {} + pp x {} + ep x {}, compute) = {} - "
                    "min({}, {}) = {}",
            num(d.dpOverlap), num(d.tpOverlap), num(d.otherOverlap), num(d.ppOverlap),
            num(d.epPpOverlap), duration(d.totalS),
            duration(d.overlappableS), duration(r.computeTimeS), duration(c.exposedS)),
        c.exposedS, "s", "docs/formulas-compute.md sec. 4 (overlap per framework, comm_overlap)");
    const char* schedule = config.ppSchedule == PpSchedule::DualPipe
        ? "DualPipe: (p/2 - 1)(F&B + B - 3W) with F&B = F + B, W the weight-gradient GEMMs"
        : config.ppSchedule == PpSchedule::ZeroBubble ? "ZB1P: (p - 1)(F + B - 2W)"
                                                      : "1F1B: (p - 1) / v";
    ex.add("training.communication.pp_bubble_fraction",
        s.pp > 1 ? fmt::format("idle / (m + idle), idle = {} = {} micro-batches of the slowest "
                               "stage: {} / ({} + {}) = {}",
            schedule, num(d.bubbleMicroBatches), num(d.bubbleMicroBatches), s.microBatches,
            num(d.bubbleMicroBatches), pct(c.ppBubbleFraction))
                 : std::string("no pipeline (pp = 1) = 0"),
        c.ppBubbleFraction, "",
        "Narayanan et al. 2021 sec. 2.2.1 ((p-1)/m of the ideal time) and 2.2.2 (divided by v "
        "when interleaved); Qi et al. 2024 (zero bubble); DeepSeek-AI 2024 Table 2 (DualPipe); "
        "seed 001 ((p-1)/(m+p-1))");
    ex.add("training.communication.pp_bubble_s",
        fmt::format("idle micro-batches x one micro-batch of the slowest stage (its exposed "
                    "collectives and p2p included) = {} ({}) = {}",
            num(d.bubbleMicroBatches), schedule, duration(c.ppBubbleS)),
        c.ppBubbleS, "s", "Narayanan et al. 2021 sec. 2.2; DeepSeek-AI 2024 Table 2");
    const bool commOnPath = d.overlappableS > r.computeTimeS;
    ex.add("training.bottleneck",
        fmt::format("largest term on the critical path of the {} step: {} ({}, {:.0f}% of the "
                    "step); {} (compute {}, communication {} of which {} overlappable, "
                    "bubble {})",
            duration(r.stepTimeS), r.bottleneck, duration(r.bottleneckS), 100 * r.bottleneckShare,
            commOnPath ? "the overlapped communication outlasts the compute, which is hidden "
                         "behind it"
                       : "the compute hides the overlapped communication",
            duration(r.computeTimeS), duration(d.totalS), duration(d.overlappableS),
            duration(c.ppBubbleS)),
        r.bottleneckS, "s", "seed 001 (Bottleneck identification: which ceiling dominates)");
    ex.add("training.bottleneck_share",
        fmt::format("bottleneck / step = {} / {} = {:.3f}", duration(r.bottleneckS),
            duration(r.stepTimeS), r.bottleneckShare),
        r.bottleneckShare, "", "critical path of the step (docs/formulas-compute.md)");
}

void explainSolver(const TrainingConfig& config, const Gpu& gpu, const ComputeSetup& s,
    const TrainingCompute& r, Explainer& ex)
{
    const double jobPeak = s.gpus * s.peakFlops;
    if (r.observedMfu) {
        const double tokensPerS
            = r.flopsPerToken > 0 ? *r.observedMfu * jobPeak / r.flopsPerToken : 0.0;
        const std::string observed = config.observedStepTimeS && *config.observedStepTimeS > 0
            ? fmt::format("batch {} / observed step {} s = {} tokens/s", num(r.globalBatchTokens),
                num(*config.observedStepTimeS), num(tokensPerS))
            : fmt::format("observed {} tokens/s", num(tokensPerS));
        ex.add("training.observed_mfu",
            fmt::format("{}; tokens/s x model FLOPs/token / (gpus x peak) = {} x {} / ({} x "
                        "{}) = {}",
                observed, num(tokensPerS), num(r.flopsPerToken), r.gpus, num(s.peakFlops),
                pct(*r.observedMfu)),
            *r.observedMfu, "", "seed 001 ex. 2; PaLM (Chowdhery et al. 2022) sec. 4.1");
        ex.add("training.observed_hfu",
            fmt::format("same with hardware FLOPs/token {} = {}",
                num(hfuFlopsPerToken(s, config, r.hardwareFlopsPerToken)), pct(*r.observedHfu)),
            *r.observedHfu, "", "Korthikanti et al. 2022 sec. 6 (HFU)");
    }
    const double trainFlops = r.flopsPerToken * config.trainTokens;
    if (r.requiredMfu)
        ex.add("training.required_mfu",
            fmt::format("train_tokens x FLOPs/token / (gpus x peak x deadline) = {} / ({} x "
                        "{} s) = {}",
                num(trainFlops), num(jobPeak), num(config.deadlineS.value_or(0)),
                pct(*r.requiredMfu)),
            *r.requiredMfu, "", "seed 001 ex. 3 (Required MFU)");
    if (r.gpusForDeadline)
        ex.add("training.gpus_for_deadline",
            fmt::format("ceil(hardware train FLOPs / (peak x mfu x deadline)) = ceil({} / ({} x "
                        "{} x {} s)) = {}",
                num(r.hardwareFlopsPerToken * config.trainTokens), num(s.peakFlops),
                num(config.mfu), num(config.deadlineS.value_or(0)), *r.gpusForDeadline),
            *r.gpusForDeadline, "GPUs",
            "seed 001 ex. 3 (budget, time and MFU: any two "
            "determine the third)");
    if (r.affordableGpus)
        ex.add("training.affordable_gpus",
            fmt::format("floor(budget / (price x deadline hours)) = floor({} / ({} x {})) = {}",
                num(config.budgetUsd.value_or(0)), num(gpu.pricePerHour),
                num(config.deadlineS.value_or(0) / 3600), *r.affordableGpus),
            *r.affordableGpus, "GPUs", "seed 001 ex. 3 (GPU constraint from budget)");
    if (r.budgetTokens)
        ex.add("training.budget_tokens",
            fmt::format("budget / price x 3600 x tokens/s per GPU = {} / {} x 3600 x {} = {}",
                num(config.budgetUsd.value_or(0)), num(gpu.pricePerHour), num(r.tokensPerSPerGpu),
                num(*r.budgetTokens)),
            *r.budgetTokens, "tokens", "seed 001 ex. 3");
    if (r.achievableDeadlineS)
        ex.add("training.achievable_deadline_s",
            fmt::format("the budget covers the cost ({} <= {} USD): train time = {}", num(r.cost),
                num(config.budgetUsd.value_or(0)), duration(*r.achievableDeadlineS)),
            *r.achievableDeadlineS, "s", "seed 001 ex. 3");
}

} // namespace

void explainCompute(const ModelArch&, const TrainingConfig& config, const Gpu& gpu,
    const ComputeSetup& setup, const CommDetail& comm, const TrainingCompute& result, Explainer& ex)
{
    explainFlops(config, setup, result, ex);
    explainTime(config, gpu, setup, result, ex);
    explainCommunication(config, setup, comm, result, ex);
    explainSolver(config, gpu, setup, result, ex);
}

} // namespace envelope
