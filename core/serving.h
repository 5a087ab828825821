// Serving budget: KV cache per token, quantized weights, the KV budget as serving engines compute
// it, PagedAttention capacity, contiguous pre-allocation waste, decode/prefill rooflines.
//
// Sources: Kwon et al. 2023 (PagedAttention / vLLM); DeepSeek-V2/V3 reports (MLA); seeds 000, 002.
#pragma once

#include "estimate.h"

namespace envelope {

// KV-cache bytes per token for the whole model at `kvBits` (16, 8 or 4; quantized formats add
// their scale overhead). MHA/GQA/MQA: 2 x layers x kv_heads x head_dim x bytes; MLA:
// layers x (kv_lora_rank + qk_rope_head_dim) x bytes.
double kvBytesPerToken(const ModelArch& arch, int kvBits);

// Pure; `counts` must be countParameters(arch).
ServingEstimate estimateServing(const ModelArch& arch, const ParamCounts& counts,
                                const ServingConfig& config, const Gpu& gpu,
                                Explainer* ex = nullptr);

}  // namespace envelope
