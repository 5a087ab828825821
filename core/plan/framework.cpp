#include "plan/framework.h"

#include <algorithm>
#include <array>
#include <utility>

namespace envelope {
namespace {

constexpr std::array<std::pair<LossKind, std::string_view>, 4> kLossIds { {
    { LossKind::Default, "default" },
    { LossKind::Eager, "eager" },
    { LossKind::Chunked, "chunked" },
    { LossKind::Fused, "fused" },
} };

constexpr std::array<std::pair<SelectivePolicy, std::string_view>, 3> kSelectiveIds { {
    { SelectivePolicy::AttentionCore, "attention-core" },
    { SelectivePolicy::PerOpSac, "per-op-sac" },
    { SelectivePolicy::Full, "full" },
} };

// torchtune CEWithChunkedOutputLoss(num_output_chunks=8).
constexpr double kLossChunks = 8;

} // namespace

std::string_view lossKindId(LossKind k)
{
    for (const auto& [kind, id] : kLossIds)
        if (kind == k)
            return id;
    return {};
}

bool parseLossKind(std::string_view id, LossKind& out)
{
    for (const auto& [kind, name] : kLossIds)
        if (name == id) {
            out = kind;
            return true;
        }
    return false;
}

std::string_view selectivePolicyId(SelectivePolicy p)
{
    for (const auto& [policy, id] : kSelectiveIds)
        if (policy == p)
            return id;
    return {};
}

bool parseSelectivePolicy(std::string_view id, SelectivePolicy& out)
{
    for (const auto& [policy, name] : kSelectiveIds)
        if (name == id) {
            out = policy;
            return true;
        }
    return false;
}

double lossBytesPerLogit(LossKind k, double activationBytes)
{
    const double logits = activationBytes > 0 ? activationBytes : 0.0;
    // fp32 upcast, fp32 log-softmax (forward); log-softmax, its gradient, the input gradient
    // (backward).
    const double eagerWork = 4.0 + 4.0 + 4.0;
    switch (k) {
    case LossKind::Eager:
        return std::max(logits + 4.0 + 4.0, eagerWork);
    case LossKind::Chunked:
        return logits + eagerWork / kLossChunks;
    case LossKind::Default:
    case LossKind::Fused:
        break;
    }
    return logits + 4.0;
}

} // namespace envelope
