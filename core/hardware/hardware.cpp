#include "hardware/hardware.h"

#include <algorithm>

#include "base/numeric.h"

namespace envelope {

double peakFlops(const Gpu& gpu, ComputeDtype dtype)
{
    const double bf16 = positiveOrZero(gpu.bf16Flops);
    switch (dtype) {
    case ComputeDtype::Fp8: {
        const double fp8 = positiveOrZero(gpu.fp8Flops);
        return fp8 > 0 ? fp8 : bf16;
    }
    case ComputeDtype::Tf32:
        return bf16 / 2;
    case ComputeDtype::Bf16:
        break;
    }
    return bf16;
}

int nvlinkDomainGpus(const Cluster& cluster, const Gpu& gpu)
{
    const int node = std::max(cluster.gpusPerNode, 1);
    const int domain = cluster.nvlinkDomain > 0 ? cluster.nvlinkDomain : gpu.nvlinkDomain;
    return std::max(domain, node);
}

} // namespace envelope
