// Engine configuration -> plan: the draft every importer starts from, and DeepSpeed's JSON.
//
// DeepSpeed keys read (deepspeed/runtime/constants.py, zero/config.py): train_batch_size,
// train_micro_batch_size_per_gpu, gradient_accumulation_steps (any two give the third, as
// DeepSpeed itself derives them), bf16.enabled, fp16.enabled, data_types.grad_accum_dtype,
// zero_optimization.stage, zero_optimization.offload_optimizer.device,
// zero_optimization.offload_param.device, activation_checkpointing (present: full recompute).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/checked.h"
#include "base/json_fields.h"
#include "export/common.h"
#include "export/importing.h"
#include "plan/fields.h"

namespace envelope {

using namespace exportdetail;

Expected<ImportedPlan> importEngineConfig(Engine engine, std::string_view text,
    const PresetLibrary& presets, const ImportOptions& options)
{
    switch (engine) {
    case Engine::DeepSpeed:
        return importDeepSpeed(text, presets, options);
    case Engine::TorchTitan:
        return importTorchTitan(text, presets, options);
    case Engine::Megatron:
        return importMegatron(text, presets, options);
    case Engine::Hf:
    case Engine::Vllm:
        break;
    }
    return Error { "",
        fmt::format("importing {} files is not supported; the importable engines "
                    "are {}",
            engineId(engine), kImportEngineIdList) };
}

namespace exportdetail {

Expected<PlanDraft> startDraft(
    Engine engine, const PresetLibrary& presets, const ImportOptions& options)
{
    // Every importer multiplies the GPU count: it is in the plan's range before anything else.
    if (options.gpus && (*options.gpus < 1 || *options.gpus > planfields::kMaxGpus))
        return Error { "--gpus",
            fmt::format("must be 1..{} (cluster.gpus), got {}", planfields::kMaxGpus,
                *options.gpus) };
    Expected<nlohmann::json> base = parseJsonText(presets.defaultPlanJson);
    if (!base)
        return base.error();
    Expected<nlohmann::json> model = parseJsonText(options.modelJson, "--model");
    if (!model)
        return model.error();
    PlanDraft d { std::move(base).value(), {} };
    d.plan["model"] = *model;
    d.plan["name"] = fmt::format("{} ({})",
        options.sourceName.empty() ? std::string("imported") : options.sourceName,
        engineId(engine));
    if (options.gpus)
        d.plan["cluster"]["gpus"] = *options.gpus;
    return d;
}

std::optional<int> presetLayers(const PlanDraft& draft, const PresetLibrary& presets)
{
    const nlohmann::json& m = draft.plan["model"];
    std::string id;
    if (m.is_string())
        id = m.get<std::string>();
    else if (m.is_object() && m.contains("preset") && m["preset"].is_string()) {
        if (m.contains("layers") && m["layers"].is_number_integer())
            return m["layers"].get<int>();
        id = m["preset"].get<std::string>();
    } else if (m.is_object() && m.contains("layers") && m["layers"].is_number_integer())
        return m["layers"].get<int>();
    if (const ModelPreset* p = presets.findModel(id))
        return p->arch.layers;
    return std::nullopt;
}

std::optional<long long> asCount(const nlohmann::json& v)
{
    if (v.is_number_integer())
        return v.get<long long>();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15)
            return static_cast<long long>(d);
    }
    return std::nullopt;
}

