#include "plan/recipe.h"

#include <array>
#include <utility>

namespace envelope {
namespace {

constexpr std::array<std::pair<OptimizerKind, std::string_view>, 6> kOptimizers{{
    {OptimizerKind::AdamW, "adamw"},
    {OptimizerKind::Adam, "adam"},
    {OptimizerKind::Lion, "lion"},
    {OptimizerKind::SgdMomentum, "sgd-momentum"},
    {OptimizerKind::Sgd, "sgd"},
    {OptimizerKind::Adafactor, "adafactor"},
}};

}  // namespace

int momentCount(OptimizerKind kind)
{
    switch (kind) {
    case OptimizerKind::AdamW:
    case OptimizerKind::Adam:
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

double optimizerStateBytesPerParam(const Recipe& recipe, OptimizerKind kind)
{
    if (recipe.optimizerBytes)
        return *recipe.optimizerBytes;
    return recipe.momentBytes * momentCount(kind);
}

}  // namespace envelope
