// The preset library: presets/*.json embedded at build time (presets_data.h), parsed with the
// same field rules as the plan, and user files merged over them by id.
#include "plan/presets.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/arch_json.h"
#include "base/json_fields.h"
#include "plan/plan.h"
#include "plan/preset_json.h"
#include "plan/presets_data.h"

namespace envelope {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
constexpr int kPresetsVersion = 1;

// Upper bounds that catch unit mistakes (bytes typed as GB, GB/s as Gb/s x 1000) rather than
// limit real hardware: 10 TB of memory, 100 PFLOPS, 100 TB/s, USD 10,000 per GPU-hour.
constexpr double kMaxMemoryBytes = 1e13;
constexpr double kMaxTflops = 1e5;
// Lower bounds that catch unit slips (bytes written in GB, TFLOPS written in PFLOPS or as
// FLOPS/1e12 twice): the smallest accelerator worth planning on has 1 GB and a few TFLOPS, so a
// figure below these is a mistake, and with "> 0" 1e-300 TFLOPS made every time infinite.
constexpr double kMinMemoryBytes = 1e8;
constexpr double kMinTflops = 0.1;
constexpr double kMinGbps = 0.1;
constexpr double kMaxGbps = 1e5;
// Unit slips (issue 11): below 100 MB no accelerator exists, so "memory_bytes": 80 is 80 GB
// typed as a count of gigabytes. Bandwidths above these per-direction ceilings are gigabits
// typed as gigabytes: HBM 30 TB/s (B200 8 TB/s, MI355X 8 TB/s; H200's 4.8 TB/s in bits is
// 38,400), NVLink 2 TB/s (NVLink 5 is 900 GB/s per direction; H100's 450 GB/s in bits is
// 3,600), network 200 GB/s per GPU (a 1.6 Tb/s NIC; the usual 400 Gb/s NIC is 50 GB/s).
constexpr double kMaxHbmGbps = 30'000;
constexpr double kMaxIntraNodeGbps = 2'000;
constexpr double kMaxInterNodeGbps = 200;
// Host link and host memory per GPU: PCIe Gen6 x16 is 128 GB/s per direction, a socket's
// DDR5 under 600 GB/s; 1000 GB/s leaves room for the next generations.
constexpr double kMaxHostGbps = 1'000;
constexpr double kMaxPrice = 1e4;
constexpr double kMaxBytesPerParam = 64;

template <class T> void upsert(std::vector<T>& list, T item)
{
    const auto it = std::find_if(
        list.begin(), list.end(), [&](const T& existing) { return existing.id == item.id; });
    if (it != list.end())
        *it = std::move(item);
    else
        list.push_back(std::move(item));
}

template <class T> const T* findById(const std::vector<T>& list, std::string_view id)
{
    for (const T& item : list)
        if (item.id == id)
            return &item;
    return nullptr;
}

void readRecipeFields(FieldReader& f, Recipe& r)
{
    f.string("name", r.name);
    f.string("description", r.description);
    f.string("source", r.source);
    f.number("weights", r.weightBytes, Range::above(0, kMaxBytesPerParam));
    f.number("gradients", r.gradientBytes, Range::closed(0, kMaxBytesPerParam));
    f.number("master", r.masterBytes, Range::closed(0, kMaxBytesPerParam));
    f.number("moment_bytes", r.momentBytes, Range::closed(0, kMaxBytesPerParam));
    f.number("activation_bytes", r.activationBytes, Range::above(0, kMaxBytesPerParam));
    if (const nlohmann::json* compute = f.get("compute")) {
        if (!compute->is_string() || !parseComputeDtype(compute->get<std::string>(), r.compute))
            f.fail(f.pathOf("compute"),
                "must be \"bf16\", \"fp8\" or \"tf32\", got " + describeJson(*compute));
    }
}

Expected<ModelPreset> modelPresetFromJson(const nlohmann::json& object, const std::string& path)
{
    ModelPreset preset;
    FieldReader f(object, path);
    std::string name;
    f.string("id", preset.id, false);
    f.string("name", name);
    f.string("source", preset.source);
    f.number("published_params", preset.publishedParams, Range::closed(0, 1e15));
    f.number("published_active_params", preset.publishedActiveParams, Range::closed(0, 1e15));
    if (const nlohmann::json* arch = f.require("architecture")) {
        Expected<ModelArch> parsed = archFromJson(*arch, f.pathOf("architecture"));
        if (!parsed)
            f.fail(parsed.error());
        else
            preset.arch = std::move(parsed).value();
    }
    if (auto e = f.finish())
        return *e;
    if (!name.empty())
        preset.arch.name = name;
    if (preset.arch.name.empty())
        preset.arch.name = preset.id;
    return preset;
}

Expected<GpuPreset> gpuPresetFromJson(const nlohmann::json& object, const std::string& path)
{
    GpuPreset preset;
    FieldReader f(object, path);
    f.string("id", preset.id, false);
    f.string("source", preset.source);
    readGpuFields(f, preset.gpu, true);
    if (auto e = f.finish())
        return *e;
    if (preset.gpu.name.empty())
        preset.gpu.name = preset.id;
    return preset;
}

// The version rows of a profile (frameworks, engines): each row names what changed and its
// source, and overrides the base profile's fields: the row is the base object with its keys
// replaced, read by `parse` like any profile, and handed to `keep(profile, version, changes)`.
template <class Parse, class Keep>
std::optional<Error> readVersionRows(const nlohmann::json& object, const nlohmann::json& versions,
    const std::string& path, Parse parse, Keep&& keep)
{
    if (!versions.is_array())
        return Error { path + ".versions", "must be an array of {version, changes, source, ...}" };
    for (std::size_t i = 0; i < versions.size(); ++i) {
        const std::string at = fmt::format("{}.versions[{}]", path, i);
        const nlohmann::json& row = versions[i];
        if (!row.is_object() || !row.contains("version") || !row["version"].is_string()
            || !row.contains("changes") || !row["changes"].is_string() || !row.contains("source")
            || !row["source"].is_string())
            return Error { at,
                "must be an object with \"version\", \"changes\" and \"source\" strings" };
        nlohmann::json merged = object;
        merged.erase("versions");
        for (const auto& [key, value] : row.items())
            if (key != "version" && key != "changes")
                merged[key] = value;
        auto version = parse(merged, at);
        if (!version)
            return version.error();
        keep(std::move(version).value(), row["version"].get<std::string>(),
            row["changes"].get<std::string>());
    }
    return std::nullopt;
}

Expected<FrameworkProfile> frameworkFromJson(const nlohmann::json& object, const std::string& path)
{
    FrameworkProfile p;
    FieldReader f(object, path);
    f.string("id", p.id, false);
    f.string("name", p.name);
    f.string("source", p.source, false);
    const auto enumeration = [&](const char* key, auto& out, auto parse, const char* allowed) {
        const nlohmann::json* v = f.get(key);
        if (v && (!v->is_string() || !parse(v->template get<std::string>(), out)))
            f.fail(f.pathOf(key), fmt::format("must be {}, got {}", allowed, describeJson(*v)));
    };
    enumeration("loss", p.loss, parseLossKind, "\"eager\", \"chunked\", \"fused\" or \"compiled\"");
    enumeration("selective", p.selective, parseSelectivePolicy,
        "\"attention-core\", \"per-op-sac\" or \"full\"");
    f.boolean("eager_kernels", p.eagerKernels);
    f.number("prefetch_layers", p.prefetchLayers, Range::closed(0, 64));
    f.number("grad_bucket_bytes", p.gradBucketBytes, Range::closed(0, kMaxMemoryBytes));
    f.number("overlap_bucket_params", p.overlapBucketParams, Range::closed(0, 1e13));
    f.number("overlap_bucket_params_per_dp", p.overlapBucketParamsPerDp, Range::closed(0, 1e13));
    f.number("optimizer_temp_bytes", p.optimizerTempBytes, Range::closed(0, kMaxBytesPerParam));
    f.boolean("pp_unsharded", p.ppUnsharded);
    f.boolean("sp_gathered_inputs", p.spGatheredInputs);
    f.number("kernel_efficiency", p.kernelEfficiency, Range::closed(0.001, 1));
    enumeration("dp_overlap", p.dpOverlap, parseDpOverlap,
        "\"none\", \"buckets\", \"prefetch\" or \"buckets+prefetch\"");
    f.boolean("shard_over_cp", p.shardOverCp);
    f.number("fp8_weight_cast_bytes", p.fp8WeightCastBytes, Range::closed(0, kMaxBytesPerParam));
    f.boolean("pp_scatter_gather", p.ppScatterGather);
    f.boolean("tp_backward_overlap", p.tpBackwardOverlap);
    f.boolean("compile_loss", p.compileLoss);
    f.boolean("grads_set_to_none", p.gradsSetToNone);
    f.number("fragmentation", p.fragmentation, Range::closed(0, 0.9));
    f.number("fragmentation_expandable", p.fragmentationExpandable, Range::closed(0, 0.9));
    f.boolean("expandable_segments", p.expandableSegments);
    f.boolean("contiguous_state_buffers", p.contiguousStateBuffers);
    f.boolean("pp_p2p_overlap_interleaved", p.ppP2pOverlapInterleaved);
    f.boolean("fp8_saves_linear_inputs", p.fp8SavesLinearInputs);
    f.number("offload_buffer_layers", p.offloadBufferLayers, Range::closed(0, 64));
    const nlohmann::json* versions = f.get("versions");
    if (auto e = f.finish())
        return *e;
    if (p.loss == LossKind::Default)
        return Error { path + ".loss",
            "must be \"eager\", \"chunked\", \"fused\" or \"compiled\"" };
    if (!versions)
        return p;
    if (auto e = readVersionRows(object, *versions, path, frameworkFromJson,
            [&](FrameworkProfile v, std::string version, std::string changes) {
                v.version = std::move(version);
                v.versionChanges = std::move(changes);
                p.versions.push_back(std::move(v));
            }))
        return *e;
    return p;
}

// A serving engine's memory accounting (presets/engines.json): a base profile and version rows,
// each row the base with its keys replaced, like the frameworks' rows.
Expected<EngineProfile> engineFromJson(const nlohmann::json& object, const std::string& path)
{
    EngineProfile p;
    FieldReader f(object, path);
    f.string("id", p.id, false);
    f.string("name", p.name);
    f.string("source", p.source, false);
    f.string("default_version", p.defaultVersion);
    f.number("startup_bytes", p.startupBytes, Range::closed(0, kMaxMemoryBytes));
    f.number("non_torch_bytes", p.nonTorchBytes, Range::closed(0, kMaxMemoryBytes));
    f.number("non_torch_tp_bytes", p.nonTorchTpBytes, Range::closed(0, kMaxMemoryBytes));
    f.number("reserved_speculative_bytes", p.reservedSpeculativeBytes,
        Range::closed(0, kMaxMemoryBytes));
    f.number("free_memory_fraction", p.freeMemoryFraction, Range::closed(0, 1));
    if (const nlohmann::json* v = f.get("mixed_batches")) {
        const std::string id = v->is_string() ? v->get<std::string>() : std::string();
        if (id == "always")
            p.mixedBatches = EngineProfile::Mixing::Always;
        else if (id == "when-chunked")
            p.mixedBatches = EngineProfile::Mixing::WhenChunked;
        else if (id == "never")
            p.mixedBatches = EngineProfile::Mixing::Never;
        else
            f.fail(f.pathOf("mixed_batches"),
                fmt::format("must be \"always\", \"when-chunked\" or \"never\", got {}",
                    describeJson(*v)));
    }
    f.boolean("chunked_prefill", p.chunkedPrefill);
    f.integer("chunked_prefill_above_context", p.chunkedPrefillAboveContext, 0, 100'000'000);
    f.boolean("multi_step_scheduling", p.multiStepScheduling);
    f.boolean("overlap_scheduler", p.overlapScheduler);
    f.string("scheduler_source", p.schedulerSource, false);
    if (const nlohmann::json* v = f.get("recurrent_state_dtype")) {
        const std::string id = v->is_string() ? v->get<std::string>() : std::string();
        if (id == "model" || id == "float32")
            p.float32RecurrentState = id == "float32";
        else
            f.fail(f.pathOf("recurrent_state_dtype"),
                fmt::format("must be \"model\" or \"float32\", got {}", describeJson(*v)));
    }
    f.string("state_source", p.stateSource, false);
    f.number("eager_host_s_per_layer", p.eagerHostSPerLayer, Range::closed(0, 0.01));
    f.string("host_source", p.hostSource, false);
    f.number("request_overhead_s", p.requestOverheadS, Range::closed(0, 10));
    f.string("request_source", p.requestSource, false);
    // [[min tp, fraction], ...] and [[below GiB, base GiB, GiB per tp x pp], ...]
    const auto rows = [&](const char* key, std::size_t width, auto&& take) {
        const nlohmann::json* v = f.get(key);
        if (!v)
            return;
        const auto bad = [&] {
            f.fail(f.pathOf(key),
                fmt::format("must be an array of [{}] rows of non-negative numbers, got {}",
                    width == 2 ? "min tp, fraction" : "below GiB, base GiB, GiB per parallel rank",
                    describeJson(*v)));
        };
        if (!v->is_array() || v->empty() || v->size() > 64)
            return bad();
        for (const nlohmann::json& row : *v) {
            if (!row.is_array() || row.size() != width)
                return bad();
            std::vector<double> x;
            for (const nlohmann::json& n : row) {
                if (!n.is_number() || !std::isfinite(n.get<double>()) || n.get<double>() < 0)
                    return bad();
                x.push_back(n.get<double>());
            }
            if (!take(x))
                return bad();
        }
    };
    rows("mem_fraction_by_tp", 2, [&](const std::vector<double>& x) {
        if (x[0] < 1 || x[0] > 1'000'000 || x[1] <= 0 || x[1] > 1)
            return false;
        p.memFractionByTp.emplace_back(static_cast<int>(x[0]), x[1]);
        return true;
    });
    rows("reserved_by_memory", 3, [&](const std::vector<double>& x) {
        if (x[0] > 1e7 || x[1] > 1e7 || x[2] > 1e4)
            return false;
        p.reservedByMemory.push_back({ x[0], x[1], x[2] });
        return true;
    });
    const nlohmann::json* versions = f.get("versions");
    if (auto e = f.finish())
        return *e;
    if (!versions)
        return p;
    if (auto e = readVersionRows(object, *versions, path, engineFromJson,
            [&](EngineProfile v, std::string version, std::string changes) {
                v.version = std::move(version);
                v.changes = std::move(changes);
                p.versions.push_back(std::move(v));
            }))
        return *e;
    return p;
}

Expected<RecipePreset> recipePresetFromJson(const nlohmann::json& object, const std::string& path)
{
    RecipePreset preset;
    FieldReader f(object, path);
    f.string("id", preset.id, false);
    for (const char* key : { "weights", "gradients", "master", "moment_bytes" })
        f.require(key);
    readRecipeFields(f, preset.recipe);
    if (auto e = f.finish())
        return *e;
    if (preset.recipe.name.empty())
        preset.recipe.name = preset.id;
    return preset;
}

// Reads every entry of one array ("gpus": [...]) with `parse`, then upserts them all, so that a
// file with an error changes nothing.
template <class T, class Parse>
std::optional<Error> readArray(
    const nlohmann::json* array, const std::string& key, Parse parse, std::vector<T>& out)
{
    if (!array)
        return std::nullopt;
    if (!array->is_array())
        return Error { key, "must be an array, got " + describeJson(*array) };
    for (std::size_t i = 0; i < array->size(); ++i) {
        const std::string path = fmt::format("{}[{}]", key, i);
        Expected<T> item = parse((*array)[i], path);
        if (!item)
            return item.error();
        if (findById(out, item->id))
            return Error { path + ".id", "\"" + item->id + "\" appears twice in this file" };
        out.push_back(std::move(item).value());
    }
    return std::nullopt;
}

void upsertKernels(PresetLibrary& library, std::shared_ptr<const KernelTable> table)
{
    for (auto& existing : library.kernels)
        if (existing->gpu == table->gpu) {
            existing = std::move(table);
            return;
        }
    library.kernels.push_back(std::move(table));
}

// Each GPU preset takes the kernel table it names (`"kernels": id`) or, naming none, the
// table measured on a GPU of its own id.
std::optional<Error> attachKernels(PresetLibrary& library)
{
    for (std::size_t i = 0; i < library.gpus.size(); ++i) {
        Gpu& gpu = library.gpus[i].gpu;
        const std::string id = gpu.kernelsId.empty() ? library.gpus[i].id : gpu.kernelsId;
        const auto table = library.findKernels(id);
        if (!table && !gpu.kernelsId.empty())
            return Error { fmt::format("gpus[{}].kernels", i),
                fmt::format("unknown kernel table \"{}\" (known: {})", gpu.kernelsId,
                    library.kernelIds()) };
        gpu.kernels = table;
        gpu.kernelsId = table ? id : std::string();
    }
    return std::nullopt;
}

std::optional<Error> mergeParsed(PresetLibrary& library, const nlohmann::json& root)
{
    FieldReader f(root, "");
    std::string format = "envelope.presets";
    f.string("format", format);
    if (!f.failed() && format != "envelope.presets")
        f.fail("format", "must be \"envelope.presets\", got \"" + format + "\"");
    int version = kPresetsVersion;
    f.integer("version", version, 1, 1 << 20);
    if (!f.failed() && version > kPresetsVersion)
        f.fail("version",
            fmt::format("this file is envelope.presets version {}; this Envelope "
                        "reads version {} — update Envelope",
                version, kPresetsVersion));
    std::string ignored;
    f.string("description", ignored);
    f.string("conventions", ignored);
    const nlohmann::json* models = f.get("models");
    const nlohmann::json* gpus = f.get("gpus");
    const nlohmann::json* recipes = f.get("recipes");
    const nlohmann::json* frameworks = f.get("frameworks");
    const nlohmann::json* engines = f.get("engines");
    const nlohmann::json* kernels = f.get("kernels");
    if (auto e = f.finish())
        return e;
    // "kernels": kernel tables in the form of presets/kernels/*.json (docs/kernel-tables.md),
    // replacing a built-in table of the same "gpu" id.
    if (kernels) {
        if (!kernels->is_array())
            return Error { "kernels", "must be an array of envelope.kernels documents" };
        for (std::size_t i = 0; i < kernels->size(); ++i) {
            const std::string at = fmt::format("kernels[{}]", i);
            Expected<KernelTable> table = parseKernelTable((*kernels)[i].dump(), at);
            if (!table) {
                Error e = table.error();
                e.path = e.path.empty() ? at : at + "." + e.path;
                return e;
            }
            upsertKernels(library, std::make_shared<const KernelTable>(std::move(table).value()));
        }
    }

    std::vector<ModelPreset> newModels;
    std::vector<GpuPreset> newGpus;
    std::vector<RecipePreset> newRecipes;
    if (auto e = readArray(models, "models", modelPresetFromJson, newModels))
        return e;
    if (auto e = readArray(gpus, "gpus", gpuPresetFromJson, newGpus))
        return e;
    if (auto e = readArray(recipes, "recipes", recipePresetFromJson, newRecipes))
        return e;
    for (ModelPreset& m : newModels)
        upsert(library.models, std::move(m));
    for (GpuPreset& g : newGpus)
        upsert(library.gpus, std::move(g));
    std::vector<FrameworkProfile> newFrameworks;
    if (auto e = readArray(frameworks, "frameworks", frameworkFromJson, newFrameworks))
        return e;
    for (RecipePreset& r : newRecipes)
        upsert(library.recipes, std::move(r));
    for (FrameworkProfile& p : newFrameworks)
        upsert(library.frameworks, std::move(p));
    std::vector<EngineProfile> newEngines;
    if (auto e = readArray(engines, "engines", engineFromJson, newEngines))
        return e;
    for (EngineProfile& p : newEngines) {
        ServingEngine known {};
        if (!parseServingEngine(p.id, known))
            return Error { "engines", fmt::format("an engine id must be \"vllm\", \"sglang\", "
                                                  "\"trtllm\" or \"generic\", got \"{}\"", p.id) };
        upsert(library.engines, std::move(p));
    }
    return attachKernels(library);
}

} // namespace

