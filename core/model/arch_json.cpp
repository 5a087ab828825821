// JSON form of a model architecture: the plan's full-architecture object, preset overrides and
// the bare parameter count. Every value is checked for type and range; errors name the JSON
// path and the allowed range (design.md, "Plan JSON").
#include "model/arch_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "base/json_fields.h"

namespace envelope {
namespace {

using nlohmann::json;

std::string join(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

// The offending value as the user wrote it, shortened for error messages; reads only the
// few dozen bytes it shows (json_fields.h).
std::string shown(const json& v)
{
    return shortJson(v, 40);
}

Expected<std::int64_t> readInt(
    const json& v, const std::string& path, std::int64_t min, std::int64_t max)
{
    const std::string range = fmt::format("must be an integer in {}..{}", min, max);
    double x = 0;
    if (v.is_number_integer() || v.is_number_unsigned()) {
        x = v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>())
                                   : static_cast<double>(v.get<std::int64_t>());
    } else if (v.is_number_float()) {
        x = v.get<double>();
        if (!std::isfinite(x) || x != std::floor(x))
            return Error { path, fmt::format("{}, got {}", range, shown(v)) };
    } else {
        return Error { path, fmt::format("{}, got {}", range, shown(v)) };
    }
    if (x < static_cast<double>(min) || x > static_cast<double>(max))
        return Error { path, fmt::format("{}, got {}", range, shown(v)) };
    return static_cast<std::int64_t>(x);
}

// An integer key of an architecture object: its allowed range and where it goes.
struct IntKey {
    const char* key;
    std::int64_t min, max;
    std::function<void(std::int64_t)> set;
};

// Reads each key present in `object`; the first out-of-range value is the error.
template <std::size_t N>
std::optional<Error> readIntKeys(
    const json& object, const std::string& path, const IntKey (&keys)[N])
{
    for (const IntKey& k : keys) {
        if (!object.contains(k.key))
            continue;
        auto v = readInt(object.at(k.key), join(path, k.key), k.min, k.max);
        if (!v)
            return v.error();
        k.set(*v);
    }
    return std::nullopt;
}

Expected<bool> readBool(const json& v, const std::string& path)
{
    if (!v.is_boolean())
        return Error { path, fmt::format("must be true or false, got {}", shown(v)) };
    return v.get<bool>();
}

// A real number in [min, max] (finite).
Expected<double> readNumber(const json& v, const std::string& path, double min, double max)
{
    const double x = v.is_number() ? v.get<double>() : NAN;
    if (!(x >= min && x <= max))
        return Error { path, fmt::format("must be a number in {}..{}, got {}", min, max, shown(v)) };
    return x;
}

std::optional<Error> unknownKeys(
    const json& object, const std::string& path, const std::set<std::string>& allowed)
{
    std::string unknown;
    for (const auto& item : object.items())
        if (!allowed.count(item.key()))
            unknown += (unknown.empty() ? "" : ", ") + item.key();
    if (unknown.empty())
        return std::nullopt;
    std::string names;
    for (const std::string& k : allowed)
        names += (names.empty() ? "" : " ") + k;
    return Error { path, fmt::format("unknown key(s) {}; allowed: {}", unknown, names) };
}

const std::set<std::string> kArchKeys = { "name", "layers", "hidden", "ffn_hidden", "ffn", "heads",
    "kv_heads", "head_dim", "vocab", "tied_embeddings", "norm", "qkv_bias", "linear_bias",
    "max_positions", "learned_positions", "dropout", "sliding_window", "moe", "mla",
    "attention_pattern", "attention_chunk", "linear_attention", "qk_norm", "sandwich_norms",
    "attention_sinks", "attention_output_gate", "vision_params", "mtp_layers", "rope_theta",
    "partial_rotary_factor", "rope_scaling" };
const std::set<std::string> kRopeScalingKeys = { "type", "factor",
    "original_max_position_embeddings", "low_freq_factor", "high_freq_factor", "beta_fast",
    "beta_slow", "mscale", "mscale_all_dim" };
const std::pair<RopeScalingKind, const char*> kRopeKinds[] = { { RopeScalingKind::Llama3, "llama3" },
    { RopeScalingKind::Yarn, "yarn" }, { RopeScalingKind::Linear, "linear" } };
const std::set<std::string> kMoeKeys = { "experts", "top_k", "shared_experts", "expert_ffn_hidden",
    "dense_layers", "router_bias", "layer_step", "shared_expert_ffn_hidden", "shared_expert_gate" };
const std::set<std::string> kLinearKeys
    = { "kind", "key_heads", "value_heads", "key_head_dim", "value_head_dim", "conv_kernel",
          "state_dtype" };

// The names of LayerAttention and QkNorm in plan JSON.
const std::pair<LayerAttention, const char*> kLayerKinds[] = { { LayerAttention::Full, "full" },
    { LayerAttention::Sliding, "sliding" }, { LayerAttention::Chunked, "chunked" },
    { LayerAttention::Linear, "linear" } };
const std::pair<QkNorm, const char*> kQkNorms[]
    = { { QkNorm::None, "none" }, { QkNorm::PerHead, "per_head" }, { QkNorm::PerLayer, "per_layer" } };
const std::set<std::string> kMlaKeys
    = { "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
          "index_heads", "index_head_dim", "index_topk" };

// Llama's FFN rule (8/3 h rounded to 256) for gated FFNs, 4h for plain ones (GPT-2).
std::int64_t defaultFfnHidden(const ModelArch& a)
{
    if (a.ffn == FfnKind::Plain)
        return 4 * a.hidden;
    return std::max<std::int64_t>(
        256, std::llround(8.0 * static_cast<double>(a.hidden) / 3.0 / 256.0) * 256);
}

int defaultHeadDim(const ModelArch& a)
{
    return a.heads > 0 ? static_cast<int>(a.hidden / a.heads) : 0;
}

// A head_dim derived as hidden / heads is 0 when heads > hidden; the error belongs to heads,
// the key the user wrote, not to a head_dim they never wrote.
std::optional<Error> headsWithinHidden(const ModelArch& a, const std::string& path)
{
    if (a.heads <= a.hidden)
        return std::nullopt;
    return Error { join(path, "heads"),
        fmt::format("must be at most hidden ({}) when head_dim is not given (head_dim = hidden / "
                    "heads), got {}",
            a.hidden, a.heads) };
}

// Reads the keys present in `object` into `m` (moe). `fresh`: no earlier MoE to build on.
std::optional<Error> readMoe(
    MoeConfig& m, const json& object, const std::string& path, bool fresh, std::int64_t ffnHidden)
{
    if (!object.is_object())
        return Error { path, fmt::format("must be an object or null, got {}", shown(object)) };
    if (auto e = unknownKeys(object, path, kMoeKeys))
        return e;
    if (fresh) {
        for (const char* key : { "experts", "top_k" })
            if (!object.contains(key))
                return Error { join(path, key), "is required" };
        m.expertFfnHidden = ffnHidden; // Mixtral: each expert is a full-width FFN
    }
    const IntKey ints[] = {
        { "experts", 1, 100000, [&](std::int64_t x) { m.experts = static_cast<int>(x); } },
        { "top_k", 1, 100000, [&](std::int64_t x) { m.topK = static_cast<int>(x); } },
        { "shared_experts", 0, 100000,
            [&](std::int64_t x) { m.sharedExperts = static_cast<int>(x); } },
        { "expert_ffn_hidden", 1, 10000000, [&](std::int64_t x) { m.expertFfnHidden = x; } },
        { "dense_layers", 0, 1000, [&](std::int64_t x) { m.denseLayers = static_cast<int>(x); } },
        { "layer_step", 1, 1000, [&](std::int64_t x) { m.layerStep = static_cast<int>(x); } },
        { "shared_expert_ffn_hidden", 0, 10000000,
            [&](std::int64_t x) { m.sharedExpertFfnHidden = x; } },
    };
    if (auto e = readIntKeys(object, path, ints))
        return e;
    const std::pair<const char*, bool*> bools[]
        = { { "router_bias", &m.routerBias }, { "shared_expert_gate", &m.sharedExpertGate } };
    for (const auto& [key, field] : bools) {
        if (!object.contains(key))
            continue;
        auto v = readBool(object.at(key), join(path, key));
        if (!v)
            return v.error();
        *field = *v;
    }
    return std::nullopt;
}

std::optional<Error> readMla(
    MlaConfig& m, const json& object, const std::string& path, bool fresh, int headDim)
{
    if (!object.is_object())
        return Error { path, fmt::format("must be an object or null, got {}", shown(object)) };
    if (auto e = unknownKeys(object, path, kMlaKeys))
        return e;
    if (fresh) {
        if (!object.contains("kv_lora_rank"))
            return Error { join(path, "kv_lora_rank"), "is required" };
        m.qkNopeHeadDim = headDim;
        m.vHeadDim = headDim;
    }
    const std::pair<const char*, int*> ints[] = { { "q_lora_rank", &m.qLoraRank },
        { "kv_lora_rank", &m.kvLoraRank }, { "qk_rope_head_dim", &m.qkRopeHeadDim },
        { "qk_nope_head_dim", &m.qkNopeHeadDim }, { "v_head_dim", &m.vHeadDim },
        { "index_heads", &m.indexHeads }, { "index_head_dim", &m.indexHeadDim },
        { "index_topk", &m.indexTopK } };
    for (const auto& [key, field] : ints) {
        if (!object.contains(key))
            continue;
        auto v = readInt(object.at(key), join(path, key), 0, 1000000);
        if (!v)
            return v.error();
        *field = static_cast<int>(*v);
    }
    // The sparse indexer is all three or none.
    const bool anyIndex = m.indexHeads > 0 || m.indexHeadDim > 0 || m.indexTopK > 0;
    if (anyIndex && !m.sparse())
        for (const auto& [key, value] : { std::pair { "index_heads", m.indexHeads },
                 std::pair { "index_head_dim", m.indexHeadDim }, std::pair { "index_topk", m.indexTopK } })
            if (value <= 0)
                return Error { join(path, key),
                    "must be 1..1000000 when the sparse indexer's other keys are given (index_heads, "
                    "index_head_dim and index_topk: DeepSeek-V3.2's 64, 128 and 2048)" };
    return std::nullopt;
}

std::optional<Error> readLinear(
    LinearAttentionConfig& l, const json& object, const std::string& path, bool fresh)
{
    if (!object.is_object())
        return Error { path, fmt::format("must be an object or null, got {}", shown(object)) };
    if (auto e = unknownKeys(object, path, kLinearKeys))
        return e;
    if (fresh)
        for (const char* key : { "key_heads", "value_heads", "key_head_dim", "value_head_dim" })
            if (!object.contains(key))
                return Error { join(path, key), "is required" };
    if (object.contains("kind")) {
        const json& kind = object.at("kind");
        const std::string id = kind.is_string() ? kind.get<std::string>() : std::string();
        if (id == "gated-deltanet")
            l.kind = LinearAttentionConfig::Kind::GatedDeltaNet;
        else if (id == "lightning")
            l.kind = LinearAttentionConfig::Kind::Lightning;
        else
            return Error { join(path, "kind"),
                fmt::format("must be \"gated-deltanet\" or \"lightning\", got {}", shown(kind)) };
    }
    if (object.contains("state_dtype")) {
        const json& dtype = object.at("state_dtype");
        const std::string id = dtype.is_string() ? dtype.get<std::string>() : std::string();
        if (id != "model" && id != "float32")
            return Error { join(path, "state_dtype"),
                fmt::format("must be \"model\" or \"float32\", got {}", shown(dtype)) };
        l.float32State = id == "float32";
    }
    const std::pair<const char*, int*> ints[] = { { "key_heads", &l.keyHeads },
        { "value_heads", &l.valueHeads }, { "key_head_dim", &l.keyHeadDim },
        { "value_head_dim", &l.valueHeadDim }, { "conv_kernel", &l.convKernel } };
    for (const auto& [key, field] : ints) {
        if (!object.contains(key))
            continue;
        auto v = readInt(object.at(key), join(path, key), std::string(key) == "conv_kernel" ? 0 : 1,
            100000);
        if (!v)
            return v.error();
        *field = static_cast<int>(*v);
    }
    return std::nullopt;
}

// "rope_scaling": {"type": "llama3" | "yarn" | "linear", "factor", ...}; every key is read
// afresh (an override replaces the whole object).
std::optional<Error> readRopeScaling(RopeScaling& r, const json& object, const std::string& path)
{
    if (!object.is_object())
        return Error { path, fmt::format("must be an object or null, got {}", shown(object)) };
    if (auto e = unknownKeys(object, path, kRopeScalingKeys))
        return e;
    for (const char* key : { "type", "factor" })
        if (!object.contains(key))
            return Error { join(path, key), "is required" };
    const json& type = object.at("type");
    const std::string text = type.is_string() ? type.get<std::string>() : std::string();
    const auto* kind = std::find_if(std::begin(kRopeKinds), std::end(kRopeKinds),
        [&](const auto& k) { return text == k.second; });
    if (kind == std::end(kRopeKinds))
        return Error { join(path, "type"),
            fmt::format("must be \"llama3\", \"yarn\" or \"linear\", got {}", shown(type)) };
    RopeScaling out;
    out.kind = kind->first;
    auto factor = readNumber(object.at("factor"), join(path, "factor"), 1, 1e6);
    if (!factor)
        return factor.error();
    out.factor = *factor;
    if (object.contains("original_max_position_embeddings")) {
        auto n = readInt(object.at("original_max_position_embeddings"),
            join(path, "original_max_position_embeddings"), 1, 100000000);
        if (!n)
            return n.error();
        out.originalPositions = *n;
    }
    const std::pair<const char*, std::optional<double>*> optional[] = {
        { "low_freq_factor", &out.lowFreqFactor }, { "high_freq_factor", &out.highFreqFactor },
        { "beta_fast", &out.betaFast }, { "beta_slow", &out.betaSlow }, { "mscale", &out.mscale },
        { "mscale_all_dim", &out.mscaleAllDim } };
    for (const auto& [key, field] : optional) {
        if (!object.contains(key))
            continue;
        auto x = readNumber(object.at(key), join(path, key), 0, 1e6);
        if (!x)
            return x.error();
        *field = *x;
    }
    r = out;
    return std::nullopt;
}

// "attention_pattern": a list of "full" / "sliding" / "chunked" / "linear", repeated over the
// layers; [] is every layer by sliding_window.
std::optional<Error> readPattern(std::vector<LayerAttention>& out, const json& v, const std::string& path)
{
    const std::string allowed = "must be a list of \"full\", \"sliding\", \"chunked\" or \"linear\" (1..1000 entries, repeated over the layers)";
    if (!v.is_array() || v.size() > 1000)
        return Error { path, fmt::format("{}, got {}", allowed, shown(v)) };
    std::vector<LayerAttention> kinds;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string text = v[i].is_string() ? v[i].get<std::string>() : std::string();
        const auto* found = std::find_if(std::begin(kLayerKinds), std::end(kLayerKinds),
            [&](const auto& k) { return text == k.second; });
        if (found == std::end(kLayerKinds))
            return Error { fmt::format("{}[{}]", path, i),
                fmt::format("must be \"full\", \"sliding\", \"chunked\" or \"linear\", got {}", shown(v[i])) };
        kinds.push_back(found->first);
    }
    out = std::move(kinds);
    return std::nullopt;
}

// Reads every architecture key present in `object` into `a`. Keys not present keep their value
// in `a`; the caller derives defaults afterwards.
std::optional<Error> readArchKeys(ModelArch& a, const json& object, const std::string& path)
{
    if (object.contains("name")) {
        const json& v = object.at("name");
        if (!v.is_string())
            return Error { join(path, "name"), fmt::format("must be a string, got {}", shown(v)) };
        a.name = v.get<std::string>();
    }
    const IntKey ints[] = {
        { "layers", 1, 1000, [&](std::int64_t x) { a.layers = static_cast<int>(x); } },
        { "hidden", 1, 1000000, [&](std::int64_t x) { a.hidden = x; } },
        { "ffn_hidden", 1, 10000000, [&](std::int64_t x) { a.ffnHidden = x; } },
        { "heads", 1, 100000, [&](std::int64_t x) { a.heads = static_cast<int>(x); } },
        { "kv_heads", 1, 100000, [&](std::int64_t x) { a.kvHeads = static_cast<int>(x); } },
        { "head_dim", 1, 100000, [&](std::int64_t x) { a.headDim = static_cast<int>(x); } },
        { "vocab", 1, 100000000, [&](std::int64_t x) { a.vocab = x; } },
        { "max_positions", 0, 100000000, [&](std::int64_t x) { a.maxPositions = x; } },
        { "sliding_window", 0, 100000000,
            [&](std::int64_t x) { a.slidingWindow = static_cast<int>(x); } },
        { "attention_chunk", 0, 100000000,
            [&](std::int64_t x) { a.attentionChunk = static_cast<int>(x); } },
        { "mtp_layers", 0, 16, [&](std::int64_t x) { a.mtpLayers = static_cast<int>(x); } },
    };
    if (auto e = readIntKeys(object, path, ints))
        return e;
    const std::pair<const char*, bool*> bools[] = { { "tied_embeddings", &a.tiedEmbeddings },
        { "qkv_bias", &a.qkvBias }, { "linear_bias", &a.linearBias },
        { "learned_positions", &a.learnedPositions }, { "sandwich_norms", &a.sandwichNorms },
        { "attention_sinks", &a.attentionSinks },
        { "attention_output_gate", &a.attentionOutputGate } };
    for (const auto& [key, field] : bools) {
        if (!object.contains(key))
            continue;
        auto v = readBool(object.at(key), join(path, key));
        if (!v)
            return v.error();
        *field = *v;
    }
    if (object.contains("ffn")) {
        const json& v = object.at("ffn");
        const std::string text = v.is_string() ? v.get<std::string>() : std::string();
        if (text == "gated" || text == "swiglu" || text == "geglu")
            a.ffn = FfnKind::Gated;
        else if (text == "plain" || text == "gelu" || text == "relu")
            a.ffn = FfnKind::Plain;
        else
            return Error { join(path, "ffn"),
                fmt::format("must be \"gated\" (swiglu, geglu) or \"plain\" (gelu, relu), got {}",
                    shown(v)) };
    }
    if (object.contains("norm")) {
        const json& v = object.at("norm");
        const std::string text = v.is_string() ? v.get<std::string>() : std::string();
        if (text == "rmsnorm")
            a.norm = NormKind::RmsNorm;
        else if (text == "layernorm")
            a.norm = NormKind::LayerNorm;
        else
            return Error { join(path, "norm"),
                fmt::format("must be \"rmsnorm\" or \"layernorm\", got {}", shown(v)) };
    }
    if (object.contains("attention_pattern"))
        if (auto e = readPattern(a.attentionPattern, object.at("attention_pattern"),
                join(path, "attention_pattern")))
            return e;
    if (object.contains("qk_norm")) {
        const json& v = object.at("qk_norm");
        const std::string text = v.is_string() ? v.get<std::string>() : std::string();
        const auto* found = std::find_if(std::begin(kQkNorms), std::end(kQkNorms),
            [&](const auto& k) { return text == k.second; });
        if (found == std::end(kQkNorms))
            return Error { join(path, "qk_norm"),
                fmt::format("must be \"none\", \"per_head\" or \"per_layer\", got {}", shown(v)) };
        a.qkNorm = found->first;
    }
    if (object.contains("vision_params")) {
        const json& v = object.at("vision_params");
        const double x = v.is_number() ? v.get<double>() : NAN;
        if (!(x >= 0 && x <= 1e15) || x != std::floor(x))
            return Error { join(path, "vision_params"),
                fmt::format("must be a whole parameter count in 0..1e15, got {}", shown(v)) };
        a.visionParams = x;
    }
    if (object.contains("rope_theta")) {
        // 0: not stated (the engine's default base applies).
        auto x = readNumber(object.at("rope_theta"), join(path, "rope_theta"), 0, 1e12);
        if (!x)
            return x.error();
        a.ropeTheta = *x;
    }
    if (object.contains("partial_rotary_factor")) {
        const json& v = object.at("partial_rotary_factor");
        const double x = v.is_number() ? v.get<double>() : NAN;
        if (!(x > 0 && x <= 1))
            return Error { join(path, "partial_rotary_factor"),
                fmt::format("must be a fraction in (0, 1], got {}", shown(v)) };
        a.ropeFraction = x;
    }
    if (object.contains("rope_scaling")) {
        const json& v = object.at("rope_scaling");
        if (v.is_null()) {
            a.ropeScaling.reset();
        } else {
            RopeScaling r;
            if (auto e = readRopeScaling(r, v, join(path, "rope_scaling")))
                return e;
            a.ropeScaling = r;
        }
    }
    if (object.contains("dropout")) {
        const json& v = object.at("dropout");
        const double x = v.is_number() ? v.get<double>() : NAN;
        if (!(x >= 0 && x < 1))
            return Error { join(path, "dropout"),
                fmt::format("must be a probability in [0, 1), got {}", shown(v)) };
        a.dropout = x;
    }
    return std::nullopt;
}

// Reads an optional sub-object `key` into `field`: null removes it, an object updates it (or
// starts it from defaults when absent: `fresh`), a missing key leaves it as it is.
template <class Config, class Read>
std::optional<Error> readOptionalObject(std::optional<Config>& field, const json& object,
    const char* key, const std::string& path, Read read)
{
    if (!object.contains(key))
        return std::nullopt;
    const json& v = object.at(key);
    if (v.is_null()) {
        field.reset();
        return std::nullopt;
    }
    const bool fresh = !field;
    Config config = field.value_or(Config {});
    if (auto e = read(config, v, join(path, key), fresh))
        return e;
    field = config;
    return std::nullopt;
}

// Reads "moe"/"mla" (objects, or null to remove) after the widths are known.
std::optional<Error> readSubObjects(ModelArch& a, const json& object, const std::string& path)
{
    if (auto e = readOptionalObject(a.moe, object, "moe", path,
            [&](MoeConfig& m, const json& v, const std::string& p, bool fresh) {
                return readMoe(m, v, p, fresh, a.ffnHidden);
            }))
        return e;
    if (auto e = readOptionalObject(a.linearAttention, object, "linear_attention", path,
            [&](LinearAttentionConfig& l, const json& v, const std::string& p, bool fresh) {
                return readLinear(l, v, p, fresh);
            }))
        return e;
    return readOptionalObject(a.mla, object, "mla", path,
        [&](MlaConfig& m, const json& v, const std::string& p, bool fresh) {
            return readMla(m, v, p, fresh, a.headDim);
        });
}

Expected<ModelArch> validated(ModelArch a, const std::string& path)
{
    if (auto e = validateArch(a))
        return Error { join(path, e->path), e->message };
    return a;
}

} // namespace

