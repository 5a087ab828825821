// Hugging Face Trainer: TrainingArguments as JSON (HfArgumentParser.parse_json_file reads it),
// sharded with PyTorch FSDP through the Trainer's `fsdp` / `fsdp_config` arguments.
//
// Field names as transformers' TrainingArguments declares them (src/transformers/
// training_args.py): per_device_train_batch_size, gradient_accumulation_steps, bf16, fp16,
// gradient_checkpointing, fsdp ("full_shard" = ZeRO-3, "shard_grad_op" = ZeRO-2, "offload"),
// optim, max_steps. JSON has no comments and parse_json_file rejects unknown keys, so
// Envelope's figures travel in EngineConfig::figures only.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "export/common.h"

namespace envelope::exportdetail {

std::vector<std::string> peftTargetModules(const Plan& plan, std::vector<std::string>& warnings)
{
    const LoraConfig& lora = plan.training.lora;
    static constexpr std::pair<LoraConfig::Target, const char*> kModules[]
        = { { LoraConfig::Q, "q_proj" }, { LoraConfig::K, "k_proj" }, { LoraConfig::V, "v_proj" },
              { LoraConfig::O, "o_proj" }, { LoraConfig::Gate, "gate_proj" },
              { LoraConfig::Up, "up_proj" }, { LoraConfig::Down, "down_proj" } };
    std::vector<std::string> modules;
    for (const auto& [target, module] : kModules)
        if (lora.targets & target)
            modules.emplace_back(module);
    if (plan.model.arch.ffn != FfnKind::Gated && (lora.targets & LoraConfig::Gate))
        warnings.push_back("training.lora.targets: \"gate\" has no matrix in this model's "
                           "two-matrix FFN; the module names are the Llama family's, rename "
                           "them for this architecture");
    return modules;
}

namespace {

// PEFT's adapter_config.json (LoraConfig.to_dict: peft_type, task_type, r, lora_alpha,
// lora_dropout, bias, target_modules) for `training.lora`; and bitsandbytes' quantization config
// for a 4- or 8-bit frozen base (BitsAndBytesConfig: load_in_4bit, bnb_4bit_quant_type "nf4",
// bnb_4bit_use_double_quant, bnb_4bit_compute_dtype; load_in_8bit).
void addLoraCompanions(const Plan& plan, EngineConfig& out)
{
    const LoraConfig& lora = plan.training.lora;
    if (!lora.enabled)
        return;
    nlohmann::ordered_json adapter;
    adapter["peft_type"] = "LORA";
    adapter["task_type"] = "CAUSAL_LM";
    adapter["r"] = lora.rank;
    adapter["lora_alpha"] = lora.alpha;
    adapter["lora_dropout"] = 0.0;
    adapter["bias"] = "none";
    adapter["target_modules"] = peftTargetModules(plan, out.warnings);
    out.companions.push_back({ "adapter_config.json", adapter.dump(2) + "\n" });
    if (lora.baseBits == 16)
        return;
    nlohmann::ordered_json bnb;
    if (lora.baseBits == 4) {
        bnb["load_in_4bit"] = true;
        bnb["bnb_4bit_quant_type"] = "nf4";
        bnb["bnb_4bit_use_double_quant"] = lora.doubleQuant;
        bnb["bnb_4bit_compute_dtype"] = "bfloat16";
    } else {
        bnb["load_in_8bit"] = true;
    }
    out.companions.push_back({ "bnb_config.json", bnb.dump(2) + "\n" });
}

} // namespace

EngineConfig exportHf(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    const TrainingConfig& t = plan.training;
    EngineConfig out = startTrainingExport(
        plan, estimate, Engine::Hf, "training_args.json", "the Hugging Face Trainer");
    const Precision p = precisionOf(t.recipe);

    nlohmann::ordered_json j;
    j["output_dir"] = "output";
    j["per_device_train_batch_size"] = t.microBatch;
    j["gradient_accumulation_steps"] = t.gradAccum;
    j["max_steps"] = trainSteps(plan);
    j["bf16"] = p.kind == Precision::Kind::Bf16 || p.kind == Precision::Kind::Fp8;
    j["fp16"] = p.kind == Precision::Kind::Fp16;
    j["gradient_checkpointing"] = t.recompute != Recompute::None;
    if (t.recompute == Recompute::Selective || t.recompute == Recompute::EveryK)
        out.warnings.push_back(fmt::format(
            "training.recompute = \"{}\": the Trainer's gradient_checkpointing recomputes every "
            "whole layer (full); exported as full",
            recomputeId(t.recompute)));

    std::string fsdp;
    if (t.zeroStage == 3)
        fsdp = "full_shard auto_wrap";
    else if (t.zeroStage >= 1)
        fsdp = "shard_grad_op auto_wrap";
    if (t.zeroStage == 1)
        out.warnings.push_back("training.zero_stage = 1: FSDP has no optimizer-only sharding; "
                               "exported as shard_grad_op (ZeRO-2)");
    if (!fsdp.empty() && (t.offloadParams || t.offloadOptimizer))
        fsdp += " offload";
    if (t.offloadOptimizer != t.offloadParams)
        out.warnings.push_back("training.offload_optimizer/offload_params: FSDP's offload moves "
                               "parameters, gradients and optimizer state together");
    if (fsdp.empty() && (t.offloadParams || t.offloadOptimizer))
        out.warnings.push_back("training.offload_*: offloading needs FSDP sharding (zero_stage "
                               ">= 2) in the Trainer");
    if (!fsdp.empty()) {
        j["fsdp"] = fsdp;
        j["fsdp_config"] = { { "backward_prefetch", "backward_pre" }, { "use_orig_params", true },
            { "activation_checkpointing", false } };
    }
    // transformers OptimizerNames: the bitsandbytes optimizers by their own names.
    if (t.optimizer == OptimizerKind::AdamW8bit)
        j["optim"] = "adamw_bnb_8bit";
    else if (t.optimizer == OptimizerKind::PagedAdamW)
        j["optim"] = "paged_adamw_32bit";
    else if (t.optimizer == OptimizerKind::PagedAdamW8bit)
        j["optim"] = "paged_adamw_8bit";
    else if (p.eightBitOptimizer)
        j["optim"] = "adamw_bnb_8bit";
    else if (t.optimizer == OptimizerKind::Sgd || t.optimizer == OptimizerKind::SgdMomentum)
        j["optim"] = "sgd";
    else if (t.optimizer == OptimizerKind::Adafactor)
        j["optim"] = "adafactor";
    else
        j["optim"] = "adamw_torch_fused";
    if (p.kind == Precision::Kind::Fp8)
        out.warnings.push_back("training.recipe = fp8: the Trainer has no FP8 switch (use "
                               "accelerate's mixed_precision fp8 with Transformer Engine); "
                               "exported as bf16");
    if (!p.masterWeights && p.kind != Precision::Kind::Fp32)
        out.warnings.push_back("training.recipe: the Trainer's bf16 mode keeps fp32 weights; load "
                               "the model in bf16 yourself for a pure-bf16 recipe");
    if (t.tp > 1 || t.pp > 1 || t.cp > 1 || t.ep > 1)
        out.warnings.push_back(fmt::format(
            "training.tp/pp/cp/ep = {}/{}/{}/{}: the Trainer shards data-parallel only (FSDP); "
            "model parallelism cannot be expressed",
            t.tp, t.pp, t.cp, t.ep));
    out.warnings.push_back(fmt::format(
        "training.seq_len = {}: the sequence length is the tokenizer's max_length in your script",
        t.seqLen));
    if (modelRepo.empty())
        out.warnings.push_back("model: no Hugging Face repository known for this model");

    out.text = j.dump(2) + "\n";
    addLoraCompanions(plan, out);
    out.program = "train.py " + out.fileName;
    const auto [nodes, perNode] = nodeLayout(plan);
    out.launch = fmt::format("torchrun --nnodes {} --nproc_per_node {} train.py {}{}", nodes,
        perNode, out.fileName, modelRepo.empty() ? "" : "  # model: " + modelRepo);
    return out;
}

} // namespace envelope::exportdetail