namespace {

// train_batch_size has no plan field of its own: any count a double holds exactly.
constexpr long long kMaxBatchSize = 1'000'000'000'000'000;

// A count 1..max at `key` of `object` (named `path` in messages); nullopt when absent or
// "auto" (warned).
Expected<std::optional<long long>> countAt(const nlohmann::json& object, const char* key,
    const std::string& path, PlanDraft& d, long long max)
{
    if (!object.is_object() || !object.contains(key) || object[key].is_null())
        return std::optional<long long> {};
    const nlohmann::json& v = object[key];
    if (v.is_string() && v.get<std::string>() == "auto") {
        d.warnings.push_back(fmt::format("{} = \"auto\": filled in by the Hugging Face Trainer "
                                         "at launch; the plan keeps its default",
            path));
        return std::optional<long long> {};
    }
    const std::optional<long long> n = asCount(v);
    if (!n || *n < 1 || *n > max)
        return Error { path, fmt::format("must be an integer 1..{}, got {}", max, describeJson(v)) };
    return n;
}

bool enabled(const nlohmann::json& j, const char* section)
{
    if (!j.contains(section) || !j[section].is_object())
        return false;
    const nlohmann::json& e = j[section].value("enabled", nlohmann::json(false));
    return e.is_boolean() && e.get<bool>();
}

// True when zero_optimization.`key`.device names a device. The plan's offload is to CPU
// memory; "nvme" (ZeRO-Infinity) is read as CPU with a warning.
bool offloaded(const nlohmann::json& zero, const char* key, PlanDraft& d)
{
    if (!zero.is_object() || !zero.contains(key) || !zero[key].is_object())
        return false;
    const nlohmann::json& device = zero[key].value("device", nlohmann::json("none"));
    if (!device.is_string() || device.get<std::string>() == "none")
        return false;
    const std::string name = device.get<std::string>();
    if (name == "nvme")
        d.warnings.push_back(fmt::format("zero_optimization.{}.device = \"nvme\": the plan "
                                         "offloads to CPU memory; NVMe offload is read as CPU "
                                         "(GPU memory is the same, step time is not)",
            key));
    else if (name != "cpu")
        d.warnings.push_back(fmt::format("zero_optimization.{}.device = \"{}\": DeepSpeed "
                                         "knows none, cpu or nvme; read as cpu",
            key, shortText(name)));
    return true;
}

// Keys of `object` (at `path`) other than `known`, as "path.key".
void listUnread(const nlohmann::json& object, const std::string& path,
    std::initializer_list<std::string_view> known, std::vector<std::string>& out)
{
    if (!object.is_object())
        return;
    for (const auto& [key, value] : object.items())
        if (std::find(known.begin(), known.end(), key) == known.end())
            out.push_back(path + "." + key);
}

} // namespace

