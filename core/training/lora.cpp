#include "training/lora.h"

#include <algorithm>

#include "base/numeric.h"

namespace envelope {

double loraParamsPerLayer(const ModelArch& arch, const LoraConfig& lora, bool moeLayer)
{
    if (!lora.enabled)
        return 0.0;
    const double r = positiveOrZero(lora.rank);
    const double h = positiveOrZero(static_cast<double>(arch.hidden));
    const double qWidth = positiveOrZero(arch.heads) * arch.headDimOrDefault();
    const double kvWidth = arch.kvHeadsOrDefault() * arch.headDimOrDefault();
    double ffn = positiveOrZero(static_cast<double>(arch.ffnHidden));
    double copies = 1.0;
    if (moeLayer && arch.moe) {
        ffn = positiveOrZero(static_cast<double>(arch.moe->expertFfnHidden));
        copies = positiveOrZero(arch.moe->experts) + positiveOrZero(arch.moe->sharedExperts);
    }
    const bool gated = arch.ffn == FfnKind::Gated;
    double sum = 0;
    if (lora.targets & LoraConfig::Q)
        sum += r * (h + qWidth);
    if (lora.targets & LoraConfig::K)
        sum += r * (h + kvWidth);
    if (lora.targets & LoraConfig::V)
        sum += r * (h + kvWidth);
    if (lora.targets & LoraConfig::O)
        sum += r * (qWidth + h);
    if ((lora.targets & LoraConfig::Gate) && gated)
        sum += copies * r * (h + ffn);
    if (lora.targets & LoraConfig::Up)
        sum += copies * r * (h + ffn);
    if (lora.targets & LoraConfig::Down)
        sum += copies * r * (ffn + h);
    return sum;
}

double loraTrainableParams(const ModelArch& arch, const LoraConfig& lora)
{
    const int layers = std::max(arch.layers, 0);
    const int dense = arch.moe ? std::clamp(arch.moe->denseLayers, 0, layers) : layers;
    return dense * loraParamsPerLayer(arch, lora, false)
        + (layers - dense) * loraParamsPerLayer(arch, lora, true);
}

double loraBaseBytesPerParam(const LoraConfig& lora)
{
    switch (lora.baseBits) {
    case 4:
        return lora.doubleQuant ? 0.5 + 1.0 / 64 + 4.0 / (64 * 256) : 0.5 + 4.0 / 64;
    case 8:
        return 1.0;
    default:
        break;
    }
    return 2.0;
}

double loraActivationBytesPerToken(const LoraConfig& lora, double activationBytes)
{
    if (!lora.enabled)
        return 0.0;
    int targets = 0;
    for (unsigned bit = 1; bit <= LoraConfig::Down; bit <<= 1)
        targets += (lora.targets & bit) ? 1 : 0;
    return targets * positiveOrZero(lora.rank) * positiveOrZero(activationBytes);
}

} // namespace envelope
