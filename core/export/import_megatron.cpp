// Megatron-LM arguments -> plan (megatron/training/arguments.py flag names; see megatron.cpp).
#include <algorithm>
#include <cmath>
#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/checked.h"
#include "base/text.h"
#include "export/args.h"
#include "export/common.h"
#include "export/importing.h"
#include "plan/fields.h"

namespace envelope::exportdetail {
namespace {

// Counts with no plan field of their own (global batch, samples, layers): any positive 64-bit
// integer below 10^15, where a double still holds every integer exactly.
constexpr long long kMaxArgument = 1'000'000'000'000'000;

// Flags that describe the model; --model decides the shape, so they are only compared.
constexpr const char* kShapeFlags[] = { "--num-layers", "--hidden-size", "--ffn-hidden-size",
    "--num-attention-heads", "--group-query-attention", "--num-query-groups", "--kv-channels",
    "--max-position-embeddings", "--vocab-size", "--position-embedding-type", "--normalization",
    "--swiglu", "--disable-bias-linear", "--add-qkv-bias", "--untie-embeddings-and-output-weights",
    "--attention-dropout", "--hidden-dropout", "--num-experts", "--moe-router-topk",
    "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size", "--moe-layer-freq",
    "--multi-latent-attention", "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim",
    "--qk-pos-emb-head-dim", "--v-head-dim", "--rotary-base", "--rotary-percent", "--use-rope-scaling",
    "--rope-scaling-factor", "--rope-type", "--rotary-scaling-factor", "--mscale",
    "--mscale-all-dim", "--yarn-original-max-position-embeddings", "--yarn-beta-fast",
    "--yarn-beta-slow", "--rotary-seq-len-interpolation-factor" };

} // namespace

Expected<std::vector<std::string>> parseMegatronLayout(std::string_view layout)
{
    const char* flag = "--pipeline-model-parallel-layout";
    const auto tooLong = [&] {
        return Error { flag,
            fmt::format("unrolls to more than {} characters; a layout names each stage's layers",
                kMaxLayoutChars) };
    };
    // A repeat count after "*": digits, bounded so the product cannot wrap.
    const auto repeat = [](std::string_view s, std::size_t& at) -> std::optional<std::size_t> {
        if (at >= s.size() || s[at] != '*')
            return std::nullopt;
        std::size_t end = at + 1, n = 0;
        while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) {
            n = std::min<std::size_t>(n * 10 + static_cast<std::size_t>(s[end] - '0'),
                kMaxLayoutChars + 1);
            ++end;
        }
        if (end == at + 1)
            return std::nullopt;
        at = end;
        return n;
    };
    std::string text;
    for (char c : layout)
        if (c != ',')
            text += c;
    // (...)*n first, then x*n, as Megatron's two regular expressions do.
    std::string groups;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t close = text[at] == '(' ? text.find(')', at) : std::string::npos;
        std::size_t after = close == std::string::npos ? 0 : close + 1;
        const std::optional<std::size_t> n
            = close != std::string::npos && close > at + 1 ? repeat(text, after) : std::nullopt;
        if (!n) {
            groups += text[at++];
            continue;
        }
        const std::string_view inner = std::string_view(text).substr(at + 1, close - at - 1);
        if (groups.size() + inner.size() * *n > kMaxLayoutChars)
            return tooLong();
        for (std::size_t k = 0; k < *n; ++k)
            groups += inner;
        at = after;
    }
    std::string flat;
    for (std::size_t at = 0; at < groups.size();) {
        std::size_t after = at + 1;
        const std::optional<std::size_t> n = repeat(groups, after);
        if (!n) {
            flat += groups[at++];
            continue;
        }
        if (flat.size() + *n > kMaxLayoutChars)
            return tooLong();
        flat.append(*n, groups[at]);
        at = after;
    }
    std::vector<std::string> stages(1);
    for (char c : flat) {
        if (c == '|') {
            stages.emplace_back();
            continue;
        }
        if (c != 'E' && c != 't' && c != 'm' && c != 'L')
            return Error { flag,
                fmt::format("has '{}' after unrolling; a stage is made of E (embedding), t "
                            "(decoder layer), m (MTP layer) and L (loss), stages separated by "
                            "'|', got \"{}\"",
                    c, shortText(std::string(layout))) };
        stages.back() += c;
    }
    return stages;
}

