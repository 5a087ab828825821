// Megatron-LM: arguments for pretrain_gpt.py, one per line, with the model shape.
//
// Flags as megatron/training/arguments.py defines them. Megatron's distributed optimizer
// (--use-distributed-optimizer) shards the optimizer state over data-parallel ranks: ZeRO-1.
// Its recompute "uniform" method with --recompute-num-layers k checkpoints the input of every
// group of k layers: Envelope's full (k = 1) and every-k recompute.
#include <fmt/format.h>

#include "base/checked.h"
#include "export/common.h"

namespace envelope::exportdetail {

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
    arg("--hidden-size", a.hidden);
    arg("--ffn-hidden-size", a.ffnHidden);
    arg("--num-attention-heads", a.heads);
    if (a.kvHeads > 0 && a.kvHeads < a.heads) {
        args.push_back("--group-query-attention");
        arg("--num-query-groups", a.kvHeads);
    }
    if (a.heads > 0 && a.headDim > 0 && wideProduct(a.headDim, a.heads) != a.hidden)
        arg("--kv-channels", a.headDim);
    arg("--max-position-embeddings", a.maxPositions > 0 ? a.maxPositions : t.seqLen);
    arg("--vocab-size", a.vocab);
    arg("--position-embedding-type", a.learnedPositions ? "learned_absolute" : "rope");
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
    if (t.virtualStages > 1)
        arg("--num-layers-per-virtual-pipeline-stage", a.layers / (t.pp * t.virtualStages));
    arg("--context-parallel-size", t.cp);
    arg("--expert-model-parallel-size", t.ep);
    if (t.sequenceParallel)
        args.push_back("--sequence-parallel");
    arg("--micro-batch-size", t.microBatch);
    arg("--global-batch-size", globalBatch(plan));
    arg("--seq-length", t.seqLen);
    arg("--train-samples", numberText(std::ceil(t.trainTokens / t.seqLen)));

    switch (t.recompute) {
    case Recompute::None:
        break;
    case Recompute::Selective:
        arg("--recompute-granularity", "selective");
        break;
    case Recompute::Full:
    case Recompute::EveryK:
        arg("--recompute-granularity", "full");
        arg("--recompute-method", "uniform");
        arg("--recompute-num-layers", t.recompute == Recompute::Full ? 1 : t.recomputeEvery);
        break;
    }

    if (t.zeroStage >= 1)
        args.push_back("--use-distributed-optimizer");
    if (t.zeroStage >= 2)
        out.warnings.push_back(fmt::format(
            "training.zero_stage = {}: Megatron's distributed optimizer shards the optimizer "
            "state only (ZeRO-1); sharding gradients and parameters needs Megatron-FSDP",
            t.zeroStage));
    if (t.offloadOptimizer)
        args.push_back("--optimizer-cpu-offload");
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
        arg("--fp8-format", "e4m3");
        arg("--fp8-recipe", "blockwise");
        break;
    }
    if (!p.masterWeights && p.kind != Precision::Kind::Fp32)
        out.warnings.push_back("training.recipe: Megatron keeps an fp32 master copy with --bf16; "
                               "a pure-bf16 recipe cannot be expressed");
    if (p.eightBitOptimizer)
        out.warnings.push_back("training.recipe: Megatron-LM's optimizers have no 8-bit Adam");
    if (t.flashAttention)
        args.push_back("--use-flash-attn");
    else
        arg("--attention-backend", "unfused");
    if (t.optimizer == OptimizerKind::Sgd || t.optimizer == OptimizerKind::SgdMomentum)
        arg("--optimizer", "sgd");

    std::string s
        = commentBlock("Envelope export for Megatron-LM (pretrain_gpt.py arguments)", out.figures);
    for (const std::string& a : args)
        s += a + "\n";
    out.text = s;
    const auto [nodes, perNode] = nodeLayout(plan);
    // xargs honours the quotes around --moe-layer-freq's expression; $(...) would not.
    out.launch = fmt::format("grep -v '^#' {} | xargs torchrun --nnodes {} --nproc_per_node {} "
                             "pretrain_gpt.py",
        out.fileName, nodes, perNode);
    return out;
}

} // namespace envelope::exportdetail
