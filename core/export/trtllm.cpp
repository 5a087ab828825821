// TensorRT-LLM: a `trtllm-serve` command line (PyTorch backend) and, when the plan needs
// settings without a flag, the YAML file its --extra_llm_api_options reads.
//
// Flags as trtllm-serve declares them (tensorrt_llm/commands/serve.py): --backend, --tp_size,
// --max_batch_size, --max_num_tokens, --max_seq_len, --kv_cache_free_gpu_memory_fraction,
// --extra_llm_api_options. In the YAML (LlmArgs): kv_cache_config.dtype "fp8";
// speculative_config with decoding_type MTP (num_nextn_predict_layers), Eagle or DraftTarget
// (max_draft_len, speculative_model_dir).
#include <fmt/format.h>

#include "export/common.h"

namespace envelope::exportdetail {

EngineConfig exportTrtllm(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    std::string model;
    EngineConfig out = startServingExport(plan, estimate, Engine::Trtllm, "trtllm_serve.sh",
        ServingEngine::Trtllm, "TensorRT-LLM", modelRepo, model);
    const ServingConfig sc = exportedEngine(plan, "TensorRT-LLM", out.warnings);
    const ServingParallel parallel = servingParallel(sc);

    std::vector<std::string> flags { "trtllm-serve " + model };
    const auto flag
        = [&](std::string name, auto value) { flags.push_back(fmt::format("{} {}", name, value)); };
    flag("--backend", "pytorch");
    // trtllm-serve's --tp_size is the engine's GPUs; --ep_size spreads the experts over them.
    // Attention data parallelism is an LLM API option (enable_attention_dp), not a flag.
    flag("--tp_size", parallel.gpus());
    if (parallel.ep > 1)
        flag("--ep_size", parallel.ep);
    if (parallel.ep > 1 && sc.redundantExperts > 0)
        out.warnings.push_back(fmt::format(
            "serving.redundant_experts = {}: TensorRT-LLM places expert copies through "
            "moe_config.load_balancer (num_slots = {}) in the file --extra_llm_api_options names; "
            "trtllm-serve has no flag for it",
            sc.redundantExperts,
            (plan.model.arch.moe ? plan.model.arch.moe->experts : 0) + sc.redundantExperts));
    if (parallel.dp > 1)
        out.warnings.push_back(fmt::format("serving.dp_attention ({} attention ranks): set "
                                           "enable_attention_dp: true in the file "
                                           "--extra_llm_api_options names; trtllm-serve has no "
                                           "flag for it",
            parallel.dp));
    flag("--max_batch_size", sc.concurrency);
    // Each running sequence takes a token of a step's budget, as in vLLM.
    flag("--max_num_tokens", std::max<long long>(sc.maxBatchedTokens, sc.concurrency));
    flag("--max_seq_len", sc.context);
    if (sc.engine == ServingEngine::Trtllm)
        flag("--kv_cache_free_gpu_memory_fraction", numberText(estimate.serving.memoryFraction));

    std::string yaml;
    const KvCacheFormat kvFormat = servingKvFormat(sc);
    if (kvFormat == KvCacheFormat::Fp8)
        yaml += "kv_cache_config:\n  dtype: fp8\n";
    else if (sc.kvBits < 16)
        out.warnings.push_back(fmt::format("serving.kv_bits = {} (kv_format \"{}\"): TensorRT-LLM's KV cache "
                                           "is 16-bit, fp8 or (from a ModelOpt checkpoint) nvfp4; "
                                           "it is not written",
            sc.kvBits, kvCacheFormatId(kvFormat)));
    if (sc.weightBits < 16 || sc.attentionWeightFormat || sc.expertWeightFormat)
        out.warnings.push_back(fmt::format(
            "serving weights \"{}\": TensorRT-LLM reads quantized weights from the checkpoint "
            "(a ModelOpt FP8, NVFP4 or INT4-AWQ export, its excluded modules included): serve "
            "such a checkpoint; no flag is written",
            servingWeightFormatText(sc)));
    if (sc.speculative) {
        const ServingSpeculative& spec = *sc.speculative;
        if (spec.kind == SpeculativeKind::Mtp) {
            yaml += fmt::format(
                "speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: {}\n",
                spec.tokens);
        } else {
            const bool eagle = spec.kind == SpeculativeKind::Eagle;
            const std::string draft = speculativeDraftName(spec);
            out.warnings.push_back(fmt::format(
                "serving.speculative: replace {} in {} with the {} (a Hugging Face repository or "
                "path)",
                draft, "extra_llm_api_options.yaml",
                eagle ? "EAGLE head trained for this model" : "draft model"));
            yaml += fmt::format("speculative_config:\n  decoding_type: {}\n  max_draft_len: {}\n"
                                "  speculative_model_dir: \"{}\"\n",
                eagle ? "Eagle" : "DraftTarget", spec.tokens, draft);
        }
    }
    if (!yaml.empty()) {
        out.companions.push_back({ "extra_llm_api_options.yaml",
            "# Envelope export for TensorRT-LLM: the settings trtllm-serve takes from a file\n"
                + yaml });
        flag("--extra_llm_api_options", "extra_llm_api_options.yaml");
    }
    if (plan.cluster.gpus > sc.tp)
        out.warnings.push_back(fmt::format(
            "cluster.gpus = {} holds {} engines of serving.tp = {}: start one command per engine "
            "and balance the requests across them",
            plan.cluster.gpus, servingEngines(plan), sc.tp));
    out.text = commentBlock("Envelope export for TensorRT-LLM", out.figures) + joinCommand(flags, "");
    out.launch = "sh " + out.fileName;
    return out;
}

} // namespace envelope::exportdetail
