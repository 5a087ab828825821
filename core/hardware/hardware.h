// Accelerators and clusters.
#pragma once

#include <string>

namespace envelope {

// One accelerator. Peaks are dense (no 2:4 sparsity) tensor-core figures.
struct Gpu {
    std::string name;             // "NVIDIA H100 SXM5 80GB"
    double memoryBytes = 0;       // usable HBM as the driver reports it (H100 80GB: 81,559 MiB)
    double bf16Flops = 0;         // dense BF16/FP16 peak, FLOP/s
    double fp8Flops = 0;          // dense FP8 peak, FLOP/s (0 = not supported)
    double hbmBytesPerS = 0;      // HBM bandwidth, bytes/s
    double intraNodeBytesPerS = 0;  // per-GPU bandwidth to peers in the node (NVLink), bytes/s
    double interNodeBytesPerS = 0;  // per-GPU bandwidth across nodes (IB/RoCE NIC), bytes/s
    double pricePerHour = 0;      // default on-demand price, USD per GPU-hour

    bool operator==(const Gpu&) const = default;
};

struct Cluster {
    int gpus = 8;
    int gpusPerNode = 8;

    bool operator==(const Cluster&) const = default;
};

}  // namespace envelope