Expected<ImportedPlan> importDeepSpeed(
    std::string_view text, const PresetLibrary& presets, const ImportOptions& options)
{
    Expected<nlohmann::json> parsed = parseJsonText(text);
    if (!parsed)
        return parsed.error();
    const nlohmann::json& j = *parsed;
    if (!j.is_object())
        return Error { "", "a DeepSpeed config must be a JSON object" };
    Expected<PlanDraft> draft = startDraft(Engine::DeepSpeed, presets, options);
    if (!draft)
        return draft.error();
    PlanDraft& d = draft.value();
    nlohmann::json& t = d.training();

    using planfields::kMaxBatch;
    using planfields::kMaxGpus;
    auto tbs = countAt(j, "train_batch_size", "train_batch_size", d, kMaxBatchSize);
    auto micro = countAt(
        j, "train_micro_batch_size_per_gpu", "train_micro_batch_size_per_gpu", d, kMaxBatch);
    auto ga = countAt(j, "gradient_accumulation_steps", "gradient_accumulation_steps", d, kMaxBatch);
    for (auto* e : { &tbs, &micro, &ga })
        if (!*e)
            return e->error();
    std::optional<long long> m = *micro, g = *ga, b = *tbs;
    // Factors are at most 1e6 each (the plan's bounds, checked above): these products fit in
    // 64 bits; checkedMul keeps that true if a bound ever grows.
    if (!m && g && b && *b % *g == 0 && options.gpus)
        if (const std::optional<long long> per = checkedMul(*g, *options.gpus))
            m = std::min<long long>(kMaxBatch, *b / *per);
    if (!g && m && b && options.gpus)
        if (const std::optional<long long> per = checkedMul(*m, *options.gpus))
            g = std::clamp<long long>(*b / *per, 1, kMaxBatch);
    if (m && *m < 1)
        return Error { "train_batch_size",
            fmt::format("must be at least gradient_accumulation_steps x --gpus = {} x {}, got {}",
                *g, *options.gpus, *b) };
    if (m)
        t["micro_batch"] = *m;
    if (g)
        t["grad_accum"] = *g;
    const long long mi = t["micro_batch"].get<long long>(), gi = t["grad_accum"].get<long long>();
    if (b) {
        const Expected<long long> perGpu = checkedProduct({ mi, gi }, kMaxBatchSize,
            "train_batch_size", "train_micro_batch_size_per_gpu x gradient_accumulation_steps");
        if (!perGpu)
            return perGpu.error();
        if (*b % *perGpu != 0)
            return Error { "train_batch_size",
                fmt::format("must be a multiple of train_micro_batch_size_per_gpu x "
                            "gradient_accumulation_steps = {}, got {}",
                    *perGpu, *b) };
        const long long dp = *b / *perGpu;
        if (dp > kMaxGpus)
            return Error { "train_batch_size",
                fmt::format("means {} / ({} x {}) = {} data-parallel GPUs; cluster.gpus must be "
                            "1..{}",
                    *b, mi, gi, dp, kMaxGpus) };
        if (!options.gpus)
            d.plan["cluster"]["gpus"] = dp;
        else if (dp != *options.gpus)
            d.warnings.push_back(fmt::format(
                "train_batch_size = {} means {} data-parallel GPUs; on --gpus {} the global "
                "batch becomes {} (micro batch and accumulation kept)",
                *b, dp, *options.gpus, *perGpu * *options.gpus));
    } else if (!options.gpus) {
        d.warnings.push_back(fmt::format("train_batch_size is not set: the GPU count is the "
                                         "default plan's {}; pass --gpus",
            d.plan["cluster"]["gpus"].dump()));
    }

    Precision::Kind kind = Precision::Kind::Fp32;
    if ((enabled(j, "bf16") || enabled(j, "bfloat16")) && enabled(j, "fp16"))
        d.warnings.emplace_back("bf16.enabled and fp16.enabled are both true (DeepSpeed refuses "
                                "that): the plan uses bf16");
    if (enabled(j, "bf16") || enabled(j, "bfloat16"))
        kind = Precision::Kind::Bf16;
    else if (enabled(j, "fp16"))
        kind = Precision::Kind::Fp16;
    bool fp32Grads = false;
    if (j.contains("data_types") && j["data_types"].is_object()) {
        const nlohmann::json& dt = j["data_types"].value("grad_accum_dtype", nlohmann::json());
        fp32Grads = dt.is_string() && dt.get<std::string>() == "fp32";
    }
    t["recipe"] = recipeIdFor(kind, fp32Grads && kind == Precision::Kind::Bf16);

    const nlohmann::json zero = j.value("zero_optimization", nlohmann::json::object());
    if (!zero.is_object())
        return Error { "zero_optimization", "must be an object" };
    if (zero.contains("stage")) {
        const std::optional<long long> stage = asCount(zero["stage"]);
        if (!stage || *stage < 0 || *stage > 3)
            return Error { "zero_optimization.stage",
                fmt::format("must be 0..3, got {}", describeJson(zero["stage"])) };
        t["zero_stage"] = *stage;
    } else {
        t["zero_stage"] = 0;
    }
    t["offload_optimizer"] = offloaded(zero, "offload_optimizer", d);
    t["offload_params"] = offloaded(zero, "offload_param", d);
    t["recompute"] = j.contains("activation_checkpointing") ? "full" : "none";
    // DeepSpeed alone is data parallel; seq_len and the model come from the training script.
    t["tp"] = 1;
    t["pp"] = 1;
    t["cp"] = 1;
    t["ep"] = 1;
    t["sequence_parallel"] = false;

    std::vector<std::string> ignored;
    for (const auto& [key, value] : j.items())
        if (key != "train_batch_size" && key != "train_micro_batch_size_per_gpu"
            && key != "gradient_accumulation_steps" && key != "bf16" && key != "bfloat16"
            && key != "fp16" && key != "data_types" && key != "zero_optimization"
            && key != "activation_checkpointing")
            ignored.push_back(key);
    // Inside the sections that are read, the keys that are not (overlap_comm, loss_scale ...).
    listUnread(zero, "zero_optimization", { "stage", "offload_optimizer", "offload_param" },
        ignored);
    for (const char* section : { "offload_optimizer", "offload_param" })
        if (zero.contains(section))
            listUnread(zero[section], std::string("zero_optimization.") + section, { "device" },
                ignored);
    for (const char* section : { "bf16", "bfloat16", "fp16" })
        if (j.contains(section))
            listUnread(j[section], section, { "enabled" }, ignored);
    if (j.contains("data_types"))
        listUnread(j["data_types"], "data_types", { "grad_accum_dtype" }, ignored);
    if (!ignored.empty())
        d.warnings.push_back(fmt::format("not part of an Envelope plan, not read: {}",
            shortList(ignored, ", ")));
    d.warnings.push_back(fmt::format("DeepSpeed's config does not name the sequence length: "
                                     "training.seq_len is the default plan's {}",
        t["seq_len"].dump()));
    return ImportedPlan { planText(d), std::move(d.warnings) };
}

} // namespace exportdetail
} // namespace envelope
