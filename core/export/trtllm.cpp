// TensorRT-LLM: a `trtllm-serve` command line (PyTorch backend) and, when the plan needs
// settings without a flag, the YAML file its --extra_llm_api_options reads.
//
// Flags as trtllm-serve declares them (tensorrt_llm/commands/serve.py): --backend, --tp_size,
// --max_batch_size, --max_num_tokens, --max_seq_len, --kv_cache_free_gpu_memory_fraction,
// --extra_llm_api_options. In the YAML (LlmArgs): kv_cache_config.dtype "fp8";
// speculative_config with decoding_type MTP (num_nextn_predict_layers), Eagle or DraftTarget
// (max_draft_len, speculative_model_dir). Disaggregated: cache_transceiver_config (backend,
// max_tokens_in_buffer) and disable_overlap_scheduler in each pool's options, --host, --port, and
// `trtllm-serve disaggregated -c` with context_servers / generation_servers (num_instances,
// urls).
#include <fmt/format.h>

#include "export/common.h"

namespace envelope::exportdetail {

namespace {

// One `trtllm-serve MODEL` engine of `sc` (the plan's serving section or one pool's): its flags,
// and the LLM API options it needs from a file (empty when none).
struct ServeCommand {
    std::vector<std::string> flags;
    std::string yaml;
};

ServeCommand serveCommand(const Plan& plan, const Estimate& estimate, const ServingConfig& sc,
    const std::string& model, std::vector<std::string>& warnings, const std::string& yamlName)
{
    const ServingParallel parallel = servingParallel(sc);
    ServeCommand command;
    std::vector<std::string>& flags = command.flags;
    flags.push_back("trtllm-serve " + model);
    const auto flag
        = [&](std::string name, auto value) { flags.push_back(fmt::format("{} {}", name, value)); };
    flag("--backend", "pytorch");
    // trtllm-serve's --tp_size is the engine's GPUs; --ep_size spreads the experts over them.
    // Attention data parallelism is an LLM API option (enable_attention_dp), not a flag.
    flag("--tp_size", parallel.gpus());
    if (parallel.ep > 1)
        flag("--ep_size", parallel.ep);
    if (parallel.ep > 1 && sc.redundantExperts > 0)
        addWarning(warnings, fmt::format(
            "serving.redundant_experts = {}: TensorRT-LLM places expert copies through "
            "moe_config.load_balancer (num_slots = {}) in the file --extra_llm_api_options names; "
            "trtllm-serve has no flag for it",
            sc.redundantExperts,
            (plan.model.arch.moe ? plan.model.arch.moe->experts : 0) + sc.redundantExperts));
    if (parallel.dp > 1)
        addWarning(warnings, fmt::format("serving.dp_attention ({} attention ranks): set "
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

    std::string& yaml = command.yaml;
    // The scheduler keys, only where the plan sets them (LlmArgs enable_chunked_prefill,
    // disable_overlap_scheduler).
    if (sc.chunkedPrefill && *sc.chunkedPrefill)
        yaml += "enable_chunked_prefill: true\n";
    if (sc.overlapScheduler && !*sc.overlapScheduler)
        yaml += "disable_overlap_scheduler: true\n";
    const KvCacheFormat kvFormat = servingKvFormat(sc);
    if (kvFormat == KvCacheFormat::Fp8)
        yaml += "kv_cache_config:\n  dtype: fp8\n";
    else if (sc.kvBits < 16)
        addWarning(warnings, fmt::format("serving.kv_bits = {} (kv_format \"{}\"): TensorRT-LLM's KV cache "
                                         "is 16-bit, fp8 or (from a ModelOpt checkpoint) nvfp4; "
                                         "it is not written",
                                 sc.kvBits, kvCacheFormatId(kvFormat)));
    if (sc.weightBits < 16 || sc.attentionWeightFormat || sc.expertWeightFormat)
        addWarning(warnings, fmt::format(
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
            addWarning(warnings, fmt::format(
                "serving.speculative: replace {} in {} with the {} (a Hugging Face repository or "
                "path)",
                draft, yamlName,
                eagle ? "EAGLE head trained for this model" : "draft model"));
            yaml += fmt::format("speculative_config:\n  decoding_type: {}\n  max_draft_len: {}\n"
                                "  speculative_model_dir: \"{}\"\n",
                eagle ? "Eagle" : "DraftTarget", spec.tokens, draft);
        }
    }
    return command;
}

// The ports Envelope's disaggregated script gives the context (prefill) and generation
// (decode) servers and the disaggregated server in front of them (TensorRT-LLM's
// docs/source/features/disagg-serving.md).
constexpr int kContextPort = 8001;
constexpr int kGenerationPort = 8002;
constexpr int kServerPort = 8000;

// A disaggregated deployment (serving.disaggregation) as trtllm-serve runs it: context servers
// whose options disable the overlap scheduler, generation servers, both with a
// cache_transceiver_config (UCX, a buffer of one context's tokens), and `trtllm-serve
// disaggregated -c disagg_config.yaml` in front, the YAML written from the hosts it is given.
// One script for every host: ROLE picks the part; each pool's options are a companion file.
std::string disaggregatedScript(
    const Plan& plan, const Estimate& estimate, const std::string& model, EngineConfig& out)
{
    const ServingDisaggregation& d = *plan.serving.disaggregation;
    const int perNode = std::max(plan.cluster.gpusPerNode, 1);
    const std::vector<ExportPool> pools = exportPools(plan);
    std::string script = commentBlock(
        "Envelope export for TensorRT-LLM (prefill / decode disaggregation)", out.figures)
        + poolComments(pools);
    // Each pool's options file: the context (prefill) and generation (decode) servers'.
    const auto yamlName = [](const ExportPool& p) {
        return p.prefill ? "ctx_extra_llm_api_options.yaml" : "gen_extra_llm_api_options.yaml";
    };
    for (const ExportPool& p : pools)
        if (p.nodes > 1)
            addWarning(out.warnings,
                fmt::format("serving.disaggregation.{}: a worker of {} GPUs spans nodes of {}: "
                            "trtllm-serve runs it under MPI (mpirun, or srun with "
                            "trtllm-llmapi-launch); the command is the one each rank runs",
                    p.role, p.parallel.gpus(), perNode));
    script += fmt::format(
        "# On each worker: ROLE=prefill or ROLE=decode sh {0}\n"
        "# On one host: ROLE=server PREFILL_HOSTS=\"h1 ...\" DECODE_HOSTS=\"h2 ...\" sh {0}\n"
        "set -eu\n"
        "case \"${{ROLE:?set ROLE to prefill, decode or server}}\" in\n",
        out.fileName);
    for (const ExportPool& p : pools) {
        ServeCommand command
            = serveCommand(plan, estimate, p.engine, model, out.warnings, yamlName(p));
        // The context servers run without the overlap scheduler (not supported for them); both
        // sides move the KV over UCX with a buffer of one context's tokens.
        std::string yaml = p.prefill && command.yaml.find("disable_overlap_scheduler") == std::string::npos
            ? "disable_overlap_scheduler: true\n"
            : "";
        yaml += fmt::format("cache_transceiver_config:\n  backend: UCX\n  max_tokens_in_buffer: {}\n",
            p.engine.context);
        yaml += command.yaml;
        out.companions.push_back({ yamlName(p),
            fmt::format("# Envelope export for TensorRT-LLM: the {} servers' LLM API options\n", p.role)
                + yaml });
        std::vector<std::string>& w = command.flags;
        w.push_back("--host 0.0.0.0");
        w.push_back(fmt::format("--port {}", p.prefill ? kContextPort : kGenerationPort));
        w.push_back(fmt::format("--extra_llm_api_options {}", yamlName(p)));
        w.front() = "exec " + w.front();
        script += fmt::format("{})\n", p.role) + joinCommand(w, "  ") + "  ;;\n";
    }
    script += fmt::format(
        "server)\n"
        "  {{\n"
        "    echo \"hostname: 0.0.0.0\"\n"
        "    echo \"port: {4}\"\n"
        "    echo \"backend: pytorch\"\n"
        "    set -- ${{PREFILL_HOSTS:?the hosts of the {0} prefill workers}}\n"
        "    echo \"context_servers:\"\n"
        "    echo \"  num_instances: $#\"\n"
        "    echo \"  urls:\"\n"
        "    for h in \"$@\"; do echo \"    - \\\"$h:{2}\\\"\"; done\n"
        "    set -- ${{DECODE_HOSTS:?the hosts of the {1} decode workers}}\n"
        "    echo \"generation_servers:\"\n"
        "    echo \"  num_instances: $#\"\n"
        "    echo \"  urls:\"\n"
        "    for h in \"$@\"; do echo \"    - \\\"$h:{3}\\\"\"; done\n"
        "  }} > disagg_config.yaml\n"
        "  exec trtllm-serve disaggregated -c disagg_config.yaml\n"
        "  ;;\n"
        "*)\n"
        "  echo \"ROLE must be prefill, decode or server\" >&2\n"
        "  exit 2\n"
        "  ;;\n"
        "esac\n",
        d.prefill.workers, d.decode.workers, kContextPort, kGenerationPort, kServerPort);
    addWarning(out.warnings,
        "serving.disaggregation: the KV moves over UCX (cache_transceiver_config backend UCX; "
        "NIXL and MPI are the others) and needs RDMA between the pools");
    return script;
}

} // namespace

EngineConfig exportTrtllm(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    std::string model;
    EngineConfig out = startServingExport(plan, estimate, Engine::Trtllm, "trtllm_serve.sh",
        ServingEngine::Trtllm, "TensorRT-LLM", modelRepo, model);
    if (plan.serving.disaggregation) {
        out.text = disaggregatedScript(plan, estimate, model, out);
        out.launch = "ROLE=prefill sh " + out.fileName;
        return out;
    }
    const ServingConfig& sc = plan.serving;
    ServeCommand command
        = serveCommand(plan, estimate, sc, model, out.warnings, "extra_llm_api_options.yaml");
    if (!command.yaml.empty()) {
        out.companions.push_back({ "extra_llm_api_options.yaml",
            "# Envelope export for TensorRT-LLM: the settings trtllm-serve takes from a file\n"
                + command.yaml });
        command.flags.push_back("--extra_llm_api_options extra_llm_api_options.yaml");
    }
    if (plan.cluster.gpus > sc.tp)
        out.warnings.push_back(fmt::format(
            "cluster.gpus = {} holds {} engines of serving.tp = {}: start one command per engine "
            "and balance the requests across them",
            plan.cluster.gpus, servingEngines(plan), sc.tp));
    out.text = commentBlock("Envelope export for TensorRT-LLM", out.figures)
        + joinCommand(command.flags, "");
    out.launch = "sh " + out.fileName;
    return out;
}

} // namespace envelope::exportdetail
