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
#include "model/arch_json.h"
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
    case Engine::Sglang:
    case Engine::Trtllm:
    case Engine::Verl:
    case Engine::OpenRlhf:
    case Engine::Trl:
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
            fmt::format(
                "must be 1..{} (cluster.gpus), got {}", planfields::kMaxGpus, *options.gpus) };
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

std::optional<ModelArch> draftArch(const PlanDraft& draft, const PresetLibrary& presets)
{
    const nlohmann::json& m = draft.plan["model"];
    if (m.is_string()) {
        if (const ModelPreset* p = presets.findModel(m.get<std::string>()))
            return p->arch;
        return std::nullopt;
    }
    if (!m.is_object())
        return std::nullopt;
    const auto resolved = [](const Expected<ModelArch>& arch) {
        return arch ? std::optional<ModelArch>(*arch) : std::nullopt;
    };
    if (m.contains("preset") && m["preset"].is_string()) {
        const ModelPreset* p = presets.findModel(m["preset"].get<std::string>());
        return p ? resolved(applyArchOverrides(p->arch, m, "model")) : std::nullopt;
    }
    return m.contains("layers") ? resolved(archFromJson(m, "model")) : std::nullopt;
}

std::optional<int> presetLayers(const PlanDraft& draft, const PresetLibrary& presets)
{
    const std::optional<ModelArch> arch = draftArch(draft, presets);
    return arch ? std::optional<int>(arch->layers) : std::nullopt;
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
// "auto" (then `isAuto` is set: the Hugging Face integration fills it in at launch).
Expected<std::optional<long long>> countAt(const nlohmann::json& object, const char* key,
    const std::string& path, long long max, bool& isAuto)
{
    isAuto = false;
    if (!object.is_object() || !object.contains(key) || object[key].is_null())
        return std::optional<long long> {};
    const nlohmann::json& v = object[key];
    if (v.is_string() && v.get<std::string>() == "auto") {
        isAuto = true;
        return std::optional<long long> {};
    }
    const std::optional<long long> n = asCount(v);
    if (!n || *n < 1 || *n > max)
        return Error { path,
            fmt::format("must be an integer 1..{}, got {}", max, describeJson(v)) };
    return n;
}

// A boolean switch of a section: true, false, or "auto" (nullopt: the plan decides).
std::optional<bool> switchOf(const nlohmann::json& j, const char* section, const char* key)
{
    if (!j.contains(section) || !j[section].is_object() || !j[section].contains(key))
        return false;
    const nlohmann::json& e = j[section][key];
    if (e.is_string() && e.get<std::string>() == "auto")
        return std::nullopt;
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
    bool tbsAuto = false, microAuto = false, gaAuto = false;
    auto tbs = countAt(j, "train_batch_size", "train_batch_size", kMaxBatchSize, tbsAuto);
    auto micro = countAt(j, "train_micro_batch_size_per_gpu", "train_micro_batch_size_per_gpu",
        kMaxBatch, microAuto);
    auto ga = countAt(
        j, "gradient_accumulation_steps", "gradient_accumulation_steps", kMaxBatch, gaAuto);
    for (auto* e : { &tbs, &micro, &ga })
        if (!*e)
            return e->error();
    std::optional<long long> m = *micro, g = *ga, b = *tbs;

    // "auto" is what the Hugging Face integration fills in from TrainingArguments
    // (transformers integrations/deepspeed.py, trainer_config_process): the micro batch is
    // per_device_train_batch_size, the accumulation gradient_accumulation_steps, and
    // train_batch_size their product with the world size. The plan is those arguments here.
    std::vector<std::string> autos;
    if (microAuto) {
        m = t["micro_batch"].get<long long>();
        autos.push_back("train_micro_batch_size_per_gpu = training.micro_batch");
    }
    if (gaAuto) {
        g = t["grad_accum"].get<long long>();
        autos.push_back("gradient_accumulation_steps = training.grad_accum");
    }

    // The data-parallel world: --gpus, or the default plan's (said so whenever it decides a
    // value: the GPU count never changes silently).
    const long long world
        = options.gpus ? *options.gpus : d.plan["cluster"]["gpus"].get<long long>();
    bool worldUsed = false;
    bool gpusFromBatch = false; // cluster.gpus = train_batch_size / micro (no accumulation)
    if (tbsAuto) {
        if (m && g) {
            const std::optional<long long> product = checkedMul(*m, *g);
            b = product ? checkedMul(*product, world) : std::nullopt;
            worldUsed = true;
            autos.push_back("train_batch_size = micro x accumulation x GPUs");
        }
    }
    // DeepSpeed's own rule for the value a config leaves out (runtime/config.py,
    // _set_batch_related_parameters): any two give the third with the world size; train_batch_size
    // alone means no accumulation, the micro batch alone too.
    const auto exactQuotient
        = [&](long long total, long long divisor, const char* what) -> Expected<long long> {
        if (divisor < 1 || total % divisor != 0 || total / divisor < 1)
            return Error { "train_batch_size",
                fmt::format("must be a multiple of {} = {} (DeepSpeed derives the missing value "
                            "from it), got {}",
                    what, divisor, total) };
        return total / divisor;
    };
    if (b && m && !g && !options.gpus) {
        // Without the world size the file's reading is no accumulation (DeepSpeed's default)
        // on train_batch_size / micro GPUs: BingBERT's 65,536 at micro 64 is its 1,024 GPUs.
        Expected<long long> q = exactQuotient(*b, *m, "train_micro_batch_size_per_gpu");
        if (!q)
            return q.error();
        if (*q > kMaxGpus)
            return Error { "train_batch_size",
                fmt::format("means {} / {} = {} data-parallel GPUs; cluster.gpus must be 1..{}", *b,
                    *m, *q, kMaxGpus) };
        g = 1;
        gpusFromBatch = true;
        d.plan["cluster"]["gpus"] = *q;
        d.warnings.push_back(fmt::format(
            "cluster.gpus = {}: train_batch_size / train_micro_batch_size_per_gpu = {} / {} "
            "with no gradient accumulation (the file sets none); pass --gpus for another cluster",
            *q, *b, *m));
    } else if (b && m && !g) {
        const std::optional<long long> per = checkedMul(*m, world);
        Expected<long long> q
            = exactQuotient(*b, per.value_or(0), "train_micro_batch_size_per_gpu x GPUs");
        if (!q)
            return q.error();
        g = *q;
        worldUsed = true;
    } else if (b && g && !m) {
        const std::optional<long long> per = checkedMul(*g, world);
        Expected<long long> q
            = exactQuotient(*b, per.value_or(0), "gradient_accumulation_steps x GPUs");
        if (!q)
            return q.error();
        m = *q;
        worldUsed = true;
    } else if (b && !m && !g) {
        Expected<long long> q = exactQuotient(*b, world, "the GPU count");
        if (!q)
            return q.error();
        m = *q;
        g = 1;
        worldUsed = true;
    } else if (m && !g && !b) {
        g = 1;
    } else if (!m && !b) {
        d.warnings.emplace_back("neither train_batch_size nor train_micro_batch_size_per_gpu is "
                                "set (DeepSpeed needs one): the plan keeps its micro batch");
    }
    if (m && *m > kMaxBatch)
        return Error { "train_micro_batch_size_per_gpu",
            fmt::format("must be 1..{} (training.micro_batch), got {}", kMaxBatch, *m) };
    if (g && *g > kMaxBatch)
        return Error { "gradient_accumulation_steps",
            fmt::format("must be 1..{} (training.grad_accum), got {}", kMaxBatch, *g) };
    if (m)
        t["micro_batch"] = *m;
    if (g)
        t["grad_accum"] = *g;
    const long long mi = t["micro_batch"].get<long long>(), gi = t["grad_accum"].get<long long>();
    if (b && !tbsAuto && *tbs && (*micro || microAuto) && (*ga || gaAuto)) {
        // All three given: they state the data-parallel size themselves.
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
        if (!options.gpus) {
            if (dp != world)
                d.warnings.push_back(fmt::format(
                    "cluster.gpus = {}: train_batch_size / (micro batch x accumulation) = {} / "
                    "({} x {}) (the default plan has {}; pass --gpus to set it)",
                    dp, *b, mi, gi, world));
            d.plan["cluster"]["gpus"] = dp;
        } else if (dp != *options.gpus) {
            d.warnings.push_back(fmt::format(
                "train_batch_size = {} means {} data-parallel GPUs; on --gpus {} the global "
                "batch becomes {} (micro batch and accumulation kept)",
                *b, dp, *options.gpus, *perGpu * *options.gpus));
        }
    } else if (!options.gpus && !gpusFromBatch) {
        d.warnings.push_back(fmt::format("the GPU count is not in the file{}: the default plan's "
                                         "{} is used; pass --gpus",
            worldUsed ? " (it decides the batch values DeepSpeed derives)" : "", world));
    }

    // Precision: "auto" is the plan's own precision (TrainingArguments bf16/fp16 as the plan has
    // them); a section left out under the HF integration is added by accelerate for the mixed
    // precision the arguments ask for, so "auto" in one section and none in the other is still
    // the plan's precision.
    const std::optional<bool> bf16On = switchOf(j, "bf16", "enabled");
    const std::optional<bool> bfloat16On = switchOf(j, "bfloat16", "enabled");
    const std::optional<bool> fp16On = switchOf(j, "fp16", "enabled");
    const bool anyAuto = !bf16On || !bfloat16On || !fp16On;
    Precision::Kind kind = Precision::Kind::Fp32;
    bool fp32Grads = false;
    bool planRecipe = false;
    if (anyAuto) {
        const bool bf16 = (bf16On && *bf16On) || (bfloat16On && *bfloat16On);
        const bool fp16 = fp16On && *fp16On;
        if (bf16)
            kind = Precision::Kind::Bf16;
        else if (fp16)
            kind = Precision::Kind::Fp16;
        else
            planRecipe = true; // the plan's own recipe decides
        autos.push_back("bf16/fp16 enabled = the plan's precision");
    } else {
        if ((*bf16On || *bfloat16On) && *fp16On)
            d.warnings.emplace_back("bf16.enabled and fp16.enabled are both true (DeepSpeed "
                                    "refuses that): the plan uses bf16");
        if (*bf16On || *bfloat16On)
            kind = Precision::Kind::Bf16;
        else if (*fp16On)
            kind = Precision::Kind::Fp16;
    }
    if (j.contains("data_types") && j["data_types"].is_object()) {
        const nlohmann::json& dt = j["data_types"].value("grad_accum_dtype", nlohmann::json());
        fp32Grads = dt.is_string() && dt.get<std::string>() == "fp32";
    }
    // bf16.bf16_master_weights_and_grads drops the fp32 master copy (and keeps bf16 gradients);
    // bf16_optimizer_states keeps Adam's moments in bf16 too (runtime/precision_config.py,
    // v0.19.5). Both: 2 + 2 + 2 x 2 = 8 bytes per parameter (bf16-pure).
    const std::optional<bool> bf16Master = switchOf(j, "bf16", "bf16_master_weights_and_grads");
    const std::optional<bool> bf16States = switchOf(j, "bf16", "bf16_optimizer_states");
    const bool masterInBf16 = bf16Master.value_or(false) && kind == Precision::Kind::Bf16;
    if (masterInBf16 && bf16States.value_or(false)) {
        t["recipe"] = "bf16-pure";
    } else if (masterInBf16) {
        t["recipe"] = { { "name", "DeepSpeed bf16 master weights and gradients, fp32 Adam" },
            { "weights", 2 }, { "gradients", 2 }, { "master", 0 }, { "optimizer", 8 } };
    } else if (!planRecipe) {
        t["recipe"] = recipeIdFor(kind, fp32Grads && kind == Precision::Kind::Bf16);
    } else if (fp32Grads && t["recipe"] == "bf16-mixed-16") {
        t["recipe"] = "bf16-mixed-18";
    }
    if (bf16States.value_or(false) && !masterInBf16)
        d.warnings.emplace_back("bf16.bf16_optimizer_states needs bf16_master_weights_and_grads "
                                "and bf16 (DeepSpeed asserts it): read as fp32 optimizer state");
    if (!autos.empty())
        d.warnings.push_back(fmt::format("\"auto\" values resolved as the Hugging Face Trainer "
                                         "does, from the plan: {}",
            fmt::join(autos, "; ")));

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
    listUnread(
        zero, "zero_optimization", { "stage", "offload_optimizer", "offload_param" }, ignored);
    for (const char* section : { "offload_optimizer", "offload_param" })
        if (zero.contains(section))
            listUnread(
                zero[section], std::string("zero_optimization.") + section, { "device" }, ignored);
    for (const char* section : { "bf16", "bfloat16" })
        if (j.contains(section))
            listUnread(j[section], section,
                { "enabled", "bf16_master_weights_and_grads", "bf16_optimizer_states" }, ignored);
    if (j.contains("fp16"))
        listUnread(j["fp16"], "fp16", { "enabled" }, ignored);
    if (j.contains("data_types"))
        listUnread(j["data_types"], "data_types", { "grad_accum_dtype" }, ignored);
    if (!ignored.empty())
        d.warnings.push_back(
            fmt::format("not part of an Envelope plan, not read: {}", shortList(ignored, ", ")));
    d.warnings.push_back(fmt::format("DeepSpeed's config does not name the sequence length: "
                                     "training.seq_len is the default plan's {}",
        t["seq_len"].dump()));
    return ImportedPlan { planText(d), std::move(d.warnings) };
}

} // namespace exportdetail
} // namespace envelope
