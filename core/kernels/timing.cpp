// Timing an op (docs/formulas-compute.md, "Step time from ops").
//
// Tables are read by interpolating achieved throughput linearly in log2 of each axis (the
// curves are close to straight there, as aiconfigurator's perf database interpolates them).
// Outside a table: a dimension below the grid's smallest value is timed as that smallest value
// (launch- and memory-bound shapes take no less time when smaller); above the largest, the
// edge's throughput holds (large shapes saturate). A GEMM table with a "matmul_ceiling" reads
// no faster than it: the GPU's maximum achievable matmul rate, the mean of 100 calls.
#include "kernels/timing.h"

#include <algorithm>
#include <cmath>

#include "base/numeric.h"

namespace envelope {
namespace {

// Position of x on an ascending axis: index i and weight t of i + 1, in log2 space, clamped.
struct Cell {
    std::size_t i = 0;
    double t = 0;
};

Cell locate(const std::vector<double>& axis, double x)
{
    Cell c;
    if (axis.size() < 2 || x <= axis.front())
        return c;
    if (x >= axis.back()) {
        c.i = axis.size() - 2;
        c.t = 1;
        return c;
    }
    const auto it = std::upper_bound(axis.begin(), axis.end(), x);
    c.i = static_cast<std::size_t>(it - axis.begin()) - 1;
    c.t = std::log2(x / axis[c.i]) / std::log2(axis[c.i + 1] / axis[c.i]);
    return c;
}

// The same on an axis already in log2, for a query already in log2.
Cell locateLog(const std::vector<double>& logAxis, double logX)
{
    Cell c;
    if (logAxis.size() < 2 || logX <= logAxis.front())
        return c;
    if (logX >= logAxis.back()) {
        c.i = logAxis.size() - 2;
        c.t = 1;
        return c;
    }
    const auto it = std::upper_bound(logAxis.begin(), logAxis.end(), logX);
    c.i = static_cast<std::size_t>(it - logAxis.begin()) - 1;
    c.t = (logX - logAxis[c.i]) / (logAxis[c.i + 1] - logAxis[c.i]);
    return c;
}

// Trilinear interpolation on a full grid of log2 values with log2 axes: returns the value.
double interpolateLog3(const std::vector<double>& a, const std::vector<double>& b,
    const std::vector<double>& c, const std::vector<double>& logValues, double x, double y, double z)
{
    const Cell ca = locateLog(a, std::log2(x)), cb = locateLog(b, std::log2(y)),
               cc = locateLog(c, std::log2(z));
    const std::size_t nb = b.size(), nc = c.size();
    const std::size_t i1 = a.size() < 2 ? 0 : 1, j1 = b.size() < 2 ? 0 : 1, l1 = c.size() < 2 ? 0 : 1;
    const auto v = [&](std::size_t di, std::size_t dj, std::size_t dl) {
        return logValues[((ca.i + di) * nb + cb.i + dj) * nc + cc.i + dl];
    };
    const double c00 = v(0, 0, 0) + cc.t * (v(0, 0, l1) - v(0, 0, 0));
    const double c01 = v(0, j1, 0) + cc.t * (v(0, j1, l1) - v(0, j1, 0));
    const double c10 = v(i1, 0, 0) + cc.t * (v(i1, 0, l1) - v(i1, 0, 0));
    const double c11 = v(i1, j1, 0) + cc.t * (v(i1, j1, l1) - v(i1, j1, 0));
    const double c0 = c00 + cb.t * (c01 - c00), c1 = c10 + cb.t * (c11 - c10);
    return std::exp2(c0 + ca.t * (c1 - c0));
}

double interpolateLog2(const std::vector<double>& a, const std::vector<double>& b,
    const std::vector<double>& logValues, double x, double y)
{
    const Cell ca = locateLog(a, std::log2(x)), cb = locateLog(b, std::log2(y));
    const std::size_t nb = b.size();
    const std::size_t i1 = a.size() < 2 ? 0 : 1, j1 = b.size() < 2 ? 0 : 1;
    const auto v = [&](std::size_t di, std::size_t dj) { return logValues[(ca.i + di) * nb + cb.i + dj]; };
    const double c0 = v(0, 0) + cb.t * (v(0, j1) - v(0, 0));
    const double c1 = v(i1, 0) + cb.t * (v(i1, j1) - v(i1, 0));
    return std::exp2(c0 + ca.t * (c1 - c0));
}

double at(const Cell& c, std::size_t offset, const std::vector<double>& axis)
{
    return axis.size() < 2 ? 0 : double(c.i + offset);
}

// Bilinear / trilinear interpolation of log2(value) on a full grid.
double interpolate2(const std::vector<double>& a, const std::vector<double>& b,
    const std::vector<double>& values, double x, double y)
{
    const Cell ca = locate(a, x), cb = locate(b, y);
    const std::size_t nb = b.size();
    double sum = 0;
    for (int da = 0; da < 2; ++da)
        for (int db = 0; db < 2; ++db) {
            const double w = (da ? ca.t : 1 - ca.t) * (db ? cb.t : 1 - cb.t);
            if (w == 0)
                continue;
            const std::size_t i = std::size_t(at(ca, da, a)), j = std::size_t(at(cb, db, b));
            sum += w * std::log2(values[i * nb + j]);
        }
    return std::exp2(sum);
}

double interpolate1(const std::vector<double>& a, const std::vector<double>& values, double x)
{
    const Cell c = locate(a, x);
    if (a.size() < 2)
        return values.front();
    return std::exp2((1 - c.t) * std::log2(values[c.i]) + c.t * std::log2(values[c.i + 1]));
}

double peakFor(GemmDtype dtype, const Gpu& gpu)
{
    switch (dtype) {
    case GemmDtype::Bf16:
    case GemmDtype::Int4WeightOnly: // weight-only formats dequantize into bf16 matmuls
    case GemmDtype::Int8WeightOnly:
        return peakFlops(gpu, ComputeDtype::Bf16);
    case GemmDtype::Nvfp4:
        // The GPU's dense FP4 peak where it states one (Blackwell: fp4_tflops), else the FP8
        // peak as a conservative stand-in.
        if (std::isfinite(gpu.fp4Flops) && gpu.fp4Flops > 0)
            return gpu.fp4Flops;
        return peakFlops(gpu, ComputeDtype::Fp8);
    default:
        // FP8 and the block-scaled 8-bit formats (MXFP8 runs at the FP8 rate): the FP8 peak.
        return peakFlops(gpu, ComputeDtype::Fp8);
    }
}

double weightBytesPerElement(GemmDtype dtype)
{
    switch (dtype) {
    case GemmDtype::Bf16:
        return 2;
    case GemmDtype::Nvfp4:
    case GemmDtype::Int4WeightOnly:
        return 0.5625; // 4 bits + one scale per 16-32 elements
    default:
        return 1.03; // 8 bits + scales
    }
}

} // namespace

double busFactor(CollectiveKind kind, int group)
{
    if (group <= 1)
        return 0;
    const double ring = double(group - 1) / group;
    return kind == CollectiveKind::AllReduce ? 2 * ring : ring;
}

OpTime gemmTime(double m, double n, double k, double batch, GemmDtype dtype, const Gpu& gpu,
    const SpecDefaults& defaults)
{
    OpTime r;
    if (!(m > 0 && n > 0 && k > 0 && batch > 0))
        return r;
    const KernelTable* table = gpu.kernels.get();
    const GemmTable* g = table ? table->findGemm(dtype) : nullptr;
    // The roofline of this shape in a format: its FLOPs at the format's peak, or its bytes
    // (activations in bf16, the weights at the format's width) at the HBM rate.
    const auto roofline = [&](GemmDtype d) {
        const double peak = peakFor(d, gpu);
        const double hbm = positiveOrZero(gpu.hbmBytesPerS);
        return std::max(peak > 0 ? 2 * m * n * k / peak : 0.0,
            hbm > 0 ? (2 * m * k + weightBytesPerElement(d) * k * n + 2 * m * n) / hbm : 0.0);
    };
    double scale = 1;
    bool fallback = false;
    if (table && !g && dtype != GemmDtype::Bf16) {
        fallback = true;
        // No measured table for this format: the BF16 table's time scaled by the roofline of
        // the format over BF16's. Compute-bound shapes scale by the peaks; memory-bound ones by
        // the weight bytes (a W4A16 decode GEMM reads 0.28x BF16's bytes: timed as BF16, the
        // GEMMs of a 70B int4 TP-2 decode step took 25.5 ms, above FP8's measured 14.2; now 7.5).
        // Not a measurement of the format.
        g = table->findGemm(GemmDtype::Bf16);
        const double bf16 = roofline(GemmDtype::Bf16);
        scale = bf16 > 0 ? bf16 / roofline(dtype) : 1;
    }
    if (g && !g->flopsPerS.empty()) {
        const double mm = std::max(m, g->m.front()), nn = std::max(n, g->n.front()),
                     kk = std::max(k, g->k.front());
        double tableRate = interpolateLog3(g->log2M, g->log2N, g->log2K, g->log2FlopsPerS, mm, nn, kk);
        // No shape sustains more than the GPU's maximum achievable matmul rate (MAMF).
        if (g->ceilingFlopsPerS > 0)
            tableRate = std::min(tableRate, g->ceilingFlopsPerS);
        const double flopsPerS = tableRate * scale;
        r.seconds = batch * 2 * mm * nn * kk / flopsPerS;
        r.measured = !fallback;
        // Block-scaled FP8 no slower than per-tensor FP8 on the same GPU: its scales add 1/128
        // of the activation bytes and 1/16,384 of the weight bytes. aiconfigurator's fp8_block
        // rows carry a host-side floor the per-tensor rows do not (the grid's smallest shapes
        // read 59 us on H100 and 155 us on B200 against 6-21 us; docs/kernel-tables.md), which a
        // CUDA-graph decode step does not pay; at large shapes the block kernel is the faster.
        if (dtype == GemmDtype::Fp8Block && !fallback)
            if (table->findGemm(GemmDtype::Fp8))
                r.seconds = std::min(r.seconds, gemmTime(m, n, k, batch, GemmDtype::Fp8, gpu, defaults).seconds);
        return r;
    }
    // Roofline at the spec: compute at the large-GEMM efficiency, or reading A, B and writing
    // C at the HBM efficiency, whichever is longer.
    const double peak = peakFor(dtype, gpu) * defaults.gemmEfficiency;
    const double hbm = positiveOrZero(gpu.hbmBytesPerS) * defaults.hbmEfficiency;
    const double compute = peak > 0 ? 2 * m * n * k / peak : 0;
    const double memory
        = hbm > 0 ? (2 * m * k + weightBytesPerElement(dtype) * k * n + 2 * m * n) / hbm : 0;
    r.seconds = batch * std::max(compute, memory);
    return r;
}

OpTime memoryTime(double bytes, const Gpu& gpu, const SpecDefaults& defaults)
{
    const double hbm = positiveOrZero(gpu.hbmBytesPerS) * defaults.hbmEfficiency;
    return { bytes > 0 && hbm > 0 ? bytes / hbm : 0.0, false };
}

double launchFloor(bool reduction, const Gpu& gpu, const SpecDefaults& defaults)
{
    const KernelTable* table = gpu.kernels.get();
    const double measured = table
        ? (reduction ? table->launchFloorReductionS : table->launchFloorPointwiseS)
        : 0.0;
    if (measured > 0)
        return measured;
    return positiveOrZero(reduction ? defaults.reductionLaunchS : defaults.pointwiseLaunchS);
}

std::string launchFloorSource(const Gpu& gpu)
{
    const KernelTable* table = gpu.kernels.get();
    if (table && table->launchFloorPointwiseS > 0 && table->launchFloorReductionS > 0)
        return "measured on this card (presets/kernels/" + gpu.kernelsId + ".json, launch_floor: "
            + table->launchFloorSource + ")";
    return "the lent H100's, the default where a card measured none (SpecDefaults; "
           "presets/kernels/h100-sxm.json, launch_floor)";
}

OpTime collectiveTime(CollectiveKind kind, double bytes, int group, bool intraNode, bool custom,
    const Gpu& gpu, const SpecDefaults& defaults)
{
    OpTime r;
    if (!(bytes > 0) || group <= 1)
        return r;
    const KernelTable* table = gpu.kernels.get();
    const double factor = busFactor(kind, group);
    if (table && intraNode) {
        const CollectiveTable* t = nullptr;
        if (custom)
            t = table->findCollective(kind, group, true);
        if (!t)
            t = table->findCollective(kind, group, false);
        if (t) {
            const double b = std::max(bytes, t->bytes.front());
            // Above the largest measured buffer the bandwidth holds.
            const double edge = std::min(b, t->bytes.back());
            r.seconds = interpolate1(t->bytes, t->seconds, edge) * b / edge;
            r.measured = true;
            return r;
        }
        // A group size with no table (3, 16 in an NVL72 domain): the bus bandwidth of the
        // largest measured group at this size, under the ring factor of `group`.
        const CollectiveTable* largest = nullptr;
        for (const CollectiveTable& c : table->collectives)
            if (c.op == kind && !c.custom && (!largest || c.gpus > largest->gpus))
                largest = &c;
        if (largest) {
            const double b = std::max(bytes, largest->bytes.front());
            const double edge = std::min(b, largest->bytes.back());
            const double seconds = interpolate1(largest->bytes, largest->seconds, edge) * b / edge;
            const double busBw = busFactor(kind, largest->gpus) * b / seconds;
            r.seconds = factor * b / busBw;
            r.measured = true;
            return r;
        }
    }
    const double link = positiveOrZero(intraNode ? gpu.intraNodeBytesPerS : gpu.interNodeBytesPerS)
        * (intraNode ? defaults.intraNodeBusEfficiency : defaults.interNodeBusEfficiency);
    if (link <= 0)
        return r; // a link without a stated bandwidth is not modelled
    r.seconds = (intraNode ? defaults.intraNodeLatencyS : defaults.interNodeLatencyS) + factor * bytes / link;
    return r;
}

OpTime sendRecvTime(double bytes, bool intraNode, const Gpu& gpu, const SpecDefaults& defaults)
{
    const double link = positiveOrZero(intraNode ? gpu.intraNodeBytesPerS : gpu.interNodeBytesPerS)
        * (intraNode ? defaults.intraNodeBusEfficiency : defaults.interNodeBusEfficiency);
    if (!(bytes > 0) || link <= 0)
        return {};
    return { (intraNode ? defaults.intraNodeLatencyS : defaults.interNodeLatencyS) + bytes / link, false };
}

namespace {

OpTime attentionTime(const Op& op, const Gpu& gpu, const SpecDefaults& defaults)
{
    OpTime r;
    const KernelTable* table = gpu.kernels.get();
    if (op.attention == AttentionKind::Decode) {
        // Reading every cached K and V once per step: memory-bound, unless the queries per
        // cached vector outrun the ridge (a speculative verify step of many query tokens, MLA's
        // 128 heads over one latent): then its FLOPs at the attention efficiency set the time.
        // MLA's absorbed decode reads one latent as key and value (headDimV 0): QK^T over its
        // width and AV over nearly the same (DeepSeek-V2 sec. 2.1.2).
        const double dims = op.headDimV > 0 ? op.headDimQk + op.headDimV : 2.0 * op.headDimQk;
        const double decodeFlops = 2 * op.sequences * op.seq * op.kvLen * op.heads * dims;
        const double attentionPeak = peakFlops(gpu, ComputeDtype::Bf16) * defaults.attentionEfficiency;
        const double computeFloor = attentionPeak > 0 ? decodeFlops / attentionPeak : 0.0;
        const double kvBytes = op.sequences * op.kvLen * op.kvHeads * (op.headDimQk + op.headDimV)
            * op.kvBytesPerElement;
        if (table) {
            const DecodeAttentionTable* best = nullptr;
            for (const DecodeAttentionTable& d : table->decode)
                if (!best || (d.kvDtype == "bf16" && best->kvDtype != "bf16"))
                    best = &d;
            if (best && best->kvHeads > 0) {
                // The measured step for this batch and length, scaled by the KV bytes relative
                // to the measured heads (the kernel streams the cache).
                const double measuredBytesPerSeqToken
                    = best->kvHeads * 2.0 * best->headDim * (best->kvDtype == "bf16" ? 2 : 1);
                const double bytesPerSeqToken
                    = op.kvHeads * (op.headDimQk + op.headDimV) * op.kvBytesPerElement;
                const double b = std::max(op.sequences, best->batch.front());
                const double len = std::max(op.kvLen, best->kvLen.front());
                const double eb = std::min(b, best->batch.back()), el = std::min(len, best->kvLen.back());
                const double seconds = interpolate2(best->batch, best->kvLen, best->seconds, eb, el)
                    * (b / eb) * (len / el);
                r.seconds = std::max(seconds * bytesPerSeqToken / measuredBytesPerSeqToken, computeFloor);
                r.measured = true;
                return r;
            }
        }
        r.seconds = std::max(memoryTime(kvBytes, gpu, defaults).seconds, computeFloor);
        return r;
    }
    const double forwardFlops = 2 * op.sequences * op.seq * op.kvLen * op.heads * (op.headDimQk + op.headDimV);
    double forward = 0;
    // The measured kernel whose query / KV head ratio is nearest the op's (MHA 1, GQA 8).
    const PrefillAttentionTable* p = nullptr;
    if (table) {
        const double ratio = op.kvHeads > 0 ? op.heads / op.kvHeads : 1;
        for (const PrefillAttentionTable& candidate : table->prefill)
            if (candidate.dtype == "bf16"
                && (!p || std::abs(std::log(candidate.kvRatio / ratio)) < std::abs(std::log(p->kvRatio / ratio))))
                p = &candidate;
    }
    if (p) {
        // Efficiency by the query length (the full sequence: a CP chunk runs as one kernel per
        // hop over the same length) and the parallel work (sequences x heads).
        const double flopsPerS = interpolateLog2(p->log2Seq, p->log2BatchHeads, p->log2FlopsPerS,
            std::max(op.seq, 1.0), std::max(op.sequences * op.heads, p->batchHeads.front()));
        forward = forwardFlops / flopsPerS;
        r.measured = true;
    } else {
        const double peak = peakFlops(gpu, ComputeDtype::Bf16) * defaults.attentionEfficiency;
        forward = peak > 0 ? forwardFlops / peak : 0;
    }
    if (op.attention == AttentionKind::FlashBackward) {
        r.seconds = forward * 2.5 / defaults.attentionBackwardEfficiencyRatio;
        r.measured = false; // the backward ratio is a documented default on every GPU
    } else {
        r.seconds = forward;
    }
    return r;
}

} // namespace

namespace {

// An all-to-all over a group spanning nodes (NCCL's alltoall: one send to every peer). Of each
// rank's buffer B, (q - 1) / g goes to the q - 1 peers on its node over NVLink and (g - q) / g
// to the peers on other nodes over the network; both run at once, so the slower sets the time
// (docs/formulas-compute.md, "EP all-to-all across nodes"). The NVLink part is the node's own
// all-to-all of q ranks on a buffer of B q / g (it sends (q - 1) / q of that).
OpTime splitAllToAllTime(const Op& op, const Gpu& gpu, const SpecDefaults& defaults)
{
    const double g = op.group, q = op.ranksPerNode;
    const OpTime local = collectiveTime(
        CollectiveKind::AllToAll, op.bytes * q / g, op.ranksPerNode, true, false, gpu, defaults);
    OpTime r;
    const double nic = positiveOrZero(gpu.interNodeBytesPerS) * defaults.interNodeBusEfficiency;
    if (nic <= 0)
        return local; // a network without a stated bandwidth is not modelled
    const double remote = defaults.interNodeLatencyS + (g - q) / g * op.bytes / nic;
    r.seconds = std::max(local.seconds, remote);
    r.measured = local.seconds >= remote && local.measured;
    return r;
}

} // namespace

OpTime timeOp(const Op& op, const Gpu& gpu, const SpecDefaults& defaults)
{
    switch (op.cls) {
    case OpClass::Gemm:
        // A strided-batched GEMM without weights (the unfused attention core's QK^T and AV
        // over batch x heads) runs its batch as one launch: timed as one GEMM with the
        // batch's rows stacked. Grouped expert GEMMs read one weight matrix per expert, so
        // they are timed expert by expert.
        if (op.batch > 1 && op.weightless)
            return gemmTime(op.m * op.batch, op.n, op.k, 1, op.dtype, gpu, defaults);
        // A grouped GEMM (CUTLASS grouped GEMM, Triton fused MoE, DeepGEMM) runs the experts in
        // one launch: no faster than one GEMM of all their rows stacked, nor than reading every
        // expert's weights once.
        // Where the card's table measured grouped launches ("grouped_gemm"), they take its
        // time factor over the stacked GEMM and stream the weights at its measured share of HBM.
        if (op.batch > 1 && op.grouped) {
            OpTime stacked = gemmTime(op.m * op.batch, op.n, op.k, 1, op.dtype, gpu, defaults);
            const double weights = op.batch * op.n * op.k * weightBytesPerElement(op.dtype);
            const KernelTable* table = defaults.engineMoeKernels ? nullptr : gpu.kernels.get();
            SpecDefaults stream = defaults;
            if (table && table->groupedWeightStreamFraction > 0)
                stream.hbmEfficiency = table->groupedWeightStreamFraction;
            if (table)
                stacked.seconds *= table->groupedTimeFactor;
            stacked.seconds = std::max(stacked.seconds, memoryTime(weights, gpu, stream).seconds);
            return stacked;
        }
        return gemmTime(op.m, op.n, op.k, op.batch, op.dtype, gpu, defaults);
    case OpClass::Attention:
        return attentionTime(op, gpu, defaults);
    case OpClass::Elementwise: {
        // One kernel: its launch floor, then its bytes at the HBM efficiency.
        OpTime t = memoryTime(op.bytes, gpu, defaults);
        if (op.bytes > 0)
            t.seconds += launchFloor(op.reduction, gpu, defaults);
        return t;
    }
    case OpClass::Collective:
        if (op.sendRecv)
            return sendRecvTime(op.bytes, op.intraNode, gpu, defaults);
        if (op.collective == CollectiveKind::AllToAll && !op.intraNode && op.ranksPerNode > 1
            && op.ranksPerNode < op.group)
            return splitAllToAllTime(op, gpu, defaults);
        return collectiveTime(op.collective, op.bytes, op.group, op.intraNode, op.custom, gpu, defaults);
    }
    return {};
}

OpTimes timeOps(const std::vector<Op>& ops, const Gpu& gpu, const SpecDefaults& defaults)
{
    OpTimes r;
    for (const Op& op : ops) {
        const OpTime t = timeOp(op, gpu, defaults);
        const double s = t.seconds * op.repeat;
        switch (op.cls) {
        case OpClass::Gemm:
            r.gemm += s;
            break;
        case OpClass::Attention:
            r.attention += s;
            break;
        case OpClass::Elementwise:
            r.elementwise += s;
            break;
        case OpClass::Collective:
            r.collective += s;
            break;
        }
        if (t.measured)
            r.measured += s;
    }
    return r;
}

} // namespace envelope
