// Megatron-LM: arguments for pretrain_gpt.py, one per line, with the model shape.
//
// Flags as megatron/training/arguments.py defines them. Megatron's distributed optimizer
// (--use-distributed-optimizer) shards the optimizer state over data-parallel ranks: ZeRO-1.
// Its recompute "uniform" method with --recompute-num-layers k checkpoints the input of every
// group of k layers: Envelope's full (k = 1) and every-k recompute.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/checked.h"
#include "export/common.h"

namespace envelope::exportdetail {

namespace {

// Rotary positions as the checkpoint defines them (issue 25): Megatron's --rotary-base defaults
// to 10000 where Llama 3 uses 500000 and Qwen2.5 1e6, and a long-context checkpoint's scaling
// must be restated, or the launched model is not the named one. Flags per Megatron-LM's
// arguments.py and argument_utils.py (megatron-core v0.19): Llama 3.1 scaling is
// --use-rope-scaling with its factor (low/high frequency factors 1 and 4 and 8,192 original
// positions fixed in rotary_pos_embedding.py); YaRN is --position-embedding-type yarn with
// --rotary-scaling-factor and the --yarn-* flags, or for MLA --rope-type yarn with
// --rotary-scaling-factor, --mscale and --mscale-all-dim (MLATransformerConfig keeps 4,096
// original positions and betas 32 and 1); linear is --rotary-seq-len-interpolation-factor (an
// integer).
void ropeArguments(const ModelArch& a, std::vector<std::string>& args,
    std::vector<std::string>& warnings)
{
    const auto arg
        = [&](std::string flag, auto value) { args.push_back(fmt::format("{} {}", flag, value)); };
    const bool yarn = a.ropeScaling && a.ropeScaling->kind == RopeScalingKind::Yarn;
    arg("--position-embedding-type", yarn && !a.mla ? "yarn" : "rope");
    if (a.ropeTheta <= 0) {
        warnings.push_back("model: --rotary-base is not written (the model states no rope_theta; "
                           "Megatron's default is 10000): add the model's rope_theta from its "
                           "config.json, or the launched model may not be the named one");
    } else {
        // arguments.py reads --rotary-base as an int; every published base is a whole number.
        const double base = std::round(a.ropeTheta);
        arg("--rotary-base", numberText(base));
        if (base != a.ropeTheta)
            warnings.push_back(fmt::format("model.rope_theta = {} is written as --rotary-base {} "
                                           "(Megatron reads an integer)",
                numberText(a.ropeTheta), numberText(base)));
    }
    if (a.ropeFraction != 1)
        arg("--rotary-percent", numberText(a.ropeFraction));
    if (!a.ropeScaling)
        return;
    const RopeScaling& r = *a.ropeScaling;
    // A value the config states where Megatron has no flag and keeps its own `fixed` one.
    const auto fixedByMegatron = [&](const char* key, std::optional<double> value, double fixed) {
        if (value && *value != fixed)
            warnings.push_back(fmt::format("model.rope_scaling.{} = {} has no Megatron flag (it "
                                           "uses {}): the launched model's long-context positions "
                                           "differ",
                key, numberText(*value), numberText(fixed)));
    };
    std::optional<double> originalPositions;
    if (r.originalPositions != 0)
        originalPositions = static_cast<double>(r.originalPositions);
    switch (r.kind) {
    case RopeScalingKind::Llama3:
        args.push_back("--use-rope-scaling");
        arg("--rope-scaling-factor", numberText(r.factor));
        fixedByMegatron("original_max_position_embeddings", originalPositions, 8192);
        fixedByMegatron("low_freq_factor", r.lowFreqFactor, 1);
        fixedByMegatron("high_freq_factor", r.highFreqFactor, 4);
        break;
    case RopeScalingKind::Yarn:
        if (a.mla)
            arg("--rope-type", "yarn");
        arg("--rotary-scaling-factor", numberText(r.factor));
        if (r.mscale)
            arg("--mscale", numberText(*r.mscale));
        if (r.mscaleAllDim)
            arg("--mscale-all-dim", numberText(*r.mscaleAllDim));
        if (!a.mla) {
            if (r.originalPositions != 0)
                arg("--yarn-original-max-position-embeddings", r.originalPositions);
            if (r.betaFast)
                arg("--yarn-beta-fast", numberText(*r.betaFast));
            if (r.betaSlow)
                arg("--yarn-beta-slow", numberText(*r.betaSlow));
            break;
        }
        fixedByMegatron("original_max_position_embeddings", originalPositions, 4096);
        fixedByMegatron("beta_fast", r.betaFast, 32);
        fixedByMegatron("beta_slow", r.betaSlow, 1);
        break;
    case RopeScalingKind::Linear: {
        const double factor = std::round(r.factor);
        arg("--rotary-seq-len-interpolation-factor", numberText(factor));
        if (factor != r.factor)
            warnings.push_back(fmt::format("model.rope_scaling.factor = {} is written as "
                                           "--rotary-seq-len-interpolation-factor {} (Megatron "
                                           "reads an integer)",
                numberText(r.factor), numberText(factor)));
        break;
    }
    }
}

} // namespace

EngineConfig exportMegatron(const Plan& plan, const Estimate& estimate)
{
    const TrainingConfig& t = plan.training;
    const ModelArch& a = plan.model.arch;
    EngineConfig out
        = startTrainingExport(plan, estimate, Engine::Megatron, "megatron.args", "Megatron-LM");
    std::vector<std::string> args;
    const auto arg
        = [&](std::string flag, auto value) { args.push_back(fmt::format("{} {}", flag, value)); };

    // Model shape.
    arg("--num-layers", a.layers);
    if (t.mtpLayers > 0)
        arg("--mtp-num-layers", t.mtpLayers);
    arg("--hidden-size", a.hidden);
    arg("--ffn-hidden-size", a.ffnHidden);
    arg("--num-attention-heads", a.heads);
    if (a.kvHeads > 0 && a.kvHeads < a.heads) {
        args.push_back("--group-query-attention");
        arg("--num-query-groups", a.kvHeads);
    }
    if (a.heads > 0 && a.headDim > 0 && wideProduct(a.headDim, a.heads) != a.hidden)
        arg("--kv-channels", a.headDim);
    // validate_args() asserts max_position_embeddings >= seq_length: a sequence longer than the
    // model's positions raises the flag to seq_len (and says so: RoPE is then extrapolated).
    const long long positions = a.maxPositions > 0 ? a.maxPositions : t.seqLen;
    arg("--max-position-embeddings", std::max<long long>(positions, t.seqLen));
    if (a.maxPositions > 0 && t.seqLen > a.maxPositions)
        out.warnings.push_back(fmt::format(
            "training.seq_len = {} is longer than the model's {} positions: "
            "--max-position-embeddings is raised to {} (Megatron asserts it is at least "
            "--seq-length); extend the RoPE range (--rope-scaling-factor) for the model to use "
            "them",
            t.seqLen, a.maxPositions, t.seqLen));
    arg("--vocab-size", a.vocab);
    if (a.learnedPositions)
        arg("--position-embedding-type", "learned_absolute");
    else
        ropeArguments(a, args, out.warnings);
    arg("--normalization", a.norm == NormKind::RmsNorm ? "RMSNorm" : "LayerNorm");
    if (a.ffn == FfnKind::Gated)
        args.push_back("--swiglu");
    if (!a.linearBias) {
        args.push_back("--disable-bias-linear");
        if (a.qkvBias)
            args.push_back("--add-qkv-bias");
    }
    if (!a.tiedEmbeddings)
        args.push_back("--untie-embeddings-and-output-weights");
    arg("--attention-dropout", numberText(a.dropout));
    arg("--hidden-dropout", numberText(a.dropout));
    if (a.moe) {
        arg("--num-experts", a.moe->experts);
        arg("--moe-router-topk", a.moe->topK);
        arg("--moe-ffn-hidden-size", a.moe->expertFfnHidden);
        if (a.moe->sharedExperts > 0)
            arg("--moe-shared-expert-intermediate-size",
                a.moe->sharedExperts * a.moe->expertFfnHidden);
        if (a.moe->denseLayers > 0)
            arg("--moe-layer-freq",
                fmt::format(
                    "'([0]*{}+[1]*{})'", a.moe->denseLayers, a.layers - a.moe->denseLayers));
    }
    if (a.mla) {
        args.push_back("--multi-latent-attention");
        if (a.mla->qLoraRank > 0)
            arg("--q-lora-rank", a.mla->qLoraRank);
        arg("--kv-lora-rank", a.mla->kvLoraRank);
        arg("--qk-head-dim", a.mla->qkNopeHeadDim);
        arg("--qk-pos-emb-head-dim", a.mla->qkRopeHeadDim);
        arg("--v-head-dim", a.mla->vHeadDim);
    }
    if (a.slidingWindow > 0)
        out.warnings.push_back(fmt::format("model.sliding_window = {}: set --window-size for "
                                           "the attention backend that supports it",
            a.slidingWindow));

    // Parallelism and batch.
    arg("--tensor-model-parallel-size", t.tp);
    arg("--pipeline-model-parallel-size", t.pp);
    // --num-virtual-stages-per-pipeline-rank (not layers per virtual stage) is the form Megatron
    // accepts with an uneven split too; --pipeline-model-parallel-layout names every chunk's
    // layers: "E" (embedding) first, "L" (loss) last, "(t)*n" for n layers, chunks separated by
    // "|" (megatron/core/transformer/pipeline_parallel_layer_layout.py).
    // The split the estimate used (pipelineStageLayers: the plan's training.stage_layers, else
    // ceil(L / pp) each and the rest last), so the job runs the layout that was sized. An even
    // split that divides into the virtual stages is Megatron's default; equal middle stages are
    // --decoder-first/last-pipeline-num-layers (every count a multiple of the virtual stages, no
    // stage empty); any other split is a layout, rank k's layers cut into v chunks at model
    // positions k, k + pp, ... (interleaved 1F1B's round robin). The layout replaces the
    // virtual stage flag (validate_args allows one of the two).
    const long long v = std::max(1, t.virtualStages);
    const std::vector<int> stages = pipelineStageLayers(t, a.layers);
    bool middleEqual = true, divisible = true, nonEmpty = true, allEqual = true;
    for (std::size_t k = 0; k < stages.size(); ++k) {
        divisible = divisible && stages[k] % v == 0;
        nonEmpty = nonEmpty && stages[k] > 0;
        allEqual = allEqual && stages[k] == stages[0];
        if (k >= 1 && k + 1 < stages.size())
            middleEqual = middleEqual && stages[k] == stages[1];
    }
    if (t.pp <= 1 || (divisible && nonEmpty && middleEqual)) {
        if (v > 1)
            arg("--num-virtual-stages-per-pipeline-rank", v);
        if (t.pp > 1 && !allEqual) {
            arg("--decoder-first-pipeline-num-layers", stages.front());
            arg("--decoder-last-pipeline-num-layers", stages.back());
        }
    } else {
        std::string layout = "E";
        const std::vector<long long> chunks = chunkLayers(stages, t.virtualStages);
        for (std::size_t j = 0; j < chunks.size(); ++j)
            layout += (j ? "|" : "") + fmt::format("(t)*{}", chunks[j]);
        // The MTP modules sit with the loss, on the last stage (Megatron asserts one m each).
        const int mtp = std::clamp(t.mtpLayers, 0, kMaxMtpLayers);
        layout += std::string(static_cast<std::size_t>(mtp), 'm') + "L";
        if (std::find(chunks.begin(), chunks.end(), 0) != chunks.end())
            out.warnings.push_back(fmt::format(
                "training.pp x virtual_stages = {} chunks for {} layers: some chunks hold no "
                "layer",
                chunks.size(), a.layers));
        arg("--pipeline-model-parallel-layout", fmt::format("'{}'", layout));
    }
    arg("--context-parallel-size", t.cp);
    arg("--expert-model-parallel-size", t.ep);
    if (t.sequenceParallel)
        args.push_back("--sequence-parallel");
    arg("--micro-batch-size", t.microBatch);
    arg("--global-batch-size", globalBatch(plan));
    arg("--seq-length", t.seqLen);
    arg("--train-samples", numberText(std::ceil(t.trainTokens / t.seqLen)));

    // training.recompute_ops as Megatron's selective --recompute-modules (megatron/training/
    // arguments.py; TransformerConfig.recompute_modules): norm = layernorm (the input and
    // pre-MLP norms), mla_up = mla_up_proj, swiglu = moe_act (the MoE experts' activation; a
    // dense MLP's activation alone has no module). core_attn is Envelope's selective recompute.
    std::vector<std::string> modules;
    if (t.recompute == Recompute::Selective)
        modules.push_back("core_attn");
    if (t.recompute == Recompute::None || t.recompute == Recompute::Selective) {
        const ModelArch& arch = plan.model.arch;
        if (t.recomputeOps & RecomputeNorm)
            modules.push_back("layernorm");
        if ((t.recomputeOps & RecomputeMlaUp) && arch.mla)
            modules.push_back("mla_up_proj");
        if (t.recomputeOps & RecomputeSwiglu) {
            if (arch.moe)
                modules.push_back("moe_act");
            if (!arch.moe || arch.moe->denseLayers > 0)
                out.warnings.push_back(
                    "training.recompute_ops swiglu: Megatron recomputes the MoE experts' "
                    "activation (moe_act) only; a dense MLP's activation has no module of its own "
                    "(mlp recomputes the whole MLP), so the dense layers keep their SwiGLU output");
        }
    }
    if (t.fp8Activations != 0)
        out.warnings.push_back("training.fp8_activations: Megatron has no flag to cache chosen "
                               "activations in FP8 (Transformer Engine keeps the linears' inputs "
                               "in FP8 under an FP8 recipe on its own)");
    switch (t.recompute) {
    case Recompute::None:
    case Recompute::Selective:
        if (!modules.empty()) {
            arg("--recompute-granularity", "selective");
            if (modules != std::vector<std::string> { "core_attn" })
                arg("--recompute-modules", fmt::format("{}", fmt::join(modules, " ")));
        }
        break;
    case Recompute::Full:
    case Recompute::EveryK:
        arg("--recompute-granularity", "full");
        arg("--recompute-method", "uniform");
        arg("--recompute-num-layers", t.recompute == Recompute::Full ? 1 : t.recomputeEvery);
        if (t.recomputeOps != 0)
            out.warnings.push_back("training.recompute_ops under full recompute: Megatron's "
                                   "granularity is one of full and selective; the full "
                                   "recompute already rebuilds these ops");
        break;
    }

    if (t.zeroStage >= 1)
        args.push_back("--use-distributed-optimizer");
    // The DP overlap switches the plan states (the framework profile's default is Megatron's:
    // off). --overlap-param-gather needs the distributed optimizer (validate_args).
    if (t.overlapGradReduce.value_or(false))
        args.push_back("--overlap-grad-reduce");
    if (t.overlapParamGather.value_or(false)) {
        if (t.zeroStage >= 1)
            args.push_back("--overlap-param-gather");
        else
            out.warnings.push_back("training.overlap_param_gather without the distributed "
                                   "optimizer (zero_stage 0): Megatron's --overlap-param-gather "
                                   "needs --use-distributed-optimizer; not written");
    }
    // ZeRO-2/3 is Megatron-FSDP (megatron/core/distributed/fsdp: the user guide's required
    // flags): the sharding strategy, no gradient-accumulation fusion, its own checkpoint format
    // (validate_args asserts fsdp_dtensor), and parameters created on the meta device so no
    // rank materialises the whole model before it is sharded.
    if (t.zeroStage >= 2) {
        args.push_back("--use-megatron-fsdp");
        arg("--data-parallel-sharding-strategy",
            t.zeroStage >= 3 ? "optim_grads_params" : "optim_grads");
        args.push_back("--no-gradient-accumulation-fusion");
        arg("--ckpt-format", "fsdp_dtensor");
        args.push_back("--init-model-with-meta-device");
    }
    if (t.offloadOptimizer) {
        // validate_args(): the CPU offload runs through the precision-aware optimizer's code path
        // and asserts it is on; that optimizer is Adam only (OptimizerConfig).
        args.push_back("--optimizer-cpu-offload");
        args.push_back("--use-precision-aware-optimizer");
        if (t.optimizer == OptimizerKind::Sgd || t.optimizer == OptimizerKind::SgdMomentum)
            out.warnings.push_back("training.offload_optimizer with SGD: Megatron's optimizer "
                                   "CPU offload needs --use-precision-aware-optimizer, which "
                                   "supports Adam only");
    }
    if (t.offloadParams)
        out.warnings.push_back("training.offload_params: Megatron-LM does not offload parameters");

    const Precision p = precisionOf(t.recipe);
    switch (p.kind) {
    case Precision::Kind::Bf16:
        args.push_back("--bf16");
        // Megatron accumulates and all-reduces gradients in fp32 by default with --bf16 (the 18
        // B/param recipe); bf16 gradients need --grad-reduce-in-bf16.
        if (!p.fp32Gradients)
            args.push_back("--grad-reduce-in-bf16");
        break;
    case Precision::Kind::Fp16:
        args.push_back("--fp16");
        break;
    case Precision::Kind::Fp32:
        break;
    case Precision::Kind::Fp8:
        args.push_back("--bf16");
        // FP8 runs under --bf16 too: without --grad-reduce-in-bf16 Megatron reduces and keeps
        // the gradients in fp32 (4 B), which the FP8 recipes' 2 B gradients are not.
        if (!p.fp32Gradients)
            args.push_back("--grad-reduce-in-bf16");
        arg("--fp8-format", "e4m3");
        arg("--fp8-recipe", "blockwise");
        break;
    }
    if (!p.masterWeights && p.kind != Precision::Kind::Fp32)
        out.warnings.push_back("training.recipe: Megatron keeps an fp32 master copy with --bf16; "
                               "a pure-bf16 recipe cannot be expressed");
    if (p.eightBitOptimizer)
        out.warnings.push_back("training.recipe: Megatron-LM's optimizers have no 8-bit Adam");
    // --use-flash-attn is parsed but read nowhere in Megatron-Core; the backend flag decides.
    arg("--attention-backend", t.flashAttention ? "flash" : "unfused");
    if (t.optimizer == OptimizerKind::Sgd || t.optimizer == OptimizerKind::SgdMomentum)
        arg("--optimizer", "sgd");
    if (t.activationOffload) {
        // Megatron offloads the first N transformer layers' activations through Transformer
        // Engine; N must stay below the layers (0 .. num_layers - 1) and PP must be 1.
        const int layers = std::max(1, plan.model.arch.layers);
        const int n = t.activationOffloadLayers > 0 ? std::min(t.activationOffloadLayers, layers - 1)
                                                     : layers - 1;
        if (n >= 1) {
            args.push_back("--cpu-offloading");
            arg("--cpu-offloading-num-layers", std::to_string(n));
        }
        if (t.activationOffloadLayers == 0 || t.activationOffloadLayers >= layers)
            out.warnings.push_back(fmt::format("training.activation_offload: Megatron offloads at "
                                               "most num_layers - 1 = {} layers; exported as {}",
                layers - 1, n));
        if (t.pp > 1)
            out.warnings.push_back("training.activation_offload: Megatron's --cpu-offloading "
                                   "needs pipeline parallelism 1");
    }

    std::string s
        = commentBlock(fmt::format("Envelope export for Megatron-LM {} (pretrain_gpt.py arguments)",
                           kMegatronVersion),
            out.figures);
    if (t.zeroStage >= 2)
        s += "# Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS unset (validate_args asserts it "
             "is not 1 with --use-megatron-fsdp).\n";
    for (const std::string& a : args)
        s += a + "\n";
    out.text = s;
    out.program = "pretrain_gpt.py";
    out.programArgsFile = out.fileName;
    const auto [nodes, perNode] = nodeLayout(plan);
    // xargs honours the quotes around --moe-layer-freq's expression; $(...) would not.
    out.launch = fmt::format("grep -v '^#' {} | xargs torchrun --nnodes {} --nproc_per_node {} "
                             "pretrain_gpt.py",
        out.fileName, nodes, perNode);
    return out;
}

} // namespace envelope::exportdetail
