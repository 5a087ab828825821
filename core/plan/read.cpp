// readPlan: plan JSON text -> a resolved, validated Plan (design.md, "Plan JSON"). Every error
// names the JSON path of the field and what is allowed; docs/plan-format.md lists every key.
#include <initializer_list>
#include <string>
#include <vector>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/arch_json.h"
#include "base/json_fields.h"
#include "plan/planio.h"
#include "plan/fields.h"
#include "plan/lengths.h"
#include "plan/preset_json.h"

namespace envelope {
namespace {

using namespace planfields;

constexpr int kPlanVersion = 1;

template <class T> std::string knownIds(const std::vector<T>& presets)
{
    std::vector<std::string> ids;
    for (const T& p : presets)
        ids.push_back(p.id);
    return fmt::format("{}", fmt::join(ids, ", "));
}

std::string joinPath(const std::string& base, const std::string& relative)
{
    if (relative.empty() || relative.front() == '/' || base.empty())
        return relative;
    return base.back() == '/' ? base + relative : base + "/" + relative;
}

Expected<ModelChoice> readModel(
    const nlohmann::json& value, const PresetLibrary& presets, const ReadOptions& options)
{
    ModelChoice choice;
    if (value.is_string()) {
        choice.form = ModelChoice::Form::Preset;
        choice.presetId = value.get<std::string>();
        const ModelPreset* preset = presets.findModel(choice.presetId);
        if (!preset)
            return Error { "model",
                fmt::format("unknown model preset \"{}\" (known: {})", choice.presetId,
                    knownIds(presets.models)) };
        choice.arch = preset->arch;
        return choice;
    }
    if (!value.is_object())
        return Error { "model",
            "must be a preset id (a string) or an object, got " + describeJson(value) };

    if (value.contains("preset")) {
        const nlohmann::json& id = value.at("preset");
        if (!id.is_string())
            return Error { "model.preset", "must be a string, got " + describeJson(id) };
        choice.form = ModelChoice::Form::PresetOverrides;
        choice.presetId = id.get<std::string>();
        const ModelPreset* preset = presets.findModel(choice.presetId);
        if (!preset)
            return Error { "model.preset",
                fmt::format("unknown model preset \"{}\" (known: {})", choice.presetId,
                    knownIds(presets.models)) };
        nlohmann::json overrides = value;
        overrides.erase("preset");
        Expected<ModelArch> arch = applyArchOverrides(preset->arch, overrides, "model");
        if (!arch)
            return arch.error();
        choice.overridesJson = overrides.dump();
        choice.arch = std::move(arch).value();
        return choice;
    }

    if (value.contains("hf_config")) {
        choice.form = ModelChoice::Form::HfConfig;
        FieldReader f(value, "model");
        f.string("hf_config", choice.hfConfigPath, false);
        if (auto e = f.finish())
            return *e;
        if (!options.readFile)
            return Error { "model.hf_config",
                "reading a config.json is not available here (no file reader given)" };
        const std::string path = joinPath(options.baseDir, choice.hfConfigPath);
        Expected<std::string> text = options.readFile(path);
        if (!text)
            return Error { "model.hf_config",
                fmt::format("cannot read \"{}\": {}", path, text.error().toString()) };
        Expected<ModelArch> arch = importHfConfig(*text);
        if (!arch)
            return Error { "model.hf_config",
                fmt::format("\"{}\": {}", path, arch.error().toString()) };
        choice.arch = std::move(arch).value();
        return choice;
    }

    if (value.contains("hf_id")) {
        choice.form = ModelChoice::Form::HubId;
        FieldReader f(value, "model");
        f.string("hf_id", choice.hubId, false);
        if (auto e = f.finish())
            return *e;
        if (choice.hubId.empty())
            return Error { "model.hf_id", "must be a Hub id OWNER/NAME or OWNER/NAME@REVISION" };
        if (!options.readHub)
            return Error { "model.hf_id",
                "fetching a Hub config is not available here (no Hub reader given)" };
        Expected<std::string> text = options.readHub(choice.hubId);
        if (!text)
            return Error { "model.hf_id", text.error().toString() };
        Expected<ModelArch> arch = importHfConfig(*text);
        if (!arch)
            return Error { "model.hf_id",
                fmt::format("\"{}\": {}", choice.hubId, arch.error().toString()) };
        choice.arch = std::move(arch).value();
        // Named as the plan names it (the importer's "llama (config.json)" says less).
        choice.arch.name = choice.hubId;
        return choice;
    }

    if (value.contains("params")) {
        choice.form = ModelChoice::Form::Params;
        Expected<ModelArch> arch = paramsModelFromJson(value, "model");
        if (!arch)
            return arch.error();
        choice.arch = std::move(arch).value();
        return choice;
    }

    choice.form = ModelChoice::Form::Architecture;
    Expected<ModelArch> arch = archFromJson(value, "model");
    if (!arch)
        return arch.error();
    choice.arch = std::move(arch).value();
    return choice;
}

Expected<GpuChoice> readGpu(const nlohmann::json& value, const PresetLibrary& presets)
{
    GpuChoice choice;
    if (value.is_string()) {
        choice.presetId = value.get<std::string>();
        const GpuPreset* preset = presets.findGpu(choice.presetId);
        if (!preset)
            return Error { "gpu",
                fmt::format("unknown GPU preset \"{}\" (known: {})", choice.presetId,
                    knownIds(presets.gpus)) };
        choice.gpu = preset->gpu;
        return choice;
    }
    if (!value.is_object())
        return Error { "gpu",
            "must be a preset id (a string) or an object, got " + describeJson(value) };
    choice.gpu.name = "custom GPU";
    FieldReader f(value, "gpu");
    readGpuFields(f, choice.gpu, true);
    if (auto e = f.finish())
        return *e;
    // `"kernels": id` times this GPU's ops from that GPU's measured tables (a 96 GB H100 from
    // "h100-sxm"); without it a custom GPU is timed from its figures alone.
    if (!choice.gpu.kernelsId.empty()) {
        choice.gpu.kernels = presets.findKernels(choice.gpu.kernelsId);
        if (!choice.gpu.kernels)
            return Error { "gpu.kernels",
                fmt::format("unknown kernel table \"{}\" (known: {})", choice.gpu.kernelsId,
                    presets.kernelIds()) };
    }
    return choice;
}

Expected<RecipeChoice> readRecipe(const nlohmann::json& value, const PresetLibrary& presets)
{
    RecipeChoice choice;
    if (value.is_string()) {
        choice.presetId = value.get<std::string>();
        const RecipePreset* preset = presets.findRecipe(choice.presetId);
        if (!preset)
            return Error { "training.recipe",
                fmt::format("unknown recipe \"{}\" (known: {})", choice.presetId,
                    knownIds(presets.recipes)) };
        choice.recipe = preset->recipe;
        return choice;
    }
    if (!value.is_object())
        return Error { "training.recipe",
            "must be a recipe id (a string) or {\"weights\", \"gradients\", \"master\", "
            "\"optimizer\"} in bytes per parameter, got "
                + describeJson(value) };
    Expected<Recipe> recipe = customRecipeFromJson(value, "training.recipe");
    if (!recipe)
        return recipe.error();
    choice.recipe = std::move(recipe).value();
    return choice;
}

void readActivationModel(FieldReader& f, ActivationModel& model)
{
    const nlohmann::json* v = f.get("activation_model");
    if (!v)
        return;
    if (v->is_string() && v->get<std::string>() == "tensors") {
        model.kind = ActivationModel::Kind::Tensors;
        return;
    }
    if (!v->is_object()) {
        f.fail(f.pathOf("activation_model"),
            "must be \"tensors\" or {\"bytes_per_sbh_per_layer\": k x bytes}, got "
                + describeJson(*v));
        return;
    }
    FieldReader inner(*v, f.pathOf("activation_model"));
    inner.require("bytes_per_sbh_per_layer");
    inner.number("bytes_per_sbh_per_layer", model.bytesPerSbhPerLayer, Range::above(0, 10'000));
    if (auto e = inner.finish())
        f.fail(*e);
    else
        model.kind = ActivationModel::Kind::SimpleSbh;
}

constexpr std::pair<LoraConfig::Target, const char*> kLoraTargets[] = {
    { LoraConfig::Q, "q" }, { LoraConfig::K, "k" }, { LoraConfig::V, "v" }, { LoraConfig::O, "o" },
    { LoraConfig::Gate, "gate" }, { LoraConfig::Up, "up" }, { LoraConfig::Down, "down" },
};

void readLora(const nlohmann::json& value, FieldReader& parent, LoraConfig& lora)
{
    const std::string path = parent.pathOf("lora");
    if (!value.is_object()) {
        parent.fail(path,
            "must be {\"rank\", \"alpha\", \"targets\", \"base_bits\", \"double_quant\"}, got "
                + describeJson(value));
        return;
    }
    FieldReader f(value, path);
    LoraConfig out;
    out.enabled = true;
    f.integer("rank", out.rank, 1, 65536);
    f.number("alpha", out.alpha, Range::above(0, 1e6));
    f.integer("base_bits", out.baseBits, 4, 16);
    if (!f.failed() && out.baseBits != 4 && out.baseBits != 8 && out.baseBits != 16)
        f.fail(f.pathOf("base_bits"), fmt::format("must be 16, 8 or 4, got {}", out.baseBits));
    f.boolean("double_quant", out.doubleQuant);
    if (const nlohmann::json* targets = f.get("targets")) {
        out.targets = 0;
        const auto bad = [&](const nlohmann::json& v) {
            f.fail(f.pathOf("targets"),
                "must be a non-empty array of \"q\", \"k\", \"v\", \"o\", \"gate\", \"up\", "
                "\"down\", got "
                    + describeJson(v));
        };
        if (!targets->is_array() || targets->empty())
            bad(*targets);
        else
            for (const nlohmann::json& t : *targets) {
                unsigned bit = 0;
                for (const auto& [target, name] : kLoraTargets)
                    if (t.is_string() && t.get<std::string>() == name)
                        bit = target;
                if (!bit) {
                    bad(t);
                    break;
                }
                out.targets |= bit;
            }
    }
    if (auto e = f.finish())
        parent.fail(*e);
    else
        lora = out;
}

// An array of names, each one flag of `table` (training.recompute_ops, training.fp8_activations).
void readFlags(FieldReader& f, const char* key,
    std::initializer_list<std::pair<unsigned, const char*>> table, unsigned& out)
{
    const nlohmann::json* v = f.get(key);
    if (!v)
        return;
    std::string allowed;
    for (const auto& [flag, name] : table)
        allowed += fmt::format("{}\"{}\"", allowed.empty() ? "" : ", ", name);
    const auto bad = [&](const nlohmann::json& what) {
        f.fail(f.pathOf(key),
            fmt::format("must be an array of {}, got {}", allowed, describeJson(what)));
    };
    if (!v->is_array()) {
        bad(*v);
        return;
    }
    unsigned flags = 0;
    for (const nlohmann::json& item : *v) {
        unsigned bit = 0;
        for (const auto& [flag, name] : table)
            if (item.is_string() && item.get<std::string>() == name)
                bit = flag;
        if (!bit) {
            bad(item);
            return;
        }
        flags |= bit;
    }
    out = flags;
}

void readTraining(
    const nlohmann::json& value, const PresetLibrary& presets, TrainingConfig& c, FieldReader& root)
{
    FieldReader f(value, "training");
    if (const nlohmann::json* recipe = f.get("recipe")) {
        Expected<RecipeChoice> choice = readRecipe(*recipe, presets);
        if (!choice)
            f.fail(choice.error());
        else
            c.recipe = std::move(choice).value();
    }
    ReadVisitor v { f };
    visitTrainingSetup(c, v);
    readActivationModel(f, c.activationModel);
    if (const nlohmann::json* overhead = f.get("overhead")) {
        FieldReader o(*overhead, f.pathOf("overhead"));
        ReadVisitor ov { o };
        visitOverhead(c.overhead, ov);
        if (auto e = o.finish())
            f.fail(*e);
    }
    visitTrainingObserved(c, v);
    if (const nlohmann::json* framework = f.get("framework")) {
        const FrameworkProfile* profile
            = framework->is_string() ? presets.findFramework(framework->get<std::string>()) : nullptr;
        if (profile)
            c.framework = *profile;
        else
            f.fail(f.pathOf("framework"),
                fmt::format("must be one of {}, got {}", knownIds(presets.frameworks),
                    describeJson(*framework)));
    }
    if (const nlohmann::json* version = f.get("framework_version")) {
        // A version row of the framework's profile (presets/frameworks.json: what changed and
        // its source commit); the base profile when the plan names none.
        const FrameworkProfile* row = nullptr;
        std::string known;
        for (const FrameworkProfile& v : c.framework.versions) {
            known += (known.empty() ? "" : ", ") + v.version;
            if (version->is_string() && v.version == version->get<std::string>())
                row = &v;
        }
        if (row) {
            FrameworkProfile applied = *row;
            applied.versions = c.framework.versions;
            c.framework = std::move(applied);
        } else if (known.empty()) {
            f.fail(f.pathOf("framework_version"),
                fmt::format("framework \"{}\" has no version rows, got {}", c.framework.id,
                    describeJson(*version)));
        } else {
            f.fail(f.pathOf("framework_version"),
                fmt::format("must be one of {} for framework \"{}\", got {}", known, c.framework.id,
                    describeJson(*version)));
        }
    }
    f.boolean("compile", c.compile);
    if (const nlohmann::json* schedule = f.get("pp_schedule")) {
        const std::string id = schedule->is_string() ? schedule->get<std::string>() : "";
        if (id == "1f1b")
            c.ppSchedule = PpSchedule::OneFOneB;
        else if (id == "zb1p")
            c.ppSchedule = PpSchedule::ZeroBubble;
        else if (id == "dualpipe")
            c.ppSchedule = PpSchedule::DualPipe;
        else
            f.fail(f.pathOf("pp_schedule"),
                "must be \"1f1b\", \"zb1p\" or \"dualpipe\", got " + describeJson(*schedule));
    }
    readFlags(f, "recompute_ops",
        { { RecomputeNorm, "norm" }, { RecomputeMlaUp, "mla_up" }, { RecomputeSwiglu, "swiglu" } },
        c.recomputeOps);
    readFlags(f, "fp8_activations",
        { { Fp8MoeInputs, "moe_inputs" }, { Fp8SwigluInputs, "swiglu_inputs" },
            { Fp8AttentionOutput, "attention_output" } },
        c.fp8Activations);
    // The allocator setting (the framework launcher's default unless the plan says), and with it
    // the fragmentation share unless the plan's overhead gives one.
    c.expandableSegments = c.framework.expandableSegments;
    f.boolean("expandable_segments", c.expandableSegments);
    const nlohmann::json* overheadJson = value.is_object() ? &value : nullptr;
    const bool fragmentationGiven = overheadJson && overheadJson->contains("overhead")
        && (*overheadJson)["overhead"].is_object()
        && (*overheadJson)["overhead"].contains("fragmentation");
    if (!fragmentationGiven)
        c.overhead.fragmentation = c.expandableSegments ? c.framework.fragmentationExpandable
                                                        : c.framework.fragmentation;
    // The framework's default kernel efficiency when the plan gives none (issue 12: throughput
    // at the framework's default efficiency, presets/frameworks.json).
    // A plan that states `mfu` overrides the op timing with it (issue 22: MFU is an output).
    c.mfuOverride = value.contains("mfu");
    if (!c.mfuOverride)
        c.mfu = c.framework.kernelEfficiency;
    f.boolean("async_tp", c.asyncTp);
    for (const auto& [key, out] : { std::pair { "overlap_grad_reduce", &c.overlapGradReduce },
             std::pair { "overlap_param_gather", &c.overlapParamGather } }) {
        if (f.get(key)) {
            bool on = false;
            f.boolean(key, on);
            *out = on;
        }
    }
    f.integer("hsdp_shard", c.hsdpShard, 0, planfields::kMaxGpus);
    // training.stage_layers: one non-negative layer count per pipeline stage (checked against
    // pp and the model's layers in validation, where both are known).
    // null (what a search's --set writes when it changes pp) is the default split.
    const nlohmann::json* stages = f.get("stage_layers");
    if (stages && !stages->is_null()) {
        std::vector<int> counts;
        bool ok = stages->is_array() && !stages->empty()
            && stages->size() <= static_cast<std::size_t>(planfields::kMaxParallel);
        if (ok)
            for (const nlohmann::json& n : *stages) {
                if (!n.is_number_integer() || n.get<long long>() < 0
                    || n.get<long long>() > 100'000) {
                    ok = false;
                    break;
                }
                counts.push_back(static_cast<int>(n.get<long long>()));
            }
        if (ok)
            c.stageLayers = std::move(counts);
        else
            f.fail(f.pathOf("stage_layers"),
                "must be an array of one layer count 0..100000 per pipeline stage (pp entries, "
                "first stage first), got "
                    + describeJson(*stages));
    }
    if (const nlohmann::json* hfu = f.get("hfu_convention")) {
        const std::string id = hfu->is_string() ? hfu->get<std::string>() : std::string();
        if (id == "forward" || id == "korthikanti")
            c.hfuConvention = id == "forward" ? HfuConvention::Forward : HfuConvention::Korthikanti;
        else
            f.fail(f.pathOf("hfu_convention"),
                "must be \"forward\" or \"korthikanti\", got " + describeJson(*hfu));
    }
    f.boolean("optimizer_in_backward", c.optimizerInBackward);
    // training.activation_offload: false, true (every layer of each stage) or N (the first N
    // layers of each stage, Megatron --cpu-offloading-num-layers).
    if (const nlohmann::json* offload = f.get("activation_offload")) {
        if (offload->is_boolean()) {
            c.activationOffload = offload->get<bool>();
            c.activationOffloadLayers = 0;
        } else if (offload->is_number_integer() && offload->get<long long>() >= 1
            && offload->get<long long>() <= 100'000) {
            c.activationOffload = true;
            c.activationOffloadLayers = static_cast<int>(offload->get<long long>());
        } else {
            f.fail(f.pathOf("activation_offload"),
                "must be false, true (every layer) or a layer count 1..100000, got "
                    + describeJson(*offload));
        }
    }
    if (const nlohmann::json* lora = f.get("lora"))
        readLora(*lora, f, c.lora);
    if (const nlohmann::json* loss = f.get("loss")) {
        if (!loss->is_string() || !parseLossKind(loss->get<std::string>(), c.loss)
            || c.loss == LossKind::Default)
            f.fail(f.pathOf("loss"),
                "must be \"eager\", \"chunked\", \"fused\" or \"compiled\", got "
                    + describeJson(*loss));
    }
    if (auto e = f.finish())
        root.fail(*e);
}

template <class Section, class Visit>
void readSection(FieldReader& root, const char* key, Section& section, Visit visit)
{
    const nlohmann::json* value = root.get(key);
    if (!value)
        return;
    FieldReader f(*value, key);
    ReadVisitor v { f };
    visit(section, v);
    if (auto e = f.finish())
        root.fail(*e);
}

// serving.workload.input_tokens / output_tokens: N, {"mean", "p90"} or {"histogram"}; a
// log-normal wider than kMaxLogNormalP90OverMean needs a histogram.
constexpr std::size_t kMaxHistogramBins = 10'000;

std::optional<Error> readLength(const nlohmann::json& v, const std::string& path, LengthDistribution& out)
{
    if (v.is_number()) {
        int tokens = 0;
        if (auto e = readInteger(v, path, 1, kMaxTokens, tokens))
            return e;
        out = {};
        out.form = LengthDistribution::Form::Fixed;
        out.fixed = tokens;
        return std::nullopt;
    }
    if (!v.is_object())
        return Error { path,
            "must be a token count, {\"mean\": m, \"p90\": x} or {\"histogram\": [[tokens, weight], "
            "...]}, got " + describeJson(v) };
    LengthDistribution d;
    FieldReader f(v, path);
    if (v.contains("histogram")) {
        d.form = LengthDistribution::Form::Histogram;
        const nlohmann::json* h = f.get("histogram");
        const std::string hp = f.pathOf("histogram");
        if (!h->is_array() || h->empty() || h->size() > kMaxHistogramBins)
            return Error { hp,
                fmt::format("must be an array of 1 to {} [tokens, weight] pairs, got {}",
                    kMaxHistogramBins, describeJson(*h)) };
        double total = 0;
        for (std::size_t i = 0; i < h->size(); ++i) {
            const nlohmann::json& bin = (*h)[i];
            const std::string bp = fmt::format("{}[{}]", hp, i);
            if (!bin.is_array() || bin.size() != 2)
                return Error { bp, "must be a [tokens, weight] pair, got " + describeJson(bin) };
            int tokens = 0;
            double weight = 0;
            if (auto e = readInteger(bin[0], bp + "[0]", 1, kMaxTokens, tokens))
                return e;
            if (auto e = readNumber(bin[1], bp + "[1]", Range::closed(0, 1e12), weight))
                return e;
            total += weight;
            d.histogram.emplace_back(tokens, weight);
        }
        if (!(total > 0))
            return Error { hp, "the weights must not all be 0" };
    } else {
        d.form = LengthDistribution::Form::MeanP90;
        if (!f.require("mean") || !f.require("p90"))
            return f.finish();
        f.number("mean", d.mean, Range::closed(1, kMaxTokens));
        f.number("p90", d.p90, Range::closed(1, kMaxTokens));
        if (!f.failed() && d.p90 < d.mean)
            f.fail(f.pathOf("p90"),
                fmt::format("must be at least the mean ({}), got {}", d.mean, d.p90));
        if (!f.failed() && d.p90 > kMaxLogNormalP90OverMean * d.mean)
            f.fail(f.pathOf("p90"),
                fmt::format("a log-normal's p90 is at most {}x its mean ({:.0f} here), got {}; give "
                            "a \"histogram\" for a wider spread",
                    kMaxLogNormalP90OverMean, kMaxLogNormalP90OverMean * d.mean, d.p90));
    }
    if (auto e = f.finish())
        return e;
    out = std::move(d);
    return std::nullopt;
}

void readWorkload(FieldReader& serving, const ServingConfig& config, std::optional<ServingWorkload>& out)
{
    const nlohmann::json* value = serving.get("workload");
    if (!value || value->is_null())
        return;
    FieldReader f(*value, serving.pathOf("workload"));
    ServingWorkload w;
    if (const nlohmann::json* in = f.require("input_tokens"))
        if (auto e = readLength(*in, f.pathOf("input_tokens"), w.input))
            f.fail(*e);
    if (const nlohmann::json* o = f.require("output_tokens"))
        if (auto e = readLength(*o, f.pathOf("output_tokens"), w.output))
            f.fail(*e);
    const bool hasConcurrency = value->is_object() && value->contains("concurrency")
        && !value->at("concurrency").is_null();
    const bool hasRate = value->is_object() && value->contains("request_rate")
        && !value->at("request_rate").is_null();
    if (hasConcurrency && hasRate)
        f.fail(f.path(), "give \"concurrency\" (users in a closed loop) or \"request_rate\" "
                         "(Poisson arrivals per second), not both");
    else if (!hasConcurrency && !hasRate && value->is_object())
        f.fail(f.path(), "needs \"concurrency\" (users in a closed loop) or \"request_rate\" "
                         "(Poisson arrivals per second)");
    if (hasConcurrency) {
        int c = 0;
        if (f.integer("concurrency", c, 1, 10'000'000))
            w.concurrency = c;
    } else {
        f.get("concurrency");
    }
    f.optionalNumber("request_rate", w.requestRate, Range::closed(1e-6, 1e9));
    f.number("prefix_hit_rate", w.prefixHitRate, Range::closed(0, 0.999));
    if (!f.failed()) {
        const double longest = longestTokens(w.input) + longestTokens(w.output);
        if (longest > config.context)
            f.fail(f.path(),
                fmt::format("the longest request ({} input + {} output tokens{}) exceeds "
                            "serving.context = {} (the engine's max_model_len)",
                    longestTokens(w.input), longestTokens(w.output),
                    w.input.form == LengthDistribution::Form::MeanP90
                            || w.output.form == LengthDistribution::Form::MeanP90
                        ? ", at the means"
                        : "",
                    config.context));
    }
    if (auto e = f.finish()) {
        serving.fail(*e);
        return;
    }
    out = std::move(w);
}

void readSlo(FieldReader& serving, std::optional<ServingSlo>& out)
{
    const nlohmann::json* value = serving.get("slo");
    if (!value || value->is_null())
        return;
    FieldReader f(*value, serving.pathOf("slo"));
    ServingSlo slo;
    const Range seconds = Range::closed(1e-6, 1e6);
    f.optionalNumber("ttft_p50_s", slo.ttftP50S, seconds);
    f.optionalNumber("ttft_p90_s", slo.ttftP90S, seconds);
    f.optionalNumber("ttft_p99_s", slo.ttftP99S, seconds);
    f.optionalNumber("tpot_p50_s", slo.tpotP50S, seconds);
    f.optionalNumber("tpot_p90_s", slo.tpotP90S, seconds);
    f.optionalNumber("tpot_p99_s", slo.tpotP99S, seconds);
    if (!f.failed() && value->is_object() && !slo.any())
        f.fail(f.path(), "names no objective: give ttft_p90_s and/or tpot_p90_s (or p50 / p99)");
    if (auto e = f.finish()) {
        serving.fail(*e);
        return;
    }
    out = slo;
}

// A version string's numeric parts ("0.4.6" -> 0, 4, 6); empty when it is not one.
std::vector<long> versionParts(const std::string& text)
{
    std::vector<long> parts;
    std::size_t i = 0;
    const std::string t = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? text.substr(1) : text;
    while (i < t.size() && parts.size() < 8) {
        std::size_t j = i;
        while (j < t.size() && t[j] >= '0' && t[j] <= '9' && j - i < 9)
            ++j;
        if (j == i)
            return {};
        parts.push_back(std::stol(t.substr(i, j - i)));
        if (j == t.size())
            return parts;
        if (t[j] != '.')
            return {}; // "0.10.1rc1", "main": not a release number
        i = j + 1;
    }
    return {};
}

// serving.engine_version and the engine's own memory keys. The profile is resolved by
// resolveEngine: the highest version row not above the plan's version, the lowest when it is
// older than every row, from presets/engines.json.
void readEngine(FieldReader& serving, ServingConfig& c)
{
    serving.optionalNumber("mem_fraction_static", c.memFractionStatic, Range::closed(0.01, 1));
    serving.optionalNumber(
        "free_gpu_memory_fraction", c.freeGpuMemoryFraction, Range::closed(0.01, 1));
    if (const nlohmann::json* v = serving.get("engine_version")) {
        if (!v->is_string() || versionParts(v->get<std::string>()).empty())
            serving.fail(serving.pathOf("engine_version"),
                fmt::format("must be a release number such as \"0.5\" or \"0.4.6\", got {}",
                    describeJson(*v)));
        else
            c.engineVersion = v->get<std::string>();
    }
}

// serving.speculative: {"kind", "tokens", "acceptance"} and, for kind "draft", the draft model
// in any form `model` takes (its errors name serving.speculative.draft_model).
void readSpeculative(FieldReader& serving, const PresetLibrary& presets, const ReadOptions& options,
    std::optional<ServingSpeculative>& out)
{
    const nlohmann::json* value = serving.get("speculative");
    if (!value || value->is_null())
        return;
    FieldReader f(*value, serving.pathOf("speculative"));
    ServingSpeculative s;
    ReadVisitor v { f };
    if (value->is_object())
        for (const char* key : { "kind", "tokens", "acceptance" })
            if (!value->contains(key))
                f.fail(f.pathOf(key), "missing: serving.speculative needs kind, tokens and acceptance");
    visitSpeculative(s, v);
    if (const nlohmann::json* draft = f.get("draft_model")) {
        Expected<ModelChoice> choice = readModel(*draft, presets, options);
        if (!choice) {
            Error e = choice.error();
            e.path = f.pathOf("draft_model") + e.path.substr(std::min<std::size_t>(e.path.size(), 5));
            f.fail(e);
        } else {
            s.draftModel = std::move(choice).value();
        }
    }
    if (auto e = f.finish()) {
        serving.fail(*e);
        return;
    }
    out = std::move(s);
}

// serving.kv_format / weight_format: a format sets its bits when serving.kv_bits /
// weight_bits are not given, and must agree with them when they are.
void readFormats(ReadVisitor& v, ServingConfig& c)
{
    v.enumeration("kv_format", c.kvFormat, kKvFormatIds);
    v.enumeration("weight_format", c.weightFormat, kWeightFormatIds);
    if (v.f.failed())
        return;
    const auto agree = [&](const char* formatKey, const char* bitsKey, int formatBits, int& bits,
                           std::string_view id) {
        if (formatBits == 0)
            return;
        if (!v.f.get(bitsKey)) {
            bits = formatBits;
            return;
        }
        if (bits != formatBits)
            v.f.fail(v.f.pathOf(formatKey),
                fmt::format("\"{}\" stores {} bits a value, but serving.{} = {}: give one of "
                            "the two, or both agreeing",
                    id, formatBits, bitsKey, bits));
    };
    agree("kv_format", "kv_bits", kvCacheFormatBits(c.kvFormat), c.kvBits, kvCacheFormatId(c.kvFormat));
    agree("weight_format", "weight_bits", weightFormatBits(c.weightFormat), c.weightBits,
        weightFormatId(c.weightFormat));
    // A module group's own format: "same" (the default) or a stored format; "auto" has no
    // bits of its own to give.
    const auto groupFormat = [&](const char* key, std::optional<WeightFormat>& out) {
        const nlohmann::json* value = v.f.get(key);
        if (!value || value->is_null())
            return;
        WeightFormat format {};
        if (value->is_string() && value->get<std::string>() == "same")
            out.reset();
        else if (value->is_string() && parseWeightFormat(value->get<std::string>(), format)
            && format != WeightFormat::Auto)
            out = format;
        else
            v.f.fail(v.f.pathOf(key), fmt::format("must be {}, got {}", kWeightGroupFormatsAllowed,
                                          describeJson(*value)));
    };
    groupFormat("attention_weight_format", c.attentionWeightFormat);
    groupFormat("expert_weight_format", c.expertWeightFormat);
}

// serving.disaggregation: {"prefill": {workers, tp, ep, dp}, "decode": {...}}, both pools given.
void readDisaggregation(FieldReader& serving, std::optional<ServingDisaggregation>& out)
{
    const nlohmann::json* value = serving.get("disaggregation");
    if (!value || value->is_null())
        return;
    FieldReader f(*value, serving.pathOf("disaggregation"));
    ServingDisaggregation d;
    for (auto [key, pool] : { std::pair { "prefill", &d.prefill }, std::pair { "decode", &d.decode } }) {
        const nlohmann::json* one = f.require(key);
        if (!one)
            continue;
        FieldReader pf(*one, f.pathOf(key));
        ReadVisitor pv { pf };
        visitServingPool(*pool, pv);
        if (auto e = pf.finish())
            f.fail(*e);
    }
    if (auto e = f.finish()) {
        serving.fail(*e);
        return;
    }
    out = d;
}

} // namespace

// The engine's profile at the nearest modelled version: run for every plan, with or without a
// `serving` section, so a plan reads back equal to itself after writePlan.
void resolveServingEngine(const PresetLibrary& presets, ServingConfig& c)
{
    const EngineProfile* engine = presets.findEngine(servingEngineId(c.engine));
    if (!engine) {
        c.engineProfile = {};
        return;
    }
    const EngineProfile* chosen = engine;
    if (!engine->versions.empty()) {
        const std::vector<long> want
            = versionParts(c.engineVersion.empty() ? engine->defaultVersion : c.engineVersion);
        const EngineProfile* lowest = nullptr; // for a version older than every row
        const EngineProfile* best = nullptr;
        std::vector<long> lowestParts, bestParts;
        for (const EngineProfile& row : engine->versions) {
            const std::vector<long> have = versionParts(row.version);
            if (!lowest || have < lowestParts) {
                lowest = &row;
                lowestParts = have;
            }
            if (have <= want && (!best || bestParts < have)) {
                best = &row;
                bestParts = have;
            }
        }
        chosen = best ? best : lowest;
    }
    c.engineProfile = *chosen;
    c.engineProfile.versions.clear();
}


Expected<Plan> readPlan(
    std::string_view jsonText, const PresetLibrary& presets, const ReadOptions& options)
{
    Expected<nlohmann::json> parsed = parseJsonText(jsonText);
    if (!parsed)
        return parsed.error();
    const nlohmann::json& root = *parsed;
    if (!root.is_object())
        return Error { "", "a plan must be a JSON object, got " + describeJson(root) };

    Plan plan;
    // The default recipe when "training.recipe" is absent: the one design.md's example names.
    if (const RecipePreset* recipe = presets.findRecipe("bf16-mixed-16")) {
        plan.training.recipe.presetId = recipe->id;
        plan.training.recipe.recipe = recipe->recipe;
    }
    if (const FrameworkProfile* generic = presets.findFramework("generic"))
        plan.training.framework = *generic;

    FieldReader f(root, "");
    // Format and version first: a newer file is refused before its new keys look like typos.
    std::string format = "envelope.plan";
    f.string("format", format);
    if (!f.failed() && format != "envelope.plan")
        f.fail("format", fmt::format("must be \"envelope.plan\", got \"{}\"", format));
    int version = kPlanVersion;
    f.integer("version", version, 1, 1'000'000);
    if (!f.failed() && version > kPlanVersion)
        f.fail("version",
            fmt::format("this plan is envelope.plan version {}; this Envelope "
                        "reads version {} — update Envelope",
                version, kPlanVersion));
    f.string("name", plan.name);

    if (const nlohmann::json* model = f.require("model")) {
        Expected<ModelChoice> choice = readModel(*model, presets, options);
        if (!choice)
            f.fail(choice.error());
        else
            plan.model = std::move(choice).value();
    }
    if (const nlohmann::json* gpu = f.require("gpu")) {
        Expected<GpuChoice> choice = readGpu(*gpu, presets);
        if (!choice)
            f.fail(choice.error());
        else
            plan.gpu = std::move(choice).value();
    }
    readSection(f, "cluster", plan.cluster, [](Cluster& c, ReadVisitor& v) {
        visitCluster(c, v);
        v.integer("nvlink_domain", c.nvlinkDomain, 0, 100'000);
    });
    if (const nlohmann::json* training = f.get("training"))
        readTraining(*training, presets, plan.training, f);
    readSection(f, "serving", plan.serving, [&](ServingConfig& c, ReadVisitor& v) {
        visitServing(c, v);
        v.enumeration("engine", c.engine, kEngineIds);
        readEngine(v.f, c);
        v.integer("max_num_seqs", c.maxNumSeqs, 1, 10'000'000);
        readFormats(v, c);
        v.integer("ep", c.ep, 1, planfields::kMaxParallel);
        v.boolean("dp_attention", c.dpAttention);
        v.integer("redundant_experts", c.redundantExperts, 0, kMaxRedundantExperts);
        readDisaggregation(v.f, c.disaggregation);
        v.optionalNumber("max_ttft_s", c.maxTtftS, Range::closed(1e-6, 1e6));
        v.optionalNumber("max_itl_s", c.maxItlS, Range::closed(1e-6, 1e6));
        readWorkload(v.f, c, c.workload);
        readSlo(v.f, c.slo);
        readSpeculative(v.f, presets, options, c.speculative);
        // The scheduler: null or absent keeps the engine version's default.
        for (auto [key, out] : { std::pair { "mixed_batches", &c.mixedBatches },
                 std::pair { "chunked_prefill", &c.chunkedPrefill },
                 std::pair { "overlap_scheduler", &c.overlapScheduler } }) {
            const nlohmann::json* value = v.f.get(key);
            if (!value || value->is_null())
                continue;
            if (value->is_boolean())
                *out = value->get<bool>();
            else
                v.f.fail(v.f.pathOf(key),
                    fmt::format("must be true, false or null (the engine's default), got {}",
                        describeJson(*value)));
        }
        v.integer("scheduler_steps", c.schedulerSteps, 1, 64);
    });
    resolveServingEngine(presets, plan.serving);
    readSection(f, "rl", plan.rl, [](RlConfig& c, ReadVisitor& v) { visitRl(c, v); });
    if (auto e = f.finish())
        return *e;
    if (auto e = validatePlan(plan))
        return *e;
    return plan;
}

} // namespace envelope
