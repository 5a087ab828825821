// SGLang: a `python3 -m sglang.launch_server` command line.
//
// Flags as SGLang's ServerArgs declares them (python/sglang/srt/server_args.py): --model-path,
// --tp-size, --context-length, --mem-fraction-static, --max-running-requests,
// --chunked-prefill-size, --kv-cache-dtype (auto, fp8_e5m2, fp8_e4m3), --quantization,
// --speculative-algorithm (EAGLE for EAGLE heads and for a checkpoint's own MTP module, which
// SGLang loads as its draft; STANDALONE for a separate draft model), --speculative-draft-model-path,
// --speculative-num-steps, --speculative-eagle-topk, --speculative-num-draft-tokens, --ep-size,
// --dp-size, --enable-dp-attention, --moe-dense-tp-size, --enable-eplb,
// --ep-num-redundant-experts; disaggregated: --disaggregation-mode, --disaggregation-transfer-backend,
// --disaggregation-bootstrap-port, --nnodes, --node-rank, --dist-init-addr, and sglang_router's
// launch_router --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL.
#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "export/common.h"

namespace envelope::exportdetail {

namespace {

// What one launch_server command needs beside its flags: the environment that lets a context
// beyond the model's positions start.
struct ServerCommand {
    std::vector<std::string> words; // "python3 -m sglang.launch_server", then one flag a word
    std::string environment;        // "NAME=value " prefix, or ""
};

// One engine of `sc`: its layout, memory, batch, formats and drafting, as ServerArgs spells them.
ServerCommand serverCommand(const Plan& plan, const Estimate& estimate, const ServingConfig& sc,
    const std::string& model, std::vector<std::string>& warnings)
{
    const ServingParallel parallel = servingParallel(sc);
    ServerCommand command;
    std::vector<std::string>& flags = command.words;
    flags.push_back("python3 -m sglang.launch_server");
    const auto flag
        = [&](std::string name, auto value) { flags.push_back(fmt::format("{} {}", name, value)); };
    flag("--model-path", model);
    // Data-parallel attention: SGLang's --tp-size is the engine's GPUs, --dp-size its attention
    // ranks, the experts over all of them (--ep-size); the dense layers per rank at its TP
    // (--moe-dense-tp-size, as DeepSeek's and LMSYS's large-EP launches give it).
    flag("--tp-size", parallel.gpus());
    if (parallel.dp > 1) {
        flag("--dp-size", parallel.dp);
        flags.push_back("--enable-dp-attention");
        if (parallel.tp == 1)
            flag("--moe-dense-tp-size", 1);
    }
    if (parallel.ep > 1)
        flag("--ep-size", parallel.ep);
    // DeepSeek's and LMSYS's large-EP launches: --enable-eplb --ep-num-redundant-experts 32.
    if (parallel.ep > 1 && sc.redundantExperts > 0) {
        flags.push_back("--enable-eplb");
        flag("--ep-num-redundant-experts", sc.redundantExperts);
    }
    flag("--context-length", sc.context);
    // The fraction Envelope sized the pool with (the plan's, else the version's default), written
    // out so a newer SGLang's different default does not change the pool under the plan.
    if (sc.engine == ServingEngine::Sglang)
        flag("--mem-fraction-static", numberText(estimate.serving.memoryFraction));
    flag("--max-running-requests", sc.concurrency);
    // -1 turns chunking off (ServerArgs.chunked_prefill_size); the scheduler keys only where the
    // plan sets them.
    flag("--chunked-prefill-size", sc.chunkedPrefill && !*sc.chunkedPrefill ? -1 : sc.maxBatchedTokens);
    if (sc.mixedBatches && *sc.mixedBatches)
        flags.push_back("--enable-mixed-chunk");
    if (sc.overlapScheduler && !*sc.overlapScheduler)
        flags.push_back("--disable-overlap-schedule");
    const KvCacheFormat kvFormat = servingKvFormat(sc);
    if (kvFormat == KvCacheFormat::Fp8)
        flag("--kv-cache-dtype", "fp8_e5m2");
    else if (sc.kvBits < 16)
        addWarning(warnings, fmt::format("serving.kv_bits = {} (kv_format \"{}\"): SGLang's KV "
                                         "cache is 16-bit or fp8; this cache cannot be expressed",
                                 sc.kvBits, kvCacheFormatId(kvFormat)));
    std::vector<std::string> checkpoint;
    if (!weightsFromCheckpoint(sc, "SGLang", checkpoint)) {
        if (sc.weightBits == 8)
            flag("--quantization", "fp8");
        else if (sc.weightBits == 4)
            addWarning(warnings, "serving.weight_bits = 4: SGLang reads 4-bit weights from the "
                                 "checkpoint's quantization config (AWQ, GPTQ, NVFP4): serve a "
                                 "4-bit checkpoint; no flag is written");
    }
    for (std::string& w : checkpoint)
        addWarning(warnings, std::move(w));
    if (sc.speculative) {
        const ServingSpeculative& spec = *sc.speculative;
        // One draft token per step and sequence at top-k 1: a chain of `tokens` drafts, verified
        // with the model's next token (num_draft_tokens = steps + 1, as SGLang requires at topk 1).
        if (spec.kind == SpeculativeKind::Mtp) {
            flag("--speculative-algorithm", "EAGLE");
        } else {
            const bool eagle = spec.kind == SpeculativeKind::Eagle;
            const std::string draft = speculativeDraftName(spec);
            addWarning(warnings, speculativeDraftWarning(spec, draft));
            flag("--speculative-algorithm", eagle ? "EAGLE" : "STANDALONE");
            flag("--speculative-draft-model-path", draft);
        }
        flag("--speculative-num-steps", spec.tokens);
        flag("--speculative-eagle-topk", 1);
        flag("--speculative-num-draft-tokens", spec.tokens + 1);
    }
    // SGLang refuses a --context-length above the model's max_position_embeddings unless
    // SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 is set.
    const long long positions = plan.model.arch.maxPositions;
    if (positions > 0 && sc.context > positions) {
        command.environment = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 ";
        addWarning(warnings,
            fmt::format("serving.context = {} is longer than the model's {} positions: SGLang "
                        "refuses --context-length above them unless "
                        "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (set in the command); outputs "
                        "past {} tokens need RoPE scaling in the model's config",
                sc.context, positions, positions));
    }
    return command;
}

// SGLang's bootstrap port for KV transfer (ServerArgs disaggregation_bootstrap_port default),
// and the ports Envelope's script gives each worker and the router.
constexpr int kBootstrapPort = 8998;
constexpr int kWorkerPort = 30000;
constexpr int kRouterPort = 8000;

// A disaggregated deployment (serving.disaggregation) as SGLang runs it (docs
// advanced_features/pd_disaggregation): prefill workers with --disaggregation-mode prefill and
// the KV bootstrap port, decode workers with --disaggregation-mode decode, the KV moving over
// Mooncake, and sglang_router's --pd-disaggregation front end. One script for every host: ROLE
// picks the part; a worker wider than a node runs one command per node (--nnodes, --node-rank,
// --dist-init-addr).
std::string disaggregatedScript(const Plan& plan, const Estimate& estimate, const std::string& model,
    EngineConfig& out)
{
    const ServingDisaggregation& d = *plan.serving.disaggregation;
    const std::vector<ExportPool> pools = exportPools(plan);
    std::string script = commentBlock("Envelope export for SGLang (prefill / decode disaggregation)",
        out.figures) + poolComments(pools);
    script += fmt::format(
        "# On each node of a worker: ROLE=prefill or ROLE=decode (with NODE_RANK and "
        "DIST_INIT_ADDR=host:port of its first node when it spans nodes) sh {0}\n"
        "# On one host: ROLE=router PREFILL_URLS=\"http://h1:{1} ...\" DECODE_URLS=\"http://h2:{1} "
        "...\" sh {0}\n"
        "set -eu\n"
        "case \"${{ROLE:?set ROLE to prefill, decode or router}}\" in\n",
        out.fileName, kWorkerPort);
    for (const ExportPool& p : pools) {
        ServerCommand command = serverCommand(plan, estimate, p.engine, model, out.warnings);
        std::vector<std::string>& w = command.words;
        const int nodes = p.nodes;
        w.push_back(fmt::format("--disaggregation-mode {}", p.role));
        w.push_back("--disaggregation-transfer-backend mooncake");
        if (p.prefill)
            w.push_back(fmt::format("--disaggregation-bootstrap-port {}", kBootstrapPort));
        if (nodes > 1) {
            w.push_back(fmt::format("--nnodes {}", nodes));
            w.push_back("--node-rank \"${NODE_RANK:?0 .. " + std::to_string(nodes - 1) + "}\"");
            w.push_back("--dist-init-addr \"${DIST_INIT_ADDR:?host:port of the first node of this worker}\"");
        }
        w.push_back("--host 0.0.0.0");
        w.push_back(fmt::format("--port {}", kWorkerPort));
        w.front() = "exec " + command.environment + w.front();
        script += fmt::format("{})\n", p.role) + joinCommand(w, "  ") + "  ;;\n";
    }
    script += fmt::format(
        "router)\n"
        "  args=\"\"\n"
        "  for url in ${{PREFILL_URLS:?{0} prefill worker URL(s), http://host:{2}}}; do args=\"$args "
        "--prefill $url {3}\"; done\n"
        "  for url in ${{DECODE_URLS:?{1} decode worker URL(s), http://host:{2}}}; do args=\"$args "
        "--decode $url\"; done\n"
        "  exec python3 -m sglang_router.launch_router --pd-disaggregation $args --host 0.0.0.0 "
        "--port {4}\n"
        "  ;;\n"
        "*)\n"
        "  echo \"ROLE must be prefill, decode or router\" >&2\n"
        "  exit 2\n"
        "  ;;\n"
        "esac\n",
        d.prefill.workers, d.decode.workers, kWorkerPort, kBootstrapPort, kRouterPort);
    addWarning(out.warnings,
        fmt::format("serving.disaggregation: the KV moves over Mooncake "
                    "(--disaggregation-transfer-backend mooncake; nixl is the other backend) and "
                    "needs RDMA between the pools; set --disaggregation-ib-device to the nodes' "
                    "InfiniBand devices"));
    return script;
}

} // namespace

EngineConfig exportSglang(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    std::string model;
    EngineConfig out = startServingExport(plan, estimate, Engine::Sglang, "sglang_serve.sh",
        ServingEngine::Sglang, "SGLang", modelRepo, model);
    if (plan.serving.disaggregation) {
        out.text = disaggregatedScript(plan, estimate, model, out);
        out.launch = "ROLE=prefill sh " + out.fileName;
        return out;
    }
    const ServingConfig& sc = plan.serving;
    ServerCommand command = serverCommand(plan, estimate, sc, model, out.warnings);
    command.words.front() = command.environment + command.words.front();
    if (plan.cluster.gpus > sc.tp)
        out.warnings.push_back(fmt::format(
            "cluster.gpus = {} holds {} engines of serving.tp = {}: start one command per engine "
            "(or SGLang's --dp-size {} with a router) and balance the requests across them",
            plan.cluster.gpus, servingEngines(plan), sc.tp, servingEngines(plan)));
    out.text = commentBlock("Envelope export for SGLang", out.figures) + joinCommand(command.words, "");
    out.launch = "sh " + out.fileName;
    return out;
}

} // namespace envelope::exportdetail
