#include "hardware/hardware.h"

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

} // namespace envelope
