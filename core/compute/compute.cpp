// The compute side of training: FLOPs per token, step time, throughput, time and cost to train,
// observed utilisation and the budget solver. Communication and the pipeline bubble are in
// compute_comm.cpp, explanations in compute_explain.cpp. Formulas and their sources:
// docs/formulas-compute.md.
//
// Per token (l layers, s sequence, P_mm the parameters that are matmuls):
//   model FLOPs     = 6 P_mm + 12 l s_att A       (A = heads x head_dim; PaLM app. B;
//                                                  Narayanan et al. 2021 eq. 3 without recompute)
//   hardware FLOPs  = model + the forward a recompute repeats (Korthikanti et al. 2022 sec. 6)
//   forward FLOPs   = 2 P_mm + 4 l s_att A
// Step time = step model FLOPs / (gpus x peak x mfu) + exposed communication + pipeline bubble.
#include "compute/compute.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compute/detail.h"
#include "kernels/kerneltable.h"
#include "model/attention.h"
#include "base/numeric.h"
#include "plan/recipe.h"
#include "training/detail.h"

namespace envelope {
namespace {

int atLeastOne(int x)
{
    return x < 1 ? 1 : x;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
// Integer GPU counts above this are not reported (a budget of 1e15 USD would overflow int).
constexpr double kMaxGpus = 1e9;

double divideOr(double numerator, double denominator, double otherwise)
{
    return denominator > 0 && std::isfinite(denominator) ? numerator / denominator : otherwise;
}

// Offload per step and GPU (issue 11: offload was free while moving 141 GB per node).
// Optimizer offload (ZeRO-Offload, Ren et al. 2021 sec. 4.1): the GPU sends its gradient shard
// to the host and receives the updated 16-bit weights; the CPU runs the optimizer over the
// shard, streaming master + moments in and out, the fp32 gradient in and the weights out, at
// the host's memory bandwidth. Parameter offload (ZeRO-Infinity, Rajbhandari et al. 2021)
// fetches the weight shard for the forward and the backward, once more under a full recompute.
// The shards are the ones training memory counts: / dp under ZeRO >= 1 (optimizer) and
// ZeRO 3 (weights), routed experts over dp / ep. Both run outside compute here (DeepSpeed
// overlaps part of the gradient copy with the backward; this counts none of that).
void addOffload(const TrainingConfig& config, const CommDetail& d, const ComputeSetup& s,
    const Gpu& gpu, Communication& c)
{
    if (!config.offloadOptimizer && !config.offloadParams)
        return;
    const Recipe& recipe = config.recipe.recipe;
    const int zero = std::clamp(config.zeroStage, 0, 3);
    const double dp = s.dp, edp = std::max(1.0, double(s.dp) / s.ep);
    const auto shard = [&](bool sharded) {
        return sharded ? d.dpParams / dp + d.expertDpParams / edp : d.dpParams + d.expertDpParams;
    };
    const double weightBytes = positiveOrZero(recipe.weightBytes);
    double linkBytes = 0, cpuBytes = 0;
    if (config.offloadOptimizer) {
        const double params = shard(zero >= 1);
        const double states = positiveOrZero(recipe.masterBytes)
            + positiveOrZero(optimizerStateBytesPerParam(recipe, config.optimizer));
        linkBytes += params * (positiveOrZero(recipe.gradientBytes) + weightBytes);
        cpuBytes += params * (2 * states + kHostGradientBytes + weightBytes);
    }
    if (config.offloadParams) {
        const bool fullRecompute
            = config.recompute == Recompute::Full || config.recompute == Recompute::EveryK;
        linkBytes += (fullRecompute ? 3 : 2) * weightBytes * shard(zero >= 3);
    }
    c.offloadBytes = linkBytes;
    c.offloadS = divideOr(linkBytes, positiveOrZero(gpu.hostLinkBytesPerS), 0.0);
    c.cpuOptimizerS = divideOr(cpuBytes, positiveOrZero(gpu.hostMemoryBytesPerS), 0.0);
}

// Activation offload (training.activation_offload): each micro-batch's offloaded activations go
// to pinned host memory in the forward and come back in the backward, over the GPU's host link
// (host_link_gbps per direction, as optimizer offload), on a side stream that overlaps the
// compute (torchtune OffloadActivations use_streams=True: a separate CUDA stream; Transformer
// Engine's AsyncDoubleBufferGroupOffloadHandler: "completely hidden behind computation if
// computation time of a layer is longer than host-device communication time"). The step pays
// what the transfers take beyond the compute. The stage offloading the most sets it.
void addActivationOffload(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const ComputeSetup& s, const Gpu& gpu, double computeS,
    Communication& c)
{
    if (!config.activationOffload)
        return;
    const TrainingSetup setup = trainingSetup(arch, counts, config, gpu);
    double perMicroBatch = 0;
    for (int stage = 0; stage < setup.pp; ++stage) {
        const StageActivation a = stageMemory(setup, config, stage, s.dp).activation;
        if (a.inFlight > 0)
            perMicroBatch = std::max(perMicroBatch, a.offloaded * a.calibration / a.inFlight);
    }
    c.activationOffloadBytes = 2 * s.microBatches * perMicroBatch; // down, then back up
    c.activationOffloadS
        = divideOr(c.activationOffloadBytes, positiveOrZero(gpu.hostLinkBytesPerS), 0.0);
    c.activationOffloadExposedS = std::max(0.0, c.activationOffloadS - computeS);
}

} // namespace

// The expected relative error of a step time, by how it was timed and on which GPU
// (docs/validation-timing.md, "Uncertainty"). Measured kernels: the GPU's kernel table states the
// median |error| of the published training runs on it, rounded up to the next 5% ("validation"
// in presets/kernels/<gpu>.json); a table without one takes the median over all 38 runs, 18%,
// rounded up. Spec estimates carry the spread of the tables' large-GEMM efficiency across GPUs
// on top; an `mfu` override has no validation of its own and takes the constant's record (29%
// median on Table 5, issue 22).
double timingUncertainty(std::string_view timingSource, const Gpu& gpu)
{
    if (timingSource == "measured kernels")
        return gpu.kernels && gpu.kernels->trainingUncertainty > 0
            ? gpu.kernels->trainingUncertainty
            : 0.20;
    if (timingSource == "spec estimate")
        return 0.25;
    return 0.30;
}

// Extra forward FLOPs per token a recompute policy runs during backward (Korthikanti et al.
// 2022 sec. 5-6), as the plan's framework runs it (presets/frameworks.json, "selective"):
// Megatron's selective re-runs the attention core (QK^T, softmax, AV) only; torchtitan's per-op
// SAC saves the SDPA output and re-runs every second matmul; a framework that only checkpoints
// whole layers runs selective as full. Full and every-k re-run each layer's forward once. The
// LM head / logits are never recomputed.
RecomputeFlops recomputeFlops(const ComputeSetup& s, const TrainingConfig& config)
{
    RecomputeFlops r;
    Recompute recompute = config.recompute;
    if (recompute == Recompute::Selective && config.framework.selective == SelectivePolicy::Full)
        recompute = Recompute::Full;
    switch (recompute) {
    case Recompute::None:
        break;
    case Recompute::Selective:
        if (config.framework.selective == SelectivePolicy::PerOpSac)
            r.linear = s.sacRecomputeParams > 0 ? 2 * s.sacRecomputeParams : s.layerMatmulParams;
        else
            r.attention = s.attentionForwardPerToken;
        break;
    case Recompute::Full:
    case Recompute::EveryK:
        r.linear = 2 * s.layerMatmulParams;
        r.attention = s.attentionForwardPerToken;
        break;
    }
    return r;
}

double hfuFlopsPerToken(
    const ComputeSetup& s, const TrainingConfig& config, double hardwareFlopsPerToken)
{
    const bool attentionCoreRecompute = config.recompute == Recompute::Selective
        && config.framework.selective == SelectivePolicy::AttentionCore;
    if (config.hfuConvention == HfuConvention::Korthikanti && attentionCoreRecompute)
        return hardwareFlopsPerToken + 2 * s.attentionForwardPerToken;
    return hardwareFlopsPerToken;
}

ComputeSetup computeSetup(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const Cluster& cluster, const Gpu& gpu)
{
    ComputeSetup s;
    s.tp = atLeastOne(config.tp);
    s.pp = atLeastOne(config.pp);
    s.cp = atLeastOne(config.cp);
    s.ep = atLeastOne(config.ep);
    s.virtualStages = s.pp > 1 ? atLeastOne(config.virtualStages) : 1;
    s.microBatches = atLeastOne(config.gradAccum);
    // GPUs that talk over NVLink: the node, or a larger NVLink domain (GB200 NVL72: 72).
    s.gpusPerNode = atLeastOne(nvlinkDomainGpus(cluster, gpu));
    // Same data-parallel size as training memory: whole model replicas that fit the cluster,
    // at least one (a cluster smaller than tp x pp x cp is a plan error reported elsewhere).
    const double modelParallel = double(s.tp) * s.pp * s.cp;
    s.dp = std::max(1, static_cast<int>(std::max(cluster.gpus, 0) / modelParallel));
    s.gpus = s.dp * modelParallel;
    s.microBatch = std::max(config.microBatch, 0);
    s.seqLen = std::max(config.seqLen, 0);
    s.layers = std::max(arch.layers, 0);
    s.hidden = static_cast<double>(std::max<std::int64_t>(arch.hidden, 0));

    // 6 x P counts matmul weights (Kaplan et al. 2020 sec. 2.1, "excluding embeddings").
    // Token and learned position embeddings are lookups; the LM head is a (vocab x h) matmul
    // whether or not it is tied to the embedding, so a tied head is added back.
    const double active
        = positiveOrZero(counts.active) > 0 ? counts.active : positiveOrZero(counts.total);
    const double embedding = positiveOrZero(counts.embedding);
    const double positions = positiveOrZero(counts.positions);
    const double lmHead = positiveOrZero(counts.lmHead);
    s.headParams = lmHead > 0 ? lmHead : (arch.tiedEmbeddings ? embedding : 0.0);
    s.matmulParams
        = std::max(0.0, active - embedding - positions) + (lmHead > 0 ? 0 : s.headParams);
    s.layerMatmulParams = std::max(0.0, s.matmulParams - s.headParams);

    // Attention core: QK^T is 2 x s_att x d_qk and AV 2 x s_att x d_v FLOPs per head, token and
    // layer, forward. The full s x s product is counted (no causal halving), as Narayanan et al.
    // 2021 eq. 3, Korthikanti et al. 2022 eq. 7 and PaLM's MFU (Chowdhery et al. 2022 app. B)
    // do, so MFU figures compare with published ones. A sliding window bounds s_att.
    double dQk = 0, dV = 0;
    if (arch.mla) {
        dQk = std::max(arch.mla->qkNopeHeadDim, 0) + std::max(arch.mla->qkRopeHeadDim, 0);
        dV = std::max(arch.mla->vHeadDim, 0);
    } else {
        dQk = dV = arch.headDimOrDefault();
    }
    const double heads = std::max(arch.heads, 0);
    // Per-layer windows and chunks bound it layer by layer (model/attention.h): the mean over
    // the layers that attend (Gemma 3: 5 of 6 layers see 1,024 tokens).
    s.attendedLen = meanKeptTokens(arch, s.seqLen);
    s.attentionWidth = heads * (dQk + dV) / 2;
    s.attentionForwardPerToken = 4 * s.layers * s.attendedLen * s.attentionWidth;
    s.peakFlops = peakFlops(gpu, config.recipe.recipe.compute);
    s.otherPeakFlops = config.recipe.recipe.compute == ComputeDtype::Fp8
        ? peakFlops(gpu, ComputeDtype::Bf16)
        : s.peakFlops;
    if (!arch.moe && !arch.mla && arch.hidden > 0) {
        // k (h x kv_heads x head_dim) + o (heads x head_dim x h) + up (h x ffn), per layer.
        const double h = s.hidden, d = arch.headDimOrDefault();
        s.sacRecomputeParams = s.layers
            * (h * arch.kvHeadsOrDefault() * d + heads * d * h
                + h * static_cast<double>(std::max<std::int64_t>(arch.ffnHidden, 0)));
    }
    return s;
}

TrainingCompute estimateCompute(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const Cluster& cluster, const Gpu& gpu, Explainer* ex)
{
    const ComputeSetup s = computeSetup(arch, counts, config, cluster, gpu);
    TrainingCompute r;

    // FLOPs per token: forward 2 P_mm + attention, backward twice the forward.
    r.forwardFlopsPerToken = 2 * s.matmulParams + s.attentionForwardPerToken;
    r.flopsPerToken = 3 * r.forwardFlopsPerToken;
    const RecomputeFlops recompute = recomputeFlops(s, config);
    r.hardwareFlopsPerToken = r.flopsPerToken + recompute.total();

    // One step: the global batch through the whole job at the assumed MFU (seed 001,
    // "Time per Step": F_step / (P x peak x MFU)).
    r.gpus = static_cast<int>(s.gpus);
    r.peakFlopsPerGpu = s.peakFlops;
    r.globalBatchTokens = s.microBatch * s.microBatches * s.dp * s.seqLen;
    r.stepFlops = r.flopsPerToken * r.globalBatchTokens;
    // Without an `mfu` override the step is timed from its ops (steptime.cpp): m micro-batches
    // of the slowest pipeline stage, each the sum of its forward, backward and recompute ops
    // timed from the GPU's kernel tables or specs. With an override (the plan's `mfu`, the
    // kernel efficiency of Envelope before op timing) the GPU runs the hardware FLOPs at that
    // fraction of its peak: the layers' linears at the recipe's peak, the LM head, the
    // attention core and the rest at otherPeakFlops (the BF16 peak under FP8).
    const double mfu = std::isfinite(config.mfu) ? std::clamp(config.mfu, 0.0, 1.0) : 0.0;
    const bool opTimed = !config.mfuOverride;
    StageOpTimes stage;
    if (opTimed) {
        const OpStep ops = opStep(arch, counts, config, s, gpu);
        stage = ops.slowestStage(s.pp);
        r.slowestStage = ops.slowestStageIndex;
        const double m = r.globalBatchTokens > 0 ? s.microBatches : 0;
        r.computeTimeS = m * stage.computeS();
        r.gemmS = m * stage.gemmS;
        r.attentionS = m * stage.attentionS;
        r.elementwiseS = m * stage.elementwiseS;
        r.recomputeS = m * ops.recompute.computeS();
        r.optimizerS = r.globalBatchTokens > 0 ? ops.optimizerS : 0.0;
        const double opTotal = m * (stage.computeS() + stage.commS()) + r.optimizerS;
        r.measuredShare = opTotal > 0 ? m * stage.measuredS / opTotal : 0.0;
        r.timingSource = r.measuredShare >= 0.5 ? "measured kernels" : "spec estimate";
    } else {
        const double linearFlops = 6 * s.layerMatmulParams + recompute.linear;
        const double otherFlops = r.hardwareFlopsPerToken - linearFlops;
        const double secondsPerToken = divideOr(linearFlops, s.peakFlops * mfu, kInf)
            + divideOr(otherFlops, s.otherPeakFlops * mfu, otherFlops > 0 ? kInf : 0.0);
        r.computeTimeS = r.hardwareFlopsPerToken * r.globalBatchTokens > 0
            ? secondsPerToken * r.globalBatchTokens / s.gpus
            : 0.0;
        r.timingSource = "mfu override";
    }

    const CommDetail comm = communication(
        arch, counts, config, s, gpu, r.computeTimeS, opTimed ? &stage : nullptr);
    r.communication = comm.result;
    addOffload(config, comm, s, gpu, r.communication);
    addActivationOffload(arch, counts, config, s, gpu, r.computeTimeS, r.communication);
    r.stepTimeS = r.computeTimeS + r.communication.exposedS + r.communication.ppBubbleS
        + r.communication.offloadS + r.communication.cpuOptimizerS + r.optimizerS
        + r.communication.activationOffloadExposedS;
    r.uncertainty = timingUncertainty(r.timingSource, gpu);

    r.tokensPerS = r.globalBatchTokens > 0 ? divideOr(r.globalBatchTokens, r.stepTimeS, 0.0) : 0.0;
    r.tokensPerSPerGpu = r.tokensPerS / s.gpus;
    r.effectiveMfu = divideOr(r.stepFlops, s.gpus * s.peakFlops * r.stepTimeS, 0.0);
    // HFU counts the FLOPs the hardware runs, the recomputed forward included (Korthikanti et
    // al. 2022 sec. 6, "hardware FLOPs utilization"), over the same whole step.
    // Under `hfu_convention: korthikanti` selective recompute counts the attention term twice
    // (s/(3h) instead of s/(6h) in eq. 8's bracket), as their Table 5 does.
    const double hfuFlops = hfuFlopsPerToken(s, config, r.hardwareFlopsPerToken);
    r.hfu = divideOr(hfuFlops * r.globalBatchTokens, s.gpus * s.peakFlops * r.stepTimeS, 0.0);
    const double trainTokens = positiveOrZero(config.trainTokens);
    r.trainTimeS = trainTokens > 0 ? divideOr(trainTokens, r.tokensPerS, kInf) : 0.0;
    r.gpuHours = r.trainTimeS > 0 ? s.gpus * r.trainTimeS / 3600 : 0.0;
    // A free GPU costs 0 even over an infinite time (no inf x 0 = NaN).
    r.cost
        = r.gpuHours > 0 && positiveOrZero(gpu.pricePerHour) > 0 ? r.gpuHours * gpu.pricePerHour : 0.0;

    // The bottleneck is the largest term on the step's critical path (issue 11: a 551 ms step
    // whose DP traffic takes 551 ms behind 440 ms of compute is DP-bound, not compute-bound).
    // Step = max(compute, overlapped comm) + non-overlapped comm + bubble (communication.cpp):
    // when the overlapped communication outlasts the compute, all of the communication is on
    // the path and the compute is hidden behind it; otherwise the compute is on the path with
    // only the non-overlapped share of each kind. Ties go to compute.
    const Communication& c = r.communication;
    const bool commOnPath = comm.overlappableS > r.computeTimeS;
    const auto onPath = [&](double overlap) { return commOnPath ? 1.0 : 1.0 - overlap; };
    const struct {
        const char* name;
        double seconds;
    } parts[] = {
        { "compute", commOnPath ? 0.0 : r.computeTimeS },
        { "dp-comm", c.dpS * onPath(comm.dpOverlap) },
        { "tp-comm", c.tpS * onPath(comm.tpOverlap) },
        { "pp-bubble", c.ppBubbleS },
        { "pp-comm", c.ppS * onPath(comm.ppOverlap) },
        { "cp-comm", c.cpS * onPath(comm.otherOverlap) },
        { "ep-comm", c.epS * onPath(comm.epPpOverlap) },
        { "host-transfer", c.offloadS + c.activationOffloadExposedS },
        { "cpu-optimizer", c.cpuOptimizerS },
        { "optimizer", r.optimizerS },
    };
    const auto* top = std::max_element(std::begin(parts), std::end(parts),
        [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
    r.bottleneck = top->name;
    r.bottleneckS = top->seconds;
    r.bottleneckShare = divideOr(r.bottleneckS, r.stepTimeS, 0.0);

    // Observed utilisation (seed 001 ex. 2): MFU = tokens/s x model FLOPs per token / peak of
    // the job; HFU the same with the hardware FLOPs. A step time is turned into tokens/s first.
    double observedTokensPerS = 0;
    if (config.observedStepTimeS && positiveOrZero(*config.observedStepTimeS) > 0)
        observedTokensPerS = r.globalBatchTokens / *config.observedStepTimeS;
    else if (config.observedTokensPerS)
        observedTokensPerS = positiveOrZero(*config.observedTokensPerS);
    const double jobPeak = s.gpus * s.peakFlops;
    if (observedTokensPerS > 0 && jobPeak > 0) {
        r.observedMfu = observedTokensPerS * r.flopsPerToken / jobPeak;
        r.observedHfu = observedTokensPerS * hfuFlops / jobPeak;
    }

    // Budget solver (seed 001 ex. 3): budget, deadline and MFU, any two give the third.
    const double trainFlops = r.flopsPerToken * trainTokens;
    const double price = positiveOrZero(gpu.pricePerHour);
    const double budget = config.budgetUsd ? positiveOrZero(*config.budgetUsd) : 0.0;
    const double deadline = config.deadlineS ? positiveOrZero(*config.deadlineS) : 0.0;
    if (deadline > 0 && s.peakFlops > 0 && trainFlops > 0) {
        r.requiredMfu = trainFlops / (s.gpus * s.peakFlops * deadline);
        if (mfu > 0) {
            // The GPUs run the hardware FLOPs at the kernel efficiency `mfu`.
            const double hardwareTrainFlops = r.hardwareFlopsPerToken * trainTokens;
            const double gpus
                = std::ceil(hardwareTrainFlops / (s.peakFlops * mfu * deadline) * (1 - 1e-12));
            if (gpus <= kMaxGpus)
                r.gpusForDeadline = static_cast<int>(gpus);
        }
    }
    if (config.budgetUsd && price > 0) {
        if (deadline > 0) {
            const double gpus = std::floor(budget / (price * deadline / 3600) * (1 + 1e-12));
            if (gpus <= kMaxGpus)
                r.affordableGpus = static_cast<int>(gpus);
        } else {
            // GPU-hours the budget buys, at this plan's throughput per GPU.
            r.budgetTokens = budget / price * 3600 * r.tokensPerSPerGpu;
            if (std::isfinite(r.cost) && r.cost <= budget)
                r.achievableDeadlineS = r.trainTimeS;
        }
    }

    if (ex)
        explainCompute(arch, config, gpu, s, comm, r, *ex);
    return r;
}

} // namespace envelope
