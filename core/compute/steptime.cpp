// The training step from ops (docs/formulas-compute.md, "Step time from ops"): one micro-batch of one
// pipeline stage is the sum of its layers' forward, backward and recompute ops plus the first
// stage's embedding and the last stage's LM head and loss, each op timed from the GPU's
// measured kernel tables or its specs (kernels/timing.h). compute.cpp turns that into the step:
// m micro-batches of the slowest stage, the pipeline's fill and drain, the data-parallel
// traffic and the optimizer step.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "base/memo.h"
#include "base/numeric.h"
#include "compute/detail.h"
#include "kernels/timing.h"
#include "ops/ops.h"
#include "plan/recipe.h"

namespace envelope {
namespace {

GemmDtype linearDtype(const Recipe& recipe)
{
    return recipe.compute == ComputeDtype::Fp8 ? GemmDtype::Fp8 : GemmDtype::Bf16;
}

// Bytes per logit the loss streams in the forward (the backward twice that): fused reads the
// bf16 logits and writes their softmax statistics in one pass (2 + 2); chunked upcasts one
// chunk at a time (2 read, 4 written and read back, 2 written: 12); eager writes and reads an
// fp32 upcast and an fp32 log-softmax (2 + 4 + 4 + 4 + 2: 16).
double lossBytesPerLogit(LossKind kind)
{
    switch (kind) {
    case LossKind::Eager:
        return 16;
    case LossKind::Chunked:
        return 12;
    default:
        return 4;
    }
}

bool partOfAttentionCore(const Op& op)
{
    return op.cls == OpClass::Attention || std::string_view(op.name).rfind("attention", 0) == 0;
}

// The forward ops a recompute re-runs in the backward (Korthikanti et al. 2022 sec. 5):
// selective (Megatron) the attention core; torchtitan's per-op SAC every second matmul
// (k, o, up: `sacShare` of the layer's GEMM time); full (and every-k) the whole forward,
// collectives included.
std::vector<Op> recomputeOps(const std::vector<Op>& forward, const TrainingConfig& config,
    double sacShare)
{
    Recompute recompute = config.recompute;
    if (recompute == Recompute::Selective && config.framework.selective == SelectivePolicy::Full)
        recompute = Recompute::Full;
    std::vector<Op> ops;
    for (Op op : forward) {
        op.phase = Phase::Recompute;
        switch (recompute) {
        case Recompute::None:
            continue;
        case Recompute::Selective:
            if (config.framework.selective == SelectivePolicy::PerOpSac) {
                if (op.cls != OpClass::Gemm || partOfAttentionCore(op))
                    continue;
                op.repeat *= sacShare;
            } else if (!partOfAttentionCore(op)) {
                continue;
            }
            break;
        case Recompute::Full:
        case Recompute::EveryK:
            break;
        }
        ops.push_back(op);
    }
    return ops;
}

// Eager PyTorch (transformers, torchtune without torch.compile: the profile's eager_kernels)
// runs the norms, RoPE and SwiGLU as chains of separate kernels, each reading and writing whole
// tensors. The one-pass byte counts of layerForwardOps / backwardOps (a norm 2a bytes per
// element forward, twice that backward) become the chains' sums, counted kernel by kernel from
// the module code and its autograd graph, a = activation bytes (docs/formulas-compute.md,
// 'Eager kernels'):
//  - RMSNorm (LlamaRMSNorm: x.float(), pow(2), mean, x * rsqrt, .to(a), weight *): forward
//    (a+4) + 8 + 4 + 8 + (4+a) + 2a = 28 + 4a per element; backward 6a (weight product, its
//    gradient sum) + (a+4) + 24 (rsqrt product, its row sum) + 4 (mean) + 20 (pow) + 12 (the two
//    fp32 gradients summed) + (4+a) = 68 + 8a;
//  - RoPE (q * cos + rotate_half(q) * sin): forward 3a (neg, cat) + 2a + 2a + 3a = 10a per
//    element of q and k; backward 2a + 2a + a (neg) + 4a (slice backward: zeros and copy, twice)
//    + 6a (three gradients summed) = 15a;
//  - SwiGLU (silu(gate) * up, the silu output its own tensor): forward 2a + 3a = 5a per element
//    of the FFN width; backward 3a + 3a (both products) + 3a (silu) = 9a.
// Fused counts: norm 2a / 4a, RoPE 2a / 4a, SwiGLU 3a / 6a. Plain GELU is one kernel either way.
void applyEagerKernels(std::vector<Op>& ops, double a, bool gated)
{
    for (Op& op : ops) {
        if (op.cls != OpClass::Elementwise)
            continue;
        const std::string_view name(op.name);
        const bool backward = op.phase == Phase::Backward;
        double fused = 0, eager = 0;
        if (name.ends_with("norm")) {
            fused = backward ? 4 * a : 2 * a;
            eager = backward ? 68 + 8 * a : 28 + 4 * a;
        } else if (name == "rope") {
            fused = backward ? 4 * a : 2 * a;
            eager = backward ? 15 * a : 10 * a;
        } else if (name == "activation" && gated) {
            fused = backward ? 6 * a : 3 * a;
            eager = backward ? 9 * a : 5 * a;
        }
        if (fused > 0)
            op.bytes *= eager / fused;
    }
}

// QLoRA / 8-bit LoRA: the base weights are dequantized to bf16 before every use (forward,
// backward, recompute): read the packed weights, write bf16 (bitsandbytes dequantize_4bit).
Op dequantizeOp(double layerParamsPerGpu, int baseBits)
{
    Op op;
    op.cls = OpClass::Elementwise;
    op.name = "dequantize";
    op.bytes = layerParamsPerGpu * (baseBits / 8.0 + 2);
    return op;
}

// Collective time split into TP and the rest (CP ring, EP all-to-all), by op name.
// `perOp`, when given, receives each op's seconds x its repeat (before `repeat` and the scale).
void addOps(StageOpTimes& into, const std::vector<Op>& ops, double repeat, const Gpu& gpu,
    double efficiencyScale, std::vector<double>* perOp = nullptr)
{
    const SpecDefaults defaults;
    OpTimes t;
    double tp = 0, cp = 0, ep = 0, backward = 0, weightGrad = 0;
    if (perOp)
        perOp->resize(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        const OpTime time = timeOp(op, gpu, defaults);
        if (perOp)
            (*perOp)[i] = time.seconds * op.repeat;
        const double s = time.seconds * op.repeat * repeat;
        switch (op.cls) {
        case OpClass::Gemm:
            t.gemm += s / efficiencyScale;
            break;
        case OpClass::Attention:
            t.attention += s / efficiencyScale;
            break;
        case OpClass::Elementwise:
            t.elementwise += s / efficiencyScale;
            break;
        case OpClass::Collective: {
            const std::string_view name(op.name);
            (name.rfind("tp", 0) == 0 ? tp : name.rfind("cp", 0) == 0 ? cp : ep) += s;
            break;
        }
        }
        if (time.measured)
            t.measured += op.cls == OpClass::Collective ? s : s / efficiencyScale;
        if (op.cls != OpClass::Collective && op.phase != Phase::Forward) {
            backward += s / efficiencyScale;
            if (op.weightGradient)
                weightGrad += s / efficiencyScale;
        }
    }
    into.gemmS += t.gemm;
    into.attentionS += t.attention;
    into.elementwiseS += t.elementwise;
    into.measuredS += t.measured;
    into.tpS += tp;
    into.cpS += cp;
    into.epS += ep;
    into.backwardS += backward;
    into.weightGradS += weightGrad;
}

} // namespace

StageOpTimes& StageOpTimes::operator+=(const StageOpTimes& o)
{
    gemmS += o.gemmS;
    attentionS += o.attentionS;
    elementwiseS += o.elementwiseS;
    measuredS += o.measuredS;
    tpS += o.tpS;
    cpS += o.cpS;
    epS += o.epS;
    backwardS += o.backwardS;
    weightGradS += o.weightGradS;
    return *this;
}

StageOpTimes StageOpTimes::operator*(double k) const
{
    StageOpTimes t = *this;
    for (double* x : { &t.gemmS, &t.attentionS, &t.elementwiseS, &t.measuredS, &t.tpS, &t.cpS,
             &t.epS, &t.backwardS, &t.weightGradS })
        *x *= k;
    return t;
}

StageOpTimes OpStep::slowestStage(int pp) const
{
    StageOpTimes t = forward;
    t += backward;
    t += recompute;
    if (pp <= 1) {
        t += embedding;
        t += head;
        return t;
    }
    t += embedding * embeddingShare;
    t += head * headShare;
    return t;
}

namespace {

// Everything opStep reads, compared by value: two calls with equal keys give equal results.
struct OpStepKey {
    ModelArch arch;
    double total = 0, expertPerLayer = 0, attentionPerLayer = 0, denseFfnPerLayer = 0,
           moeFfnPerLayer = 0;
    int denseLayers = 0, moeLayers = 0;
    int tp = 1, cp = 1, ep = 1, pp = 1, gpusPerNode = 1, loraRank = 0, loraBits = 16;
    bool sp = false, flash = true, lora = false;
    double microBatch = 0, seqLen = 0, sacRecomputeParams = 0, layerMatmulParams = 0;
    Recompute recompute = Recompute::None;
    std::vector<int> stageLayers;
    int mtpLayers = 0;
    bool dualPipe = false;
    SelectivePolicy selective = SelectivePolicy::AttentionCore;
    bool spGatheredInputs = false, tpBackwardOverlap = false, eagerKernels = false;
    LossKind loss = LossKind::Fused;
    Recipe recipe;
    double efficiencyScale = 1;
    Gpu gpu; // its kernel table compared by identity below, not by id
    const KernelTable* table = nullptr;