Expected<ImportedPlan> importMegatron(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options)
{
    Expected<Command> command = parseCommand(text);
    if (!command)
        return command.error();
    const std::vector<Argument>* parsed = &command->args;
    Expected<PlanDraft> draft = startDraft(Engine::Megatron, presets, options);
    if (!draft)
        return draft.error();
    PlanDraft& d = draft.value();
    nlohmann::json& t = d.training();

    std::map<std::string, std::optional<std::string>> flags;
    std::map<std::string, std::vector<std::string>> flagValues;
    std::vector<std::string> repeated;
    for (const Argument& a : *parsed) {
        if (flags.count(a.flag)
            && std::find(repeated.begin(), repeated.end(), a.flag) == repeated.end())
            repeated.push_back(a.flag);
        flags[a.flag] = a.value;
        flagValues[a.flag] = a.values;
    }
    if (parsed->empty())
        d.warnings.emplace_back("the arguments file holds no arguments: the plan is the default "
                                "plan with --model");
    for (const std::string& f : repeated)
        d.warnings.push_back(fmt::format("{} is given more than once: the last value, {}, is used "
                                         "(as argparse does)",
            shortText(f), flags[f] ? "\"" + shortText(*flags[f]) + "\"" : "a switch"));
    std::vector<std::string> used;
    const auto has = [&](const std::string& f) {
        if (!flags.count(f))
            return false;
        used.push_back(f);
        return true;
    };
    std::optional<Error> error;
    // An integer min..max; max is the plan field's own bound (plan/fields.h), so a product of
    // counts cannot wrap and the message states the range the plan accepts.
    const auto count = [&](const std::string& f, long long min = 1,
                           long long max = kMaxArgument) -> std::optional<long long> {
        if (!has(f) || error)
            return std::nullopt;
        const std::optional<std::string>& v = flags[f];
        long long n = 0;
        std::size_t usedChars = 0;
        try {
            n = v ? std::stoll(*v, &usedChars) : 0;
        } catch (const std::exception&) {
            usedChars = 0;
        }
        if (!v || usedChars != v->size() || n < min || n > max || flagValues[f].size() > 1) {
            error = Error { f,
                fmt::format("must be an integer {}..{}, got {}", min, max,
                    v ? "\"" + shortText(*v) + "\"" : std::string("no value")) };
            return std::nullopt;
        }
        return n;
    };
    // The words after a flag, joined, for messages.
    const auto given = [&](const std::string& f) {
        std::string out;
        for (const std::string& v : flagValues[f])
            out += (out.empty() ? "" : " ") + v;
        return shortText(out);
    };
    const auto word = [&](const std::string& f) -> std::string {
        if (!has(f) || !flags[f])
            return std::string();
        if (flagValues[f].size() > 1 && !error)
            error = Error { f, fmt::format("takes one value, got \"{}\"", given(f)) };
        return *flags[f];
    };
    // A switch (store_true): argparse refuses a value after it.
    const auto switchOn = [&](const std::string& f) {
        if (!has(f))
            return false;
        if (!flagValues[f].empty() && !error)
            error = Error { f,
                fmt::format(
                    "takes no value (Megatron's argparse refuses one), got \"{}\"", given(f)) };
        return true;
    };

    using namespace planfields;
    const long long tp = count("--tensor-model-parallel-size", 1, kMaxParallel).value_or(1);
    const long long pp = count("--pipeline-model-parallel-size", 1, kMaxParallel).value_or(1);
    const long long cp = count("--context-parallel-size", 1, kMaxParallel).value_or(1);
    const long long ep = count("--expert-model-parallel-size", 1, kMaxParallel).value_or(1);
    const std::optional<long long> perVirtual = count("--num-layers-per-virtual-pipeline-stage");
    const std::optional<long long> virtualPerRank
        = count("--num-virtual-stages-per-pipeline-rank", 1, kMaxParallel);
    // Megatron's uneven splits (TransformerConfig): the first and last stages' own counts, or
    // the embedding and loss counted as a layer each; read into training.stage_layers below.
    const std::optional<long long> firstStage = count("--decoder-first-pipeline-num-layers");
    const std::optional<long long> lastStage = count("--decoder-last-pipeline-num-layers");
    const bool embeddingUnit = switchOn("--account-for-embedding-in-pipeline-split");
    const bool lossUnit = switchOn("--account-for-loss-in-pipeline-split");
    const std::optional<long long> micro = count("--micro-batch-size", 1, kMaxBatch);
    const std::optional<long long> global = count("--global-batch-size");
    const std::optional<long long> seq = count("--seq-length", 1, kMaxTokens);
    const std::optional<long long> samples = count("--train-samples");
    const std::optional<long long> iters = count("--train-iters");
    const std::optional<long long> recomputeLayers = count("--recompute-num-layers", 1, 100'000);
    const std::optional<long long> layersArg = count("--num-layers");
    // MTP modules trained on the last stage (DeepSeek-V3; Megatron-Bridge's recipe sets 1).
    const std::optional<long long> mtpLayers = count("--mtp-num-layers", 0, kMaxMtpLayers);
    if (error)
        return *error;
    if (mtpLayers)
        t["mtp_layers"] = *mtpLayers;
    t["tp"] = tp;
    t["pp"] = pp;
    t["cp"] = cp;
    t["ep"] = ep;
    t["sequence_parallel"] = switchOn("--sequence-parallel");
    const Expected<long long> modelParallelOr = checkedProduct({ tp, pp, cp }, kMaxGpus,
        "--tensor-model-parallel-size",
        "--tensor-model-parallel-size x --pipeline-model-parallel-size x --context-parallel-size");
    if (!modelParallelOr)
        return modelParallelOr.error();
    const long long modelParallel = *modelParallelOr;
    long long gpus = options.gpus.value_or(0);
    // torchrun's --nproc_per_node x --nnodes, when the file is a whole command line.
    std::optional<long long> launcherGpus;
    {
        long long perNode = 0, nodes = 1;
        const std::vector<std::string>& l = command->launcher;
        for (std::size_t i = 0; i + 1 < l.size(); ++i) {
            const std::string& w = l[i];
            long long* target = (w == "--nproc_per_node" || w == "--nproc-per-node") ? &perNode
                : w == "--nnodes"                                                    ? &nodes
                                                                                     : nullptr;
            if (!target)
                continue;
            try {
                std::size_t used = 0;
                const long long n = std::stoll(l[i + 1], &used);
                if (used == l[i + 1].size() && n >= 1 && n <= kMaxGpus)
                    *target = n;
            } catch (const std::exception&) { }
        }
        if (perNode > 0 && nodes * perNode <= kMaxGpus)
            launcherGpus = nodes * perNode;
    }
    if (!options.gpus && launcherGpus) {
        gpus = *launcherGpus;
        d.plan["cluster"]["gpus"] = gpus;
        d.warnings.push_back(fmt::format("cluster.gpus = {}: torchrun's --nproc_per_node x "
                                         "--nnodes",
            gpus));
    } else if (!options.gpus) {
        // Megatron's arguments do not state the world size (torchrun does).
        const long long base = d.plan["cluster"]["gpus"].get<long long>();
        gpus = std::max(modelParallel, (base + modelParallel - 1) / modelParallel * modelParallel);
        d.warnings.push_back(fmt::format("Megatron arguments do not state the GPU count: assumed "
                                         "{} (pass --gpus)",
            gpus));
        d.plan["cluster"]["gpus"] = gpus;
    }
    const long long dp = std::max(1LL, gpus / modelParallel);
    if (micro)
        t["micro_batch"] = *micro;
    const long long m = t["micro_batch"].get<long long>();
    if (global) {
        // m <= 1e6 and dp <= 1e6 (cluster.gpus): the product fits, checked all the same.
        const std::optional<long long> perStep = checkedMul(m, dp);
        if (!perStep || *global % *perStep != 0)
            return Error { "--global-batch-size",
                fmt::format("must be a multiple of --micro-batch-size x data-parallel size "
                            "({} x {} = {}) on {} GPUs, got {}",
                    m, dp, perStep.value_or(0), gpus, *global) };
        const long long accum = *global / *perStep;
        if (accum > kMaxBatch)
            return Error { "--global-batch-size",
                fmt::format("must be at most --micro-batch-size x data-parallel size x {} "
                            "(training.grad_accum's bound) = {} x {} x {} on {} GPUs, got {}",
                    kMaxBatch, m, dp, kMaxBatch, gpus, *global) };
        t["grad_accum"] = accum;
    }
    if (seq)
        t["seq_len"] = *seq;
    const double seqLen = t["seq_len"].get<double>();
    if (samples)
        t["train_tokens"] = static_cast<double>(*samples) * seqLen;
    else if (iters)
        t["train_tokens"]
            = static_cast<double>(*iters) * m * t["grad_accum"].get<double>() * dp * seqLen;
    // The model's layers, for the split flags below: --num-layers, else the preset's.
    std::optional<long long> modelLayers = layersArg;
    if (!modelLayers)
        if (const std::optional<int> preset = presetLayers(d, presets))
            modelLayers = *preset;
    // Layers per pipeline rank, summed over its virtual stages (training.stage_layers).
    std::vector<long long> stageLayers;
    // --pipeline-model-parallel-layout: the pp x vpp stages in model order; stage j sits on
    // rank j mod pp (pipeline_parallel_layer_layout.py).
    const std::string layout = word("--pipeline-model-parallel-layout");
    if (!layout.empty()) {
        const char* flag = "--pipeline-model-parallel-layout";
        Expected<std::vector<std::string>> stagesOr = parseMegatronLayout(layout);
        if (!stagesOr)
            return stagesOr.error();
        const std::vector<std::string>& stages = *stagesOr;
        const long long chunks = static_cast<long long>(stages.size());
        if (chunks % pp != 0)
            return Error { flag,
                fmt::format("has {} stages, not a multiple of --pipeline-model-parallel-size {}",
                    chunks, pp) };
        long long embeddings = 0, losses = 0, decoders = 0, mtp = 0;
        stageLayers.assign(static_cast<std::size_t>(pp), 0);
        for (std::size_t j = 0; j < stages.size(); ++j) {
            const long long n = std::count(stages[j].begin(), stages[j].end(), 't');
            stageLayers[j % static_cast<std::size_t>(pp)] += n;
            decoders += n;
            embeddings += std::count(stages[j].begin(), stages[j].end(), 'E');
            losses += std::count(stages[j].begin(), stages[j].end(), 'L');
            mtp += std::count(stages[j].begin(), stages[j].end(), 'm');
        }
        if (embeddings != 1 || losses != 1 || stages.front().empty()
            || stages.front().front() != 'E' || stages.back().empty()
            || stages.back().back() != 'L')
            return Error { flag,
                fmt::format("must start with one E (embedding) and end with one L (loss), as "
                            "Megatron asserts, got \"{}\"",
                    shortText(layout)) };
        if (modelLayers && decoders != *modelLayers)
            return Error { flag,
                fmt::format("places {} decoder layers (t), the model has {}", decoders,
                    *modelLayers) };
        if (mtp > 0 && std::count(stages.back().begin(), stages.back().end(), 'm') != mtp)
            d.warnings.push_back(fmt::format(
                "{} places the MTP module(s) before the last stage; Envelope times and sizes "
                "them with the loss on the last stage",
                flag));
        // Megatron asserts the layout's m count is --mtp-num-layers.
        if (mtp > 0 && !mtpLayers)
            return Error { flag,
                fmt::format("places {} MTP layer(s) (m) but --mtp-num-layers is not set; "
                            "Megatron asserts they match",
                    mtp) };
        if (mtpLayers && mtp != *mtpLayers)
            return Error { flag,
                fmt::format("places {} MTP layer(s) (m), --mtp-num-layers says {}; Megatron "
                            "asserts they match",
                    mtp, *mtpLayers) };
        t["virtual_stages"] = std::max(1LL, chunks / pp);
    } else if (virtualPerRank) {
        t["virtual_stages"] = *virtualPerRank;
    } else if (perVirtual) {
        const std::optional<long long> perPipeline = checkedMul(pp, *perVirtual);
        if (modelLayers)
            t["virtual_stages"] = perPipeline ? std::max(1LL, *modelLayers / *perPipeline) : 1LL;
    }

    // --decoder-first/last-pipeline-num-layers: those stages take their counts and the middle
    // stages share the rest evenly; --account-for-embedding/loss-in-pipeline-split count the
    // embedding and the loss as one layer each, split evenly over pp x vpp chunks, the first
    // (last) chunk building one layer fewer (TransformerConfig's checks: an uneven rest is an
    // error, and the two forms exclude each other).
    const bool splitFlags = firstStage || lastStage || embeddingUnit || lossUnit;
    if (splitFlags && !layout.empty())
        return Error { "--pipeline-model-parallel-layout",
            "is its own split: drop --decoder-first/last-pipeline-num-layers and "
            "--account-for-embedding/loss-in-pipeline-split" };
    if (splitFlags && (firstStage || lastStage) && (embeddingUnit || lossUnit))
        return Error { firstStage ? "--decoder-first-pipeline-num-layers"
                                  : "--decoder-last-pipeline-num-layers",
            "cannot be combined with --account-for-embedding/loss-in-pipeline-split (Megatron "
            "asserts one form)" };
    if (splitFlags && pp > 1 && !modelLayers)
        d.warnings.push_back("the uneven pipeline split flags need the model's layers "
                             "(--num-layers or --model): the plan uses ceil(layers / pp) per "
                             "stage");
    else if (splitFlags && pp > 1) {
        const long long layers = *modelLayers;
        const long long v = t.value("virtual_stages", 1LL);
        if (firstStage || lastStage) {
            const long long given = (firstStage ? 1 : 0) + (lastStage ? 1 : 0);
            const long long rest = layers - firstStage.value_or(0) - lastStage.value_or(0);
            const long long middle = pp - given;
            if (rest < 0 || (middle > 0 ? rest % middle != 0 : rest != 0))
                return Error { firstStage ? "--decoder-first-pipeline-num-layers"
                                          : "--decoder-last-pipeline-num-layers",
                    fmt::format("leaves {} of the model's {} layers for {} middle stage(s): "
                                "not an even split (Megatron asserts one)",
                        rest, layers, middle) };
            stageLayers.assign(static_cast<std::size_t>(pp), middle > 0 ? rest / middle : 0);
            if (firstStage)
                stageLayers.front() = *firstStage;
            if (lastStage)
                stageLayers.back() = *lastStage;
        } else {
            const long long units = layers + (embeddingUnit ? 1 : 0) + (lossUnit ? 1 : 0);
            const std::optional<long long> chunks = checkedMul(pp, v);
            if (!chunks || units % *chunks != 0)
                return Error { embeddingUnit ? "--account-for-embedding-in-pipeline-split"
                                             : "--account-for-loss-in-pipeline-split",
                    fmt::format("needs layers + embedding + loss = {} to divide into pp x "
                                "virtual stages = {} chunks",
                        units, chunks.value_or(0)) };
            stageLayers.assign(static_cast<std::size_t>(pp), units / pp);
            stageLayers.front() -= embeddingUnit ? 1 : 0;
            stageLayers.back() -= lossUnit ? 1 : 0;
        }
    }
    if (pp > 1 && !stageLayers.empty())
        t["stage_layers"] = stageLayers;

    const std::string granularity = word("--recompute-granularity");
    const std::string method = word("--recompute-method");
    if (granularity.empty())
        t["recompute"] = "none";
    else if (granularity == "selective") {
        // --recompute-modules (nargs; default core_attn): core_attn is Envelope's selective
        // recompute; layernorm, mla_up_proj and moe_act are training.recompute_ops norm, mla_up
        // and swiglu; the others (mlp, moe, shared_experts) are named and not counted.
        t["recompute"] = "selective";
        if (has("--recompute-modules")) {
            bool coreAttn = false;
            nlohmann::json ops = nlohmann::json::array();
            std::vector<std::string> others;
            for (const std::string& module : flagValues["--recompute-modules"]) {
                if (module == "core_attn")
                    coreAttn = true;
                else if (module == "layernorm")
                    ops.push_back("norm");
                else if (module == "mla_up_proj")
                    ops.push_back("mla_up");
                else if (module == "moe_act" && has("--num-experts"))
                    ops.push_back("swiglu");
                else
                    others.push_back(module);
            }
            if (!coreAttn)
                t["recompute"] = "none";
            if (!ops.empty())
                t["recompute_ops"] = ops;
            if (!others.empty())
                d.warnings.push_back(fmt::format(
                    "--recompute-modules {}: Envelope counts core_attn, layernorm, mla_up_proj "
                    "and moe_act; these modules' recompute is not counted",
                    shortList(others, " ")));
        }
    } else if (granularity == "full") {
        const long long k = recomputeLayers.value_or(1);
        if (method == "block")
            d.warnings.push_back(fmt::format("--recompute-method block recomputes the first {} "
                                             "layers of each stage; the plan recomputes every "
                                             "layer (full)",
                k));
        t["recompute"] = (method == "block" || k == 1) ? "full" : "every-k";
        if (method != "block" && k > 1)
            t["recompute_every"] = k;
    } else {
        return Error { "--recompute-granularity",
            fmt::format("must be full or selective, got \"{}\"", shortText(granularity)) };
    }

    // Megatron-FSDP shards by --data-parallel-sharding-strategy (default optim_grads_params:
    // ZeRO-3); otherwise the distributed optimizer shards the optimizer state (ZeRO-1).
    if (switchOn("--overlap-grad-reduce"))
        t["overlap_grad_reduce"] = true;
    if (switchOn("--overlap-param-gather"))
        t["overlap_param_gather"] = true;
    int zeroStage = switchOn("--use-distributed-optimizer") ? 1 : 0;
    if (switchOn("--use-megatron-fsdp")) {
        const std::string strategy = word("--data-parallel-sharding-strategy");
        const std::pair<const char*, int> strategies[] = { { "no_shard", 0 }, { "optim", 1 },
            { "optim_grads", 2 }, { "optim_grads_params", 3 }, { "", 3 } };
        bool known = false;
        for (const auto& [name, stage] : strategies)
            if (strategy == name) {
                zeroStage = std::max(zeroStage, stage);
                known = true;
                break;
            }
        // The rest of the user guide's required flags: read, they change no plan figure.
        switchOn("--no-gradient-accumulation-fusion");
        switchOn("--init-model-with-meta-device");
        const std::string format = word("--ckpt-format");
        if (!format.empty() && format != "fsdp_dtensor")
            d.warnings.push_back(fmt::format("--ckpt-format {} with --use-megatron-fsdp: "
                                             "Megatron-FSDP saves fsdp_dtensor checkpoints "
                                             "(validate_args asserts it)",
                shortText(format)));
        if (!known)
            return Error { "--data-parallel-sharding-strategy",
                fmt::format("must be no_shard, optim, optim_grads or optim_grads_params, got "
                            "\"{}\"",
                    shortText(strategy)) };
    }
    t["zero_stage"] = zeroStage;
    switchOn("--use-precision-aware-optimizer");
    t["offload_optimizer"] = switchOn("--optimizer-cpu-offload");
    t["offload_params"] = false;
    const bool bf16 = switchOn("--bf16"), fp16 = switchOn("--fp16");
    if (bf16 && fp16)
        d.warnings.emplace_back("--bf16 and --fp16 are both given (Megatron refuses that): the "
                                "plan uses bf16");
    const bool fp8 = !word("--fp8-format").empty();
    has("--fp8-recipe");
    const bool bf16Grads = switchOn("--grad-reduce-in-bf16");
    t["recipe"] = fp8 ? "fp8-te"
        : bf16        ? (bf16Grads ? "bf16-mixed-16" : "bf16-mixed-18")
        : fp16        ? "fp16-mixed"
                      : "fp32";
    const std::string backend = word("--attention-backend");
    t["flash_attention"]
        = switchOn("--use-flash-attn") || (backend != "unfused" && backend != "local");
    // --cpu-offloading offloads the first --cpu-offloading-num-layers layers' activations
    // (Transformer Engine); 0 layers offloads nothing.
    const bool cpuOffloading = switchOn("--cpu-offloading");
    const std::optional<long long> offloadLayers = count("--cpu-offloading-num-layers", 0);
    if (cpuOffloading && offloadLayers && *offloadLayers >= 1)
        t["activation_offload"] = *offloadLayers;
    const std::string optimizer = word("--optimizer");
    if (optimizer == "sgd")
        t["optimizer"] = "sgd-momentum";
    else if (!optimizer.empty() && optimizer != "adam")
        d.warnings.push_back(
            fmt::format("--optimizer {}: the plan keeps adamw", shortText(optimizer)));

    // The RoPE base (an int, as argparse reads it) is compared with the model's: a mismatch
    // trains another model than the one the plan sizes.
    const std::optional<long long> rotaryBase = count("--rotary-base");
    if (error)
        return *error;
    if (rotaryBase) {
        const std::optional<ModelArch> arch = draftArch(d, presets);
        const double theta = arch && !arch->learnedPositions ? arch->ropeTheta : 0;
        if (theta > 0 && static_cast<double>(*rotaryBase) != std::round(theta))
            d.warnings.push_back(fmt::format("--rotary-base {} differs from the model's rope_theta "
                                             "{}: the arguments train another model than {}",
                *rotaryBase, numberText(theta), shortText(arch->name)));
    }
    // The shape flags are compared with the model the plan uses.
    std::vector<std::string> shape;
    for (const char* f : kShapeFlags)
        if (has(f))
            shape.push_back(f);
    if (layersArg) {
        const std::optional<int> layers = presetLayers(d, presets);
        if (layers && *layers != *layersArg)
            d.warnings.push_back(fmt::format("--num-layers {} differs from the model's {} layers: "
                                             "--model decides the shape",
                *layersArg, *layers));
    }
    if (!shape.empty())
        d.warnings.push_back(fmt::format("{} model-shape arguments are not read: --model decides "
                                         "the shape",
            shape.size()));
    std::vector<std::string> ignored;
    for (const auto& [flag, value] : flags)
        if (std::find(used.begin(), used.end(), flag) == used.end())
            ignored.push_back(flag);
    if (!ignored.empty())
        d.warnings.push_back(
            fmt::format("not part of an Envelope plan, not read: {}", shortList(ignored, " ")));
    return ImportedPlan { planText(d), std::move(d.warnings) };
}

} // namespace envelope::exportdetail
