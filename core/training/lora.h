// LoRA / QLoRA (plan key `training.lora`): trainable adapter parameters per target matrix and the
// bytes a frozen base weight takes at 16, 8 or 4 bits. Hu et al. 2021 (LoRA: W + B A with
// A r x in, B out x r); Dettmers et al. 2023 (QLoRA: NF4 with a fp32 absmax per 64 weights, or
// with double quantization an 8-bit absmax per 64 and a fp32 scale per 256 of those).
#pragma once

#include "model/model.h"
#include "plan/plan.h"

namespace envelope {

// Trainable parameters of one layer's adapters: sum over targets of rank x (in + out).
// Dense FFN widths for a dense layer; a MoE layer's gate/up/down adapters are one per routed
// and shared expert.
double loraParamsPerLayer(const ModelArch& arch, const LoraConfig& lora, bool moeLayer);

// Trainable adapter parameters of the whole model.
double loraTrainableParams(const ModelArch& arch, const LoraConfig& lora);

// Bytes per frozen base parameter: 2 at 16 bits, 1 at 8 (LLM.int8 keeps per-row scales:
// negligible), 0.5 + 4/64 at 4 (NF4 + fp32 absmax per 64), 0.5 + 1/64 + 4/(64 x 256) with
// double quantization.
double loraBaseBytesPerParam(const LoraConfig& lora);

// Adapter activation bytes per token of one layer: each targeted linear's A output (rank wide)
// that B's backward reads, in the activation dtype.
double loraActivationBytesPerToken(const LoraConfig& lora, double activationBytes);

} // namespace envelope
