// How long an op takes on one GPU: from the GPU's measured kernel tables (kernels/kerneltable.h)
// where they cover the op, else from the GPU's specs times a documented default efficiency
// (docs/formulas-compute.md, "Step time from ops"). Pure functions of the op and the GPU.
#pragma once

#include <string>

#include "hardware/hardware.h"
#include "ops/ops.h"

namespace envelope {

// Defaults for what no table covers (a GPU without tables, such as MI300X or a custom GPU; the
// attention backward and collectives across nodes on every GPU). Each is a documented figure:
// docs/formulas-compute.md, "Step time from ops" gives the sources.
struct SpecDefaults {
    // Large-GEMM efficiency, fraction of the dense peak: the median of the measured tables'
    // large shapes (m, n, k >= 4096, bf16) over A100, H100, H200 and B200 (docs/kernel-tables.md).
    double gemmEfficiency = 0.70;
    // Flash attention forward, fraction of the BF16 peak (FlashAttention-2, Dao 2023: 50-73%
    // of the A100's peak in the forward; FlashAttention-3 on H100: 75% fp16 forward).
    double attentionEfficiency = 0.55;
    // Flash attention backward time over the forward's for the same shape: 2.5x the FLOPs
    // (5 matmuls to 2) at a lower efficiency: FlashAttention-2 Fig. 6 vs Fig. 5 (A100, causal,
    // head dim 128): backward reaches about 0.8x the forward's TFLOP/s.
    double attentionBackwardEfficiencyRatio = 0.8;
    // Memory-bound kernels (norms, activations, softmax, optimizer): fraction of the HBM
    // bandwidth a fused elementwise kernel streams (STREAM-like copies reach ~90% on
    // H100/A100; PyTorch's vectorised elementwise kernels ~80%).
    double hbmEfficiency = 0.80;
    // Collectives without a table: bus bandwidth as a fraction of the link (nccl-tests on
    // NVSwitch systems reach ~80% of the NVLink figure; across nodes ~85-90% of the NIC with
    // GPUDirect RDMA), plus a fixed latency per collective.
    double intraNodeBusEfficiency = 0.80;
    double interNodeBusEfficiency = 0.85;
    double intraNodeLatencyS = 10e-6;
    double interNodeLatencyS = 30e-6;
    // The routed experts run an inference engine's fused MoE kernel (vLLM / SGLang fused_moe,
    // TensorRT-LLM), which the tables' "grouped_gemm" block (torch._grouped_mm, the training
    // side) did not measure: grouped GEMMs keep the stacked rule.
    bool engineMoeKernels = false;
    // A memory-bound kernel takes a fixed time however few bytes it moves (its launch, the
    // grid's ramp and drain), then streams its bytes: time = floor + bytes / (HBM x efficiency).
    // The default for a card whose table measured none (its "launch_floor" block,
    // kernels/kerneltable.h) is the H100's: each kernel back to back in one CUDA graph on one
    // row, a pointwise kernel (residual add, silu, mul) 1.34 us median, a row reduction
    // (F.rms_norm, softmax over 4,096) 4.17 us (presets/kernels/h100-sxm.json, launch_floor).
    double pointwiseLaunchS = 1.34e-6;
    double reductionLaunchS = 4.17e-6;
};

struct OpTime {
    double seconds = 0;
    bool measured = false; // from a measured table (else the specs)
};

// Seconds for one run of `op` (its `repeat` is not applied).
OpTime timeOp(const Op& op, const Gpu& gpu, const SpecDefaults& defaults = {});

// Seconds for a GEMM, an elementwise pass, a collective: the building blocks of timeOp, also
// used directly by the data-parallel and optimizer terms.
OpTime gemmTime(double m, double n, double k, double batch, GemmDtype dtype, const Gpu& gpu,
    const SpecDefaults& defaults = {});
OpTime memoryTime(double bytes, const Gpu& gpu, const SpecDefaults& defaults = {});
// The fixed time of one memory-bound kernel (`reduction`: a norm, softmax or loss over rows),
// from the card's table where it measured one, else the default.
double launchFloor(bool reduction, const Gpu& gpu, const SpecDefaults& defaults = {});
// Where those floors come from, for explain: the card's table or the default.
std::string launchFloorSource(const Gpu& gpu);
OpTime collectiveTime(CollectiveKind kind, double bytes, int group, bool intraNode, bool custom,
    const Gpu& gpu, const SpecDefaults& defaults = {});
OpTime sendRecvTime(double bytes, bool intraNode, const Gpu& gpu, const SpecDefaults& defaults = {});

// The ring factor nccl-tests' bus bandwidth uses: all-reduce 2 (n-1)/n, the others (n-1)/n.
double busFactor(CollectiveKind kind, int group);

// Seconds the ops take, by class, each op's time x its repeat; `measuredShare` is the share of
// the time that came from measured tables.
struct OpTimes {
    double gemm = 0, attention = 0, elementwise = 0, collective = 0;
    double measured = 0;
    double total() const { return gemm + attention + elementwise + collective; }
};
OpTimes timeOps(const std::vector<Op>& ops, const Gpu& gpu, const SpecDefaults& defaults = {});

} // namespace envelope
