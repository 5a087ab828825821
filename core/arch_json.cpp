// PLACEHOLDER until its owner lands the real implementation.
#include "arch_json.h"

namespace envelope {
Expected<ModelArch> archFromJson(const nlohmann::json&, const std::string& path) { return Error{path, "not yet"}; }
Expected<ModelArch> applyArchOverrides(ModelArch base, const nlohmann::json&, const std::string&) { return base; }
Expected<ModelArch> paramsModelFromJson(const nlohmann::json&, const std::string& path) { return Error{path, "not yet"}; }
nlohmann::json archToJson(const ModelArch&) { return nlohmann::json::object(); }
nlohmann::json paramsModelToJson(const ModelArch&) { return nlohmann::json::object(); }
}  // namespace envelope
