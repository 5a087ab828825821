// torchtitan job TOML -> plan (torchtitan/config/job_config.py field names; see torchtitan.cpp).
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "base/checked.h"
#include "base/json_fields.h"
#include "export/common.h"
#include "export/importing.h"
#include "export/toml.h"
#include "plan/fields.h"

namespace envelope::exportdetail {
namespace {

using namespace planfields;

// Counts with no plan field of their own (global batch, steps): any a double holds exactly.
constexpr long long kMaxCount = 1'000'000'000'000'000;

struct TomlReader {
    const nlohmann::json& root;
    std::vector<std::string> used;

    const nlohmann::json* get(const std::string& table, const std::string& key)
    {
        if (!root.contains(table) || !root[table].is_object() || !root[table].contains(key))
            return nullptr;
        used.push_back(table + "." + key);
        return &root[table][key];
    }
    // An integer min..max (or absent).
    Expected<std::optional<long long>> count(const std::string& table, const std::string& key,
        long long min = 1, long long max = kMaxCount)
    {
        const nlohmann::json* v = get(table, key);
        if (!v)
            return std::optional<long long> {};
        const std::optional<long long> n = asCount(*v);
        if (!n || *n < min || *n > max)
            return Error { table + "." + key,
                fmt::format("must be an integer {}..{}, got {}", min, max, describeJson(*v)) };
        return n;
    }
    std::string text(const std::string& table, const std::string& key)
    {
        const nlohmann::json* v = get(table, key);
        return v && v->is_string() ? v->get<std::string>() : std::string();
    }
};

// The keys of `table` (dotted from `prefix`) that are not in `used`, leaves only.
void listLeaves(const nlohmann::json& table, const std::string& prefix,
    const std::vector<std::string>& used, std::vector<std::string>& out)
{
    for (const auto& [key, value] : table.items()) {
        const std::string path = prefix.empty() ? key : prefix + "." + key;
        if (value.is_object())
            listLeaves(value, path, used, out);
        else if (std::find(used.begin(), used.end(), path) == used.end())
            out.push_back(path);
    }
}

} // namespace

Expected<ImportedPlan> importTorchTitan(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options)
{
    Expected<nlohmann::json> parsed = parseToml(text);
    if (!parsed)
        return parsed.error();
    Expected<PlanDraft> draft = startDraft(Engine::TorchTitan, presets, options);
    if (!draft)
        return draft.error();
    PlanDraft& d = draft.value();
    nlohmann::json& t = d.training();
    TomlReader r { *parsed, {} };

    const std::string description = r.text("job", "description");
    if (!description.empty())
        d.plan["name"] = description;

    long long degree[6] = { 1, 1, 1, 1, 1, 1 }; // replicate shard tp pp cp ep
    const char* keys[6] = { "data_parallel_replicate_degree", "data_parallel_shard_degree",
        "tensor_parallel_degree", "pipeline_parallel_degree", "context_parallel_degree",
        "expert_parallel_degree" };
    // The data-parallel degrees are bounded by cluster.gpus, the others by the plan's tp/pp/cp/ep.
    const long long maxDegree[6]
        = { kMaxGpus, kMaxGpus, kMaxParallel, kMaxParallel, kMaxParallel, kMaxParallel };
    bool shardRest = false;
    for (int i = 0; i < 6; ++i) {
        const nlohmann::json* v = r.get("parallelism", keys[i]);
        if (!v)
            continue;
        const std::optional<long long> n = asCount(*v);
        if (i == 1 && n && *n == -1) {
            shardRest = true; // "-1 means leftover ranks"
            continue;
        }
        if (!n || *n < 1 || *n > maxDegree[i])
            return Error { std::string("parallelism.") + keys[i],
                fmt::format("must be an integer 1..{}{}, got {}", maxDegree[i],
                    i == 1 ? " or -1" : "", describeJson(*v)) };
        degree[i] = *n;
    }
    const Expected<long long> modelParallel = checkedProduct({ degree[2], degree[3], degree[4] },
        kMaxGpus, "parallelism.tensor_parallel_degree",
        "tensor_parallel_degree x pipeline_parallel_degree x context_parallel_degree");
    if (!modelParallel)
        return modelParallel.error();
    const Expected<long long> fixedRanks = checkedProduct({ degree[0], *modelParallel }, kMaxGpus,
        "parallelism.data_parallel_replicate_degree",
        "data_parallel_replicate_degree x tp x pp x cp");
    if (!fixedRanks)
        return fixedRanks.error();
    if (shardRest) {
        if (!options.gpus)
            return Error { "parallelism.data_parallel_shard_degree",
                "is -1 (the GPUs left over): pass --gpus to say how many there are" };
        const long long rest = *options.gpus / *fixedRanks;
        if (rest < 1 || rest * *fixedRanks != *options.gpus)
            return Error { "parallelism.data_parallel_shard_degree",
                fmt::format("is -1, but --gpus {} is not a multiple of replicate x tp x pp x cp "
                            "= {}",
                    *options.gpus, *fixedRanks) };
        degree[1] = rest;
    }
    const Expected<long long> dpOr = checkedProduct({ degree[0], degree[1] }, kMaxGpus,
        "parallelism.data_parallel_shard_degree",
        "data_parallel_replicate_degree x data_parallel_shard_degree");
    if (!dpOr)
        return dpOr.error();
    const long long dp = *dpOr;
    const Expected<long long> gpusOr
        = checkedProduct({ dp, *modelParallel }, kMaxGpus, "parallelism.data_parallel_shard_degree",
            "the product of the parallelism degrees (cluster.gpus)");
    if (!gpusOr)
        return gpusOr.error();
    const long long gpus = *gpusOr;
    if (!options.gpus)
        d.plan["cluster"]["gpus"] = gpus;
    else if (*options.gpus != gpus)
        d.warnings.push_back(fmt::format("the parallelism degrees multiply to {} GPUs; --gpus {} "
                                         "is used (the data-parallel size changes)",
            gpus, *options.gpus));
    t["tp"] = degree[2];
    t["pp"] = degree[3];
    t["cp"] = degree[4];
    t["ep"] = degree[5];
    t["sequence_parallel"] = degree[2] > 1;
    const std::string reshard = r.text("parallelism", "fsdp_reshard_after_forward");
    t["zero_stage"] = degree[1] > 1 ? (reshard == "never" ? 2 : 3) : 0;
    if (degree[0] > 1 && degree[1] > 1)
        d.warnings.push_back(fmt::format("HSDP: the plan shards over all {} data-parallel GPUs "
                                         "(torchtitan shards over {} and replicates {} times)",
            dp, degree[1], degree[0]));

    const std::string schedule = r.text("parallelism", "pipeline_parallel_schedule");
    // torch.distributed.pipelining looks schedules up by name, case-insensitively. The V-shaped
    // ones (ZBVZeroBubble, DualPipeV) put two chunks on each rank: j, then 2 pp - 1 - j
    // (torchtitan stage_ids_this_rank, style "v"); the rest loop (chunk j on rank j mod pp).
    std::string scheduleName = schedule;
    std::transform(scheduleName.begin(), scheduleName.end(), scheduleName.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool vShape = scheduleName == "zbvzerobubble" || scheduleName == "dualpipev";
    if (scheduleName == "zbvzerobubble" || scheduleName == "interleavedzerobubble")
        t["pp_schedule"] = "zb1p";
    else if (scheduleName == "dualpipev")
        d.warnings.push_back("parallelism.pipeline_parallel_schedule = \"DualPipeV\": read as "
                             "1F1B's bubble (Envelope's dualpipe keeps DualPipe's two parameter "
                             "copies, which DualPipeV does not)");
    auto layersPerStage = r.count("parallelism", "pipeline_parallel_layers_per_stage");
    auto ppMicro = r.count("parallelism", "pipeline_parallel_microbatch_size", 1, kMaxBatch);
    // local_batch_size is micro x accumulation when the pipeline splits it, else the micro batch.
    auto local = r.count("training", "local_batch_size");
    if (local && !local->has_value())
        local = r.count("training", "batch_size"); // the name before local_batch_size
    auto global = r.count("training", "global_batch_size", -1);
    auto seq = r.count("training", "seq_len", 1, kMaxTokens);
    auto steps = r.count("training", "steps");
    for (auto* e : { &layersPerStage, &ppMicro, &local, &global, &seq, &steps })
        if (!*e)
            return e->error();
    // torchtitan builds ceil((layers + first_less + last_less) / layers_per_stage) stages; the
    // two "less layers" default to 1 each (v0.2.2 JobConfig).
    auto firstLess
        = r.count("parallelism", "pipeline_parallel_first_stage_less_layers", 0, kMaxCount);
    auto lastLess
        = r.count("parallelism", "pipeline_parallel_last_stage_less_layers", 0, kMaxCount);
    for (auto* e : { &firstLess, &lastLess })
        if (!*e)
            return e->error();
    if (degree[3] > 1 && layersPerStage->has_value()) {
        if (const std::optional<int> layers = presetLayers(d, presets)) {
            const long long units = *layers + firstLess->value_or(1) + lastLess->value_or(1);
            const long long stages = (units + **layersPerStage - 1) / **layersPerStage;
            if (stages % degree[3] != 0)
                return Error { "parallelism.pipeline_parallel_layers_per_stage",
                    fmt::format("makes ceil(({} layers + {} + {} less) / {}) = {} stages, not a "
                                "multiple of pipeline_parallel_degree = {} (torchtitan refuses it)",
                        *layers, firstLess->value_or(1), lastLess->value_or(1), **layersPerStage,
                        stages, degree[3]) };
            t["virtual_stages"] = std::max(1LL, stages / degree[3]);
        }
    }
    // parallelism.module_fqns_per_model_part: the modules of each model part, part j on rank
    // j mod pp (pipeline_llm's loop-style stage ids); its "layers.N" per rank are the plan's
    // training.stage_layers.
    if (const nlohmann::json* parts = r.get("parallelism", "module_fqns_per_model_part")) {
        const char* key = "parallelism.module_fqns_per_model_part";
        const long long pp = degree[3];
        const auto bad = [&](const std::string& why) { return Error { key, why }; };
        if (!parts->is_array() || parts->empty() || parts->size() > 1'000'000
            || static_cast<long long>(parts->size()) % pp != 0)
            return bad(fmt::format("must be a list of lists of module names, a multiple of "
                                   "pipeline_parallel_degree = {} of them, got {}",
                pp, describeJson(*parts)));
        if (vShape && static_cast<long long>(parts->size()) != 2 * pp)
            return bad(fmt::format("must hold 2 x pipeline_parallel_degree = {} parts under the "
                                   "V-shaped schedule \"{}\" (torchtitan asserts two stages a "
                                   "rank), got {}",
                2 * pp, shortText(schedule), parts->size()));
        std::vector<long long> stages(static_cast<std::size_t>(pp), 0);
        long long layerCount = 0;
        for (std::size_t j = 0; j < parts->size(); ++j) {
            const nlohmann::json& part = (*parts)[j];
            if (!part.is_array())
                return bad(fmt::format("part {} must be a list of module names, got {}", j,
                    describeJson(part)));
            for (const nlohmann::json& name : part) {
                if (!name.is_string())
                    return bad(fmt::format("part {} names a module with {}", j, describeJson(name)));
                if (name.get<std::string>().rfind("layers.", 0) == 0) {
                    ++stages[static_cast<std::size_t>(chunkRank(static_cast<long long>(j), pp, vShape))];
                    ++layerCount;
                }
            }
        }
        const std::optional<int> layers = presetLayers(d, presets);
        if (layers && layerCount != *layers)
            return bad(fmt::format("names {} transformer blocks (layers.N), the model has {}",
                layerCount, *layers));
        t["virtual_stages"] = std::max<long long>(1, static_cast<long long>(parts->size()) / pp);
        if (pp > 1)
            t["stage_layers"] = stages;
    } else if (degree[3] > 1) {
        // torchtitan's own split (generate_llm_fqn_per_model_part, v0.2.2): the embedding and
        // the head count as first_less and last_less layers (1 each by default), the S = pp x v
        // stages share layers + both evenly, the first `extra` one more, and the first and last
        // stage hold that many fewer blocks. 80 layers on PP 4: 82 = 4 x 20 + 2, so 20, 21, 20,
        // 19; the plan keeps it as training.stage_layers, rank k's stages summed.
        if (const std::optional<int> layers = presetLayers(d, presets)) {
            const long long pp = degree[3];
            const long long stagesTotal = pp * t.value("virtual_stages", 1LL);
            const long long in = firstLess->value_or(1), out = lastLess->value_or(1);
            const long long effective = *layers + in + out;
            const long long per = effective / stagesTotal, extra = effective % stagesTotal;
            std::vector<long long> stages(static_cast<std::size_t>(pp), 0);
            for (long long i = 0; i < stagesTotal; ++i) {
                const long long n = per + (i < extra ? 1 : 0) - (i == 0 ? in : 0)
                    - (i == stagesTotal - 1 ? out : 0);
                if (n < 0)
                    return Error { "parallelism.pipeline_parallel_first_stage_less_layers",
                        fmt::format("leaves stage {} of {} with {} layers (torchtitan asserts "
                                    "the embedding and head weights fit a stage of {})",
                            i, stagesTotal, n, per) };
                stages[static_cast<std::size_t>(chunkRank(i, pp, vShape && stagesTotal == 2 * pp))] += n;
            }
            t["stage_layers"] = stages;
        }
    }
    if (seq->has_value())
        t["seq_len"] = **seq;
    long long micro = local->value_or(t["micro_batch"].get<long long>());
    long long accum = 1;
    if (degree[3] > 1 && ppMicro->has_value()) {
        micro = **ppMicro;
        accum = std::max(1LL, local->value_or(micro) / micro);
    } else if (global->has_value() && **global > 0) {
        const std::optional<long long> perStep = checkedMul(micro, dp);
        if (!perStep || **global % *perStep != 0)
            return Error { "training.global_batch_size",
                fmt::format("must be a multiple of local_batch_size x data-parallel degree = "
                            "{} x {}, got {}",
                    micro, dp, **global) };
        accum = **global / *perStep;
    }
    if (micro > kMaxBatch)
        return Error { "training.local_batch_size",
            fmt::format("must be 1..{} (training.micro_batch), got {}", kMaxBatch, micro) };
    if (accum > kMaxBatch)
        return Error { degree[3] > 1 && ppMicro->has_value() ? "training.local_batch_size"
                                                             : "training.global_batch_size",
            fmt::format("gives {} micro-batches per step; training.grad_accum must be 1..{}", accum,
                kMaxBatch) };
    t["micro_batch"] = micro;
    t["grad_accum"] = accum;
    if (steps->has_value())
        t["train_tokens"]
            = static_cast<double>(**steps) * micro * accum * dp * t["seq_len"].get<double>();

    const std::string mode = r.text("activation_checkpoint", "mode");
    const nlohmann::json* option = r.get("activation_checkpoint", "selective_ac_option");
    if (mode == "none")
        t["recompute"] = "none";
    else if (mode == "full")
        t["recompute"] = "full";
    else if (mode == "selective") {
        std::string o = option && option->is_string() ? option->get<std::string>() : "op";
        if (option && option->is_number_integer())
            o = std::to_string(option->get<long long>());
        if (o == "op") {
            t["recompute"] = "selective";
        } else {
            long long k = 0;
            try {
                k = std::stoll(o);
            } catch (const std::exception&) { }
            if (k < 1)
                return Error { "activation_checkpoint.selective_ac_option",
                    fmt::format("must be \"op\" or a layer count >= 1, got \"{}\"", o) };
            t["recompute"] = "every-k";
            t["recompute_every"] = k;
        }
    } else if (mode == "memory_budget") {
        // torch's memory-budget activation checkpointing: 0 recomputes everything, 1 keeps
        // everything (activation_checkpoint.memory_budget, default 0.5); in between the
        // compiler picks what to save, which Envelope reads as selective recompute.
        const nlohmann::json* budget = r.get("activation_checkpoint", "memory_budget");
        const double b = budget && budget->is_number() ? budget->get<double>() : 0.5;
        if (!(b >= 0 && b <= 1))
            return Error { "activation_checkpoint.memory_budget",
                fmt::format("must be 0..1, got {}", describeJson(*budget)) };
        t["recompute"] = b <= 0 ? "full" : b >= 1 ? "none" : "selective";
        if (b > 0 && b < 1)
            d.warnings.push_back(fmt::format(
                "activation_checkpoint.mode = \"memory_budget\" ({}): the compiler chooses "
                "what to recompute within the budget; read as selective recompute",
                numberText(b)));
    } else if (!mode.empty()) {
        return Error { "activation_checkpoint.mode",
            fmt::format("must be \"none\", \"selective\", \"full\" or \"memory_budget\", "
                        "got \"{}\"",
                shortText(mode)) };
    }

    // FP8 is the Float8 converter: "quantize.linear.float8" since v0.2.0 ("float8" before it,
    // which v0.2 refuses). A [float8] or [quantize.linear.float8] section alone converts nothing.
    bool fp8 = false;
    if (const nlohmann::json* conv = r.get("model", "converters"); conv && conv->is_array())
        for (const nlohmann::json& c : *conv) {
            const std::string name = c.is_string() ? c.get<std::string>() : std::string();
            if (name == "quantize.linear.float8")
                fp8 = true;
            else if (name == "float8") {
                fp8 = true;
                d.warnings.emplace_back("model.converters = [\"float8\"]: the converter's name "
                                        "before torchtitan v0.2.0; v0.2 calls it "
                                        "\"quantize.linear.float8\"");
            }
        }
    const std::string param = r.text("training", "mixed_precision_param");
    t["recipe"] = fp8 ? "fp8-te" : param == "float32" ? "fp32" : "bf16-mixed-16";
    const nlohmann::json* offload = r.get("training", "enable_cpu_offload");
    const bool off = offload && offload->is_boolean() && offload->get<bool>();
    t["offload_optimizer"] = off;
    t["offload_params"] = off;
    r.get("model", "name");
    r.get("model", "flavor");
    d.warnings.push_back("torchtitan's [model] flavour is not read: --model decides the shape");
    // Every key the plan did not take, named (never a silent drop).
    std::vector<std::string> ignored;
    listLeaves(*parsed, "", r.used, ignored);
    if (!ignored.empty())
        d.warnings.push_back(
            fmt::format("not part of an Envelope plan, not read: {}", shortList(ignored, ", ")));
    return ImportedPlan { planText(d), std::move(d.warnings) };
}

} // namespace envelope::exportdetail
