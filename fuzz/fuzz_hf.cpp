// The Hugging Face config importer on arbitrary bytes: no crash, no overflow (UBSan), a refusal
// names the config key, an accepted config counts to finite parameters.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checks.h"
#include "model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace envelope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Expected<ModelArch> arch = importHfConfig(text);
    if (!arch) {
        fuzz::checkRefusal(arch.error(), false);
        return 0;
    }
    if (validateArch(*arch))
        fuzz::fail("an imported model does not validate");
    const ParamCounts counts = countParameters(*arch);
    if (!std::isfinite(counts.total) || !(counts.total > 0) || counts.active > counts.total)
        fuzz::fail("parameter counts of an imported model are not sane");
    return 0;
}
