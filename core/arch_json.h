// JSON form of a model architecture (the plan's full-architecture object, also used by
// presets/models.json and printed by `envelope-cli import-hf`). Internal to the core: exposes
// nlohmann::json, so include it only from core .cpp files, never from public headers.
//
// Keys: name layers hidden ffn_hidden ffn heads kv_heads head_dim vocab tied_embeddings norm
// qkv_bias linear_bias max_positions learned_positions dropout sliding_window moe mla
// (moe: experts top_k shared_experts expert_ffn_hidden dense_layers router_bias;
//  mla: q_lora_rank kv_lora_rank qk_rope_head_dim qk_nope_head_dim v_head_dim).
// "ffn" is "gated" (SwiGLU/GeGLU, 3 matrices) or "plain" (GELU, 2 matrices); the aliases
// swiglu/geglu and gelu/relu are read too. "norm" is "rmsnorm" or "layernorm".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "expected.h"
#include "model.h"

namespace envelope {

// A full architecture object. `path` prefixes error paths ("model" -> "model.kv_heads").
// Unknown keys, wrong types and out-of-range values are errors. Missing keys take the defaults
// documented in docs/plan-format.md (e.g. kv_heads = heads, head_dim = hidden / heads).
Expected<ModelArch> archFromJson(const nlohmann::json& object, const std::string& path);

// Applies override keys (any subset of the architecture keys) on top of `base`.
Expected<ModelArch> applyArchOverrides(ModelArch base, const nlohmann::json& overrides,
                                       const std::string& path);

// A bare parameter count: {"params": 7e9, optional "layers", "hidden", "heads", "vocab",
// "name"}. The result has declaredParams set and a standard shape for the rest.
Expected<ModelArch> paramsModelFromJson(const nlohmann::json& object, const std::string& path);

// Canonical full architecture object (every key written; moe/mla only when present).
nlohmann::json archToJson(const ModelArch& arch);

// {"params": ..., "layers": ..., "hidden": ..., "heads": ...} for a declared-params model.
nlohmann::json paramsModelToJson(const ModelArch& arch);

}  // namespace envelope
