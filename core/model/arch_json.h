// JSON form of a model architecture (the plan's full-architecture object, also used by
// presets/models.json and printed by `envelope-cli import-hf`). Internal to the core: exposes
// nlohmann::json, so include it only from core .cpp files, never from public headers.
//
// Keys: name layers hidden ffn_hidden ffn heads kv_heads head_dim vocab tied_embeddings norm
// qkv_bias linear_bias max_positions learned_positions dropout sliding_window moe mla
// attention_pattern attention_chunk linear_attention qk_norm sandwich_norms attention_sinks
// attention_output_gate vision_params mtp_layers rope_theta partial_rotary_factor rope_scaling
// (moe: experts top_k shared_experts expert_ffn_hidden dense_layers router_bias layer_step
//  shared_expert_ffn_hidden shared_expert_gate;
//  mla: q_lora_rank kv_lora_rank qk_rope_head_dim qk_nope_head_dim v_head_dim;
//  linear_attention: key_heads value_heads key_head_dim value_head_dim conv_kernel;
//  rope_scaling: type factor original_max_position_embeddings low_freq_factor high_freq_factor
//  beta_fast beta_slow mscale mscale_all_dim, HF's names; "type" is "llama3", "yarn" or
//  "linear"). rope_theta 0 and partial_rotary_factor 1 mean not stated; the rope keys are
//  written only when stated and no estimate reads them (the engine exports do).
// The issue-23 keys (attention_pattern onwards, and moe's last three) are written only when they
// differ from their defaults. "attention_pattern" lists "full", "sliding", "chunked" or
// "linear", repeated over the layers; "qk_norm" is "none", "per_head" or "per_layer".
// "ffn" is "gated" (SwiGLU/GeGLU, 3 matrices) or "plain" (GELU, 2 matrices); the aliases
// swiglu/geglu and gelu/relu are read too. "norm" is "rmsnorm" or "layernorm".
//
// Required: layers hidden heads vocab (moe: experts top_k; mla: kv_lora_rank). Defaults:
// name "custom architecture", ffn "gated", ffn_hidden 8/3 hidden rounded to 256 (gated) or
// 4 hidden (plain), kv_heads = heads, head_dim = hidden / heads, norm "rmsnorm", booleans false,
// max_positions 0 (not stated; required with learned_positions), dropout 0, sliding_window 0
// (full attention); moe: shared_experts 0, expert_ffn_hidden = ffn_hidden, dense_layers 0,
// router_bias false; mla: q_lora_rank 0, qk_rope_head_dim 0, qk_nope_head_dim = v_head_dim =
// head_dim. qkv_bias puts biases on q/k/v; linear_bias on every projection (q/k/v included).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/expected.h"
#include "model/model.h"

namespace envelope {

// A full architecture object. `path` prefixes error paths ("model" -> "model.kv_heads").
// Unknown keys, wrong types and out-of-range values are errors. Missing keys take the defaults
// documented in docs/plan-format.md (e.g. kv_heads = heads, head_dim = hidden / heads).
Expected<ModelArch> archFromJson(const nlohmann::json& object, const std::string& path);

// Applies override keys (any subset of the architecture keys) on top of `base`. A "preset" key
// is ignored (the plan's {"preset": id, ...overrides} can be passed whole). head_dim, kv_heads
// and ffn_hidden that the base had at their defaults follow a change of hidden/heads unless
// stated. "moe"/"mla" objects merge into the base's; null removes them.
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
