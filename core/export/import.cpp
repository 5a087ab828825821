// Engine configuration -> plan: the draft every importer starts from, and DeepSpeed's JSON.
//
// DeepSpeed keys read (deepspeed/runtime/constants.py, zero/config.py): train_batch_size,
// train_micro_batch_size_per_gpu, gradient_accumulation_steps (any two give the third, as
// DeepSpeed itself derives them), bf16.enabled, fp16.enabled, data_types.grad_accum_dtype,
// zero_optimization.stage, zero_optimization.offload_optimizer.device,
// zero_optimization.offload_param.device, activation_checkpointing (present: full recompute).
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/json_fields.h"
#include "export/common.h"
#include "export/importing.h"

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

// A positive count at `key` of `object` (named `path` in messages); nullopt when absent or
// "auto" (warned).
Expected<std::optional<long long>> countAt(
    const nlohmann::json& object, const char* key, const std::string& path, PlanDraft& d)
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
    if (!n || *n < 1)
        return Error { path, fmt::format("must be a positive integer, got {}", describeJson(v)) };
    return n;
}

bool enabled(const nlohmann::json& j, const char* section)
{
    if (!j.contains(section) || !j[section].is_object())
        return false;
    const nlohmann::json& e = j[section].value("enabled", nlohmann::json(false));
    return e.is_boolean() && e.get<bool>();
}

bool offloaded(const nlohmann::json& zero, const char* key)
{
    if (!zero.is_object() || !zero.contains(key) || !zero[key].is_object())
        return false;
    const nlohmann::json& device = zero[key].value("device", nlohmann::json("none"));
    return device.is_string() && device.get<std::string>() != "none";
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

    auto tbs = countAt(j, "train_batch_size", "train_batch_size", d);
    auto micro = countAt(j, "train_micro_batch_size_per_gpu", "train_micro_batch_size_per_gpu", d);
    auto ga = countAt(j, "gradient_accumulation_steps", "gradient_accumulation_steps", d);
    for (auto* e : { &tbs, &micro, &ga })
        if (!*e)
            return e->error();
    std::optional<long long> m = *micro, g = *ga, b = *tbs;
    if (!m && g && b && *b % *g == 0 && options.gpus)
        m = *b / (*g * *options.gpus);
    if (!g && m && b && options.gpus)
        g = std::max(1LL, *b / (*m * *options.gpus));
    if (m)
        t["micro_batch"] = *m;
    if (g)
        t["grad_accum"] = *g;
    const long long mi = t["micro_batch"].get<long long>(), gi = t["grad_accum"].get<long long>();
    if (b) {
        if (*b % (mi * gi) != 0)
            return Error { "train_batch_size",
                fmt::format("must be a multiple of train_micro_batch_size_per_gpu x "
                            "gradient_accumulation_steps = {}, got {}",
                    mi * gi, *b) };
        const long long dp = *b / (mi * gi);
        if (!options.gpus)
            d.plan["cluster"]["gpus"] = dp;
        else if (dp != *options.gpus)
            d.warnings.push_back(fmt::format(
                "train_batch_size = {} means {} data-parallel GPUs; on --gpus {} the global "
                "batch becomes {} (micro batch and accumulation kept)",
                *b, dp, *options.gpus, mi * gi * *options.gpus));
    } else if (!options.gpus) {
        d.warnings.push_back(fmt::format("train_batch_size is not set: the GPU count is the "
                                         "default plan's {}; pass --gpus",
            d.plan["cluster"]["gpus"].dump()));
    }

    Precision::Kind kind = Precision::Kind::Fp32;
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
    t["offload_optimizer"] = offloaded(zero, "offload_optimizer");
    t["offload_params"] = offloaded(zero, "offload_param");
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
    if (!ignored.empty())
        d.warnings.push_back(
            fmt::format("not part of an Envelope plan, not read: {}", fmt::join(ignored, ", ")));
    d.warnings.push_back(fmt::format("DeepSpeed's config does not name the sequence length: "
                                     "training.seq_len is the default plan's {}",
        t["seq_len"].dump()));
    return ImportedPlan { d.plan.dump(2) + "\n", std::move(d.warnings) };
}

} // namespace exportdetail
} // namespace envelope
