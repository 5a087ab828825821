// PLACEHOLDER until its owner lands the real implementation.
#include "model.h"

namespace envelope {
Expected<ModelArch> importHfConfig(std::string_view) { return Error{"", "not yet"}; }
std::string supportedHfModelTypes() { return ""; }
}  // namespace envelope
