// Transformer architecture and its exact parameter counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"

namespace envelope {

// Feed-forward block kind. Plain: up + down (GPT-2, GPT-NeoX; 2 matrices). Gated: gate + up +
// down (SwiGLU in Llama/Mistral/Qwen, GeGLU in Gemma; 3 matrices).
enum class FfnKind { Plain, Gated };

// Normalisation: LayerNorm has weight + bias (2h params), RMSNorm weight only (h params).
enum class NormKind { LayerNorm, RmsNorm };

// Mixture of experts (Mixtral, DeepSeek-V3). Absent for dense models.
struct MoeConfig {
    int experts = 0;                  // routed experts per MoE layer
    int topK = 0;                     // routed experts active per token
    int sharedExperts = 0;            // always-active experts (DeepSeek), each of expertFfnHidden
    std::int64_t expertFfnHidden = 0; // FFN width of one expert
    int denseLayers = 0;              // leading layers that use a dense FFN of ffnHidden instead
    bool routerBias = false;          // per-expert bias in the router (DeepSeek-V3 correction bias)
    // MoE every layerStep-th layer after the dense ones: layer i (from 0) is MoE when
    // i >= denseLayers and (i + 1) % layerStep == 0 (Llama 4 interleave_moe_layer_step:
    // Scout 1, Maverick 2); the other layers use the dense FFN of ffnHidden.
    int layerStep = 1;
    // Width of each shared expert; 0 = expertFfnHidden (Qwen3-Next shared_expert_intermediate_size).
    std::int64_t sharedExpertFfnHidden = 0;
    bool sharedExpertGate = false;    // a hidden x 1 sigmoid gate on the shared expert (Qwen2-MoE, Qwen3-Next)

    bool operator==(const MoeConfig&) const = default;
};

// Multi-head latent attention (DeepSeek-V2/V3).
struct MlaConfig {
    int qLoraRank = 0;      // 0: queries projected directly from hidden
    int kvLoraRank = 0;     // compressed KV latent width (what the KV cache stores)
    int qkRopeHeadDim = 0;  // decoupled RoPE key width (shared across heads, also cached)
    int qkNopeHeadDim = 0;  // per-head non-RoPE query/key width
    int vHeadDim = 0;       // per-head value width
    // DeepSeek Sparse Attention (DeepSeek-V3.2 sec. 2.1; HF index_n_heads, index_head_dim,
    // index_topk): a lightning indexer of indexHeads heads of indexHeadDim scores every earlier
    // token in FP8 and each query attends to the indexTopK best only. 0: dense MLA. The
    // indexer's weights per layer: wq_b (q_lora_rank -> heads x dim), wk (hidden -> dim), a
    // LayerNorm of dim (weight and bias) and weights_proj (hidden -> heads); its key cache one
    // FP8 dim-vector and an fp32 scale per 128 per token and layer (vLLM, SGLang).
    int indexHeads = 0;
    int indexHeadDim = 0;
    int indexTopK = 0;
    bool sparse() const { return indexTopK > 0 && indexHeads > 0 && indexHeadDim > 0; }

    bool operator==(const MlaConfig&) const = default;
};

// How one layer attends. Full: every earlier token, one KV entry per token. Sliding: the last
// `slidingWindow` tokens (Mistral v0.1; Gemma 2/3 local layers; gpt-oss). Chunked: the tokens
// of the current `attentionChunk`-token chunk (Llama 4's local layers). Linear: a fixed-size
// recurrent state per sequence instead of a KV cache (Qwen3-Next Gated DeltaNet layers).
enum class LayerAttention { Full, Sliding, Chunked, Linear };

// Norm on queries and keys before attention. PerHead: an RMSNorm of head_dim shared by the
// heads, one for q and one for k (Qwen3, Gemma 3, GLM-4.5: 2 x head_dim weights per layer).
// PerLayer: over all heads at once (MiniMax-M2 qk_norm_type "per_layer": (heads + kv_heads) x
// head_dim weights). Llama 4's L2 norm has no weights and counts as None.
enum class QkNorm { None, PerHead, PerLayer };

// Linear-attention layers: Gated DeltaNet (Qwen3-Next: linear_num_key_heads,
// linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim)
// or MiniMax's lightning attention (MiniMax-Text-01: every head's q, k and v of head_dim, an
// output gate, a norm over all heads, no conv). Either keeps a value_head_dim x key_head_dim
// state per value head instead of a KV cache.
struct LinearAttentionConfig {
    enum class Kind { GatedDeltaNet, Lightning };
    Kind kind = Kind::GatedDeltaNet;
    int keyHeads = 0;
    int valueHeads = 0;
    int keyHeadDim = 0;
    int valueHeadDim = 0;
    int convKernel = 0;  // depthwise causal conv over q, k, v; 0 = none
    // The recurrent state's element type in the serving cache: false = the weights' dtype,
    // true = float32 (the config's mamba_ssm_dtype, Qwen3.5's "float32").
    bool float32State = false;

