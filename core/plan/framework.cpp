#include "plan/framework.h"

#include <algorithm>
#include <array>
#include <utility>

namespace envelope {
namespace {

constexpr std::array<std::pair<LossKind, std::string_view>, 5> kLossIds { {
    { LossKind::Default, "default" },
    { LossKind::Eager, "eager" },
    { LossKind::Chunked, "chunked" },
    { LossKind::Fused, "fused" },
    { LossKind::Compiled, "compiled" },
} };

constexpr std::array<std::pair<SelectivePolicy, std::string_view>, 3> kSelectiveIds { {
    { SelectivePolicy::AttentionCore, "attention-core" },
    { SelectivePolicy::PerOpSac, "per-op-sac" },
    { SelectivePolicy::Full, "full" },
} };

// torchtune CEWithChunkedOutputLoss(num_output_chunks=8).
constexpr double kLossChunks = 8;

constexpr std::array<std::pair<DpOverlap, std::string_view>, 4> kDpOverlapIds { {
    { DpOverlap::None, "none" },
    { DpOverlap::Buckets, "buckets" },
    { DpOverlap::Prefetch, "prefetch" },
    { DpOverlap::BucketsAndPrefetch, "buckets+prefetch" },
} };

template <class Table, class E> std::string_view idIn(const Table& table, E value)
{
    for (const auto& [entry, id] : table)
        if (entry == value)
            return id;
    return {};
}

template <class Table, class E> bool parseIn(const Table& table, std::string_view id, E& out)
{
    for (const auto& [entry, name] : table)
        if (name == id) {
            out = entry;
            return true;
        }
    return false;
}

} // namespace

std::string_view lossKindId(LossKind k)
{
    return idIn(kLossIds, k);
}

bool parseLossKind(std::string_view id, LossKind& out)
{
    return parseIn(kLossIds, id, out);
}

std::string_view selectivePolicyId(SelectivePolicy p)
{
    return idIn(kSelectiveIds, p);
}

bool parseSelectivePolicy(std::string_view id, SelectivePolicy& out)
{
    return parseIn(kSelectiveIds, id, out);
}

std::string_view dpOverlapId(DpOverlap o)
{
    return idIn(kDpOverlapIds, o);
}

bool parseDpOverlap(std::string_view id, DpOverlap& out)
{
    return parseIn(kDpOverlapIds, id, out);
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
    case LossKind::Compiled:
        // Inductor saves the logits (and one fp32 log-sum-exp per token, negligible) and
        // recomputes the upcast in the backward kernel, which writes the gradient in the
        // logits' dtype: the logits and their gradient.
        return 2.0 * logits;
    case LossKind::Default:
    case LossKind::Fused:
        break;
    }
    return logits + 4.0;
}

} // namespace envelope
