// Per-layer attention patterns (issue 23): which layers attend fully, within a sliding window,
// within chunks or linearly, and what that means for the KV cache and attention work. The
// pattern itself is ModelArch::attentionPattern (model.h).
#pragma once

#include "model/model.h"

namespace envelope {

// How layer `layer` (0-based) attends: attentionPattern[layer % size], or without a pattern
// Sliding when slidingWindow > 0, else Full.
LayerAttention layerAttention(const ModelArch& arch, int layer);

// Layers of one attention kind over the whole model.
int countLayers(const ModelArch& arch, LayerAttention kind);

// Layers that keep a per-token KV cache: all but the Linear ones.
int cacheLayers(const ModelArch& arch);

// Whether layer `layer` (0-based) has a MoE FFN (MoeConfig::denseLayers, layerStep).
bool isMoeLayer(const ModelArch& arch, int layer);

// Tokens whose K and V one layer of `kind` keeps for a sequence of `tokens` tokens: all of them
// (Full), min(tokens, sliding_window) (Sliding: Mistral's rolling buffer; vLLM frees blocks
// that left the window), min(tokens, attention_chunk) (Chunked: Llama 4's local layers see
// only the current chunk), none (Linear: a fixed state instead).
double keptTokens(const ModelArch& arch, LayerAttention kind, double tokens);

// keptTokens averaged over the cacheLayers(): KV bytes of a sequence are
// (KV bytes per token and layer) x cacheLayers x meanKeptTokens. Gemma 3 27B at 32,768 tokens:
// (52 x 1,024 + 10 x 32,768) / 62 = 6,144 tokens.
double meanKeptTokens(const ModelArch& arch, double tokens);

// Query-key pairs a causal prompt of `tokens` tokens scores, averaged over the cacheLayers():
// n^2 / 2 for full layers, n W - W^2 / 2 within a window W < n, whole chunks of C^2 / 2 plus the
// remainder's r^2 / 2 for chunked layers.
double meanCausalPairs(const ModelArch& arch, double tokens);

} // namespace envelope