    bool operator==(const LinearAttentionConfig&) const = default;
};

// Rotary position embedding's frequency scaling for contexts beyond the trained one (HF
// rope_scaling). Llama3: Llama 3.1's smooth interpolation (factor, low/high frequency factors
// around original_max_position_embeddings). Yarn: YaRN (DeepSeek-V3, Kimi K2, gpt-oss).
// Linear: positions divided by the factor (Gemma 3's global layers).
enum class RopeScalingKind { Llama3, Yarn, Linear };

struct RopeScaling {
    RopeScalingKind kind = RopeScalingKind::Llama3;
    double factor = 1;
    std::int64_t originalPositions = 0;  // original_max_position_embeddings; 0 = not stated
    // As stated in the config; absent means the engine's default (llama3: 1 and 4; YaRN: beta
    // 32 and 1, mscale from the factor).
    std::optional<double> lowFreqFactor, highFreqFactor;
    std::optional<double> betaFast, betaSlow, mscale, mscaleAllDim;

    bool operator==(const RopeScaling&) const = default;
};

// A decoder-only transformer, as named in design.md. All widths in elements.
struct ModelArch {
    std::string name;             // human name ("Llama-2 7B")
    int layers = 0;
    std::int64_t hidden = 0;
    std::int64_t ffnHidden = 0;   // intermediate width of the dense FFN
    FfnKind ffn = FfnKind::Gated;
    int heads = 0;
    int kvHeads = 0;              // == heads for MHA, 1 for MQA, between for GQA
    int headDim = 0;              // usually hidden / heads (Gemma-7B: 256 with hidden 3072)
    std::int64_t vocab = 0;
    bool tiedEmbeddings = false;  // LM head shares the input embedding matrix
    NormKind norm = NormKind::RmsNorm;
    bool qkvBias = false;         // bias on q/k/v projections (Qwen2, GPT-2, GPT-NeoX)
    bool linearBias = false;      // bias on attention output and FFN projections too (GPT-2, NeoX)
    std::int64_t maxPositions = 0;
    bool learnedPositions = false;  // learned absolute position embeddings (GPT-2)
    double dropout = 0.0;         // training dropout probability; 0 removes the dropout masks
    int slidingWindow = 0;        // tokens attended per layer (Mistral v0.1: 4096); 0 = full
    std::optional<MoeConfig> moe;
    std::optional<MlaConfig> mla;
    // Per-layer attention, repeated over the layers: layer i attends as
    // attentionPattern[i % size] (Gemma 3: 5 x Sliding then Full; gpt-oss: Sliding, Full).
    // Empty: every layer Sliding when slidingWindow > 0, else Full.
    std::vector<LayerAttention> attentionPattern;
    int attentionChunk = 0;        // tokens per chunk of Chunked layers (Llama 4: 8192)
    std::optional<LinearAttentionConfig> linearAttention;  // the Linear layers' shape
    QkNorm qkNorm = QkNorm::None;
    bool sandwichNorms = false;    // norms after attention and FFN too: 4 per layer (Gemma 2/3)
    bool attentionSinks = false;   // one learned sink logit per head and layer (gpt-oss)
    bool attentionOutputGate = false;  // q_proj also emits a sigmoid output gate (Qwen3-Next)
    // Vision tower and projector of a multimodal checkpoint (Mistral 3, Gemma 3, Llama 4):
    // counted in the total the engines load, never in the per-token active count.
    double visionParams = 0;
    // Multi-token-prediction modules the checkpoint ships beside the main model (DeepSeek-V3,
    // GLM-4.5: HF num_nextn_predict_layers = 1). Not counted in the main model's parameters;
    // a serving engine loads one as the draft of `serving.speculative` kind "mtp".
    int mtpLayers = 0;
    // Rotary positions as the checkpoint defines them: what an engine needs to launch the named
    // model (Megatron's --rotary-base defaults to 10000; Llama 3 uses 500000). Not used by any
    // estimate. ropeTheta 0: not stated. ropeFraction: the share of each head's dimensions that
    // rotates (HF partial_rotary_factor; GLM-4.5 0.5), 1 = all.
    double ropeTheta = 0;
    double ropeFraction = 1;
    std::optional<RopeScaling> ropeScaling;
    // A bare parameter count ({"params": 7e9}): the shape above is a standard shape used for
    // activations and FLOPs, while the parameter count is exactly this number.
    std::optional<double> declaredParams;

