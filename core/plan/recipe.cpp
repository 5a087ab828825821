#include "plan/recipe.h"

#include <array>
#include <utility>

namespace envelope {
namespace {

constexpr std::array<std::pair<OptimizerKind, std::string_view>, 9> kOptimizers{{
    {OptimizerKind::AdamW, "adamw"},
    {OptimizerKind::Adam, "adam"},
    {OptimizerKind::Lion, "lion"},
    {OptimizerKind::SgdMomentum, "sgd-momentum"},
    {OptimizerKind::Sgd, "sgd"},
    {OptimizerKind::Adafactor, "adafactor"},
    {OptimizerKind::AdamW8bit, "adamw-8bit"},
    {OptimizerKind::PagedAdamW, "paged-adamw"},
    {OptimizerKind::PagedAdamW8bit, "paged-adamw-8bit"},
}};

}  // namespace

int momentCount(OptimizerKind kind)
{
    switch (kind) {
    case OptimizerKind::AdamW:
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW8bit:
    case OptimizerKind::PagedAdamW:
    case OptimizerKind::PagedAdamW8bit:
        return 2;  // first and second moments (Kingma & Ba 2015)
    case OptimizerKind::Lion:         // one momentum buffer (Chen et al. 2023)
    case OptimizerKind::SgdMomentum:  // one velocity buffer
        return 1;
    case OptimizerKind::Sgd:
    case OptimizerKind::Adafactor:  // factored second moment: O(rows + cols), taken as 0
        return 0;
    }
    return 2;
}

std::string_view optimizerId(OptimizerKind kind)
{
    for (const auto& [k, id] : kOptimizers)
        if (k == kind)
            return id;
    return "adamw";
}

bool parseOptimizer(std::string_view id, OptimizerKind& out)
{
    for (const auto& [k, name] : kOptimizers)
        if (name == id) {
            out = k;
            return true;
        }
    return false;
}

bool pagedOptimizer(OptimizerKind kind)
{
    return kind == OptimizerKind::PagedAdamW || kind == OptimizerKind::PagedAdamW8bit;
}

bool optimizerSetsMomentWidth(OptimizerKind kind)
{
    return kind == OptimizerKind::AdamW8bit || kind == OptimizerKind::PagedAdamW
        || kind == OptimizerKind::PagedAdamW8bit;
}

double optimizerStateBytesPerParam(const Recipe& recipe, OptimizerKind kind)
{
    if (recipe.optimizerBytes)
        return *recipe.optimizerBytes;
    switch (kind) {
    case OptimizerKind::AdamW8bit:
    case OptimizerKind::PagedAdamW8bit:
        // bitsandbytes Optimizer2State with optim_bits 8: uint8 state1 and state2 and one fp32
        // absmax per 256-element block each (optimizer.py init_state). Tensors under
        // min_8bit_size = 4096 elements (norm weights) keep fp32 states: not counted (< 0.01%).
        return momentCount(kind) * kBnb8bitMomentBytes;
    case OptimizerKind::PagedAdamW:
        return momentCount(kind) * kBnb32bitMomentBytes; // optim_bits 32: fp32 state1, state2
    default:
        break;
    }
    return recipe.momentBytes * momentCount(kind);
}

}  // namespace envelope