std::string_view computeDtypeId(ComputeDtype dtype)
{
    switch (dtype) {
    case ComputeDtype::Fp8:
        return "fp8";
    case ComputeDtype::Tf32:
        return "tf32";
    case ComputeDtype::Bf16:
        break;
    }
    return "bf16";
}

bool parseComputeDtype(std::string_view id, ComputeDtype& out)
{
    for (ComputeDtype d : { ComputeDtype::Bf16, ComputeDtype::Fp8, ComputeDtype::Tf32 })
        if (computeDtypeId(d) == id) {
            out = d;
            return true;
        }
    return false;
}

double fromScaled(double written, double scale)
{
    return written * scale;
}

double toScaled(double value, double scale)
{
    // value / scale may print as a number that reads back 1 ulp off; the neighbours of the
    // quotient include one that multiplies back exactly whenever value came from a file.
    const double quotient = value / scale;
    double up = quotient, down = quotient;
    for (int i = 0; i < 3; ++i) {
        if (fromScaled(up, scale) == value)
            return up;
        if (fromScaled(down, scale) == value)
            return down;
        up = std::nextafter(up, INFINITY);
        down = std::nextafter(down, -INFINITY);
    }
    return quotient;
}

void readGpuFields(FieldReader& f, Gpu& gpu, bool requireFigures)
{
    if (requireFigures)
        for (const char* key :
            { "memory_bytes", "bf16_tflops", "hbm_gbps", "intra_node_gbps", "inter_node_gbps" })
            f.require(key);
    f.string("name", gpu.name);
    // A positive figure under 100 MB is a size typed in GB ("memory_bytes": 80): say so; any
    // other out-of-range value gets the plain range.
    const nlohmann::json* memory = f.get("memory_bytes");
    const double written = memory && memory->is_number() ? memory->get<double>() : 0.0;
    if (std::isfinite(written) && written > 0 && written < kMinMemoryBytes)
        f.fail(f.pathOf("memory_bytes"),
            fmt::format("must be >= 1e8 bytes (100 MB), got {}: did you mean {} GB = {} bytes?",
                formatNumber(written), formatNumber(written), formatNumber(written * 1e9)));
    else
        f.number("memory_bytes", gpu.memoryBytes, Range::closed(kMinMemoryBytes, kMaxMemoryBytes));
    const auto scaled = [&](const char* key, double& out, Range range, double scale) {
        double written = toScaled(out, scale);
        if (f.number(key, written, range))
            out = fromScaled(written, scale);
        return written;
    };
    // A bandwidth above what any GPU's link carries per direction is read as gigabits typed
    // into a gigabytes field (a 400 Gb/s NIC is 50 GB/s).
    const auto bandwidth = [&](const char* key, double& out, double plausibleMax) {
        const double written = scaled(key, out, Range::closed(kMinGbps, kMaxGbps), kGiga);
        if (f.get(key) && written > plausibleMax)
            f.fail(f.pathOf(key),
                fmt::format("must be <= {} GB/s (bytes per second, one direction), got {}: did "
                            "you mean {} Gb/s = {} GB/s?",
                    formatNumber(plausibleMax), formatNumber(written), formatNumber(written),
                    formatNumber(written / 8)));
    };
    scaled("bf16_tflops", gpu.bf16Flops, Range::closed(kMinTflops, kMaxTflops), kTera);
    scaled("fp8_tflops", gpu.fp8Flops, Range::closed(0, kMaxTflops), kTera);
    // 0 means "no FP8"; anything else must be a real rate.
    if (!f.failed() && gpu.fp8Flops > 0 && gpu.fp8Flops < kMinTflops * kTera)
        f.fail(f.pathOf("fp8_tflops"),
            fmt::format("must be 0 (no FP8) or {}..{}, got {}", formatNumber(kMinTflops),
                formatNumber(kMaxTflops), formatNumber(gpu.fp8Flops / kTera)));
    scaled("fp4_tflops", gpu.fp4Flops, Range::closed(0, kMaxTflops), kTera);
    if (!f.failed() && gpu.fp4Flops > 0 && gpu.fp4Flops < kMinTflops * kTera)
        f.fail(f.pathOf("fp4_tflops"),
            fmt::format("must be 0 (no FP4) or {}..{}, got {}", formatNumber(kMinTflops),
                formatNumber(kMaxTflops), formatNumber(gpu.fp4Flops / kTera)));
    f.integer("nvlink_domain", gpu.nvlinkDomain, 0, 100000);
    bandwidth("hbm_gbps", gpu.hbmBytesPerS, kMaxHbmGbps);
    bandwidth("intra_node_gbps", gpu.intraNodeBytesPerS, kMaxIntraNodeGbps);
    bandwidth("inter_node_gbps", gpu.interNodeBytesPerS, kMaxInterNodeGbps);
    f.number("price_per_hour", gpu.pricePerHour, Range::closed(0, kMaxPrice));
    f.string("kernels", gpu.kernelsId);
    f.number("torch_total_bytes", gpu.torchTotalBytes, Range::closed(0, kMaxMemoryBytes));
    bandwidth("host_link_gbps", gpu.hostLinkBytesPerS, kMaxHostGbps);
    bandwidth("host_memory_gbps", gpu.hostMemoryBytesPerS, kMaxHostGbps);
}

