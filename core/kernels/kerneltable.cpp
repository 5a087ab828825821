// Reading presets/kernels/*.json (docs/kernel-tables.md). The grids are checked here once, so
// the lookups in timing.cpp index them without further checks.
#include "kernels/kerneltable.h"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_fields.h"

namespace envelope {
namespace {

using nlohmann::json;

constexpr struct {
    GemmDtype dtype;
    std::string_view id;
} kGemmDtypes[] = {
    { GemmDtype::Bf16, "bf16" },
    { GemmDtype::Fp8, "fp8" },
    { GemmDtype::Fp8Block, "fp8_block" },
    { GemmDtype::Mxfp8, "mxfp8" },
    { GemmDtype::Nvfp4, "nvfp4" },
    { GemmDtype::Int4WeightOnly, "int4_wo" },
    { GemmDtype::Int8WeightOnly, "int8_wo" },
};

constexpr struct {
    CollectiveKind kind;
    std::string_view id;
} kCollectives[] = {
    { CollectiveKind::AllReduce, "all_reduce" },
    { CollectiveKind::AllGather, "all_gather" },
    { CollectiveKind::ReduceScatter, "reduce_scatter" },
    { CollectiveKind::AllToAll, "alltoall" },
};

// Grids larger than this are refused: a kernel file is data a user may override, and a lookup
// must stay a handful of comparisons (docs/performance.md).
constexpr std::size_t kMaxAxis = 256;
constexpr std::size_t kMaxGrid = 1u << 20;

class Reader {
public:
    explicit Reader(std::string origin) : m_origin(std::move(origin)) {}

    bool failed() const { return m_error.has_value(); }
    Error error() const { return *m_error; }

    void fail(const std::string& path, const std::string& message)
    {
        if (!m_error)
            m_error = Error { path, message + " (" + m_origin + ")" };
    }

    const json* member(const json& object, const std::string& path, const char* key,
        bool required = true)
    {
        if (failed())
            return nullptr;
        if (!object.is_object()) {
            fail(path, "must be an object");
            return nullptr;
        }
        const auto it = object.find(key);
        if (it == object.end()) {
            if (required)
                fail(childPath(path, key), "is required");
            return nullptr;
        }
        return &*it;
    }

    std::string text(const json& object, const std::string& path, const char* key,
        bool required = true)
    {
        const json* v = member(object, path, key, required);
        if (!v)
            return {};
        if (!v->is_string()) {
            fail(childPath(path, key), "must be a string, got " + describeJson(*v));
            return {};
        }
        return v->get<std::string>();
    }

    double number(const json& object, const std::string& path, const char* key, double lo,
        double hi, double otherwise = 0, bool required = true)
    {
        const json* v = member(object, path, key, required);
        if (!v)
            return otherwise;
        if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < lo
            || v->get<double>() > hi) {
            fail(childPath(path, key),
                fmt::format("must be a number {}..{}, got {}", formatNumber(lo), formatNumber(hi),
                    describeJson(*v)));
            return otherwise;
        }
        return v->get<double>();
    }

    // A strictly ascending axis of positive numbers.
    std::vector<double> axis(const json& object, const std::string& path, const char* key)
    {
        std::vector<double> out;
        const json* v = member(object, path, key);
        if (!v)
            return out;
        const std::string here = childPath(path, key);
        if (!v->is_array() || v->empty() || v->size() > kMaxAxis) {
            fail(here, fmt::format("must be an array of 1..{} numbers", kMaxAxis));
            return out;
        }
        for (const json& x : *v) {
            if (!x.is_number() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>())
                || (!out.empty() && !(x.get<double>() > out.back()))) {
                fail(here, "must hold finite numbers > 0 in strictly ascending order, got "
                        + describeJson(x));
                return {};
            }
            out.push_back(x.get<double>());
        }
        return out;
    }

    // `size` finite positive numbers, each multiplied by `scale`.
    std::vector<double> grid(
        const json& object, const std::string& path, const char* key, std::size_t size, double scale)
    {
        std::vector<double> out;
        const json* v = member(object, path, key);
        if (!v)
            return out;
        const std::string here = childPath(path, key);
        if (!v->is_array() || v->size() != size || size > kMaxGrid) {
            fail(here, fmt::format("must be an array of {} numbers (the product of the axes' "
                                   "lengths)",
                           size));
            return out;
        }
        out.reserve(size);
        for (const json& x : *v) {
            if (!x.is_number() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>())) {
                fail(here, "must hold finite numbers > 0, got " + describeJson(x));
                return {};
            }
            out.push_back(x.get<double>() * scale);
        }
        return out;
    }

    const json* array(const json& object, const std::string& path, const char* key)
    {
        const json* v = member(object, path, key, false);
        if (v && !v->is_array()) {
            fail(childPath(path, key), "must be an array");
            return nullptr;
        }
        return v;
    }

private:
    std::string m_origin;
    std::optional<Error> m_error;
};

std::vector<double> log2Of(const std::vector<double>& values)
{
    std::vector<double> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
        out[i] = std::log2(values[i]);
    return out;
}

