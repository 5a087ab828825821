// Accelerators and clusters.
#pragma once

#include <memory>
#include <string>

namespace envelope {

struct KernelTable; // kernels/kerneltable.h

// A GPU's measured kernel table: shared and immutable. Two GPUs compare by the table's id
// (Gpu::kernelsId), not by which loaded copy of the presets they point into: a plan saved and
// reopened, or read by another window's preset library, is the same plan.
class KernelTableRef {
public:
    KernelTableRef() = default;
    KernelTableRef(std::shared_ptr<const KernelTable> table) // NOLINT(google-explicit-constructor)
        : m_table(std::move(table))
    {
    }
    const KernelTable* get() const { return m_table.get(); }
    const KernelTable* operator->() const { return m_table.get(); }
    explicit operator bool() const { return m_table != nullptr; }
    bool operator==(const KernelTableRef& other) const { return bool(*this) == bool(other); }
    bool operator==(std::nullptr_t) const { return m_table == nullptr; }

private:
    std::shared_ptr<const KernelTable> m_table;
};

// One accelerator. Peaks are dense (no 2:4 sparsity) tensor-core figures.
struct Gpu {
    std::string name;             // "NVIDIA H100 SXM5 80GB"
    double memoryBytes = 0;       // usable HBM as the driver reports it (H100 80GB: 81,559 MiB)
    double bf16Flops = 0;         // dense BF16/FP16 peak, FLOP/s
    double fp8Flops = 0;          // dense FP8 peak, FLOP/s (0 = not supported)
    // Dense 4-bit float peak (NVFP4 / MXFP4 on Blackwell), FLOP/s; 0 = none stated (4-bit
    // formats then run at the FP8 peak, or as weight-only dequantization).
    double fp4Flops = 0;
    // GPUs in the NVLink domain of the system this GPU ships in (GB200 / GB300 NVL72: 72);
    // 0 = the node. cluster.nvlink_domain overrides it.
    int nvlinkDomain = 0;
    double hbmBytesPerS = 0;      // HBM bandwidth, bytes/s
    double intraNodeBytesPerS = 0;  // per-GPU bandwidth to peers in the node (NVLink), bytes/s
    double interNodeBytesPerS = 0;  // per-GPU bandwidth across nodes (IB/RoCE NIC), bytes/s
    double pricePerHour = 0;      // default on-demand price, USD per GPU-hour
    // What CUDA reports as the device's total (torch.cuda.get_device_properties().total_memory,
    // what vLLM sizes from); 0 = not known, use memoryBytes.
    double torchTotalBytes = 0;
    // GPU <-> host link per direction, bytes/s: what optimizer and parameter offload move over.
    // PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 = 63 GB/s, quoted as 64 GB/s (PCI-SIG).
    double hostLinkBytesPerS = 64e9;
    // Host DRAM bandwidth per GPU, bytes/s: what the CPU optimizer step streams through. A
    // DGX H100 node's two Xeon 8480C with 8 DDR5-4800 channels each give 2 x 8 x 38.4 GB/s =
    // 614 GB/s, 76.8 GB/s for each of its 8 GPUs.
    double hostMemoryBytesPerS = 76.8e9;
    // Measured kernel times (presets/kernels/<id>.json, plan key `gpu.kernels`): the op timing
    // reads them where they cover an op (timing_source "measured kernels"); without them every
    // op is timed from the figures above ("spec estimate"). Shared, immutable.
    std::string kernelsId;
    KernelTableRef kernels;

    bool operator==(const Gpu&) const = default;
};

// Which tensor-core peak a recipe's matmuls run at.
enum class ComputeDtype { Bf16, Fp8, Tf32 };

// Dense peak of one GPU at a matmul dtype, FLOP/s (0 when the GPU states none). TF32 tensor
// cores run at half the BF16 rate on every NVIDIA part with both (A100: 156 vs 312 TFLOP/s;
// H100 SXM: 495 vs 989), so a GPU preset needs no separate TF32 field. FP8 falls back to the
// BF16 peak where the GPU has no FP8 (fp8Flops 0, or not a finite positive number).
double peakFlops(const Gpu& gpu, ComputeDtype dtype);

struct Cluster {
    int gpus = 8;
    int gpusPerNode = 8;
    // GPUs that reach each other over NVLink (plan key cluster.nvlink_domain): 0 = the GPU
    // preset's system domain, else the node. A GB200 / GB300 NVL72 rack is 18 trays of 4 GPUs
    // in one NVLink domain of 72: TP, EP and CP collectives inside it run at NVLink speed,
    // across it at the network's.
    int nvlinkDomain = 0;

    bool operator==(const Cluster&) const = default;
};

// GPUs that share one NVLink domain: cluster.nvlink_domain when set, else the GPU's system
// domain (NVL72), never fewer than a node's GPUs. Collectives within it run at
// intraNodeBytesPerS, across it at interNodeBytesPerS.
int nvlinkDomainGpus(const Cluster& cluster, const Gpu& gpu);

}  // namespace envelope
