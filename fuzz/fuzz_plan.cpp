// The plan reader on arbitrary bytes: never a crash, a hang or UB; a refusal names a path (or,
// for a document that is not a JSON object at all, says so); an accepted plan passes checks.h.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace envelope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Expected<Plan> plan = readPlan(text, fuzz::presets(), fuzz::readOptions());
    if (!plan)
        fuzz::checkRefusal(plan.error(), false);
    else
        fuzz::checkAccepted(*plan);
    return 0;
}