nlohmann::json gpuToJson(const Gpu& gpu)
{
    nlohmann::json j = nlohmann::json::object();
    j["name"] = gpu.name;
    const double memory = gpu.memoryBytes;
    if (memory == std::floor(memory) && memory < 9e15)
        j["memory_bytes"] = static_cast<std::int64_t>(memory);
    else
        j["memory_bytes"] = memory;
    j["bf16_tflops"] = toScaled(gpu.bf16Flops, kTera);
    j["fp8_tflops"] = toScaled(gpu.fp8Flops, kTera);
    if (gpu.fp4Flops > 0)
        j["fp4_tflops"] = toScaled(gpu.fp4Flops, kTera);
    if (gpu.nvlinkDomain > 0)
        j["nvlink_domain"] = gpu.nvlinkDomain;
    j["hbm_gbps"] = toScaled(gpu.hbmBytesPerS, kGiga);
    j["intra_node_gbps"] = toScaled(gpu.intraNodeBytesPerS, kGiga);
    j["inter_node_gbps"] = toScaled(gpu.interNodeBytesPerS, kGiga);
    j["price_per_hour"] = gpu.pricePerHour;
    if (gpu.torchTotalBytes > 0)
        j["torch_total_bytes"] = gpu.torchTotalBytes;
    j["host_link_gbps"] = toScaled(gpu.hostLinkBytesPerS, kGiga);
    j["host_memory_gbps"] = toScaled(gpu.hostMemoryBytesPerS, kGiga);
    if (!gpu.kernelsId.empty())
        j["kernels"] = gpu.kernelsId;
    return j;
}

