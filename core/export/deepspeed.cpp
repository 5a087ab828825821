// DeepSpeed: a config JSON and the `deepspeed` launcher line.
//
// Keys as DeepSpeed's runtime reads them (deepspeed/runtime/constants.py,
// deepspeed/runtime/zero/config.py, deepspeed/runtime/activation_checkpointing/config.py;
// https://www.deepspeed.ai/docs/config-json/): train_batch_size = micro x accumulation x DP.
// JSON has no comments, so Envelope's figures travel in EngineConfig::figures only.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "export/common.h"

namespace envelope::exportdetail {

EngineConfig exportDeepSpeed(const Plan& plan, const Estimate& estimate)
{
    const TrainingConfig& t = plan.training;
    EngineConfig out
        = startTrainingExport(plan, estimate, Engine::DeepSpeed, "ds_config.json", "DeepSpeed");
    // JSON has no comments: the release it is written for travels with the figures.
    out.figures.insert(out.figures.begin(),
        fmt::format("Envelope export for DeepSpeed {} (keys and checks of that release)",
            kDeepSpeedVersion));

    nlohmann::ordered_json j;
    j["train_batch_size"] = globalBatch(plan);
    j["train_micro_batch_size_per_gpu"] = t.microBatch;
    j["gradient_accumulation_steps"] = t.gradAccum;

    const Precision p = precisionOf(t.recipe);
    j["bf16"]
        = { { "enabled", p.kind == Precision::Kind::Bf16 || p.kind == Precision::Kind::Fp8 } };
    j["fp16"] = { { "enabled", p.kind == Precision::Kind::Fp16 } };
    // The engine's optimizer sanity check (runtime/engine.py, v0.19.5) raises NotImplementedError
    // for bf16 with fp32 gradient accumulation at ZeRO stage 0; from stage 1 up it is the
    // BF16_Optimizer / ZeRO path that keeps fp32 gradients.
    if (p.fp32Gradients && t.zeroStage >= 1)
        j["data_types"] = { { "grad_accum_dtype", "fp32" } };
    else if (p.fp32Gradients)
        out.warnings.push_back("training.recipe = bf16-mixed-18 at training.zero_stage = 0: "
                               "DeepSpeed refuses fp32 gradient accumulation with bf16 without "
                               "ZeRO (NotImplementedError); exported without "
                               "data_types.grad_accum_dtype, so DeepSpeed keeps bf16 gradients "
                               "(use ZeRO stage 1 for fp32 gradients)");
    if (p.kind == Precision::Kind::Fp8)
        out.warnings.push_back("training.recipe = fp8: DeepSpeed's config has no FP8 training "
                               "switch (it comes from Transformer Engine in the model code); "
                               "exported as bf16");
    if (!p.masterWeights && p.kind != Precision::Kind::Fp32)
        out.warnings.push_back("training.recipe: pure bf16 without an fp32 master copy cannot be "
                               "expressed; DeepSpeed's bf16 mode keeps fp32 master weights");
    if (p.eightBitOptimizer)
        out.warnings.push_back("training.recipe: an 8-bit optimizer is chosen in the training "
                               "script (bitsandbytes), not in the DeepSpeed config");

    nlohmann::ordered_json zero;
    zero["stage"] = t.zeroStage;
    // ZeRO-Offload needs a ZeRO stage: at stage 0 DeepSpeed accepts the key and ignores it, and
    // the optimizer state stays on the GPU.
    if (t.offloadOptimizer && t.zeroStage >= 1)
        zero["offload_optimizer"] = { { "device", "cpu" }, { "pin_memory", true } };
    else if (t.offloadOptimizer)
        out.warnings.push_back("training.offload_optimizer at training.zero_stage = 0: DeepSpeed "
                               "offloads the optimizer only under ZeRO stage 1-3 (at stage 0 the "
                               "key is ignored and the state stays on the GPU); not written: set "
                               "training.zero_stage >= 1");
    if (t.offloadParams)
        zero["offload_param"] = { { "device", "cpu" }, { "pin_memory", true } };
    if (t.offloadParams && t.zeroStage != 3)
        out.warnings.push_back("training.offload_params: DeepSpeed offloads parameters only "
                               "under ZeRO stage 3");
    j["zero_optimization"] = zero;

    // DeepSpeed's activation checkpointing wraps whole layers when the model code calls
    // deepspeed.checkpointing.checkpoint: full recompute. Selective and every-k have no key.
    if (t.recompute == Recompute::Full) {
        j["activation_checkpointing"] = { { "partition_activations", t.tp > 1 },
            { "cpu_checkpointing", false }, { "contiguous_memory_optimization", false } };
    } else if (t.recompute != Recompute::None) {
        out.warnings.push_back(fmt::format(
            "training.recompute = \"{}\": DeepSpeed's config expresses only full-layer "
            "checkpointing (activation_checkpointing) or none; set it in the model code",
            recomputeId(t.recompute)));
    }
    if (t.tp > 1 || t.pp > 1 || t.cp > 1 || t.ep > 1 || t.sequenceParallel)
        out.warnings.push_back(fmt::format(
            "training.tp/pp/cp/ep = {}/{}/{}/{}: model parallelism is set up by the model code "
            "(Megatron-DeepSpeed, DeepSpeed-Ulysses), not by this config; train_batch_size "
            "counts the data-parallel ranks only",
            t.tp, t.pp, t.cp, t.ep));
    if (t.seqLen > 0)
        out.warnings.push_back(fmt::format(
            "training.seq_len = {}: the sequence length is the data loader's, not DeepSpeed's",
            t.seqLen));

    out.text = j.dump(2) + "\n";
    out.program = fmt::format("train.py --deepspeed {}", out.fileName);
    const auto [nodes, perNode] = nodeLayout(plan);
    out.launch = nodes > 1
        ? fmt::format("deepspeed --hostfile hostfile --num_nodes {} --num_gpus {} train.py "
                      "--deepspeed {}",
            nodes, perNode, out.fileName)
        : fmt::format("deepspeed --num_gpus {} train.py --deepspeed {}", perNode, out.fileName);
    return out;
}

} // namespace envelope::exportdetail
