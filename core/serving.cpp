// PLACEHOLDER until its owner lands the real implementation.
#include "serving.h"

namespace envelope {
double kvBytesPerToken(const ModelArch&, int) { return 0; }
ServingEstimate estimateServing(const ModelArch&, const ParamCounts&, const ServingConfig&, const Gpu&, Explainer*) { return {}; }
}  // namespace envelope
