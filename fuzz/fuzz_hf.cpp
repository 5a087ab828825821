// The Hugging Face config importer on arbitrary bytes: no crash, no overflow (UBSan), a refusal
// names the config key, an accepted config counts to finite parameters; its quantization_config
// reader the same, and the serving keys it gives read back as a plan's.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checks.h"
#include "model/model.h"
#include "plan/planio.h"
#include "serving/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace envelope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Expected<std::optional<CheckpointFormats>> formats = checkpointFormats(text);
    if (!formats)
        fuzz::checkRefusal(formats.error(), false);
    else if (*formats) {
        ServingConfig serving;
        serving.weightFormat = (*formats)->weightFormat;
        serving.weightBits = (*formats)->weightBits;
        serving.attentionWeightFormat = (*formats)->attentionWeightFormat;
        serving.expertWeightFormat = (*formats)->expertWeightFormat;
        if (weightFormatBits(serving.weightFormat) != 0 && weightFormatBits(serving.weightFormat) != serving.weightBits)
            fuzz::fail("a checkpoint's weight_format disagrees with its weight_bits");
        for (const auto& group : { serving.attentionWeightFormat, serving.expertWeightFormat })
            if (group && *group == WeightFormat::Auto)
                fuzz::fail("a checkpoint's module group has no stored format");
    }
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