Expected<Recipe> customRecipeFromJson(const nlohmann::json& object, const std::string& path)
{
    Recipe r;
    r.name = "custom";
    FieldReader f(object, path);
    for (const char* key : { "weights", "gradients", "master", "optimizer" })
        f.require(key);
    readRecipeFields(f, r);
    double optimizer = 0;
    if (f.number("optimizer", optimizer, Range::closed(0, kMaxBytesPerParam)))
        r.optimizerBytes = optimizer;
    if (auto e = f.finish())
        return *e;
    return r;
}

nlohmann::json customRecipeToJson(const Recipe& r)
{
    nlohmann::json j = nlohmann::json::object();
    j["name"] = r.name;
    if (!r.description.empty())
        j["description"] = r.description;
    if (!r.source.empty())
        j["source"] = r.source;
    j["weights"] = r.weightBytes;
    j["gradients"] = r.gradientBytes;
    j["master"] = r.masterBytes;
    j["optimizer"] = r.optimizerBytes.value_or(2 * r.momentBytes);
    j["moment_bytes"] = r.momentBytes;
    j["activation_bytes"] = r.activationBytes;
    j["compute"] = std::string(computeDtypeId(r.compute));
    return j;
}

const ModelPreset* PresetLibrary::findModel(std::string_view id) const
{
    return findById(models, id);
}

