// Precision recipes (bytes per parameter for each kind of training state) and optimizer kinds.
//
// A recipe is data (presets/recipes.json). The optimizer state per parameter is
// momentBytes x momentCount(optimizer), unless a custom recipe states `optimizerBytes` outright.
// Examples: bf16 mixed with fp32 master, 16 B/param = 2 + 2 + 4 + 2x4 (ZeRO paper, K = 12);
// with fp32 gradients, 18 B/param = 2 + 4 + 4 + 2x4 (Megatron distributed optimizer; seed 000).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hardware/hardware.h"

namespace envelope {

struct Recipe {
    std::string name;         // "bf16 mixed, fp32 master (16 B/param)"
    std::string description;  // one line for lists and tooltips
    std::string source;       // paper / seed it follows
    double weightBytes = 2;   // working weights used by forward/backward
    double gradientBytes = 2;
    double masterBytes = 4;   // fp32 master copy kept by the optimizer (0 if none)
    double momentBytes = 4;   // bytes per optimizer moment element (Adam has 2 moments)
    double activationBytes = 2;  // bytes per saved activation element
    ComputeDtype compute = ComputeDtype::Bf16;
    // A custom recipe's optimizer state in bytes/param, used as given (not scaled by moments).
    std::optional<double> optimizerBytes;

    bool operator==(const Recipe&) const = default;
};

enum class OptimizerKind { AdamW, Adam, Lion, SgdMomentum, Sgd, Adafactor };

// Optimizer moments kept per parameter: Adam(W) 2, Lion and SGD with momentum 1, SGD 0,
// Adafactor 0 (its factored second moment is O(rows + cols), negligible per parameter).
int momentCount(OptimizerKind kind);

// "adamw", "adam", "lion", "sgd-momentum", "sgd", "adafactor".
std::string_view optimizerId(OptimizerKind kind);
bool parseOptimizer(std::string_view id, OptimizerKind& out);

// Optimizer state in bytes per parameter (moments only; the master copy is separate).
double optimizerStateBytesPerParam(const Recipe& recipe, OptimizerKind kind);

}  // namespace envelope