    // Width of one attention head: headDim when stated, else hidden / heads (0 without heads).
    int headDimOrDefault() const
    {
        if (headDim > 0)
            return headDim;
        return heads > 0 ? static_cast<int>(hidden / heads) : 0;
    }
    // Key/value heads: kvHeads when stated (GQA/MQA), else one per query head (MHA).
    int kvHeadsOrDefault() const { return kvHeads > 0 ? kvHeads : (heads > 0 ? heads : 0); }

    bool operator==(const ModelArch&) const = default;
};

// Exact parameter counts. `total` counts every trained weight once (a tied LM head once);
// `active` is what one token touches (MoE: top-k routed + shared experts).
struct ParamCounts {
    double total = 0;
    double active = 0;
    double embedding = 0;      // token embedding matrix (vocab x hidden)
    double positions = 0;      // learned position embeddings
    double lmHead = 0;         // 0 when tied
    double finalNorm = 0;
    double attentionPerLayer = 0;  // projections + biases (+ MLA norms) of one layer
    double normsPerLayer = 0;      // the two block norms
    double denseFfnPerLayer = 0;   // a dense FFN layer's FFN params
    double moeFfnPerLayer = 0;     // a MoE layer's FFN params: all experts + shared + router
    double moeActiveFfnPerLayer = 0;  // a MoE layer's FFN params touched per token
    double expertParamsPerLayer = 0;  // routed-expert params in one MoE layer (EP shards these)
    int denseLayers = 0;       // layers with a dense FFN
    int moeLayers = 0;         // layers with a MoE FFN
    double linearAttentionPerLayer = 0;  // a Linear layer's attention params (replaces attentionPerLayer)
    int linearLayers = 0;      // layers with linear attention
    double vision = 0;         // vision tower + projector (in total, not in active)
    // Params of all transformer layers (excluding embeddings, LM head, final norm).
    double layerTotal() const;
};

// Exact counts from the architecture. For `declaredParams`, total and active are that number
// and the per-part fields are scaled from the standard shape so they still sum to it.
ParamCounts countParameters(const ModelArch& arch);

// A standard dense shape for a bare parameter count (Llama-like: SwiGLU, RMSNorm, MHA, head
// dim 128, vocab 32000), choosing hidden/layers so that the architecture's own count is close
// to `params`. `layers`/`hidden`/`heads`/`vocab` when given (> 0) are kept as stated. Without
// them the depth follows the Llama aspect ratio (layers ~ hidden / 128; 7e9 gives 33 x 4096).
// The result has declaredParams = params and a name like "7B-parameter model".
ModelArch standardShapeForParams(double params, int layers = 0, std::int64_t hidden = 0,
                                 int heads = 0, std::int64_t vocab = 0);

// Imports a Hugging Face config.json (text); the supported model_type values are
// supportedHfModelTypes(). Multimodal configs read their nested text_config and count the
// vision tower into visionParams. Errors name the missing/invalid field.
Expected<ModelArch> importHfConfig(std::string_view configJson);

// The model_type values importHfConfig accepts, comma-separated, for error messages.
std::string supportedHfModelTypes();

// Validates ranges (positive widths, kvHeads divides heads, ...). Error paths are relative to
// the model object ("kv_heads"); callers prefix "model.".
std::optional<Error> validateArch(const ModelArch& arch);

}  // namespace envelope
