// PLACEHOLDER until the lead lands the real implementation.
#include "whatif.h"

namespace envelope {
std::vector<Variant> zeroStageVariants(const Plan&) { return {}; }
std::vector<Variant> recomputeVariants(const Plan&) { return {}; }
std::vector<SweepPoint> sweep(const Plan&, SweepAxis) { return {}; }
double largestFitting(const Plan&, SweepAxis) { return 0; }
std::vector<FitSuggestion> suggestFits(const Plan&, ByteUnits) { return {}; }
}  // namespace envelope