std::string itemPath(const char* key, std::size_t i)
{
    return fmt::format("{}[{}]", key, i);
}

} // namespace

std::string_view gemmDtypeId(GemmDtype dtype)
{
    for (const auto& d : kGemmDtypes)
        if (d.dtype == dtype)
            return d.id;
    return "bf16";
}

bool parseGemmDtype(std::string_view id, GemmDtype& out)
{
    for (const auto& d : kGemmDtypes)
        if (d.id == id) {
            out = d.dtype;
            return true;
        }
    return false;
}

std::string_view collectiveId(CollectiveKind kind)
{
    for (const auto& c : kCollectives)
        if (c.kind == kind)
            return c.id;
    return "all_reduce";
}

const GemmTable* KernelTable::findGemm(GemmDtype dtype) const
{
    for (const GemmTable& t : gemm)
        if (t.dtype == dtype)
            return &t;
    return nullptr;
}

const CollectiveTable* KernelTable::findCollective(CollectiveKind op, int gpus, bool custom) const
{
    for (const CollectiveTable& t : collectives)
        if (t.op == op && t.gpus == gpus && t.custom == custom)
            return &t;
    return nullptr;
}

Expected<KernelTable> parseKernelTable(std::string_view jsonText, std::string_view origin)
{
    Expected<json> parsed = parseJsonText(jsonText);
    if (!parsed)
        return Error { parsed.error().path, parsed.error().message + " (" + std::string(origin) + ")" };
    const json& root = *parsed;
    Reader r { std::string(origin) };
    KernelTable t;
    if (r.text(root, "", "format") != "envelope.kernels" && !r.failed())
        r.fail("format", "must be \"envelope.kernels\"");
    if (r.number(root, "", "version", 1, 1e9) > 1 && !r.failed())
        r.fail("version", "is newer than this Envelope reads (1)");
    t.gpu = r.text(root, "", "gpu");
    t.source = r.text(root, "", "source");

    if (const json* list = r.array(root, "", "gemm"))
        for (std::size_t i = 0; i < list->size() && !r.failed(); ++i) {
            const json& e = (*list)[i];
            const std::string path = itemPath("gemm", i);
            GemmTable g;
            const std::string dtype = r.text(e, path, "dtype");
            if (!r.failed() && !parseGemmDtype(dtype, g.dtype))
                r.fail(childPath(path, "dtype"), "unknown GEMM dtype \"" + dtype + "\"");
            g.source = r.text(e, path, "source");
            g.m = r.axis(e, path, "m");
            g.n = r.axis(e, path, "n");
            g.k = r.axis(e, path, "k");
            g.flopsPerS = r.grid(e, path, "tflops", g.m.size() * g.n.size() * g.k.size(), 1e12);
            g.log2M = log2Of(g.m);
            g.log2N = log2Of(g.n);
            g.log2K = log2Of(g.k);
            g.log2FlopsPerS = log2Of(g.flopsPerS);
            t.gemm.push_back(std::move(g));
        }
    // Optional, written by hand and kept by the converter: the maximum achievable matmul rate
    // per format (MAMF). A weight-only table runs bf16 tensor-core matmuls after dequantizing,
    // so the bf16 ceiling bounds it too; the block-scaled 8-bit formats run at the FP8 rate,
    // so the fp8 ceiling bounds them.
    if (const json* list = r.array(root, "", "matmul_ceiling"))
        for (std::size_t i = 0; i < list->size() && !r.failed(); ++i) {
            const json& e = (*list)[i];
            const std::string path = itemPath("matmul_ceiling", i);
            const std::string id = r.text(e, path, "dtype");
            GemmDtype dtype = GemmDtype::Bf16;
            if (!r.failed() && (!parseGemmDtype(id, dtype) || (dtype != GemmDtype::Bf16 && dtype != GemmDtype::Fp8)))
                r.fail(childPath(path, "dtype"), "must be \"bf16\" or \"fp8\", not \"" + id + "\"");
            const double flops = r.number(e, path, "tflops", 1, 1e6) * 1e12;
            const std::string source = r.text(e, path, "source");
            if (r.failed())
                break;
            bool bounds = false;
            for (GemmTable& g : t.gemm) {
                const bool bf16Path = g.dtype == GemmDtype::Bf16 || g.dtype == GemmDtype::Int4WeightOnly
                    || g.dtype == GemmDtype::Int8WeightOnly;
                const bool fp8Path = g.dtype == GemmDtype::Fp8 || g.dtype == GemmDtype::Fp8Block
                    || g.dtype == GemmDtype::Mxfp8;
                if (dtype == GemmDtype::Bf16 ? bf16Path : fp8Path) {
                    g.ceilingFlopsPerS = flops;
                    g.ceilingSource = source;
                    bounds = true;
                }
            }
            if (!bounds)
                r.fail(childPath(path, "dtype"), "no gemm table of dtype \"" + id + "\" to bound");
        }
    if (const json* list = r.array(root, "", "attention_prefill"))
        for (std::size_t i = 0; i < list->size() && !r.failed(); ++i) {
            const json& e = (*list)[i];
            const std::string path = itemPath("attention_prefill", i);
            PrefillAttentionTable a;
            a.dtype = r.text(e, path, "dtype");
            a.headDim = static_cast<int>(r.number(e, path, "head_dim", 1, 4096));
            a.kvRatio = r.number(e, path, "kv_ratio", 1, 1024, 1, false);
            a.source = r.text(e, path, "source");
            a.seq = r.axis(e, path, "seq");
            a.batchHeads = r.axis(e, path, "batch_heads");
            a.flopsPerS = r.grid(e, path, "tflops", a.seq.size() * a.batchHeads.size(), 1e12);
            a.log2Seq = log2Of(a.seq);
            a.log2BatchHeads = log2Of(a.batchHeads);
            a.log2FlopsPerS = log2Of(a.flopsPerS);
            t.prefill.push_back(std::move(a));
        }
    if (const json* list = r.array(root, "", "attention_decode"))
        for (std::size_t i = 0; i < list->size() && !r.failed(); ++i) {
            const json& e = (*list)[i];
            const std::string path = itemPath("attention_decode", i);
            DecodeAttentionTable a;
            a.dtype = r.text(e, path, "dtype");
            a.kvDtype = r.text(e, path, "kv_dtype", false);
            if (a.kvDtype.empty())
                a.kvDtype = a.dtype;
            a.headDim = static_cast<int>(r.number(e, path, "head_dim", 1, 4096));
            a.heads = static_cast<int>(r.number(e, path, "heads", 1, 1 << 16));
            a.kvHeads = static_cast<int>(r.number(e, path, "kv_heads", 1, 1 << 16));
            a.source = r.text(e, path, "source");
            a.batch = r.axis(e, path, "batch");
            a.kvLen = r.axis(e, path, "kv_len");
            a.seconds = r.grid(e, path, "us", a.batch.size() * a.kvLen.size(), 1e-6);
            t.decode.push_back(std::move(a));
        }
    if (const json* list = r.array(root, "", "collectives"))
        for (std::size_t i = 0; i < list->size() && !r.failed(); ++i) {
            const json& e = (*list)[i];
            const std::string path = itemPath("collectives", i);
            CollectiveTable c;
            const std::string op = r.text(e, path, "op");
            bool known = false;
            for (const auto& k : kCollectives)
                if (k.id == op) {
                    c.op = k.kind;
                    known = true;
                }
            if (!known && !r.failed())
                r.fail(childPath(path, "op"), "unknown collective \"" + op + "\"");
            c.gpus = static_cast<int>(r.number(e, path, "gpus", 2, 1 << 16));
            c.custom = r.text(e, path, "kind", false) == "custom";
            c.source = r.text(e, path, "source");
            c.bytes = r.axis(e, path, "bytes");
            c.seconds = r.grid(e, path, "us", c.bytes.size(), 1e-6);
            t.collectives.push_back(std::move(c));
        }
    if (const json* list = r.array(root, "", "notes"))
        for (const json& n : *list)
            if (n.is_string())
                t.notes.push_back(n.get<std::string>());
    // Optional: how this table's step times compare with published runs.
    if (const auto v = root.find("validation"); v != root.end() && !r.failed()) {
        if (!v->is_object()) {
            r.fail("validation", "must be an object");
        } else {
            t.trainingUncertainty
                = r.number(*v, "validation", "training_uncertainty", 0.01, 1.0);
            t.trainingPoints = static_cast<int>(
                r.number(*v, "validation", "training_points", 1, 1e6));
            t.validationSource = r.text(*v, "validation", "source");
        }
    }
    // Optional: grouped expert GEMMs against stacked ones on the same card.
    if (const auto g = root.find("grouped_gemm"); g != root.end() && !r.failed()) {
        if (!g->is_object()) {
            r.fail("grouped_gemm", "must be an object");
        } else {
            t.groupedTimeFactor = r.number(*g, "grouped_gemm", "time_factor", 0.5, 4.0);
            t.groupedWeightStreamFraction
                = r.number(*g, "grouped_gemm", "weight_stream_hbm_fraction", 0.05, 1.0);
            t.groupedSource = r.text(*g, "grouped_gemm", "source");
        }
    }
    // Optional: the fixed time of a memory-bound kernel on the same card, in microseconds.
    if (const auto f = root.find("launch_floor"); f != root.end() && !r.failed()) {
        if (!f->is_object()) {
            r.fail("launch_floor", "must be an object");
        } else {
            t.launchFloorPointwiseS = 1e-6 * r.number(*f, "launch_floor", "pointwise_us", 0.1, 100.0);
            t.launchFloorReductionS = 1e-6 * r.number(*f, "launch_floor", "reduction_us", 0.1, 100.0);
            t.launchFloorSource = r.text(*f, "launch_floor", "source");
        }
    }
    if (r.failed())
        return r.error();
    return t;
}

} // namespace envelope
