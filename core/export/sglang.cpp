// SGLang: a `python3 -m sglang.launch_server` command line.
//
// Flags as SGLang's ServerArgs declares them (python/sglang/srt/server_args.py): --model-path,
// --tp-size, --context-length, --mem-fraction-static, --max-running-requests,
// --chunked-prefill-size, --kv-cache-dtype (auto, fp8_e5m2, fp8_e4m3), --quantization,
// --speculative-algorithm (EAGLE for EAGLE heads and for a checkpoint's own MTP module, which
// SGLang loads as its draft; STANDALONE for a separate draft model), --speculative-draft-model-path,
// --speculative-num-steps, --speculative-eagle-topk, --speculative-num-draft-tokens, --ep-size,
// --dp-size, --enable-dp-attention, --moe-dense-tp-size.
#include <fmt/format.h>

#include "export/common.h"

namespace envelope::exportdetail {

EngineConfig exportSglang(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    std::string model;
    EngineConfig out = startServingExport(plan, estimate, Engine::Sglang, "sglang_serve.sh",
        ServingEngine::Sglang, "SGLang", modelRepo, model);
    const ServingConfig sc = exportedEngine(plan, "SGLang", out.warnings);
    const ServingParallel parallel = servingParallel(sc);

    std::vector<std::string> flags { "python3 -m sglang.launch_server" };
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
    flag("--chunked-prefill-size", sc.maxBatchedTokens);
    const KvCacheFormat kvFormat = servingKvFormat(sc);
    if (kvFormat == KvCacheFormat::Fp8)
        flag("--kv-cache-dtype", "fp8_e5m2");
    else if (sc.kvBits < 16)
        out.warnings.push_back(fmt::format("serving.kv_bits = {} (kv_format \"{}\"): SGLang's KV cache is "
                                           "16-bit or fp8; this cache cannot be expressed",
            sc.kvBits, kvCacheFormatId(kvFormat)));
    if (!weightsFromCheckpoint(sc, "SGLang", out.warnings)) {
        if (sc.weightBits == 8)
            flag("--quantization", "fp8");
        else if (sc.weightBits == 4)
            out.warnings.push_back("serving.weight_bits = 4: SGLang reads 4-bit weights from the "
                                   "checkpoint's quantization config (AWQ, GPTQ, NVFP4): serve a "
                                   "4-bit checkpoint; no flag is written");
    }
    if (sc.speculative) {
        const ServingSpeculative& spec = *sc.speculative;
        // One draft token per step and sequence at top-k 1: a chain of `tokens` drafts, verified
        // with the model's next token (num_draft_tokens = steps + 1, as SGLang requires at topk 1).
        if (spec.kind == SpeculativeKind::Mtp) {
            flag("--speculative-algorithm", "EAGLE");
        } else {
            const bool eagle = spec.kind == SpeculativeKind::Eagle;
            const std::string draft = speculativeDraftName(spec);
            out.warnings.push_back(speculativeDraftWarning(spec, draft));
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
        flags.front() = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 " + flags.front();
        out.warnings.push_back(fmt::format(
            "serving.context = {} is longer than the model's {} positions: SGLang refuses "
            "--context-length above them unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (set "
            "in the command); outputs past {} tokens need RoPE scaling in the model's config",
            sc.context, positions, positions));
    }
    if (plan.cluster.gpus > sc.tp)
        out.warnings.push_back(fmt::format(
            "cluster.gpus = {} holds {} engines of serving.tp = {}: start one command per engine "
            "(or SGLang's --dp-size {} with a router) and balance the requests across them",
            plan.cluster.gpus, servingEngines(plan), sc.tp, servingEngines(plan)));
    out.text = commentBlock("Envelope export for SGLang", out.figures) + joinCommand(flags, "");
    out.launch = "sh " + out.fileName;
    return out;
}

} // namespace envelope::exportdetail