Expected<ModelArch> archFromJson(const json& object, const std::string& path)
{
    if (!object.is_object())
        return Error { path, fmt::format("must be an architecture object, got {}", shown(object)) };
    if (auto e = unknownKeys(object, path, kArchKeys))
        return *e;
    for (const char* key : { "layers", "hidden", "heads", "vocab" })
        if (!object.contains(key))
            return Error { join(path, key), "is required" };
    ModelArch a;
    a.name = "custom architecture";
    if (auto e = readArchKeys(a, object, path))
        return *e;
    if (!object.contains("kv_heads"))
        a.kvHeads = a.heads;
    if (!object.contains("head_dim")) {
        if (auto e = headsWithinHidden(a, path))
            return *e;
        a.headDim = defaultHeadDim(a);
    }
    if (!object.contains("ffn_hidden"))
        a.ffnHidden = defaultFfnHidden(a);
    if (auto e = readSubObjects(a, object, path))
        return *e;
    return validated(std::move(a), path);
}

Expected<ModelArch> applyArchOverrides(
    ModelArch base, const json& overrides, const std::string& path)
{
    if (!overrides.is_object())
        return Error { path, fmt::format("must be an object, got {}", shown(overrides)) };
    // {"preset": id, ...overrides}: the id is the plan reader's business, the rest is ours.
    json keys = overrides;
    keys.erase("preset");
    if (auto e = unknownKeys(keys, path, kArchKeys))
        return *e;
    // Values the base derived from its widths follow a change of those widths, unless stated.
    const bool derivedHeadDim = base.headDim == defaultHeadDim(base);
    const bool mha = base.kvHeads == base.heads;
    const bool derivedFfn = base.ffnHidden == defaultFfnHidden(base);
    ModelArch a = base;
    if (auto e = readArchKeys(a, keys, path))
        return *e;
    if (!keys.contains("head_dim") && derivedHeadDim) {
        if (auto e = headsWithinHidden(a, path))
            return *e;
        a.headDim = defaultHeadDim(a);
    }
    if (!keys.contains("kv_heads") && mha)
        a.kvHeads = a.heads;
    if (!keys.contains("ffn_hidden") && derivedFfn)
        a.ffnHidden = defaultFfnHidden(a);
    if (auto e = readSubObjects(a, keys, path))
        return *e;
    return validated(std::move(a), path);
}

