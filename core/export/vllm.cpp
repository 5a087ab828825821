// vLLM: a `vllm serve MODEL` command line, and the rollout engine's settings for the plan's RL
// job (the RL framework starts that engine in-process with the same engine arguments).
//
// Flags as vLLM's EngineArgs declares them (vllm/engine/arg_utils.py): --tensor-parallel-size,
// --max-model-len, --gpu-memory-utilization, --max-num-seqs, --max-num-batched-tokens,
// --block-size, --kv-cache-dtype, --quantization, --speculative-config (SpeculativeConfig's
// "method", "num_speculative_tokens" and "model": "mtp" for a checkpoint's own MTP module,
// "eagle" and "draft_model" with the draft's repository).
#include <fmt/format.h>

#include "base/checked.h"
#include "export/common.h"

namespace envelope::exportdetail {
namespace {

// `vllm serve MODEL` and its flags for one engine: `sc` is the plan's serving section or one
// pool's (servingPoolConfig), the environment it needs in front of the first word.
std::vector<std::string> serveCommand(
    const Plan& plan, ServingConfig sc, const std::string& model, std::vector<std::string>& warnings)
{
    const ServingParallel parallel = servingParallel(sc);
    // Each data-parallel rank is an engine core with its own scheduler: --max-num-seqs is one
    // rank's share of the engine's sequences.
    if (parallel.dp > 1)
        sc.concurrency = (sc.concurrency + parallel.dp - 1) / parallel.dp;

    std::vector<std::string> flags { "vllm serve " + model };
    const auto flag
        = [&](std::string name, auto value) { flags.push_back(fmt::format("{} {}", name, value)); };
    flag("--tensor-parallel-size", sc.tp);
    // Expert parallel (EngineArgs --enable-expert-parallel): inside the TP group, or over
    // --data-parallel-size attention ranks (vLLM's data-parallel attention for MoE models).
    if (parallel.dp > 1)
        flag("--data-parallel-size", parallel.dp);
    if (parallel.ep > 1)
        flags.push_back("--enable-expert-parallel");
    // Redundant experts are EPLB's (vllm/config/parallel.py EPLBConfig.num_redundant_experts;
    // ParallelConfig refuses them without enable_eplb).
    if (parallel.ep > 1 && sc.redundantExperts > 0) {
        flags.push_back("--enable-eplb");
        flag("--eplb-config",
            fmt::format("'{{\"num_redundant_experts\": {}}}'", sc.redundantExperts));
    }
    if (parallel.ep > 1 && parallel.dp == 1 && parallel.ep != parallel.tp)
        warnings.push_back(fmt::format("serving.ep = {} inside tp = {}: vLLM's expert "
                                           "parallelism spans the whole TP group (ep = {})",
            parallel.ep, parallel.tp, parallel.tp));
    flag("--max-model-len", sc.context);
    flag("--gpu-memory-utilization", numberText(sc.gpuMemoryUtilization));
    flag("--max-num-seqs", sc.concurrency);
    // SchedulerConfig refuses max_num_batched_tokens < max_num_seqs (each running sequence
    // takes at least one token of a step's budget).
    const long long batchedTokens = std::max<long long>(sc.maxBatchedTokens, sc.concurrency);
    if (batchedTokens != sc.maxBatchedTokens)
        warnings.push_back(fmt::format(
            "serving.max_batched_tokens = {} is below serving.concurrency = {}: vLLM refuses "
            "--max-num-batched-tokens below --max-num-seqs; written as {}",
            sc.maxBatchedTokens, sc.concurrency, batchedTokens));
    flag("--max-num-batched-tokens", batchedTokens);
    flag("--block-size", sc.blockSize);
    // The scheduler keys, only where the plan sets them (docs/formulas-serving.md, "The engine's
    // step"). Without chunked prefill vLLM needs the step budget to hold a whole max_model_len.
    if (sc.chunkedPrefill) {
        flags.push_back(*sc.chunkedPrefill ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill");
        if (!*sc.chunkedPrefill && batchedTokens < sc.context)
            addWarning(warnings, fmt::format("serving.chunked_prefill = false with "
                                             "--max-num-batched-tokens {} below --max-model-len {}: "
                                             "vLLM refuses to start (a whole prompt must fit one step)",
                                     batchedTokens, sc.context));
    }
    if (sc.overlapScheduler && *sc.overlapScheduler)
        flags.push_back("--async-scheduling");
    if (sc.schedulerSteps > 1) {
        flag("--num-scheduler-steps", sc.schedulerSteps);
        addWarning(warnings, "--num-scheduler-steps (serving.scheduler_steps) is vLLM V0's "
                             "multi-step scheduling, as the plan's engine_version 0.6 has it: "
                             "vLLM 0.10 and later refuse the flag");
    }
    const KvCacheFormat kvFormat = servingKvFormat(sc);
    if (kvFormat == KvCacheFormat::Fp8)
        flag("--kv-cache-dtype", "fp8");
    else if (sc.kvBits < 16)
        warnings.push_back(fmt::format("serving.kv_bits = {} (kv_format \"{}\"): vLLM's KV cache is 16-bit "
                                           "or fp8 (one scale per layer); this cache cannot be "
                                           "expressed",
            sc.kvBits, kvCacheFormatId(kvFormat)));
    if (!weightsFromCheckpoint(sc, "vLLM", warnings)) {
        if (sc.weightBits == 8)
            flag("--quantization", "fp8");
        else if (sc.weightBits == 4)
            // In-flight 4-bit NF4 of a 16-bit checkpoint; an AWQ/GPTQ checkpoint names its own
            // method.
            flag("--quantization", "bitsandbytes");
    }
    if (sc.weightBits < 16 && sc.weightFormat == WeightFormat::Auto)
        warnings.push_back(fmt::format(
            "serving.quant_group_size = {}: vLLM takes the quantization group size from the "
            "checkpoint (AWQ/GPTQ) or the method (fp8 per-tensor, bitsandbytes blocks of 64)",
            sc.quantGroupSize));
    // Speculative decoding: vLLM's SpeculativeConfig as one JSON argument. The acceptance rate
    // is the workload's, not a setting: it is in the comment block's figures.
    if (sc.speculative) {
        const ServingSpeculative& spec = *sc.speculative;
        std::string config;
        if (spec.kind == SpeculativeKind::Mtp) {
            config = fmt::format(R"({{"method": "mtp", "num_speculative_tokens": {}}})", spec.tokens);
        } else {
            const bool eagle = spec.kind == SpeculativeKind::Eagle;
            const std::string draft = speculativeDraftName(spec);
            warnings.push_back(speculativeDraftWarning(spec, draft));
            config = fmt::format(R"({{"method": "{}", "model": "{}", "num_speculative_tokens": {}}})",
                eagle ? "eagle" : "draft_model", draft, spec.tokens);
        }
        flag("--speculative-config", "'" + config + "'");
    }
    // vLLM refuses a --max-model-len above the model's max_position_embeddings unless
    // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; the plan asks for that length, so the command sets
    // it and the warning says what it means.
    const long long positions = plan.model.arch.maxPositions;
    std::string env;
    if (positions > 0 && sc.context > positions) {
        env = "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 ";
        warnings.push_back(fmt::format(
            "serving.context = {} is longer than the model's {} positions: vLLM refuses "
            "--max-model-len above them unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (set in the "
            "command); outputs past {} tokens need RoPE scaling in the model's config",
            sc.context, positions, positions));
    }
    flags.front() = env + flags.front();
    return flags;
}

// The ports Envelope's disaggregated script gives each worker (vllm serve's default), the NIXL
// side channel (VLLM_NIXL_SIDE_CHANNEL_PORT's default), a multi-node worker's data-parallel RPC
// and the proxy (vLLM's NixlConnector guide, docs/features/nixl_connector_usage.md).
constexpr int kWorkerPort = 8000;
constexpr int kSideChannelPort = 5600;
constexpr int kDataParallelRpcPort = 13345;
constexpr int kProxyPort = 8192;

// A disaggregated deployment (serving.disaggregation) as vLLM runs it: every worker a `vllm
// serve` with --kv-transfer-config's NixlConnector (kv_producer for the prefill pool,
// kv_consumer for the decode pool), its NIXL side channel on the node's own address, and vLLM's
// proxy in front that sends each request to a prefill worker, then to a decode worker. One
// script for every host: ROLE picks the part. A data-parallel-attention worker wider than a
// node runs one command per node: the first serves the API, the others are --headless engine
// ranks from --data-parallel-start-rank (vLLM's multi-node data parallel).
std::string disaggregatedScript(const Plan& plan, const std::string& model, EngineConfig& out)
{
    const ServingDisaggregation& d = *plan.serving.disaggregation;
    const int perNode = std::max(plan.cluster.gpusPerNode, 1);
    const std::vector<ExportPool> pools = exportPools(plan);
    std::string script
        = commentBlock("Envelope export for vLLM (prefill / decode disaggregation)", out.figures)
        + poolComments(pools);
    script += fmt::format(
        "# On each node of a worker: ROLE=prefill or ROLE=decode HOST_IP=<this node's address> "
        "(with NODE_RANK and HEAD_IP=<its first node's address> when it spans nodes) sh {0}\n"
        "# On one host: ROLE=proxy VLLM_SRC=<a vLLM source checkout> PREFILL_HOSTS=\"h1 ...\" "
        "DECODE_HOSTS=\"h2 ...\" sh {0} (each worker's first node)\n"
        "set -eu\n"
        "case \"${{ROLE:?set ROLE to prefill, decode or proxy}}\" in\n",
        out.fileName);
    for (const ExportPool& p : pools) {
        std::vector<std::string> said;
        std::vector<std::string> w = serveCommand(plan, p.engine, model, said);
        for (std::string& warning : said)
            addWarning(out.warnings, std::move(warning));
        w.insert(w.begin() + 1, fmt::format("--port {}", kWorkerPort));
        w.push_back(fmt::format(R"(--kv-transfer-config '{{"kv_connector":"NixlConnector","kv_role":"{}"}}')",
            p.prefill ? "kv_producer" : "kv_consumer"));
        std::string lines;
        if (p.nodes > 1) {
            if (p.parallel.dp > 1 && perNode % p.parallel.tp == 0) {
                const int local = perNode / p.parallel.tp;
                w.push_back(fmt::format("--data-parallel-size-local {}", local));
                w.push_back("--data-parallel-address \"${HEAD_IP:?the address of the first node of this worker}\"");
                w.push_back(fmt::format("--data-parallel-rpc-port {}", kDataParallelRpcPort));
                w.push_back("$headless");
                lines = fmt::format("  headless=\"\"\n"
                                    "  [ \"${{NODE_RANK:?0 .. {0}}}\" = 0 ] || headless=\"--headless "
                                    "--data-parallel-start-rank $((NODE_RANK * {1}))\"\n",
                    p.nodes - 1, local);
            } else {
                w.push_back("--distributed-executor-backend ray");
                out.warnings.push_back(fmt::format(
                    "serving.disaggregation.{}: a worker of tp {} spans {} nodes of {} GPUs: vLLM "
                    "runs it over Ray (--distributed-executor-backend ray); start a Ray cluster "
                    "over the worker's nodes and run the command on its head only",
                    p.role, p.parallel.tp, p.nodes, perNode));
            }
        }
        w.front() = fmt::format("exec env VLLM_NIXL_SIDE_CHANNEL_HOST=\"${{HOST_IP:?the address of "
                                "this node}}\" VLLM_NIXL_SIDE_CHANNEL_PORT={} ",
                        kSideChannelPort)
            + w.front();
        script += fmt::format("{})\n", p.role) + lines + joinCommand(w, "  ") + "  ;;\n";
    }
    script += fmt::format(
        "proxy)\n"
        "  prefill_ports=\"\"\n"
        "  for h in ${{PREFILL_HOSTS:?first nodes of the {0} prefill workers}}; do "
        "prefill_ports=\"$prefill_ports {2}\"; done\n"
        "  decode_ports=\"\"\n"
        "  for h in ${{DECODE_HOSTS:?first nodes of the {1} decode workers}}; do "
        "decode_ports=\"$decode_ports {2}\"; done\n"
        "  exec python3 \"${{VLLM_SRC:?a vLLM source checkout}}/tests/v1/kv_connector/nixl_integration/"
        "toy_proxy_server.py\" \\\n"
        "    --port {3} \\\n"
        "    --prefiller-hosts $PREFILL_HOSTS --prefiller-ports $prefill_ports \\\n"
        "    --decoder-hosts $DECODE_HOSTS --decoder-ports $decode_ports\n"
        "  ;;\n"
        "*)\n"
        "  echo \"ROLE must be prefill, decode or proxy\" >&2\n"
        "  exit 2\n"
        "  ;;\n"
        "esac\n",
        d.prefill.workers, d.decode.workers, kWorkerPort, kProxyPort);
    addWarning(out.warnings,
        "serving.disaggregation: the KV moves over NIXL (NixlConnector, UCX by default): install "
        "nixl on every node and set UCX_NET_DEVICES to the nodes' RDMA devices");
    addWarning(out.warnings,
        "serving.disaggregation: the proxy is vLLM's toy_proxy_server.py from its source tree "
        "(tests/v1/kv_connector/nixl_integration, not in the wheel), which sends each request's "
        "prompt to a prefill worker and its decode to a decode worker; production deployments "
        "front the pools with llm-d or NVIDIA Dynamo");
    return script;
}

} // namespace

EngineConfig exportVllm(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    std::string model;
    EngineConfig out = startServingExport(
        plan, estimate, Engine::Vllm, "serve.sh", ServingEngine::Vllm, "vLLM", modelRepo, model);
    if (plan.serving.disaggregation) {
        out.text = disaggregatedScript(plan, model, out);
        out.launch = "ROLE=prefill HOST_IP=<this node's address> sh " + out.fileName;
        return out;
    }
    const ServingConfig& sc = plan.serving;
    const std::vector<std::string> flags = serveCommand(plan, sc, model, out.warnings);
    const KvCacheFormat kvFormat = servingKvFormat(sc);
    const long long positions = plan.model.arch.maxPositions;
    const long long rolloutLen = static_cast<long long>(plan.rl.promptLen) + plan.rl.responseLen;
    std::string s = commentBlock("Envelope export for vLLM", out.figures);
    s += joinCommand(flags, "");

    // The RL rollout engine: all prompts x group completions in flight, prompt + response long.
    // Only when the rollout pool can hold one engine: a serving plan's TP 4 on the default RL
    // section's 3 rollout GPUs is no engine anyone can start.
    const RlConfig& rl = plan.rl;
    if (rl.rolloutGpus < sc.tp) {
        out.warnings.push_back(fmt::format(
            "rl.rollout_gpus = {} is fewer than serving.tp = {}: an engine of tensor parallel {} "
            "does not fit the rollout pool, so no RL rollout engine block is written",
            rl.rolloutGpus, sc.tp, sc.tp));
        out.text = s;
        out.launch = "sh " + out.fileName;
        return out;
    }
    const long long replicas = std::max(1, rl.rolloutGpus / std::max(1, sc.tp));
    const long long seqs = wideProduct(rl.prompts, rl.groupSize); // up to 1e7 x 1e6
    const bool longRollout = positions > 0 && rolloutLen > positions;
    if (longRollout)
        out.warnings.push_back(fmt::format(
            "rl.prompt_len + rl.response_len = {} is longer than the model's {} positions: the "
            "rollout engine needs VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (set in its command)",
            rolloutLen, positions));
    std::vector<std::string> rollout { std::string(
                                           longRollout ? "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 " : "")
        + "vllm serve " + model };
    const auto rflag = [&](std::string name, auto value) {
        rollout.push_back(fmt::format("{} {}", name, value));
    };
    rflag("--tensor-parallel-size", sc.tp);
    if (rl.placement == RlPlacement::Disjoint && replicas > 1)
        rflag("--data-parallel-size", replicas);
    rflag("--max-model-len", rolloutLen);
    const long long rolloutSeqs = (seqs + replicas - 1) / replicas;
    rflag("--max-num-seqs", rolloutSeqs);
    rflag("--max-num-batched-tokens", std::max<long long>(sc.maxBatchedTokens, rolloutSeqs));
    rflag("--gpu-memory-utilization", numberText(sc.gpuMemoryUtilization));
    rflag("--block-size", sc.blockSize);
    if (kvFormat == KvCacheFormat::Fp8)
        rflag("--kv-cache-dtype", "fp8");
    if (rl.placement == RlPlacement::Colocated)
        rollout.push_back("--enable-sleep-mode");
    s += fmt::format("\n# RL rollout engine ({} on {} GPUs, {} sequences of {} + {} tokens per "
                     "step): the RL framework starts it with these engine arguments\n",
        rlAlgorithmId(rl.algorithm), rl.rolloutGpus, seqs, rl.promptLen, rl.responseLen);
    s += joinCommand(rollout, "# ");
    out.text = s;
    out.launch = "sh " + out.fileName;
    return out;
}

} // namespace envelope::exportdetail
