// The serving formats a Hugging Face checkpoint states in its config.json's
// `quantization_config` (issue 23, mixed per-module precision): the linear layers' format and
// the module groups it leaves in 16 bit or quantizes alone, as the plan's serving keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/expected.h"
#include "plan/plan.h"

namespace envelope {

struct CheckpointFormats {
    WeightFormat weightFormat = WeightFormat::Bf16; // serving.weight_format
    int weightBits = 16;                            // serving.weight_bits
    int quantGroupSize = 0;                         // serving.quant_group_size; 0: not stated
    std::optional<WeightFormat> attentionWeightFormat; // serving.attention_weight_format
    std::optional<WeightFormat> expertWeightFormat;    // serving.expert_weight_format
    std::string reason;  // the entries that put each group where it is, for the user
};

// Reads quantization_config (top level, or under text_config for multimodal checkpoints):
//   mxfp4 (gpt-oss), fp8 (weight_block_size: fp8-block), fbgemm_fp8, compressed-tensors
//   (config_groups' weights: float 8 -> fp8 / fp8-block, int 8 -> int8, int 4 -> int4 with
//   its group_size, float 4 group 16 -> nvfp4), modelopt (quant_algo FP8 / NVFP4), awq and
//   gptq (bits and group_size: the group-quantized layout).
// The modules it leaves unquantized (modules_to_not_convert, ignore, exclude_modules) sort into
// groups by name: any attention projection (self_attn, attention) -> attention in bf16; the
// dense and shared-expert FFNs (mlp., feed_forward., shared_expert) -> the rest in bf16 and the
// routed experts alone in the method's format. Routers, gates, embeddings, the LM head and a
// vision tower stay 16-bit whatever the list says. nullopt: no quantization_config (a 16-bit
// checkpoint). An error names the field Envelope cannot map.
Expected<std::optional<CheckpointFormats>> checkpointFormats(std::string_view configJson);

// The plan's serving keys for them: weight_format, weight_bits, and where stated
// quant_group_size, attention_weight_format, expert_weight_format.
nlohmann::ordered_json checkpointServingKeys(const CheckpointFormats& formats);

// The same set on a plan's serving config (an import applies them with the model): the formats
// and bits, quant_group_size where the checkpoint states one; the module groups it does not
// name go back to "same".
void applyCheckpointFormats(ServingConfig& serving, const CheckpointFormats& formats);
// In words, as the text report names serving weights: "bf16 weights with experts in mxfp4".
std::string servingFormatsText(const CheckpointFormats& formats);

} // namespace envelope
