// Serving capacity against context length: the curve the serving panel draws. Each point is
// the plan's serving estimate with `serving.context` set to a power of two from 256 to 1M
// tokens (docs/formulas-serving.md: max_sequences = floor(blocks / ceil(min(n, W) / block))).
#pragma once

#include <vector>

#include "plan/plan.h"

namespace envelope {

struct ServingSweepPoint {
    double context = 0; // tokens per sequence
    double maxSequences = 0; // sequences the KV budget holds at this context (PagedAttention)
    double kvBudgetBytes = 0; // per GPU; the same at every context
    double decodeTokensPerS = 0; // at min(concurrency, maxSequences) sequences, 0 when none fit
    bool fitsConcurrency = false; // the plan's concurrency fits at this context
};

inline constexpr int kServingSweepMinLog2 = 8; // 256 tokens
inline constexpr int kServingSweepMaxLog2 = 20; // 1,048,576 tokens

// One point per power of two 2^8..2^20, in increasing context. Pure; the plan must have passed
// validation (planio.h).
std::vector<ServingSweepPoint> servingContextSweep(const Plan& plan);

} // namespace envelope