const GpuPreset* PresetLibrary::findGpu(std::string_view id) const
{
    return findById(gpus, id);
}

const RecipePreset* PresetLibrary::findRecipe(std::string_view id) const
{
    return findById(recipes, id);
}

const FrameworkProfile* PresetLibrary::findFramework(std::string_view id) const
{
    return findById(frameworks, id);
}

const EngineProfile* PresetLibrary::findEngine(std::string_view id) const
{
    return findById(engines, id);
}

std::shared_ptr<const KernelTable> PresetLibrary::findKernels(std::string_view id) const
{
    for (const auto& table : kernels)
        if (table->gpu == id)
            return table;
    return nullptr;
}

std::string PresetLibrary::kernelIds() const
{
    std::string ids;
    for (const auto& table : kernels)
        ids += (ids.empty() ? "" : ", ") + table->gpu;
    return ids.empty() ? "none" : ids;
}

Expected<PresetLibrary> builtinPresets()
{
    PresetLibrary library;
    const std::pair<const char*, const char*> files[] = {
        { "presets/models.json", presets_data::models },
        { "presets/gpus.json", presets_data::gpus },
        { "presets/recipes.json", presets_data::recipes },
        { "presets/frameworks.json", presets_data::frameworks },
        { "presets/engines.json", presets_data::engines },
    };
    for (std::size_t i = 0; presets_data::kernel_files[i]; ++i) {
        Expected<KernelTable> table
            = parseKernelTable(presets_data::kernel_files[i], presets_data::kernel_names[i]);
        if (!table)
            return table.error();
        upsertKernels(library, std::make_shared<const KernelTable>(std::move(table).value()));
    }
    for (const auto& [origin, text] : files)
        if (auto e = mergePresetFile(library, text, origin))
            return *e;
    library.defaultPlanJson = presets_data::default_plan;
    return library;
}

std::optional<Error> mergePresetFile(
    PresetLibrary& library, std::string_view jsonText, std::string_view origin)
{
    const auto withOrigin = [&](const Error& e) {
        return Error { e.path.empty() ? std::string(origin) : std::string(origin) + ": " + e.path,
            e.message };
    };
    Expected<nlohmann::json> root = parseJsonText(jsonText);
    if (!root)
        return withOrigin(root.error());
    if (auto e = mergeParsed(library, *root))
        return withOrigin(*e);
    return std::nullopt;
}

} // namespace envelope
