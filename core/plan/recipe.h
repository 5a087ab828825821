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

// The bitsandbytes AdamW variants (bnb.optim.AdamW8bit, PagedAdamW, PagedAdamW8bit; HF Trainer
// optim "adamw_bnb_8bit", "paged_adamw_32bit", "paged_adamw_8bit") keep their moments at the
// optimizer's own width, whatever the recipe's moment_bytes: 8-bit block-wise quantized, or fp32.
enum class OptimizerKind {
    AdamW, Adam, Lion, SgdMomentum, Sgd, Adafactor, AdamW8bit, PagedAdamW, PagedAdamW8bit
};

// Optimizer moments kept per parameter: Adam(W) 2 (the bitsandbytes variants too), Lion and SGD
// with momentum 1, SGD 0, Adafactor 0 (its factored second moment is O(rows + cols)).
int momentCount(OptimizerKind kind);

// "adamw", "adam", "lion", "sgd-momentum", "sgd", "adafactor", "adamw-8bit", "paged-adamw",
// "paged-adamw-8bit".
std::string_view optimizerId(OptimizerKind kind);
bool parseOptimizer(std::string_view id, OptimizerKind& out);

// bitsandbytes 8-bit block-wise optimizers (Dettmers et al. 2022): each moment is one uint8 per
// element plus one fp32 absmax per block. Block of 256 elements since bitsandbytes 0.44.0
// (aa57bd89, 2024-09-20, "Change 8bit optimizer blocksize 2048->256"); 2048 before, as in the
// paper. optimizer.py Optimizer2State.init_state: state1/state2 uint8, absmax1/absmax2
// float32[ceil(n / 256)].
inline constexpr double kBnb8bitBlock = 256;
inline constexpr double kBnbAbsmaxBytes = 4;
// Bytes per element of one 8-bit moment: 1 + 4 / 256 = 1.015625.
inline constexpr double kBnb8bitMomentBytes = 1.0 + kBnbAbsmaxBytes / kBnb8bitBlock;
// bitsandbytes' 32-bit optimizers (PagedAdamW) keep fp32 moments (optim_bits 32).
inline constexpr double kBnb32bitMomentBytes = 4;

// The state lives in CUDA unified memory (bitsandbytes get_paged: cudaMallocManaged, outside
// PyTorch's caching allocator) that the driver may evict to the host under memory pressure.
bool pagedOptimizer(OptimizerKind kind);
// The moments' width is set by the optimizer (bitsandbytes), not by the recipe.
bool optimizerSetsMomentWidth(OptimizerKind kind);

// Optimizer state in bytes per parameter (moments only; the master copy is separate): a custom
// recipe's `optimizer` bytes as given; a bitsandbytes optimizer's moments at its own width
// (2 x 1.015625 = 2.03125 B for the 8-bit ones, 2 x 4 = 8 B for PagedAdamW); otherwise the
// recipe's moment_bytes x momentCount.
double optimizerStateBytesPerParam(const Recipe& recipe, OptimizerKind kind);

}  // namespace envelope