Expected<ModelArch> paramsModelFromJson(const json& object, const std::string& path)
{
    if (!object.is_object())
        return Error { path, fmt::format("must be an object, got {}", shown(object)) };
    if (auto e
        = unknownKeys(object, path, { "params", "layers", "hidden", "heads", "vocab", "name" }))
        return *e;
    if (!object.contains("params"))
        return Error { join(path, "params"), "is required" };
    const json& p = object.at("params");
    const double params = p.is_number() ? p.get<double>() : NAN;
    if (!(params >= 1e6 && params <= 1e15))
        return Error { join(path, "params"),
            fmt::format("must be a parameter count in 1e6..1e15, got {}", shown(p)) };
    std::int64_t stated[4] = { 0, 0, 0, 0 };
    const struct {
        const char* key;
        std::int64_t max;
    } keys[] = { { "layers", 1000 }, { "hidden", 1000000 }, { "heads", 100000 },
        { "vocab", 100000000 } };
    for (int i = 0; i < 4; ++i) {
        if (!object.contains(keys[i].key))
            continue;
        auto v = readInt(object.at(keys[i].key), join(path, keys[i].key), 1, keys[i].max);
        if (!v)
            return v.error();
        stated[i] = *v;
    }
    if (stated[1] > 0 && stated[2] > 0 && stated[1] % stated[2] != 0)
        return Error { join(path, "hidden"),
            fmt::format("must be a multiple of heads ({}), got {}", stated[2], stated[1]) };
    ModelArch a = standardShapeForParams(
        params, static_cast<int>(stated[0]), stated[1], static_cast<int>(stated[2]), stated[3]);
    if (object.contains("name")) {
        const json& v = object.at("name");
        if (!v.is_string())
            return Error { join(path, "name"), fmt::format("must be a string, got {}", shown(v)) };
        a.name = v.get<std::string>();
    }
    return validated(std::move(a), path);
}

