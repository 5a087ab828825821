// Communication per training step and the pipeline bubble. Formulas and their sources:
// docs/formulas-compute.md, sec. 4-5.
//
// Collectives are ring collectives over a group of N ranks, each GPU sending
//   all-reduce 2 (N-1)/N x bytes,  reduce-scatter or all-gather (N-1)/N x bytes
// (Patarasuk & Yuan 2009; seed 001 "AllReduce time (ring, P GPUs, bandwidth beta)"), at the
// per-GPU bandwidth of the link the group uses. Ranks are laid out as Megatron-Core does
// (order tp, cp, ep, dp, pp: tensor parallel innermost), so a group whose span of consecutive
// ranks fits in one node talks over NVLink, otherwise over the node's NIC.
#include <algorithm>
#include <cmath>

#include "compute/detail.h"
#include "base/numeric.h"
#include "kernels/timing.h"

namespace envelope {
namespace {


// `group` ranks spaced inside a block of `span` consecutive ranks.
Link link(int group, double span, const ComputeSetup& s, const Gpu& gpu)
{
    Link l;
    l.group = std::max(group, 1);
    l.intraNode = span <= s.gpusPerNode;
    l.bytesPerS = positiveOrZero(l.intraNode ? gpu.intraNodeBytesPerS : gpu.interNodeBytesPerS);
    return l;
}

// Ring factor for an all-reduce (2 (N-1)/N) or a reduce-scatter / all-gather ((N-1)/N).
double ring(int group)
{
    return group > 1 ? double(group - 1) / group : 0.0;
}

// Seconds to send `bytes` over `l`; a link without a stated bandwidth is not modelled.
double seconds(double bytes, const Link& l)
{
    return bytes > 0 && l.bytesPerS > 0 ? bytes / l.bytesPerS : 0.0;
}

// The data-parallel seconds that hide behind compute (docs/formulas-compute.md sec. 4,
// "Overlap per framework"):
// - ZeRO-3 / FSDP with prefetch: each layer's all-gather runs behind the previous layer's
//   compute (FSDP2 implicit prefetch; DeepSpeed ZeRO-3 overlap_comm), on every micro-batch;
//   the first layer's all-gather and the last layer's reduce-scatter have nothing to hide
//   behind: 1 - 1 / layers per stage of the whole DP time;
// - below ZeRO-3, the gradient reduction (training.overlap_grad_reduce; the framework's
//   `buckets`): gradients accumulate locally until the last micro-batch, whose backward
//   reduces each bucket as it fills (DDP no_sync + bucket_cap_mb; Megatron-LM
//   --overlap-grad-reduce), so all but the last bucket hide, and no more than that one
//   backward;
// - below ZeRO-3, the updated weights' all-gather (training.overlap_param_gather, Megatron-LM
//   --overlap-param-gather with the distributed optimizer): each bucket's all-gather is
//   waited for by the next step's forward of the first micro-batch, so all but the first
//   bucket hide, and no more than that one forward.
DpHidden dpHidden(const TrainingConfig& config, const CommDetail& d, double backwardWindowS,
    double forwardWindowS)
{
    DpHidden h;
    const DpOverlap mode = config.framework.dpOverlap;
    const int zero = std::clamp(config.zeroStage, 0, 3);
    const double total = d.dpGradS + d.dpParamS;
    if (d.dpBytesPerParam <= 0 || !(total > 0))
        return h;
    if (zero >= 3) {
        const bool prefetch = config.overlapParamGather.value_or(
            mode == DpOverlap::Prefetch || mode == DpOverlap::BucketsAndPrefetch);
        h.prefetch = prefetch;
        h.gradS = prefetch && d.layersPerStage > 0
            ? total * (1 - 1 / std::max(1.0, d.layersPerStage))
            : 0.0;
        return h;
    }
    h.gradOn = config.overlapGradReduce.value_or(
        mode == DpOverlap::Buckets || mode == DpOverlap::BucketsAndPrefetch);
    h.paramOn = zero >= 1 && config.overlapParamGather.value_or(false);
    const double params = d.dpParams + d.expertDpParams;
    const double gradBytes = positiveOrZero(config.recipe.recipe.gradientBytes);
    const FrameworkProfile& fw = config.framework;
    const double bucketParams = fw.gradBucketBytes > 0 && gradBytes > 0
        ? fw.gradBucketBytes / gradBytes
        : std::max(positiveOrZero(fw.overlapBucketParams),
              positiveOrZero(fw.overlapBucketParamsPerDp) * d.dp.group);
    h.bucketShare = params > 0 ? std::min(1.0, bucketParams / params) : 1.0;
    h.backwardWindowS = positiveOrZero(backwardWindowS);
    h.forwardWindowS = positiveOrZero(forwardWindowS);
    if (h.gradOn)
        h.gradS = std::min(d.dpGradS * (1 - h.bucketShare), h.backwardWindowS);
    if (h.paramOn)
        h.paramS = std::min(d.dpParamS * (1 - h.bucketShare), h.forwardWindowS);
    return h;
}

// Data-parallel traffic timed per collective from the kernel tables (intra-node) or the links
// (across nodes): ZeRO-0 all-reduces the gradients, ZeRO-1/2 reduce-scatter them and
// all-gather the updated weights once per step; ZeRO-3 / FSDP all-gathers the weights for the
// forward and again for the backward and reduce-scatters the gradients on every micro-batch
// (FSDP2 reshard_after_forward, DeepSpeed ZeRO-3), except where the framework keeps the
// stage's parameters unsharded across micro-batches (FSDP + PP: pp_unsharded). Returns the
// seconds; `bytesOut` the bytes each GPU sends.
double opTimedDp(const TrainingConfig& config, CommDetail& d, const ComputeSetup& s,
    const Gpu& gpu, double& bytesOut)
{
    const int zero = std::clamp(config.zeroStage, 0, 3);
    const double gradBytes = positiveOrZero(config.recipe.recipe.gradientBytes);
    const double weightBytes = positiveOrZero(config.recipe.recipe.weightBytes);
    const double gathers = zero >= 3 && !(config.framework.ppUnsharded && s.pp > 1) ? s.microBatches : 1;
    bytesOut = 0;
    const auto part = [&](double params, const Link& link) {
        if (params <= 0 || link.group <= 1)
            return 0.0;
        const auto time = [&](CollectiveKind kind, double bytes) {
            bytesOut += busFactor(kind, link.group) * bytes;
            return collectiveTime(kind, bytes, link.group, link.intraNode, false, gpu).seconds;
        };
        switch (zero) {
        case 0: {
            const double reduce = time(CollectiveKind::AllReduce, gradBytes * params);
            d.dpGradS += reduce;
            return reduce;
        }
        case 1:
        case 2: {
            const double reduce = time(CollectiveKind::ReduceScatter, gradBytes * params);
            const double gather = time(CollectiveKind::AllGather, weightBytes * params);
            d.dpGradS += reduce;
            d.dpParamS += gather;
            return reduce + gather;
        }
        default:
            return gathers
                * (2 * time(CollectiveKind::AllGather, d.allGatherBytes * params)
                    + time(CollectiveKind::ReduceScatter, gradBytes * params));
        }
    };
    double seconds = 0;
    d.dpGradS = d.dpParamS = 0;
    if (zero >= 3 && config.hsdpShard > 0 && config.hsdpShard < d.dp.group) {
        // HSDP: the shard group's collectives, then each rank's gradient shard all-reduced
        // across the replicas once per step.
        seconds += part(d.dpParams, d.hsdpShard);
        Link replicas = d.dp;
        replicas.group = std::max(1, d.dp.group / config.hsdpShard);
        const double shard = gradBytes * d.dpParams / config.hsdpShard;
        if (replicas.group > 1) {
            bytesOut += busFactor(CollectiveKind::AllReduce, replicas.group) * shard;
            seconds += collectiveTime(CollectiveKind::AllReduce, shard, replicas.group,
                replicas.intraNode, false, gpu).seconds;
        }
    } else {
        seconds += part(d.dpParams, d.dp);
    }
    seconds += part(d.expertDpParams, d.expertDp);
    if (zero >= 3) {
        d.dpGradS = seconds; // one pool: the ZeRO-3 prefetch rule hides a share of all of it
        d.dpParamS = 0;
    }
    return seconds;
}

} // namespace

CommDetail communication(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const ComputeSetup& s, const Gpu& gpu, double computeTimeS,
    const StageOpTimes* ops)
{
    CommDetail d;
    Communication& c = d.result;
    const Recipe& recipe = config.recipe.recipe;
    const double gradBytes = positiveOrZero(recipe.gradientBytes);
    const double weightBytes = positiveOrZero(recipe.weightBytes);
    const double actBytes = positiveOrZero(recipe.activationBytes);
    const double m = s.microBatches;
    const double tokens = s.microBatch * s.seqLen / s.cp; // one micro-batch on one GPU
    d.layersPerStage = s.layers / s.pp;

    d.tp = link(s.tp, s.tp, s, gpu);
    d.cp = link(s.cp, double(s.tp) * s.cp, s, gpu);
    d.ep = link(s.ep, double(s.tp) * s.cp * s.ep, s, gpu);
    // torchtitan's FSDP shards over dp x cp (dp_shard_cp) and Megatron's grad buffers reduce
    // over dp x cp (intra_dp_cp_group): their data-parallel collectives span both.
    const int zeroStage = std::clamp(config.zeroStage, 0, 3);
    const int shardGroup = s.dp * (config.framework.shardOverCp ? s.cp : 1);
    d.dp = link(shardGroup, double(s.tp) * s.cp * s.dp, s, gpu);
    d.expertDp = link(std::max(1, s.dp / s.ep), double(s.tp) * s.cp * s.dp, s, gpu);
    d.pp = link(s.pp, s.gpus, s, gpu);

    // Data parallel, once per step (gradients accumulate locally over the micro-batches).
    // ZeRO (Rajbhandari et al. 2020) sec. 7: stages 1-2 replace the all-reduce by a
    // reduce-scatter of gradients and an all-gather of updated weights (same volume, 2 Psi);
    // stage 3 all-gathers the weights again for the backward pass, 3 Psi: 1.5x the all-reduce.
    const double expertParams
        = positiveOrZero(counts.expertParamsPerLayer) * std::max(counts.moeLayers, 0);
    const double totalParams = positiveOrZero(counts.total);
    const double replicaShard = double(s.tp) * s.pp;
    d.dpParams = std::max(0.0, totalParams - expertParams) / replicaShard;
    d.expertDpParams = std::min(expertParams, totalParams) / (replicaShard * s.ep);
    const int zero = zeroStage;
    // ZeRO-3 / FSDP all-gathers the weights in the compute dtype (FSDP2 param_dtype; fp32
    // sharded weights travel as bf16), as training memory counts them.
    const double computeBytes = actBytes > 0 ? std::min(weightBytes, actBytes) : weightBytes;
    d.allGatherBytes = zero < 3 ? weightBytes : computeBytes;
    d.dpBytesPerParam = zero == 0 ? 2 * gradBytes
        : zero < 3                ? gradBytes + weightBytes
                                  : gradBytes + 2 * computeBytes;
    double denseDpBytes = ring(d.dp.group) * d.dpBytesPerParam * d.dpParams;
    d.expertDpBytes = ring(d.expertDp.group) * d.dpBytesPerParam * d.expertDpParams;
    double denseDpS = seconds(denseDpBytes, d.dp);
    // HSDP (training.hsdp_shard = n): the all-gathers and the reduce-scatter run inside each
    // shard group of n consecutive ranks (spanning tp x n), and each rank all-reduces its
    // gradient shard with the R = group / n replicas across the groups (FSDP2 HSDP).
    if (zeroStage >= 3 && config.hsdpShard > 0 && config.hsdpShard < d.dp.group) {
        const int n = config.hsdpShard;
        const int replicas = std::max(1, d.dp.group / n);
        d.hsdpShard = link(n, double(s.tp) * n, s, gpu);
        d.hsdpReplicaBytes = 2 * ring(replicas) * gradBytes * d.dpParams / n;
        const double shardBytes = ring(n) * d.dpBytesPerParam * d.dpParams;
        denseDpBytes = shardBytes + d.hsdpReplicaBytes;
        denseDpS = seconds(shardBytes, d.hsdpShard) + seconds(d.hsdpReplicaBytes, d.dp);
    }
    c.dpBytes = denseDpBytes + d.expertDpBytes;
    c.dpS = denseDpS + seconds(d.expertDpBytes, d.expertDp);
    // Below ZeRO-3 the reduction and the weight all-gather can overlap different windows.
    const double reduceShare = zero == 0 || zero >= 3 || d.dpBytesPerParam <= 0
        ? 1.0
        : gradBytes / d.dpBytesPerParam;
    d.dpGradS = c.dpS * reduceShare;
    d.dpParamS = c.dpS - d.dpGradS;

    // Tensor parallel (Megatron-LM, Shoeybi et al. 2019 sec. 3): two all-reduces of the b x s x h
    // layer activations in the forward pass (after attention and after the MLP) and two in the
    // backward; a full recompute repeats the forward pair (Korthikanti et al. 2022 sec. 5).
    // Sequence parallelism swaps each for a reduce-scatter + all-gather of the same volume.
    if (s.tp > 1) {
        d.tpMessageBytes = tokens * s.hidden * actBytes;
        const bool fullRecompute
            = config.recompute == Recompute::Full || config.recompute == Recompute::EveryK;
        d.tpAllReducesPerLayer = fullRecompute ? 6 : 4;
        c.tpBytes
            = 2 * ring(s.tp) * d.tpMessageBytes * d.tpAllReducesPerLayer * d.layersPerStage * m;
        c.tpS = seconds(c.tpBytes, d.tp);
    }

    // Pipeline point-to-point (Narayanan et al. 2021 sec. 4.1): each micro-batch sends its
    // b x s x h activation forward and receives its gradient backward at every stage boundary,
    // v times under interleaving; the scatter/gather of sequence parallelism sends 1/tp of it.
    if (s.pp > 1) {
        d.ppMessageBytes = tokens * s.hidden * actBytes / (config.sequenceParallel ? s.tp : 1);
        d.ppBytes = 2 * m * s.virtualStages * d.ppMessageBytes;
        c.ppS = seconds(d.ppBytes, d.pp);
    }

    // Context parallel as ring attention (Liu et al. 2023; Megatron-Core context parallelism):
    // per layer the local K and V chunk travels cp - 1 hops forward; the backward pass moves
    // K, V and their gradients, twice the forward traffic. K and V heads split over tp.
    if (s.cp > 1) {
        const double kvHeads = arch.mla ? std::max(arch.heads, 0) : std::max(arch.kvHeads, 0);
        const double kvHeadsPerGpu = kvHeads > 0 ? std::max(kvHeads / s.tp, 1.0) : 0.0;
        const double headWidth
            = kvHeads > 0 && arch.heads > 0 ? 2 * s.attentionWidth / arch.heads : 0.0;
        d.cpChunkBytes = tokens * kvHeadsPerGpu * headWidth * actBytes;
        d.cpBytes = 3 * (s.cp - 1) * d.cpChunkBytes * d.layersPerStage * m;
        c.cpS = seconds(d.cpBytes, d.cp);
    }

    // Expert parallel (GShard, Lepikhin et al. 2020; DeepSpeed-MoE): each MoE layer dispatches
    // every token to its top-k experts and combines the results, an all-to-all each, in the
    // forward and again in the backward: 4 all-to-alls of tokens x k x h per layer.
    if (s.ep > 1 && arch.moe && arch.moe->topK > 0) {
        d.moeLayersPerStage = double(std::max(counts.moeLayers, 0)) / s.pp;
        d.epMessageBytes = tokens * arch.moe->topK * s.hidden * actBytes * ring(s.ep);
        d.epBytes = 4 * d.epMessageBytes * d.moeLayersPerStage * m;
        c.epS = seconds(d.epBytes, d.ep);
    }

    // Op timing: the layers' own collectives (TP, CP ring, EP dispatch / combine) as their ops
    // timed them, the data-parallel traffic per collective, and the pipeline's point-to-point
    // per micro-batch. Megatron's scatter-gather (Narayanan et al. 2021 sec. 4.1) sends 1/tp of
    // each boundary tensor per rank over its own NIC and all-gathers it over NVLink, with or
    // without sequence parallelism (frameworks.json `pp_scatter_gather`).
    double ppPerMicroBatchS = 0;
    if (ops) {
        c.tpS = m * ops->tpS;
        c.cpS = m * ops->cpS;
        c.epS = m * ops->epS;
        c.dpS = opTimedDp(config, d, s, gpu, c.dpBytes);
        if (s.pp > 1) {
            const bool split = (config.sequenceParallel || config.framework.ppScatterGather) && s.tp > 1;
            d.ppMessageBytes = tokens * s.hidden * actBytes / (split ? s.tp : 1);
            d.ppBytes = 2 * m * s.virtualStages * d.ppMessageBytes;
            ppPerMicroBatchS = 2 * s.virtualStages * sendRecvTime(d.ppMessageBytes, d.pp.intraNode, gpu).seconds;
            if (split && !config.sequenceParallel)
                ppPerMicroBatchS += 2 * s.virtualStages
                    * collectiveTime(CollectiveKind::AllGather, tokens * s.hidden * actBytes, s.tp,
                        d.tp.intraNode, false, gpu).seconds;
            c.ppS = m * ppPerMicroBatchS;
        }
    }

    // Exposed communication. What can hide behind compute, per kind: the framework's DP
    // mechanism and async TP, then the plan's comm_overlap of what they leave; the hidden part
    // is no more than the compute time itself.
    d.totalS = c.dpS + c.tpS + c.ppS + c.cpS + c.epS;
    d.overlap = std::isfinite(config.commOverlap) ? std::clamp(config.commOverlap, 0.0, 1.0) : 0.0;
    // One micro-batch of the slowest stage: its backward (recompute included) and forward.
    const double backwardWindow = ops ? ops->backwardS : computeTimeS / std::max(1.0, m) * 2 / 3;
    const double forwardWindow
        = ops ? ops->computeS() - ops->backwardS : computeTimeS / std::max(1.0, m) / 3;
    d.dpHidden = dpHidden(config, d, backwardWindow, forwardWindow);
    d.dpFrameworkOverlap = c.dpS > 0 ? std::clamp(d.dpHidden.totalS() / c.dpS, 0.0, 1.0) : 0.0;
    const auto combine = [&](double framework) { return 1 - (1 - framework) * (1 - d.overlap); };
    d.dpOverlap = combine(d.dpFrameworkOverlap);
    d.tpOverlap = combine(config.asyncTp ? 1.0 : 0.0);
    d.otherOverlap = d.overlap;
    // DualPipe (DeepSeek-AI 2024 sec. 3.2.1) runs a forward and a backward chunk of two
    // micro-batches at once, so that "both all-to-all and PP communication can be fully hidden
    // during execution": the EP and PP traffic hides behind compute like overlapped DP.
    const bool dualPipe = config.ppSchedule == PpSchedule::DualPipe && s.pp > 1;
    d.epPpOverlap = combine(dualPipe ? 1.0 : 0.0);
    // Megatron's interleaved schedule (overlap_p2p_comm, on by default in megatron/training and
    // set by Megatron-Bridge whenever virtual stages > 1) posts each chunk's isend / irecv and
    // waits only before the chunk that needs it: the steady state's p2p hides behind compute.
    // The fill and drain (the bubble below) keep theirs.
    const bool interleavedOverlap
        = config.framework.ppP2pOverlapInterleaved && s.pp > 1 && s.virtualStages > 1;
    d.ppOverlap = combine(dualPipe || interleavedOverlap ? 1.0 : 0.0);
    d.overlappableS = d.dpOverlap * c.dpS + d.tpOverlap * c.tpS + d.otherOverlap * c.cpS
        + d.ppOverlap * c.ppS + d.epPpOverlap * c.epS;
    d.hiddenS = std::min(d.overlappableS, computeTimeS);
    c.exposedS = d.totalS - d.hiddenS;

    // Pipeline bubble (Narayanan et al. 2021 sec. 2.2.1-2.2.2): idle time (p-1)/m of the ideal
    // time for 1F1B, (1/v)(p-1)/m interleaved; as a share of the step, (p-1)/(v m + p - 1),
    // which is seed 001's (p-1)/(m+p-1) for v = 1.
    if (s.pp > 1) {
        const double p = s.pp, v = s.virtualStages;
        c.ppBubbleFraction = (p - 1) / (v * m + p - 1);
        // Op timing: the fill and drain idle (p - 1) / v micro-batches of the slowest stage,
        // its exposed collectives and point-to-point included.
        const double perMicroBatch = ops
            ? ops->computeS() + ops->tpS * (1 - d.tpOverlap) + ops->cpS * (1 - d.otherOverlap)
                + (ops->epS + ppPerMicroBatchS) * (1 - d.epPpOverlap)
            : computeTimeS / m;
        // The zero-bubble schedules fill the bubble with the weight-gradient GEMMs (W), in the
        // units of DeepSeek-AI 2024 Table 2 with F + B = one micro-batch's stage time T and B
        // its backward: ZB1P (Qi et al. 2024) (p - 1)(F + B - 2W), DualPipe
        // (p/2 - 1)(F&B + B - 3W) with F&B = T (two chunks overlapped still compute both).
        // Without op timing, the shares of a dense layer: B = 2/3 T, W = 1/3 T.
        const double backward = ops ? ops->backwardS : perMicroBatch * 2 / 3;
        const double weights = ops ? ops->weightGradS : perMicroBatch / 3;
        switch (config.ppSchedule) {
        case PpSchedule::ZeroBubble:
            d.bubbleMicroBatches = (p - 1) * std::max(0.0, perMicroBatch - 2 * weights) / perMicroBatch;
            break;
        case PpSchedule::DualPipe:
            d.bubbleMicroBatches = std::max(0.0, p / 2 - 1)
                * std::max(0.0, perMicroBatch + backward - 3 * weights) / perMicroBatch;
            break;
        case PpSchedule::OneFOneB:
            d.bubbleMicroBatches = (p - 1) / v;
            break;
        }
        if (!(perMicroBatch > 0))
            d.bubbleMicroBatches = (p - 1) / v;
        c.ppBubbleS = d.bubbleMicroBatches * perMicroBatch;
        c.ppBubbleFraction = d.bubbleMicroBatches / (m + d.bubbleMicroBatches);
    }
    return d;
}

} // namespace envelope