    bool operator==(const OpStepKey&) const = default;
};

OpStepKey keyOf(const ModelArch& arch, const ParamCounts& counts, const TrainingConfig& c,
    const ComputeSetup& s, const Gpu& gpu)
{
    OpStepKey k;
    k.arch = arch;
    k.total = counts.total;
    k.expertPerLayer = counts.expertParamsPerLayer;
    k.attentionPerLayer = counts.attentionPerLayer;
    k.denseFfnPerLayer = counts.denseFfnPerLayer;
    k.moeFfnPerLayer = counts.moeFfnPerLayer;
    k.denseLayers = counts.denseLayers;
    k.moeLayers = counts.moeLayers;
    k.tp = s.tp;
    k.cp = s.cp;
    k.ep = s.ep;
    k.pp = s.pp;
    k.gpusPerNode = s.gpusPerNode;
    k.lora = c.lora.enabled;
    k.loraRank = c.lora.rank;
    k.loraBits = c.lora.baseBits;
    k.sp = c.sequenceParallel;
    k.flash = c.flashAttention;
    k.microBatch = s.microBatch;
    k.seqLen = s.seqLen;
    k.sacRecomputeParams = s.sacRecomputeParams;
    k.layerMatmulParams = s.layerMatmulParams;
    k.recompute = c.recompute;
    k.stageLayers = c.stageLayers;
    k.mtpLayers = c.mtpLayers;
    k.dualPipe = c.ppSchedule == PpSchedule::DualPipe;
    k.selective = c.framework.selective;
    k.spGatheredInputs = c.framework.spGatheredInputs;
    k.tpBackwardOverlap = c.framework.tpBackwardOverlap;
    k.eagerKernels = c.eagerKernels();
    k.loss = c.effectiveLoss();
    k.recipe = c.recipe.recipe;
    k.efficiencyScale = c.efficiencyScale;
    k.gpu = gpu;
    k.gpu.kernels = {};
    k.table = gpu.kernels.get(); // a user file may replace a table under the same id
    return k;
}

OpStep computeOpStep(const ModelArch& arch, const ParamCounts& counts, const TrainingConfig& config,
    const ComputeSetup& s, const Gpu& gpu);

// The optimizer step streams each local parameter's state once (torch foreach / fused Adam
// are memory-bound): read the gradient, read and write the master copy and the moments, write
// the bf16 weights (a recipe without a master updates the weights in place: read and write
// them). Parameters per GPU: / tp / pp, experts / ep, / dp under ZeRO >= 1.
void addOptimizerStep(OpStep& r, const ParamCounts& counts, const TrainingConfig& config,
    const ComputeSetup& s, const Gpu& gpu)
{
    const Recipe& recipe = config.recipe.recipe;
    const double expertParams = positiveOrZero(counts.expertParamsPerLayer) * std::max(counts.moeLayers, 0);
    const double dense = std::max(0.0, positiveOrZero(counts.total) - expertParams) / (double(s.tp) * s.pp);
    const double experts = std::min(expertParams, positiveOrZero(counts.total)) / (double(s.tp) * s.pp * s.ep);
    const int zero = std::clamp(config.zeroStage, 0, 3);
    double stepParams = zero >= 1 ? dense / s.dp + experts / std::max(1.0, double(s.dp) / s.ep) : dense + experts;
    if (config.lora.enabled)
        stepParams = 0; // adapters only: negligible next to the base (the base has no state)
    const double master = positiveOrZero(recipe.masterBytes);
    const double moments = positiveOrZero(optimizerStateBytesPerParam(recipe, config.optimizer));
    const double weight = positiveOrZero(recipe.weightBytes);
    const double bytesPerParam = positiveOrZero(recipe.gradientBytes) + 2 * master + 2 * moments
        + (master > 0 ? weight : 2 * weight);
    r.optimizerS = 0; // offloaded: the CPU steps it (compute.cpp, cpu_optimizer_s)
    if (!config.offloadOptimizer)
        r.optimizerS = memoryTime(stepParams * bytesPerParam, gpu).seconds;
}

} // namespace

// A planner search estimates thousands of layouts that share a few op shapes (the same model,
// micro-batch, TP and sequence length at every data-parallel size and accumulation): the last
// timed steps are kept per thread and reused when every input is equal (issue 22: "cache op
// times per shape"). A memo of a pure function: the results are the same with or without it.
OpStep opStep(const ModelArch& arch, const ParamCounts& counts, const TrainingConfig& config,
    const ComputeSetup& s, const Gpu& gpu)
{
    thread_local RecentMemo<OpStepKey, OpStep, 16> memo;
    // The key (a copy of the model, recipe and GPU) is built only where an entry's tag of the
    // shape's numbers is equal, and then once.
    const std::uint64_t tag = memoTag(counts.total, s.microBatch, s.seqLen, s.tp, s.cp, s.ep, s.pp,
        s.gpusPerNode, config.recompute, config.lora.enabled, gpu.kernels.get());
    std::optional<OpStepKey> key;
    const auto keyed = [&]() -> const OpStepKey& {
        if (!key)
            key = keyOf(arch, counts, config, s, gpu);
        return *key;
    };
    OpStep result = memo.getTagged(tag, [&](const OpStepKey& k) { return k == keyed(); }, keyed,
        [&] { return computeOpStep(arch, counts, config, s, gpu); });
    // The optimizer step depends on the data-parallel sharding, which the memo leaves out.
    addOptimizerStep(result, counts, config, s, gpu);
    return result;
}

namespace {

OpStep computeOpStep(const ModelArch& arch, const ParamCounts& counts, const TrainingConfig& config,
    const ComputeSetup& s, const Gpu& gpu)
{
    OpStep r;
    const Recipe& recipe = config.recipe.recipe;
    TrainingLayout l;
    l.tp = s.tp;
    l.cp = s.cp;
    l.ep = s.ep;
    l.sequenceParallel = config.sequenceParallel;
    l.microBatch = s.microBatch;
    l.seqLen = s.seqLen;
    l.flashAttention = config.flashAttention;
    l.linearDtype = linearDtype(recipe);
    l.activationBytes = positiveOrZero(recipe.activationBytes) > 0 ? recipe.activationBytes : 2;
    l.frozenBase = config.lora.enabled;
    l.loraRank = config.lora.enabled ? config.lora.rank : 0;
    // Ranks laid out tp, cp, ep, dp, pp (communication.cpp): a group spanning no more than a
    // node's GPUs talks over NVLink.
    l.tpIntraNode = s.tp <= s.gpusPerNode;
    l.cpIntraNode = double(s.tp) * s.cp <= s.gpusPerNode;
    l.epIntraNode = double(s.tp) * s.cp * s.ep <= s.gpusPerNode;
    // EP ranks sit tp x cp apart: a node holds gpus_per_node / (tp x cp) of an EP group.
    if (!l.epIntraNode && double(s.tp) * s.cp <= s.gpusPerNode)
        l.epRanksPerNode = std::max(1, s.gpusPerNode / std::max(1, s.tp * s.cp));
    const double scale
        = std::isfinite(config.efficiencyScale) && config.efficiencyScale > 0 ? config.efficiencyScale : 1.0;

    const double sacShare = s.sacRecomputeParams > 0 && s.layerMatmulParams > 0
        ? s.sacRecomputeParams / s.layerMatmulParams
        : 0.5;
    const bool eager = config.eagerKernels();
    const bool gated = arch.ffn == FfnKind::Gated;
    // One layer of each kind, timed once; the stages are sums of them (below).
    struct LayerTimes {
        StageOpTimes forward, backward, recompute;
    };
    const auto layer = [&](bool moe, LayerTimes& out) {
        std::vector<Op> forward = layerForwardOps(arch, l, moe);
        if (config.lora.enabled && config.lora.baseBits < 16) {
            const double params = (moe ? counts.moeFfnPerLayer / s.ep : counts.denseFfnPerLayer)
                + counts.attentionPerLayer;
            forward.push_back(dequantizeOp(params / s.tp, config.lora.baseBits));
        }
        std::vector<Op> backward = backwardOps(forward, l);
        std::vector<Op> recompute = recomputeOps(forward, config, sacShare);
        if (eager) {
            applyEagerKernels(forward, l.activationBytes, gated);
            applyEagerKernels(backward, l.activationBytes, gated);
            applyEagerKernels(recompute, l.activationBytes, gated);
        }
        // Megatron keeps a sequence-parallel linear's input sharded and all-gathers it again
        // for the weight gradient (torchtitan keeps it gathered: sp_gathered_inputs).
        const bool sp = config.sequenceParallel && s.tp > 1;
        if (sp && !config.framework.spGatheredInputs)
            for (const Op& f : forward)
                if (f.cls == OpClass::Collective && f.collective == CollectiveKind::AllGather && !f.sendRecv) {
                    Op regather = f;
                    regather.phase = Phase::Backward;
                    regather.name = "tp re-gather";
                    backward.push_back(regather);
                }
        addOps(out.forward, forward, 1, gpu, scale);
        std::vector<double> backwardTimes;
        addOps(out.backward, backward, 1, gpu, scale, &backwardTimes);
        if (config.framework.tpBackwardOverlap && s.tp > 1) {
            // Hidden: the column-parallel input gradient's collective (all-reduce; reduce-
            // scatter under SP) and the re-gather, up to those linears' gradient GEMMs.
            double overlappable = 0, behind = 0;
            for (std::size_t i = 0; i < backward.size(); ++i) {
                const Op& b = backward[i];
                const std::string_view name(b.name);
                if (b.cls == OpClass::Collective && name.rfind("tp", 0) == 0
                    && (name == "tp re-gather"
                        || b.collective == (sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce)))
                    overlappable += backwardTimes[i];
                if (b.cls == OpClass::Gemm && b.columnParallel)
                    behind += backwardTimes[i] / scale;
            }
            const double hidden = std::min(overlappable, behind);
            out.backward.tpS -= hidden;
            out.backward.measuredS -= hidden;
        }
        addOps(out.recompute, recompute, 1, gpu, scale);
    };
    LayerTimes dense, moe;
    const int denseLayers = std::max(counts.denseLayers, 0);
    const int moeLayers = std::max(counts.moeLayers, 0);
    if (denseLayers > 0)
        layer(false, dense);
    if (moeLayers > 0)
        layer(true, moe);

    // The last stage adds the LM head and the loss, the first the embedding (one stage: both).
    std::vector<Op> head = headOps(arch, l, lossBytesPerLogit(config.effectiveLoss()));
    if (eager)
        applyEagerKernels(head, l.activationBytes, gated);
    addOps(r.head, head, 1, gpu, scale);
    addOps(r.embedding, embeddingOps(arch, l), 1, gpu, scale);
    // training.mtp_layers: each multi-token-prediction module runs on the last stage after the
    // model (DeepSeek-V3 sec. 2.2; Megatron places MTP with the loss): its embedding, norms and
    // 2h -> h projection, one transformer block of the model's last kind (DeepSeek-V3's is an
    // MoE layer) and the shared LM head and loss again. It joins the head's share of the step.
    if (const int mtp = std::clamp(config.mtpLayers, 0, kMaxMtpLayers); mtp > 0) {
        StageOpTimes module;
        std::vector<Op> own = mtpOps(arch, l);
        if (eager)
            applyEagerKernels(own, l.activationBytes, gated);
        addOps(module, own, 1, gpu, scale);
        module += r.head;
        const LayerTimes& block = moeLayers > 0 ? moe : dense;
        module += block.forward;
        module += block.backward;
        module += block.recompute;
        r.head += module * double(mtp);
    }

    // The pipeline runs at its slowest stage (Narayanan et al. 2021: every stage waits for it
    // each micro-batch). Stage k holds the layers pipelineStageLayers gives it (the plan's
    // training.stage_layers, else ceil(L / pp) each), the leading dense-FFN layers first as
    // memory places them (DeepSeek-V3: first_k_dense_replace), the first stage also the
    // embedding and the last the LM head and loss. Under DualPipe a rank runs stage k and
    // p - 1 - k, each for half the micro-batches.
    const int layers = denseLayers + moeLayers;
    const int pp = std::max(1, config.pp);
    // Stage k's dense-FFN and MoE layers.
    const auto stageKinds = [&](int k) {
        const int first = pipelineStageStart(config, layers, k);
        const int end = pipelineStageStart(config, layers, k + 1);
        const int d = std::max(0, std::min(end, denseLayers) - first);
        return std::pair { d, end - first - d };
    };
    const bool dualPipe = config.ppSchedule == PpSchedule::DualPipe && pp > 1;
    const auto stageShare = [&](int k, double share, OpStep& into) {
        // Named copies, not structured bindings: clang 14 cannot capture those in `add`.
        const std::pair<int, int> kinds = stageKinds(k);
        const double d = kinds.first, m = kinds.second;
        const auto add = [&](StageOpTimes& to, const StageOpTimes& a, const StageOpTimes& b) {
            StageOpTimes t = a * (share * d);
            t += b * (share * m);
            to += t;
        };
        add(into.forward, dense.forward, moe.forward);
        add(into.backward, dense.backward, moe.backward);
        add(into.recompute, dense.recompute, moe.recompute);
        into.embeddingShare += k == 0 ? share : 0;
        into.headShare += k == pp - 1 ? share : 0;
    };
    // The slowest rank by scalar totals first (a search times thousands of layouts), then its
    // parts once.
    const auto total = [](const LayerTimes& t) {
        return t.forward.computeS() + t.forward.commS() + t.backward.computeS()
            + t.backward.commS() + t.recompute.computeS() + t.recompute.commS();
    };
    const double denseT = total(dense), moeT = total(moe);
    const double embeddingT = r.embedding.computeS() + r.embedding.commS();
    const double headT = r.head.computeS() + r.head.commS();
    const auto stageT = [&](int k) {
        const auto [d, m] = stageKinds(k);
        return d * denseT + m * moeT + (k == 0 ? embeddingT : 0.0) + (k == pp - 1 ? headT : 0.0);
    };
    double slowest = -1;
    int slowestRank = 0;
    for (int k = 0; k < (dualPipe ? pp / 2 : pp); ++k) {
        // Under DualPipe rank k holds stage k and p - 1 - k, each for half the micro-batches.
        const double t = dualPipe ? 0.5 * (stageT(k) + stageT(pp - 1 - k)) : stageT(k);
        if (t > slowest) {
            slowest = t;
            slowestRank = k;
        }
    }
    OpStep rank;
    rank.head = r.head;
    rank.embedding = r.embedding;
    if (dualPipe) {
        stageShare(slowestRank, 0.5, rank);
        stageShare(pp - 1 - slowestRank, 0.5, rank);
    } else {
        stageShare(slowestRank, 1, rank);
    }
    rank.slowestStageIndex = slowestRank;
    r = rank;
    return r;
}

} // namespace

} // namespace envelope