json archToJson(const ModelArch& a)
{
    json j = { { "name", a.name }, { "layers", a.layers }, { "hidden", a.hidden },
        { "ffn_hidden", a.ffnHidden }, { "ffn", a.ffn == FfnKind::Gated ? "gated" : "plain" },
        { "heads", a.heads }, { "kv_heads", a.kvHeads }, { "head_dim", a.headDim },
        { "vocab", a.vocab }, { "tied_embeddings", a.tiedEmbeddings },
        { "norm", a.norm == NormKind::RmsNorm ? "rmsnorm" : "layernorm" },
        { "qkv_bias", a.qkvBias }, { "linear_bias", a.linearBias },
        { "max_positions", a.maxPositions }, { "learned_positions", a.learnedPositions },
        { "dropout", a.dropout }, { "sliding_window", a.slidingWindow } };
    if (a.moe) {
        j["moe"] = { { "experts", a.moe->experts }, { "top_k", a.moe->topK },
            { "shared_experts", a.moe->sharedExperts },
            { "expert_ffn_hidden", a.moe->expertFfnHidden }, { "dense_layers", a.moe->denseLayers },
            { "router_bias", a.moe->routerBias } };
        // The issue-23 keys only where they differ from their defaults, so that older plans
        // read back byte for byte.
        if (a.moe->layerStep != 1)
            j["moe"]["layer_step"] = a.moe->layerStep;
        if (a.moe->sharedExpertFfnHidden != 0)
            j["moe"]["shared_expert_ffn_hidden"] = a.moe->sharedExpertFfnHidden;
        if (a.moe->sharedExpertGate)
            j["moe"]["shared_expert_gate"] = true;
    }
    if (!a.attentionPattern.empty()) {
        json kinds = json::array();
        for (LayerAttention kind : a.attentionPattern)
            for (const auto& [k, name] : kLayerKinds)
                if (k == kind)
                    kinds.push_back(name);
        j["attention_pattern"] = kinds;
    }
    if (a.attentionChunk != 0)
        j["attention_chunk"] = a.attentionChunk;
    if (a.linearAttention)
        j["linear_attention"] = { { "key_heads", a.linearAttention->keyHeads },
            { "value_heads", a.linearAttention->valueHeads },
            { "key_head_dim", a.linearAttention->keyHeadDim },
            { "value_head_dim", a.linearAttention->valueHeadDim },
            { "conv_kernel", a.linearAttention->convKernel } };
    // Gated DeltaNet, the first kind, stays unnamed so existing plans read back byte for byte.
    if (a.linearAttention && a.linearAttention->kind == LinearAttentionConfig::Kind::Lightning)
        j["linear_attention"]["kind"] = "lightning";
    if (a.linearAttention && a.linearAttention->float32State)
        j["linear_attention"]["state_dtype"] = "float32";
    if (a.qkNorm != QkNorm::None)
        for (const auto& [k, name] : kQkNorms)
            if (k == a.qkNorm)
                j["qk_norm"] = name;
    if (a.sandwichNorms)
        j["sandwich_norms"] = true;
    if (a.attentionSinks)
        j["attention_sinks"] = true;
    if (a.attentionOutputGate)
        j["attention_output_gate"] = true;
    if (a.mtpLayers != 0)
        j["mtp_layers"] = a.mtpLayers;
    if (a.visionParams != 0)
        j["vision_params"] = static_cast<std::int64_t>(a.visionParams);
    if (a.ropeTheta != 0)
        j["rope_theta"] = a.ropeTheta;
    if (a.ropeFraction != 1)
        j["partial_rotary_factor"] = a.ropeFraction;
    if (a.ropeScaling) {
        const RopeScaling& r = *a.ropeScaling;
        json& o = j["rope_scaling"];
        for (const auto& [k, name] : kRopeKinds)
            if (k == r.kind)
                o["type"] = name;
        o["factor"] = r.factor;
        if (r.originalPositions != 0)
            o["original_max_position_embeddings"] = r.originalPositions;
        const std::pair<const char*, const std::optional<double>*> optional[] = {
            { "low_freq_factor", &r.lowFreqFactor }, { "high_freq_factor", &r.highFreqFactor },
            { "beta_fast", &r.betaFast }, { "beta_slow", &r.betaSlow }, { "mscale", &r.mscale },
            { "mscale_all_dim", &r.mscaleAllDim } };
        for (const auto& [key, field] : optional)
            if (*field)
                o[key] = **field;
    }

    if (a.mla)
        j["mla"] = { { "q_lora_rank", a.mla->qLoraRank }, { "kv_lora_rank", a.mla->kvLoraRank },
            { "qk_rope_head_dim", a.mla->qkRopeHeadDim },
            { "qk_nope_head_dim", a.mla->qkNopeHeadDim }, { "v_head_dim", a.mla->vHeadDim } };
    if (a.mla && a.mla->sparse()) {
        j["mla"]["index_heads"] = a.mla->indexHeads;
        j["mla"]["index_head_dim"] = a.mla->indexHeadDim;
        j["mla"]["index_topk"] = a.mla->indexTopK;
    }
    return j;
}

json paramsModelToJson(const ModelArch& a)
{
    return { { "params", a.declaredParams.value_or(0.0) }, { "layers", a.layers },
        { "hidden", a.hidden }, { "heads", a.heads }, { "vocab", a.vocab }, { "name", a.name } };
}

} // namespace envelope
