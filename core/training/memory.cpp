// Training memory of the most-loaded GPU. Formulas and their sources: docs/formulas-training.md.
//
// Per GPU and pipeline stage s, with P_s the parameters the stage's GPU holds after tensor (and
// expert) parallelism, and ZeRO sharding over the data-parallel group (Rajbhandari et al. 2020):
//   weights    = weight_bytes            x P_s / (dp if stage >= 3)
//   gradients  = gradient_bytes          x P_s / (dp if stage >= 2)
//   optimizer  = (master + moment bytes) x P_s / (dp if stage >= 1)
//   activations (activations.cpp), overhead = fixed + fragmentation x (the four above).
// The most-loaded stage is reported; min_gpus solves the same sum for dp in closed form.
#include "training/memory.h"

#include <algorithm>
#include <cmath>

#include "training/detail.h"
#include "training/lora.h"
#include "base/numeric.h"

namespace envelope {
namespace {

int atLeastOne(int x)
{
    return x < 1 ? 1 : x;
}

// A GPU count above this is reported as "no data-parallel size fits" (min_gpus 0).
constexpr double kMaxGpus = 1e9;

StageParams oneStageParams(const TrainingSetup& s, int stage)
{
    StageParams p;
    if (s.stageStart.empty()) {
        p.firstLayer = std::min(stage * s.layersPerStage, s.layers);
        p.endLayer = std::min(p.firstLayer + s.layersPerStage, s.layers);
    } else {
        p.firstLayer = s.stageStart[static_cast<std::size_t>(stage)];
        p.endLayer = s.stageStart[static_cast<std::size_t>(stage) + 1];
    }
    // MoE models lead with dense-FFN layers (DeepSeek-V3: first_k_dense_replace = 3).
    p.denseLayers = std::max(0, std::min(p.endLayer, s.leadingDense) - p.firstLayer);
    p.moeLayers = (p.endLayer - p.firstLayer) - p.denseLayers;
    p.dense = p.denseLayers * s.denseLayerParams + p.moeLayers * s.moeLayerParams;
    p.expert = p.moeLayers * s.moeLayerExpertParams;
    if (stage == 0) {
        p.embedding = s.firstStageParams;
        p.dense += p.embedding;
    }
    if (stage == s.pp - 1) {
        p.head = s.lastStageParams;
        p.dense += p.head;
        if (s.mtpLayers > 0) {
            // The MTP blocks count as the stage's layers (their activations too).
            const double block = s.mtpMoe ? s.moeLayerParams : s.denseLayerParams;
            (s.mtpMoe ? p.moeLayers : p.denseLayers) += s.mtpLayers;
            p.dense += s.mtpLayers * (block + s.mtpModuleParams);
            p.expert += s.mtpMoe ? s.mtpLayers * s.moeLayerExpertParams : 0.0;
            if (s.pp > 1) {
                p.embedding += s.mtpEmbeddingParams;
                p.dense += s.mtpEmbeddingParams;
            }
        }
    }
    return p;
}

// The parameters pipeline rank `stage` holds: its stage, and under DualPipe also the mirrored
// stage p - 1 - s (DeepSeek-AI 2024 sec. 3.2.1: "two copies of the model parameters", Table 2).
StageParams stageParams(const TrainingSetup& s, int stage)
{
    StageParams p = oneStageParams(s, stage);
    const int mirror = s.pp - 1 - stage;
    if (!s.dualPipe || mirror == stage)
        return p;
    const StageParams q = oneStageParams(s, mirror);
    p.denseLayers += q.denseLayers;
    p.moeLayers += q.moeLayers;
    p.dense += q.dense;
    p.expert += q.expert;
    p.embedding += q.embedding;
    p.head += q.head;
    return p;
}

} // namespace

TrainingSetup trainingSetup(
    const ModelArch& arch, const ParamCounts& counts, const TrainingConfig& config, const Gpu& gpu)
{
    TrainingSetup s;
    s.tp = atLeastOne(config.tp);
    s.pp = atLeastOne(config.pp);
    s.cp = atLeastOne(config.cp);
    s.ep = atLeastOne(config.ep);
    s.zeroStage = std::clamp(config.zeroStage, 0, 3);
    s.dualPipe = config.ppSchedule == PpSchedule::DualPipe && s.pp > 1;
    s.layers = std::max(arch.layers, 0);
    // The plan's training.stage_layers, else ceil(L / pp) consecutive layers per stage with the
    // last taking what remains (pipelineStageLayers).
    s.layersPerStage = (s.layers + s.pp - 1) / s.pp;
    if (!config.stageLayers.empty()) {
        s.stageStart.assign(1, 0);
        for (int n : pipelineStageLayers(config, s.layers))
            s.stageStart.push_back(s.stageStart.back() + n);
    }
    const int moeLayers = arch.moe ? std::clamp(counts.moeLayers, 0, s.layers) : 0;
    s.leadingDense = s.layers - moeLayers;

    const double tp = s.tp;
    const double attention = positiveOrZero(counts.attentionPerLayer);
    const double norms = positiveOrZero(counts.normsPerLayer);
    const double denseFfn = positiveOrZero(counts.denseFfnPerLayer);
    const double moeFfn = positiveOrZero(counts.moeFfnPerLayer);
    const double experts = std::min(positiveOrZero(counts.expertParamsPerLayer), moeFfn);
    const double embedding = positiveOrZero(counts.embedding);
    const double positions = positiveOrZero(counts.positions);
    const double lmHead = positiveOrZero(counts.lmHead);
    const double finalNorm = positiveOrZero(counts.finalNorm);
    const bool perLayerKnown = counts.denseLayers + counts.moeLayers > 0;
    const double layersSum = perLayerKnown
        ? std::max(counts.denseLayers, 0) * (attention + norms + denseFfn)
            + std::max(counts.moeLayers, 0) * (attention + norms + moeFfn)
        : 0.0;
    // Whatever the per-part fields do not account for (a bare parameter count, hand-built
    // counts) is spread evenly over the layers as tensor-parallel matrices.
    const double residual = std::max(
        0.0, positiveOrZero(counts.total) - (embedding + positions + lmHead + finalNorm + layersSum));
    const double residualPerLayer = s.layers > 0 ? residual / s.layers : 0.0;

    // Tensor parallelism splits every matrix (Megatron-LM, Shoeybi et al. 2019); the norms are
    // replicated. Expert parallelism splits the routed experts over ep.
    const double layerShared = perLayerKnown ? attention / tp + norms : 0.0;
    s.denseLayerParams = layerShared + ((perLayerKnown ? denseFfn : 0.0) + residualPerLayer) / tp;
    s.moeLayerParams
        = layerShared + ((perLayerKnown ? moeFfn - experts : 0.0) + residualPerLayer) / tp;
    s.moeLayerExpertParams = perLayerKnown ? experts / (tp * s.ep) : 0.0;
    // The vocab-parallel embedding sits on the first stage, the LM head on the last; a tied head
    // needs its own copy on the last stage when pp > 1 (Megatron keeps both in sync).
    s.firstStageParams = embedding / tp + positions + (s.layers == 0 ? residual : 0.0);
    const double head = lmHead > 0 ? lmHead : (arch.tiedEmbeddings && s.pp > 1 ? embedding : 0.0);
    s.lastStageParams = head / tp + finalNorm;
    s.mtpLayers = std::clamp(config.mtpLayers, 0, kMaxMtpLayers);
    if (s.mtpLayers > 0) {
        const double h = positiveOrZero(double(arch.hidden));
        s.mtpMoe = moeLayers > 0;
        s.mtpModuleParams = 2 * h * h / tp + 2 * h;
        s.mtpEmbeddingParams = embedding / tp;
    }

    const Recipe& recipe = config.recipe.recipe;
    s.weightBytes = positiveOrZero(recipe.weightBytes);
    s.gradientBytes = positiveOrZero(recipe.gradientBytes);
    s.masterBytes = positiveOrZero(recipe.masterBytes);
    s.momentBytes = positiveOrZero(optimizerStateBytesPerParam(recipe, config.optimizer));
    s.offloadOptimizer = config.offloadOptimizer;
    s.offloadParams = config.offloadParams;
    s.fixedBytes = positiveOrZero(config.overhead.fixedBytes);
    s.fragmentation = positiveOrZero(config.overhead.fragmentation);
    s.gpuMemoryBytes = positiveOrZero(gpu.memoryBytes);
    s.activations = activationCosts(arch, config, recipe.activationBytes);
    s.computeBytes = positiveOrZero(recipe.activationBytes);
    s.fp8Compute = recipe.compute == ComputeDtype::Fp8;
    if (config.lora.enabled) {
        s.lora = true;
        s.loraDenseLayerParams = loraParamsPerLayer(arch, config.lora, false) / tp;
        s.loraMoeLayerParams = loraParamsPerLayer(arch, config.lora, true) / tp;
        s.loraBaseBytes = loraBaseBytesPerParam(config.lora);
    }
    s.layerParamsMax = std::max(s.denseLayerParams,
        moeLayers > 0 ? s.moeLayerParams + s.moeLayerExpertParams : 0.0);
    // The largest single parameter tensor one GPU holds (/ tp): the embedding or LM head, a
    // dense FFN matrix (h x f), an expert's (h x f_e), the query projection (h x heads x d).
    // Without a shape (a bare parameter count) one layer bounds it.
    const double hidden = positiveOrZero(double(arch.hidden));
    const double queryWidth = positiveOrZero(double(arch.heads) * arch.headDim);
    const double expertWidth = arch.moe ? positiveOrZero(double(arch.moe->expertFfnHidden)) : 0.0;
    s.largestTensorParams = std::max({ embedding / tp, lmHead / tp,
        hidden * positiveOrZero(double(arch.ffnHidden)) / tp, hidden * expertWidth / tp,
        hidden * queryWidth / tp });
    if (s.largestTensorParams <= 0)
        s.largestTensorParams = s.layerParamsMax;
    s.optimizerInBackward = config.optimizerInBackward;
    s.pagedOptimizer = pagedOptimizer(config.optimizer);
    return s;
}

StageMemory stageMemory(
    const TrainingSetup& s, const TrainingConfig& config, int stage, int dataParallel)
{
    StageMemory m;
    m.stage = stage;
    m.dataParallel = atLeastOne(dataParallel);
    m.params = stageParams(s, stage);
    m.activation = stageActivation(
        s.activations, config, stage, s.pp, m.params.denseLayers, m.params.moeLayers);

    // ZeRO shards over the data-parallel group; routed experts over the expert-data-parallel
    // group (the dp / ep GPUs holding the same experts: DeepSpeed-MoE, Megatron-Core).
    // torchtitan's FSDP shards over dp x cp (its dp_shard_cp mesh: context-parallel ranks hold
    // the same parameters, so they share the shards); HSDP (training.hsdp_shard) shards within
    // groups of that size and replicates across them, so the shard stops shrinking with dp.
    const double dp = m.dataParallel;
    const double edp = std::max(1.0, dp / s.ep);
    const double cpShard = config.framework.shardOverCp ? s.cp : 1.0;
    const bool hsdp = config.hsdpShard > 0 && s.zeroStage >= 3;
    m.shardGroup = hsdp ? config.hsdpShard : dp * cpShard;
    m.shards.optimizer = s.zeroStage >= 1 ? m.shardGroup : 1.0;
    m.shards.gradients = s.zeroStage >= 2 ? m.shardGroup : 1.0;
    m.shards.weights = s.zeroStage >= 3 ? m.shardGroup : 1.0;
    m.shards.expertOptimizer = s.zeroStage >= 1 ? edp : 1.0;
    m.shards.expertGradients = s.zeroStage >= 2 ? edp : 1.0;
    m.shards.expertWeights = s.zeroStage >= 3 ? edp : 1.0;

    const double dense = m.params.dense;
    const double expert = m.params.expert;
    const double weightParams = dense / m.shards.weights + expert / m.shards.expertWeights;
    const double gradientParams = dense / m.shards.gradients + expert / m.shards.expertGradients;
    const double optimizerParams = dense / m.shards.optimizer + expert / m.shards.expertOptimizer;
    const double optimizerBytes = s.masterBytes + s.momentBytes;

    // Optimizer offload (ZeRO-Offload, Ren et al. 2021) moves master + moments to the host,
    // with an fp32 copy of the gradients the CPU optimizer reads. With partitioned gradients
    // (ZeRO >= 2) each reduced bucket streams out, so the GPU keeps none; below stage 2 the full
    // gradient is reduced on the GPU before the copy. Parameter offload (ZeRO-Infinity,
    // Rajbhandari et al. 2021) moves the weights. Streaming buffers stay in the fixed overhead.
    m.perGpu.weights = s.offloadParams ? 0.0 : s.weightBytes * weightParams;
    m.perGpu.gradients = s.gradientsOffloaded() ? 0.0 : s.gradientBytes * gradientParams;
    m.perGpu.optimizer = s.offloadOptimizer ? 0.0 : optimizerBytes * optimizerParams;
    m.perGpu.activations = m.activation.total();
    double localOptimizerParams = optimizerParams;
    if (s.lora) {
        // LoRA (Hu et al. 2021): the base is frozen, its linear layers stored at base_bits
        // (embedding and LM head stay at the recipe's width); gradients and optimizer state
        // exist only for the adapters, which train at the recipe's bytes (the `lora` tenant).
        m.loraParams = m.params.denseLayers * s.loraDenseLayerParams
            + m.params.moeLayers * s.loraMoeLayerParams;
        const double outer = m.params.embedding + m.params.head;
        const double linear = std::max(0.0, m.params.total() - outer);
        m.perGpu.weights = s.offloadParams
            ? 0.0
            : (linear * s.loraBaseBytes + outer * s.weightBytes) / m.shards.weights;
        m.perGpu.gradients = 0;
        m.perGpu.optimizer = 0;
        localOptimizerParams = m.loraParams / m.shards.optimizer;
        m.perGpu.lora = s.weightBytes * m.loraParams / m.shards.weights
            + s.gradientBytes * m.loraParams / m.shards.gradients
            + (s.offloadOptimizer ? 0.0 : optimizerBytes * localOptimizerParams);
    }

    // What the framework keeps around the sharded state (plan/framework.h; the generic profile
    // keeps none of these, so its figures are the formulas above).
    const FrameworkProfile& fw = config.framework;
    // ZeRO-3 / FSDP brings each layer's full parameters onto the GPU before it runs: from the
    // peers when sharded, from the host under parameter offload (ZeRO-Infinity, FSDP
    // CPUOffload: the layer is copied in and all-gathered on the GPU, so the buffer stays).
    const bool zero3 = s.zeroStage >= 3;
    const bool fsdp = zero3 && (m.shardGroup > 1 || s.offloadParams);
    if (zero3 && fw.ppUnsharded && s.pp > 1 && (fsdp || s.offloadOptimizer)) {
        // torchtitan with PP: reshard_after_forward=False keeps the stage's parameters
        // all-gathered (in the compute dtype, FSDP2 MixedPrecisionPolicy.param_dtype) across
        // micro-batches, and the pipeline schedule turns gradient sync off until the last
        // micro-batch, so FSDP2 accumulates unsharded gradients in the fp32 reduce dtype. The
        // FSDP2 CPU offload policy moves only the sharded state to the host, so the buffer stays
        // under offload, at one data-parallel rank too (issue 26 item 12: counting it only from
        // dp 2 made the per-GPU memory rise with the GPU count).
        m.ppUnshardedBytes = m.params.total() * (s.computeBytes + 4.0);
    } else if (fsdp) {
        // FSDP / ZeRO-3 all-gathers a layer (in the compute dtype; a LoRA base at its stored
        // width) before it runs and prefetches the next one; under parameter offload at least
        // the layer that runs is on the GPU.
        const double layers
            = s.offloadParams ? std::max(1.0, fw.prefetchLayers) : fw.prefetchLayers;
        m.prefetchBytes = layers * s.layerParamsMax * (s.lora ? s.loraBaseBytes : s.computeBytes);
    }
    if (s.zeroStage < 3 && dp > 1)
        m.bucketBytes = fw.gradBucketBytes;
    if (s.fp8Compute && fw.fp8WeightCastBytes > 0) {
        // Float8 linears (torchao Float8Linear) cast each all-gathered weight to FP8 and keep
        // the cast for the backward: one copy per unsharded layer (the prefetched layers, or
        // the whole stage when FSDP + PP keeps it unsharded; one layer without FSDP).
        const double castParams = m.ppUnshardedBytes > 0
            ? m.params.total()
            : std::max(1.0, fsdp ? fw.prefetchLayers : 1.0) * s.layerParamsMax;
        m.fp8CastBytes = fw.fp8WeightCastBytes * castParams;
    }
    // bitsandbytes steps each tensor with one in-place kernel (optimizer_update_8bit_blockwise,
    // optimizer_update_32bit): no foreach temporaries whatever the framework's optimizer.
    const double tempBytesPerParam
        = optimizerSetsMomentWidth(config.optimizer) ? 0.0 : positiveOrZero(fw.optimizerTempBytes);
    m.optimizerTempBytes = s.offloadOptimizer ? 0.0 : tempBytesPerParam * localOptimizerParams;
    // Optimizer in backward (torchtune optimizer_in_bwd; PyTorch tutorial "How to save memory by
    // fusing the optimizer step into the backward pass"): a post-accumulate-grad hook steps each
    // parameter as its gradient is produced and sets the gradient to None, so the GPU holds one
    // parameter's gradient at a time (the largest tensor bounds it; under LoRA one layer's
    // adapters), and the step's temporaries are that parameter's, during the backward.
    if (s.optimizerInBackward) {
        if (s.lora) {
            const double adapters = std::min(m.loraParams,
                std::max(s.loraDenseLayerParams, s.loraMoeLayerParams));
            m.perGpu.lora -= s.gradientBytes * m.loraParams / m.shards.gradients;
            m.perGpu.lora += s.gradientBytes * adapters;
            m.inBackwardGradientBytes = s.gradientBytes * adapters;
            localOptimizerParams = std::min(localOptimizerParams, adapters);
        } else if (!s.gradientsOffloaded()) {
            m.perGpu.gradients = std::min(m.perGpu.gradients, s.gradientBytes * s.largestTensorParams);
            m.inBackwardGradientBytes = m.perGpu.gradients;
            localOptimizerParams = std::min(localOptimizerParams, s.largestTensorParams);
        }
        m.optimizerTempBytes = s.offloadOptimizer ? 0.0 : tempBytesPerParam * localOptimizerParams;
    }
    // bitsandbytes paged optimizers allocate their state with cudaMallocManaged (functional.py
    // get_paged), outside PyTorch's caching allocator: on the device while it fits (the driver
    // evicts pages to the host only under oversubscription), but not in torch's allocated and
    // reserved counters. Tensors under 1e5 elements stay ordinary (optimizer.py
    // get_state_buffer): not separated here.
    if (s.pagedOptimizer && !s.offloadOptimizer)
        m.pagedBytes
            = s.momentBytes * (s.lora ? m.loraParams / m.shards.optimizer : optimizerParams);

    // The peak of live tensors: the states plus the larger of the forward/backward peak
    // (activations and buffers) and the optimizer step's temporaries, which come after the
    // activations are freed. The caching allocator reserves the fragmentation share on top;
    // the device adds the CUDA context and NCCL's own buffers (the fixed overhead).
    //
    // One GPU, one accumulation step, gradients set to None by zero_grad (torchtune, HF
    // Trainer, torchtitan): no gradient exists when the backward starts; each layer's gradient
    // is allocated as its activations are freed, so the backward's peak is the larger of the
    // activations (with the output layer's gradient, the first one made) and all the gradients
    // (with the optimizer step's temporaries, after the backward).
    m.gradientsFillAsActivationsFree = fw.gradsSetToNone && config.gradAccum <= 1 && !s.lora
        && !s.optimizerInBackward
        && s.tp * s.pp * s.cp == 1 && m.dataParallel == 1 && m.perGpu.gradients > 0;
    const double stateBytes
        = m.perGpu.weights + m.perGpu.gradients + m.perGpu.optimizer + m.perGpu.lora;
    double states = stateBytes;
    double transient = s.optimizerInBackward
        // the step runs inside the backward, beside the live activations
        ? m.perGpu.activations + m.buffers() + m.optimizerTempBytes
        : std::max(m.perGpu.activations + m.buffers(), m.optimizerTempBytes);
    if (m.gradientsFillAsActivationsFree) {
        // The LM head's gradient is the first; a tied head's is the embedding matrix's (the
        // last stage then holds only the final norm as `head`).
        const double outputParams = std::max(m.params.head, m.params.embedding);
        m.firstGradientBytes = std::min(m.perGpu.gradients, s.gradientBytes * outputParams);
        states -= m.perGpu.gradients;
        transient = std::max(m.perGpu.activations + m.buffers() + m.firstGradientBytes,
            m.perGpu.gradients + m.optimizerTempBytes);
    }
    // Paged optimizer state is device memory the caching allocator does not serve.
    m.allocatedBytes = states - m.pagedBytes + transient;
    // The caching allocator reserves a fragmentation share of what it serves; parameters and
    // gradients in contiguous buffers allocated once (Megatron-Core) leave no holes, so only
    // the transient allocations carry it there.
    m.fragmentedBytes = fw.contiguousStateBuffers ? transient : m.allocatedBytes;
    m.reservedBytes = m.allocatedBytes + s.fragmentation * m.fragmentedBytes;
    m.perGpu.overhead = s.fixedBytes
        + (m.allocatedBytes + m.pagedBytes - stateBytes - m.perGpu.activations)
        + s.fragmentation * m.fragmentedBytes;
    m.hostBytes
        = (s.offloadOptimizer ? (optimizerBytes + kHostGradientBytes) * optimizerParams : 0.0)
        + (s.offloadParams ? s.weightBytes * weightParams : 0.0)
        + m.activation.offloaded * m.activation.calibration; // pinned host copies

    // The same sum split by what shrinks with dp, for min_gpus (dp a multiple of ep, so the
    // expert shard dp / ep >= 1 and expert / (dp / ep) = expert x ep / dp).
    // Each part carries its own fragmentation share: (1 + f) x, or 1 x for states in
    // contiguous buffers.
    const double stateFactor = 1.0 + (fw.contiguousStateBuffers ? 0.0 : s.fragmentation);
    const double transientFactor = 1.0 + s.fragmentation;
    const auto split = [&](double bytesPerParam, bool onGpu, bool sharded, double factor) {
        if (!onGpu)
            return;
        bytesPerParam *= factor;
        if (sharded && hsdp)
            m.unshardedBytes += bytesPerParam * (dense / m.shardGroup + expert / edp);
        else if (sharded)
            m.shardedBytesAtDp1 += bytesPerParam * (dense / cpShard + expert * s.ep);
        else
            m.unshardedBytes += bytesPerParam * (dense + expert);
    };
    if (s.lora) {
        // Frozen base and adapters, each sharded by its ZeRO stage.
        const double base = s.offloadParams ? 0.0 : m.perGpu.weights * m.shards.weights;
        const double adapterW = s.weightBytes * m.loraParams;
        const double adapterG = s.gradientBytes * m.loraParams;
        const double adapterO = s.offloadOptimizer ? 0.0 : optimizerBytes * m.loraParams;
        const auto add = [&](double bytes, bool sharded) {
            bytes *= stateFactor;
            if (sharded && hsdp)
                m.unshardedBytes += bytes / m.shardGroup;
            else if (sharded)
                m.shardedBytesAtDp1 += bytes / cpShard;
            else
                m.unshardedBytes += bytes;
        };
        add(base + adapterW, s.zeroStage >= 3);
        if (s.optimizerInBackward)
            add(m.inBackwardGradientBytes, false);
        else
            add(adapterG, s.zeroStage >= 2);
        add(adapterO, s.zeroStage >= 1);
    } else {
        split(s.weightBytes, !s.offloadParams, s.zeroStage >= 3, stateFactor);
        if (s.optimizerInBackward)
            m.unshardedBytes += stateFactor * m.perGpu.gradients; // one tensor's, whatever dp
        else
            split(s.gradientBytes, !s.gradientsOffloaded(), s.zeroStage >= 2, stateFactor);
        // Paged moments are outside the caching allocator: no fragmentation share.
        split(s.masterBytes, !s.offloadOptimizer, s.zeroStage >= 1, stateFactor);
        split(s.momentBytes, !s.offloadOptimizer, s.zeroStage >= 1,
            s.pagedOptimizer ? 1.0 : stateFactor);
    }
    m.unshardedBytes += transientFactor * (m.perGpu.activations + m.buffers());
    return m;
}

TrainingPeakProbe::TrainingPeakProbe(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const Gpu& gpu)
    : m_setup(std::make_unique<const TrainingSetup>(trainingSetup(arch, counts, config, gpu)))
    , m_config(config)
{
}

TrainingPeakProbe::~TrainingPeakProbe() = default;

double TrainingPeakProbe::perGpuTotal(const Cluster& cluster) const
{
    // As estimateTrainingMemory: dp from the cluster, the worst stage's total.
    const TrainingSetup& setup = *m_setup;
    const double modelParallel = double(setup.tp) * setup.pp * setup.cp;
    const int dataParallel
        = std::max(1, static_cast<int>(std::max(cluster.gpus, 0) / modelParallel));
    double worst = -1;
    for (int stage = 0; stage < setup.pp; ++stage)
        worst = std::max(worst, stageMemory(setup, m_config, stage, dataParallel).perGpu.total());
    return worst;
}

TrainingMemory estimateTrainingMemory(const ModelArch& arch, const ParamCounts& counts,
    const TrainingConfig& config, const Cluster& cluster, const Gpu& gpu, Explainer* ex)
{
    const TrainingSetup setup = trainingSetup(arch, counts, config, gpu);
    const double modelParallel = double(setup.tp) * setup.pp * setup.cp;
    const int dataParallel
        = std::max(1, static_cast<int>(std::max(cluster.gpus, 0) / modelParallel));
    const double hbm = setup.gpuMemoryBytes;
    const double usableFraction
        = std::isfinite(config.usableFraction) ? std::clamp(config.usableFraction, 0.0, 1.0) : 1.0;
    // min_gpus counts a GPU count only when its verdict is `fits`: the total at or below the
    // usable line (HBM x usable_fraction), not merely within HBM (issue 11: `tight` is no fit).
    const double usable = hbm * usableFraction;
    // Bytes left for the parts, each with its fragmentation share: fixed + parts <= usable.
    const double room = usable - setup.fixedBytes;

    KeyStages key;
    StageMemory& worst = key.worst;
    StageMemory& binding = key.binding; // decides min_gpus (or rules every dp out)
    double worstTotal = -1;
    double maxHostBytes = -1;
    double dpNeeded = 0;
    bool someDpFits = hbm > 0;
    for (int stage = 0; stage < setup.pp; ++stage) {
        const StageMemory m = stageMemory(setup, config, stage, dataParallel);
        if (m.perGpu.total() > worstTotal) {
            worstTotal = m.perGpu.total();
            worst = m;
        }
        if (m.hostBytes > maxHostBytes) {
            maxHostBytes = m.hostBytes;
            key.host = m;
        }
        if (!someDpFits)
            continue;
        // This stage fits at dp iff unsharded + sharded / dp <= room.
        const double left = room - m.unshardedBytes;
        if (m.shardedBytesAtDp1 > 0 ? left <= 0 : left < 0) {
            someDpFits = false;
            binding = m;
            continue;
        }
        const double need = m.shardedBytesAtDp1 > 0 ? m.shardedBytesAtDp1 / left : 1.0;
        if (need > dpNeeded) {
            dpNeeded = need;
            binding = m;
        }
    }
    if (hbm <= 0)
        binding = worst;

    TrainingMemory r;
    r.perGpu = worst.perGpu;
    r.allocatedBytes = worst.allocatedBytes;
    r.reservedBytes = worst.reservedBytes;
    r.bufferBytes = worst.buffers();
    r.optimizerTempBytes = worst.optimizerTempBytes;
    r.pagedOptimizerBytes = worst.pagedBytes;
    r.activationOffloadBytes = worst.activation.offloaded * worst.activation.calibration;
    r.activationOffloadBufferBytes = worst.activation.offloadBuffer * worst.activation.calibration;
    if (config.lora.enabled)
        r.loraTrainableParams = loraTrainableParams(arch, config.lora);
    r.gpuMemoryBytes = hbm;
    r.fits = hbm > 0 && r.perGpu.total() <= hbm;
    r.usableBytes = usable;
    r.verdict = memoryVerdict(r.perGpu.total(), hbm, usableFraction);
    r.dataParallel = dataParallel;
    r.worstStage = worst.stage;
    r.paramsOnWorstGpu = worst.params.total();
    r.hostBytesPerNode
        = maxHostBytes * std::clamp(cluster.gpusPerNode, 1, std::max(cluster.gpus, 1));

    // Activation details: per layer on the worst stage, the embedding on the first stage (all
    // its micro-batches in flight), the output layer on the last (one micro-batch).
    const double calibration = worst.activation.calibration;
    r.activationBytesPerLayer = worst.activation.perLayer * calibration;
    const double firstInFlight = setup.dualPipe
        ? std::min((setup.pp + 1) / 2.0, double(std::max(config.gradAccum, 1)))
        : microBatchesInFlight(0, setup.pp, config.virtualStages, config.gradAccum);
    r.microBatchesInFlight = static_cast<int>(std::ceil(firstInFlight - 1e-9));
    r.embeddingActivationBytes = firstInFlight * setup.activations.embeddingBytes * calibration;
    r.logitsBytes = setup.activations.outputBytes * calibration;

    // Smallest dp (a multiple of ep) with every stage at or below the usable line; checked
    // against the direct evaluation so rounding in the closed form cannot be off by one step.
    const auto fitsAt = [&](double dp) {
        for (int stage = 0; stage < setup.pp; ++stage)
            if (stageMemory(setup, config, stage, static_cast<int>(dp)).perGpu.total() > usable)
                return false;
        return true;
    };
    if (hbm > 0 && modelParallel == 1 && setup.ep == 1 && fitsAt(1)) {
        // One GPU overlaps its gradients with the activations (stageMemory), which the closed
        // form below does not: where one GPU fits, that is the answer.
        r.minGpus = 1;
    } else if (someDpFits) {
        const double ep = setup.ep;
        double dp = std::ceil(std::ceil(dpNeeded * (1 - 1e-12)) / ep) * ep;
        if (dp * modelParallel <= kMaxGpus) {
            if (dp > ep && fitsAt(dp - ep))
                dp -= ep;
            for (int step = 0; step < 3 && !fitsAt(dp); ++step)
                dp += ep;
            if (dp * modelParallel <= kMaxGpus && fitsAt(dp))
                r.minGpus = static_cast<int>(dp * modelParallel);
        }
    }

    if (ex)
        explainTrainingMemory(arch, setup, config, cluster, key, r, *ex);
    return r;
}

} // namespace envelope
