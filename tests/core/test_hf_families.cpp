// Importing the 2025 Hugging Face families (issue 23): each config is written here from the
// published config.json (source named per test; reference copies in ../shared/hf-configs),
// imported, and checked against the checkpoint's published parameter count (the Hugging Face
// safetensors total, the count transformers reports) and against KV bytes per token worked out
// by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "model/arch_json.h"
#include "model/attention.h"
#include "model/model.h"
#include "plan/presets.h"
#include "serving/serving.h"
#include "fixtures.h"

namespace envelope {
namespace {

ModelArch imported(const std::string& config)
{
    const Expected<ModelArch> arch = importHfConfig(config);
    EXPECT_TRUE(arch.ok()) << (arch.ok() ? std::string() : arch.error().toString());
    return arch.ok() ? *arch : ModelArch {};
}

// Qwen3.5's layer_types: three "linear_attention" then one "full_attention", repeated.
std::string qwen35Layers(int layers)
{
    std::string types;
    for (int i = 0; i < layers; ++i)
        types += std::string(i ? ", " : "")
            + ((i + 1) % 4 == 0 ? "\"full_attention\"" : "\"linear_attention\"");
    return types;
}

TEST(HfFamilies, Qwen3DenseHasQkNormsAndThePublishedCount)
{
    // Qwen/Qwen3-8B config.json. Published: 8,190,735,360 (HF safetensors total). By hand:
    // embed + head 2 x 151,936 x 4,096 = 1,244,659,712; per layer q 4,096 x 4,096 + k, v
    // 2 x 4,096 x 1,024 + o 4,096 x 4,096 = 41,943,040, q/k norms 2 x 128, FFN 3 x 4,096 x
    // 12,288 = 150,994,944, norms 2 x 4,096: 192,946,432 x 36 = 6,946,071,552; + final norm 4,096.
    const ModelArch a = imported(R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": false, "head_dim": 128, "hidden_size": 4096,
        "intermediate_size": 12288, "max_position_embeddings": 40960, "max_window_layers": 36,
        "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
        "rms_norm_eps": 1e-06, "rope_theta": 1000000, "sliding_window": null,
        "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_sliding_window": false,
        "vocab_size": 151936})");
    EXPECT_EQ(countParameters(a).total, 8'190'735'360.0);
    EXPECT_EQ(a.qkNorm, QkNorm::PerHead);
    // KV: 2 (K, V) x 36 layers x 8 KV heads x 128 x 2 B = 147,456 B/token; every layer full.
    EXPECT_EQ(kvBytesPerToken(a, 16), 147'456.0);
    EXPECT_EQ(kvBytesForTokens(a, 16, 32768), 147'456.0 * 32768);
}

TEST(HfFamilies, Qwen3MoeCountsEveryExpertAndTheActiveOnes)
{
    // Qwen/Qwen3-30B-A3B config.json. Published: 30,532,122,624 total (HF safetensors),
    // "3.3B activated" (model card). Per layer: attention 2,048 x 4,096 x 2 + 2 x 2,048 x 512 =
    // 18,874,368 + q/k norms 256; 128 experts x 3 x 2,048 x 768 = 603,979,776; router
    // 2,048 x 128 = 262,144; norms 4,096: 623,120,640 x 48 = 29,909,790,720; + embed and head
    // 2 x 151,936 x 2,048 = 622,329,856 + final norm 2,048. Active: 8 experts (37,748,736)
    // instead of 128: (18,874,624 + 37,748,736 + 262,144 + 4,096) x 48 + 622,331,904 =
    // 3,353,032,704.
    const ModelArch a = imported(R"({"model_type": "qwen3_moe", "attention_bias": false,
        "decoder_sparse_step": 1, "head_dim": 128, "hidden_size": 2048,
        "intermediate_size": 6144, "max_position_embeddings": 40960, "mlp_only_layers": [],
        "moe_intermediate_size": 768, "norm_topk_prob": true, "num_attention_heads": 32,
        "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
        "num_key_value_heads": 4, "tie_word_embeddings": false, "use_sliding_window": false,
        "vocab_size": 151936})");
    const ParamCounts c = countParameters(a);
    EXPECT_EQ(c.total, 30'532'122'624.0);
    EXPECT_EQ(c.active, 3'353'032'704.0);
    // KV: 2 x 48 x 4 x 128 x 2 B = 98,304 B/token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 98'304.0);
}

// Qwen/Qwen3-Coder-Next config.json (the Qwen3-Next-80B-A3B shape).
constexpr const char* kQwen3CoderNext = R"({"model_type": "qwen3_next", "hidden_size": 2048,
        "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
        "head_dim": 256, "vocab_size": 151936, "intermediate_size": 5120,
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
        "num_experts": 512, "num_experts_per_tok": 10, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4, "full_attention_interval": 4, "decoder_sparse_step": 1,
        "mlp_only_layers": [], "tie_word_embeddings": false, "max_position_embeddings": 262144})";

TEST(HfFamilies, Qwen3NextCountsGatedDeltaNetLayersAndCachesOnlyItsFullLayers)
{
    // Qwen/Qwen3-Coder-Next config.json (the Qwen3-Next-80B-A3B shape). Published:
    // 79,674,391,296 (HF safetensors). By hand: a Gated DeltaNet layer (key_dim 16 x 128 =
    // 2,048, value_dim 32 x 128 = 4,096): in_proj_qkvz 2,048 x 12,288 = 25,165,824, in_proj_ba
    // 2,048 x 64 = 131,072, conv1d 8,192 x 4 = 32,768, dt_bias + A_log 64, norm 128, out_proj
    // 4,096 x 2,048 = 8,388,608: 33,718,464. A gated full-attention layer: q 2,048 x 8,192
    // (heads and gate) + k, v 2 x 2,048 x 512 + o 4,096 x 2,048 + q/k norms 512 = 27,263,488.
    // MoE: 512 experts x 3 x 2,048 x 512 + shared 3,145,728 + its gate 2,048 + router
    // 2,048 x 512 = 1,614,809,088; norms 4,096. 36 x 1,648,531,648 + 12 x 1,642,076,672 +
    // embed and head 622,329,856 + final norm 2,048 = 79,674,391,296.
    const ModelArch a = imported(kQwen3CoderNext);
    EXPECT_EQ(countParameters(a).total, 79'674'391'296.0);
    EXPECT_EQ(countLayers(a, LayerAttention::Linear), 36);
    // Only the 12 full-attention layers cache K and V: 2 x 12 x 2 x 256 x 2 B = 24,576 B/token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 24'576.0);
    EXPECT_EQ(kvBytesForTokens(a, 16, 32768), 24'576.0 * 32768);

    // The 36 Gated DeltaNet layers keep a fixed state per sequence instead (vLLM
    // gated_delta_net_state_shape, bf16): conv (2 x 16 x 128 + 32 x 128) x (4 - 1) = 24,576
    // and recurrent 32 x 128 x 128 = 524,288 values a layer: 548,864 x 2 B x 36 = 39,518,208 B
    // a sequence; TP 2 halves both.
    EXPECT_EQ(linearStateBytesPerSequence(a, 1), 39'518'208.0);
    EXPECT_EQ(linearStateBytesPerSequence(a, 2), 39'518'208.0 / 2);
    // The serving pool holds each sequence's blocks and its state: at 4,096 tokens 256 blocks
    // of 16 x 24,576 B = 100,663,296 B plus 39,518,208 B.
    ServingConfig config;
    config.context = 4096;
    config.concurrency = 8;
    Gpu h200;
    h200.name = "H200";
    h200.memoryBytes = 150e9;
    h200.hbmBytesPerS = 4.8e12;
    h200.bf16Flops = 989e12;
    const ServingEstimate e = estimateServing(a, countParameters(a), config, h200, nullptr, false);
    EXPECT_EQ(e.linearStateBytesPerSequence, 39'518'208.0);
    EXPECT_EQ(e.maxSequences, std::floor(e.kvBudgetBytes / (100'663'296.0 + 39'518'208.0)));
    EXPECT_DOUBLE_EQ(e.perGpu.kvCache, 8 * (100'663'296.0 + 39'518'208.0));
    // A model without linear layers keeps none.
    EXPECT_EQ(linearStateBytesPerSequence(imported(R"({"model_type": "llama", "hidden_size": 4096,
        "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000,
        "intermediate_size": 11008})"), 1), 0.0);
}

TEST(HfFamilies, Gemma2AlternatesLocalAndGlobalLayers)
{
    // google/gemma-2-9b-it config.json. Published: 9,241,705,984 (HF safetensors). Four norms
    // per layer (pre/post attention, pre/post FFN); tied embeddings.
    const ModelArch a = imported(R"({"model_type": "gemma2", "attention_bias": false,
        "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584,
        "intermediate_size": 14336, "max_position_embeddings": 8192, "num_attention_heads": 16,
        "num_hidden_layers": 42, "num_key_value_heads": 8, "query_pre_attn_scalar": 256,
        "sliding_window": 4096, "vocab_size": 256000})");
    EXPECT_EQ(countParameters(a).total, 9'241'705'984.0);
    EXPECT_EQ(layerAttention(a, 0), LayerAttention::Sliding);
    EXPECT_EQ(layerAttention(a, 1), LayerAttention::Full);
    // KV per token and layer: 2 x 8 x 256 x 2 B = 8,192 B; 42 layers: 344,064 B/token. At
    // 8,192 tokens the 21 local layers keep 4,096 tokens, the 21 global ones 8,192:
    // 8,192 x (21 x 4,096 + 21 x 8,192) = 2,113,929,216 B (not 344,064 x 8,192 = 2.82 GB).
    EXPECT_EQ(kvBytesPerToken(a, 16), 344'064.0);
    EXPECT_EQ(kvBytesForTokens(a, 16, 8192), 2'113'929'216.0);
}

TEST(HfFamilies, Gemma3NestsItsTextConfigAndCountsTheSiglipTower)
{
    // google/gemma-3-4b-it config.json: text_config states only what differs from
    // Gemma3TextConfig's defaults (8 heads, 4 KV heads, head_dim 256, vocab 262,208,
    // sliding_window_pattern 6). Published: 4,300,079,472 (HF safetensors, the whole
    // checkpoint). Text by hand: embed 262,208 x 2,560 = 671,252,480 (tied); per layer
    // attention 2,560 x 2,048 x 2 + 2 x 2,560 x 1,024 = 15,728,640 + q/k norms 512, FFN 3 x
    // 2,560 x 10,240 = 78,643,200, 4 norms 10,240: 94,382,592 x 34 = 3,209,008,128; + final
    // norm 2,560 = 3,880,263,168. SigLIP: patch conv 3 x 14 x 14 x 1,152 + 1,152 = 678,528,
    // positions (896 / 14)^2 x 1,152 = 4,718,592, 27 layers x (4 x (1,152^2 + 1,152) + 1,152 x
    // 4,304 x 2 + 4,304 + 1,152 + 4 x 1,152 = 15,239,504) = 411,466,608, post norm 2,304:
    // 416,866,032; projector 1,152 x 2,560 + 1,152 = 2,950,272. Vision 419,816,304.
    const ModelArch a = imported(R"({"model_type": "gemma3",
        "architectures": ["Gemma3ForConditionalGeneration"], "mm_tokens_per_image": 256,
        "text_config": {"hidden_size": 2560, "intermediate_size": 10240,
            "model_type": "gemma3_text", "num_hidden_layers": 34,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
        "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
            "model_type": "siglip_vision_model", "num_attention_heads": 16,
            "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false}})");
    const ParamCounts c = countParameters(a);
    EXPECT_EQ(c.total, 4'300'079'472.0);
    EXPECT_EQ(a.visionParams, 419'816'304.0);
    EXPECT_EQ(c.total - c.vision, 3'880'263'168.0);
    // Layers 5, 11, 17, 23, 29 are global ((i + 1) % 6 == 0), the other 29 slide over 1,024.
    EXPECT_EQ(countLayers(a, LayerAttention::Full), 5);
    EXPECT_EQ(countLayers(a, LayerAttention::Sliding), 29);
    // KV per token and layer: 2 x 4 x 256 x 2 B = 4,096 B; x 34 = 139,264 B/token. A 32,768-
    // token sequence: 4,096 x (29 x 1,024 + 5 x 32,768) = 792,723,456 B.
    EXPECT_EQ(kvBytesPerToken(a, 16), 139'264.0);
    EXPECT_DOUBLE_EQ(kvBytesForTokens(a, 16, 32768), 792'723'456.0);
}

TEST(HfFamilies, GptOssHasSinksBiasesAndAlternatingWindows)
{
    // openai/gpt-oss-20b config.json. Published (model card): 20.91B total, 3.61B active
    // without the input embedding. By hand: attention 2,880 x 4,096 x 2 + 2 x 2,880 x 512 =
    // 26,542,080 + biases 4,096 + 2 x 512 + 2,880 + sinks 64 = 26,550,144; expert 3 x 2,880^2
    // + 2 x 2,880 + 2,880 = 24,891,840, x 32 = 796,538,880, router 2,880 x 32 + 32; norms 5,760:
    // 823,186,976 x 24 = 19,756,487,424; embed + head 2 x 201,088 x 2,880 = 1,158,266,880;
    // final norm 2,880: 20,914,757,184.
    const std::string layerTypes = [] {
        std::string t;
        for (int i = 0; i < 24; ++i)
            t += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
        return t;
    }();
    const ModelArch a = imported(R"({"model_type": "gpt_oss", "attention_bias": true,
        "experts_per_token": 4, "head_dim": 64, "hidden_size": 2880, "intermediate_size": 2880,
        "layer_types": [)" + layerTypes + R"(], "max_position_embeddings": 131072,
        "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
        "num_key_value_heads": 8, "num_local_experts": 32, "sliding_window": 128,
        "tie_word_embeddings": false, "vocab_size": 201088,
        "quantization_config": {"quant_method": "mxfp4"}})");
    const ParamCounts c = countParameters(a);
    EXPECT_EQ(c.total, 20'914'757'184.0);
    EXPECT_NEAR((c.active - c.embedding) / 1e9, 3.61, 0.005);
    EXPECT_EQ(a.attentionPattern.size(), 2u); // stored as its period: sliding, full
    // KV per token and layer: 2 x 8 x 64 x 2 B = 2,048 B; x 24 = 49,152 B/token. At 131,072
    // tokens: 2,048 x (12 x 128 + 12 x 131,072) = 3,224,371,200 B.
    EXPECT_EQ(kvBytesPerToken(a, 16), 49'152.0);
    EXPECT_EQ(kvBytesForTokens(a, 16, 131072), 3'224'371'200.0);
}

TEST(HfFamilies, GptOss120bMatchesItsModelCard)
{
    // openai/gpt-oss-120b: 36 layers, 128 experts; model card 116.83B total, 5.13B active.
    const ModelArch a = imported(R"({"model_type": "gpt_oss", "attention_bias": true,
        "head_dim": 64, "hidden_size": 2880, "intermediate_size": 2880,
        "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 36,
        "num_key_value_heads": 8, "num_local_experts": 128, "sliding_window": 128,
        "vocab_size": 201088})");
    const ParamCounts c = countParameters(a);
    EXPECT_NEAR(c.total / 1e9, 116.83, 0.005);
    EXPECT_NEAR((c.active - c.embedding) / 1e9, 5.13, 0.005);
}

TEST(HfFamilies, Llama4ScoutCountsItsVisionTowerAndChunkedLayers)
{
    // RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic config.json (the shape of
    // meta-llama/Llama-4-Scout-17B-16E-Instruct). Published: 108,641,793,536 (HF safetensors,
    // the whole checkpoint). Text: 48 MoE layers, each 16 experts + 1 shared of 3 x 5,120 x
    // 8,192 = 125,829,120, router 5,120 x 16; attention 5,120 x 5,120 x 2 + 2 x 5,120 x 1,024 =
    // 62,914,560; norms 10,240: 2,202,206,720 x 48 = 105,705,922,560; embed + head 2 x 202,048 x
    // 5,120 = 2,068,971,520; final norm 5,120: 107,769,861,120. Vision: unfold linear 588 x
    // 1,408 = 827,904, class 1,408, positions 577 x 1,408 = 812,416, pre/post LayerNorm 5,632,
    // 34 layers x 23,807,872 = 809,467,648, adapter 5,632 x 4,096 + 4,096^2 = 39,845,888;
    // projector 4,096 x 5,120 = 20,971,520: 871,932,416.
    const ModelArch a = imported(R"({"model_type": "llama4",
        "architectures": ["Llama4ForConditionalGeneration"],
        "text_config": {"attention_bias": false, "attention_chunk_size": 8192,
            "head_dim": 128, "hidden_size": 5120, "interleave_moe_layer_step": 1,
            "intermediate_size": 8192, "intermediate_size_mlp": 16384,
            "max_position_embeddings": 10485760, "model_type": "llama4_text",
            "no_rope_layers": [], "num_attention_heads": 40, "num_experts_per_tok": 1,
            "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16,
            "use_qk_norm": true, "vocab_size": 202048},
        "vision_config": {"hidden_act": "gelu", "hidden_size": 1408, "image_size": 336,
            "intermediate_size": 5632, "model_type": "llama4_vision_model",
            "multi_modal_projector_bias": false, "num_attention_heads": 16, "num_channels": 3,
            "num_hidden_layers": 34, "patch_size": 14, "pixel_shuffle_ratio": 0.5,
            "projector_input_dim": 4096, "projector_output_dim": 4096,
            "vision_output_dim": 4096}})");
    const ParamCounts c = countParameters(a);
    EXPECT_EQ(c.total, 108'641'793'536.0);
    EXPECT_EQ(a.visionParams, 871'932'416.0);
    EXPECT_NEAR(c.active / 1e9, 17.17, 0.005); // "17B active"
    // Every 4th layer is a global NoPE layer: 12 full, 36 chunked over 8,192 tokens.
    EXPECT_EQ(countLayers(a, LayerAttention::Full), 12);
    EXPECT_EQ(countLayers(a, LayerAttention::Chunked), 36);
    // KV per token and layer: 2 x 8 x 128 x 2 B = 4,096 B; x 48 = 196,608 B/token. At 131,072
    // tokens: 4,096 x (36 x 8,192 + 12 x 131,072) = 7,650,410,496 B.
    EXPECT_EQ(kvBytesPerToken(a, 16), 196'608.0);
    EXPECT_EQ(kvBytesForTokens(a, 16, 131072), 7'650'410'496.0);
}

TEST(HfFamilies, Llama4MaverickInterleavesMoeLayers)
{
    // interleave_moe_layer_step 2 (meta-llama/Llama-4-Maverick-17B-128E): odd layers MoE with
    // 128 experts, even layers dense of intermediate_size_mlp 16,384. By hand (text only):
    // 24 dense layers x (62,914,560 + 251,658,240 + 10,240) + 24 MoE layers x (62,914,560 +
    // 129 x 125,829,120 + 655,360 + 10,240) + 2,068,976,640 = 400,711,848,960; the model card's
    // 400B total (with the vision tower).
    const ModelArch a = imported(R"({"model_type": "llama4_text", "attention_chunk_size": 8192,
        "head_dim": 128, "hidden_size": 5120, "interleave_moe_layer_step": 2,
        "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_attention_heads": 40,
        "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8,
        "num_local_experts": 128, "vocab_size": 202048})");
    EXPECT_EQ(countParameters(a).total, 400'711'848'960.0);
    EXPECT_FALSE(isMoeLayer(a, 0));
    EXPECT_TRUE(isMoeLayer(a, 1));
}

TEST(HfFamilies, Glm4MoeIntellect3)
{
    // PrimeIntellect/INTELLECT-3 config.json (glm4_moe, the GLM-4.5-Air shape). Published:
    // 106,852,251,264 (HF safetensors; the MTP layer is not in the main model). Attention
    // 4,096 x 12,288 x 2 + 2 x 4,096 x 1,024 + q/k/v biases 12,288 + 2,048 = 109,066,240.
    const ModelArch a = imported(R"({"model_type": "glm4_moe", "attention_bias": true,
        "head_dim": 128, "hidden_size": 4096, "partial_rotary_factor": 0.5,
        "intermediate_size": 10944, "max_position_embeddings": 131072,
        "moe_intermediate_size": 1408, "num_attention_heads": 96, "n_routed_experts": 128,
        "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1,
        "num_hidden_layers": 46, "num_key_value_heads": 8, "num_nextn_predict_layers": 1,
        "tie_word_embeddings": false, "use_qk_norm": false, "vocab_size": 151552})");
    EXPECT_EQ(countParameters(a).total, 106'852'251'264.0);
    // KV: 2 x 46 x 8 x 128 x 2 B = 188,416 B/token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 188'416.0);
}

TEST(HfFamilies, DeepSeekV2LiteHasNoCorrectionBias)
{
    // deepseek-ai/DeepSeek-V2-Lite config.json. Published: 15,706,484,224 (HF safetensors).
    // q_lora_rank null: queries straight from hidden; topk_method "greedy": no router bias.
    const ModelArch a = imported(R"({"model_type": "deepseek_v2", "attention_bias": false,
        "first_k_dense_replace": 1, "hidden_size": 2048, "intermediate_size": 10944,
        "kv_lora_rank": 512, "max_position_embeddings": 163840, "moe_intermediate_size": 1408,
        "moe_layer_freq": 1, "n_routed_experts": 64, "n_shared_experts": 2,
        "num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 27,
        "num_key_value_heads": 16, "q_lora_rank": null, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "tie_word_embeddings": false, "topk_method": "greedy",
        "v_head_dim": 128, "vocab_size": 102400})");
    EXPECT_EQ(countParameters(a).total, 15'706'484'224.0);
    // MLA caches the latent and the RoPE key: 27 x (512 + 64) x 2 B = 31,104 B/token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 31'104.0);
}

TEST(HfFamilies, KimiK2IsTheDeepSeekV3Shape)
{
    // moonshotai/Kimi-K2-Instruct config.json (model_type kimi_k2, DeepseekV3ForCausalLM).
    // Published: 1,026,408,232,448 (HF safetensors).
    const ModelArch a = imported(R"({"model_type": "kimi_k2", "first_k_dense_replace": 1,
        "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
        "max_position_embeddings": 131072, "moe_intermediate_size": 2048,
        "n_routed_experts": 384, "n_shared_experts": 1, "num_attention_heads": 64,
        "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 64,
        "num_nextn_predict_layers": 0, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "topk_method": "noaux_tc", "v_head_dim": 128,
        "vocab_size": 163840})");
    EXPECT_EQ(countParameters(a).total, 1'026'408'232'448.0);
    // 61 x (512 + 64) x 2 B = 70,272 B/token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 70'272.0);
}

TEST(HfFamilies, MiniMaxM2HasPerLayerQkNorms)
{
    // MiniMaxAI/MiniMax-M2.7 config.json. Published: 228,689,764,864 (HF safetensors, without
    // the MTP modules). q/k norms span all heads: (48 + 8) x 128 = 7,168 per layer.
    std::string types;
    for (int i = 0; i < 62; ++i)
        types += i ? ", 1" : "1";
    const ModelArch a = imported(R"({"model_type": "minimax_m2", "attn_type_list": [)" + types
        + R"(], "head_dim": 128, "hidden_size": 3072, "intermediate_size": 1536,
        "max_position_embeddings": 204800, "num_attention_heads": 48,
        "num_experts_per_tok": 8, "num_hidden_layers": 62, "num_key_value_heads": 8,
        "num_local_experts": 256, "qk_norm_type": "per_layer", "rotary_dim": 64,
        "scoring_func": "sigmoid", "shared_intermediate_size": 0, "tie_word_embeddings": false,
        "use_qk_norm": true, "use_routing_bias": true, "vocab_size": 200064})");
    EXPECT_EQ(countParameters(a).total, 228'689'764'864.0);
    EXPECT_EQ(a.qkNorm, QkNorm::PerLayer);
    // KV: 2 x 62 x 8 x 128 x 2 B = 253,952 B/token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 253'952.0);
}

TEST(HfFamilies, Mistral3CountsThePixtralTowerAndProjector)
{
    // mistralai/Mistral-Small-3.1-24B-Instruct-2503 config.json. Published: 24,011,361,280
    // (HF safetensors). Text 23,572,403,200 (the Mistral block). Pixtral: patch conv 3 x 14 x
    // 14 x 1,024 = 602,112, ln_pre 1,024, 24 layers x (4 x 1,024^2 + 3 x 1,024 x 4,096 + 2 x
    // 1,024) = 402,702,336: 403,305,472. Projector: norm 1,024, patch merger 4,096 x 1,024,
    // linear_1 1,024 x 5,120, linear_2 5,120 x 5,120: 35,652,608.
    const ModelArch a = imported(R"({"model_type": "mistral3",
        "architectures": ["Mistral3ForConditionalGeneration"],
        "multimodal_projector_bias": false, "spatial_merge_size": 2,
        "text_config": {"head_dim": 128, "hidden_size": 5120, "intermediate_size": 32768,
            "max_position_embeddings": 131072, "model_type": "mistral",
            "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8,
            "sliding_window": null, "vocab_size": 131072},
        "vision_config": {"head_dim": 64, "hidden_size": 1024, "image_size": 1540,
            "intermediate_size": 4096, "model_type": "pixtral", "num_attention_heads": 16,
            "num_channels": 3, "num_hidden_layers": 24, "patch_size": 14}})");
    const ParamCounts c = countParameters(a);
    EXPECT_EQ(c.total, 24'011'361'280.0);
    EXPECT_EQ(a.visionParams, 438'958'080.0);
    EXPECT_EQ(c.active, 23'572'403'200.0); // a text token never runs the tower
    // KV: 2 x 40 x 8 x 128 x 2 B = 163,840 B/token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 163'840.0);
}

TEST(HfFamilies, LlavaWithAPixtralTowerCountsItsProjector)
{
    // Pixtral 12B in transformers' format (mistral-community/pixtral-12b, written by
    // transformers' convert_pixtral_weights_to_hf.py: LlavaConfig(vision_feature_layer=-1,
    // image_token_index=10); its text and vision sub-configs as transformers'
    // test_pixtral_reload reproduces them). By hand: text (Mistral NeMo) = 2 x 131,072 x 5,120
    // (untied) + 40 x (5,120 x 4,096 x 2 + 5,120 x 1,024 x 2 + 3 x 5,120 x 14,336 + 2 x 5,120)
    // + 5,120 = 12,247,782,400. Tower (PixtralVisionConfig defaults): patch conv 3 x 16 x 16 x
    // 1,024 = 786,432, ln_pre 1,024, 24 x 16,779,264 = 402,702,336: 403,489,792. LLaVA
    // projector, biased: 1,024 x 5,120 + 5,120 + 5,120 x 5,120 + 5,120 = 31,467,520. Total
    // 12,682,739,712 (Hugging Face's model page: 12.7B parameters, BF16).
    const ModelArch a = imported(R"({"model_type": "llava",
        "architectures": ["LlavaForConditionalGeneration"], "image_token_index": 10,
        "vision_feature_layer": -1, "vision_feature_select_strategy": "full",
        "text_config": {"model_type": "mistral", "hidden_size": 5120, "head_dim": 128,
            "num_attention_heads": 32, "intermediate_size": 14336,
            "max_position_embeddings": 1024000, "num_hidden_layers": 40,
            "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0,
            "sliding_window": null, "vocab_size": 131072},
        "vision_config": {"model_type": "pixtral", "head_dim": 64, "hidden_act": "silu",
            "image_size": 1024, "patch_size": 16, "rope_theta": 10000.0}})");
    const ParamCounts c = countParameters(a);
    EXPECT_EQ(a.visionParams, 434'957'312.0);
    EXPECT_EQ(c.total, 12'682'739'712.0);
    EXPECT_EQ(c.active, 12'247'782'400.0);
    // The preset is the same checkpoint.
    const Expected<PresetLibrary> lib = builtinPresets();
    ASSERT_TRUE(lib.ok());
    const ModelPreset* pixtral = lib->findModel("pixtral-12b");
    ASSERT_NE(pixtral, nullptr);
    EXPECT_EQ(countParameters(pixtral->arch).total, c.total);
    EXPECT_EQ(pixtral->arch.visionParams, a.visionParams);
    // A LLaVA of another tower (CLIP) is refused by name, not miscounted.
    const auto clip = importHfConfig(R"({"model_type": "llava",
        "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
            "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
            "vocab_size": 32064, "max_position_embeddings": 4096},
        "vision_config": {"model_type": "clip_vision_model"}})");
    ASSERT_FALSE(clip.ok());
    EXPECT_EQ(clip.error().path, "vision_config.model_type");
}

TEST(HfFamilies, MiniMaxText01CountsItsLightningLayers)
{
    // MiniMax-Text-01 in transformers' format (MiniMaxAI/MiniMax-Text-01-hf config.json: 80
    // layer_types, seven "linear_attention" then one "full_attention", ten times). By hand:
    // embedding and untied head 2 x 200,064 x 6,144 = 2,458,386,432; a lightning layer
    // (MiniMaxLightningAttention) qkv 6,144 x 24,576 + output gate 6,144 x 8,192 + norm 8,192
    // + out 8,192 x 6,144 = 251,666,432, 70 of them; a softmax layer q 6,144 x 8,192 + k, v
    // 2 x 6,144 x 1,024 + o 8,192 x 6,144 = 113,246,208, 10 of them; every layer's MoE 32 x 3 x
    // 6,144 x 9,216 + router 6,144 x 32 = 5,436,014,592 and two norms 12,288, 80 of them; the
    // final norm 6,144: 456,089,655,296 (the model card: 456B). Active: 2 of 32 experts, so
    // 48,403,306,496 with the embedding and head, 45,944,920,064 without (the card's 45.9B).
    std::string types;
    for (int i = 0; i < 80; ++i)
        types += std::string(i ? ", " : "") + ((i + 1) % 8 == 0 ? "\"full_attention\"" : "\"linear_attention\"");
    const ModelArch a = imported(R"({"model_type": "minimax", "layer_types": [)" + types + R"(],
        "head_dim": 128, "hidden_size": 6144, "intermediate_size": 9216,
        "max_position_embeddings": 10240000, "num_attention_heads": 64, "num_experts_per_tok": 2,
        "num_hidden_layers": 80, "num_key_value_heads": 8, "num_local_experts": 32,
        "postnorm": true, "rms_norm_eps": 1e-05, "rope_theta": 10000000, "rotary_dim": 64,
        "shared_intermediate_size": 0, "shared_moe_mode": "sigmoid", "sliding_window": null,
        "tie_word_embeddings": false, "vocab_size": 200064})");
    const ParamCounts c = countParameters(a);
    EXPECT_EQ(c.total, 456'089'655'296.0);
    EXPECT_EQ(c.active, 48'403'306'496.0);
    EXPECT_EQ(c.active - 2 * 200'064.0 * 6'144, 45'944'920'064.0);
    EXPECT_EQ(a.ropeFraction, 0.5);
    // The remote code's attn_type_list (0 lightning, 1 softmax) reads the same.
    std::string list;
    for (int i = 0; i < 80; ++i)
        list += std::string(i ? ", " : "") + ((i + 1) % 8 == 0 ? "1" : "0");
    const ModelArch remote = imported(R"({"model_type": "minimax_text_01", "attn_type_list": [)" + list
        + R"(], "head_dim": 128, "hidden_size": 6144, "intermediate_size": 9216,
        "max_position_embeddings": 10240000, "num_attention_heads": 64, "num_experts_per_tok": 2,
        "num_hidden_layers": 80, "num_key_value_heads": 8, "num_local_experts": 32,
        "rope_theta": 10000000, "rotary_dim": 64, "tie_word_embeddings": false,
        "vocab_size": 200064})");
    EXPECT_EQ(countParameters(remote).total, c.total);
    EXPECT_EQ(remote.attentionPattern, a.attentionPattern);
    // Only the 10 softmax layers cache keys and values: 2 x 10 x 8 x 128 x 2 B = 40,960 B a
    // token. The 70 lightning layers each hold a 128 x 128 state per head, 64 heads, in bf16
    // (vLLM's linear_attention_state_shape and _dtype): 70 x 64 x 128 x 128 x 2 B =
    // 146,800,640 B a sequence at TP 1.
    EXPECT_EQ(kvBytesPerToken(a, 16), 40'960.0);
    EXPECT_EQ(linearStateBytesPerSequence(a, 1), 146'800'640.0);
    // The preset is the same model.
    const Expected<PresetLibrary> lib = builtinPresets();
    ASSERT_TRUE(lib.ok());
    const ModelPreset* preset = lib->findModel("minimax-text-01");
    ASSERT_NE(preset, nullptr);
    nlohmann::json presetJson = archToJson(preset->arch), importedJson = archToJson(a);
    presetJson.erase("name");
    importedJson.erase("name");
    EXPECT_EQ(presetJson, importedJson);
}

TEST(HfFamilies, Qwen35DenseTextModelMatchesAPublishedCheckpoint)
{
    // A Qwen3.5-2B checkpoint saved by transformers 5.17 as Qwen3_5ForCausalLM (the text model
    // alone, no vision tower, no MTP weights): lawrence3699/Jev-Style-2B-Decision-v3
    // config.json, model.safetensors.index.json metadata total_parameters 1,881,825,088. By
    // hand: a Gated DeltaNet layer (key_dim 16 x 128 = 2,048, value_dim 16 x 128 = 2,048):
    // in_proj_qkv 2,048 x 6,144 = 12,582,912, in_proj_z 2,048 x 2,048 = 4,194,304, in_proj_b
    // and in_proj_a 2 x 2,048 x 16 = 65,536, conv1d 6,144 x 4 = 24,576, dt_bias + A_log 32,
    // norm 128, out_proj 2,048 x 2,048 = 4,194,304: 21,061,792, 18 of them. A gated
    // full-attention layer: q (heads and gate) 2,048 x 2 x 8 x 256 = 8,388,608, k and v
    // 2 x 2,048 x 512 = 2,097,152, o 2,048 x 2,048 = 4,194,304, q/k norms 512: 14,680,576, 6 of
    // them. Every layer: FFN 3 x 2,048 x 6,144 = 37,748,736 and norms 4,096. Tied embedding
    // 248,320 x 2,048 = 508,559,360, final norm 2,048: 1,881,825,088.
    const ModelArch a = imported(R"({"architectures": ["Qwen3_5ForCausalLM"],
        "attention_bias": false, "attn_output_gate": true, "dtype": "bfloat16",
        "eos_token_id": 248044, "full_attention_interval": 4, "head_dim": 256,
        "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 6144,
        "layer_types": [)" + qwen35Layers(24) + R"(],
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
        "linear_num_value_heads": 16, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
        "max_position_embeddings": 262144, "mlp_only_layers": [], "model_type": "qwen3_5_text",
        "mtp_num_hidden_layers": 1, "mtp_use_dedicated_embeddings": false,
        "num_attention_heads": 8, "num_hidden_layers": 24, "num_key_value_heads": 2,
        "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06, "rope_parameters": {
        "mrope_interleaved": true, "mrope_section": [11, 11, 10], "partial_rotary_factor": 0.25,
        "rope_theta": 10000000, "rope_type": "default"}, "tie_word_embeddings": true,
        "transformers_version": "5.17.0", "use_cache": false, "vocab_size": 248320})");
    EXPECT_EQ(countParameters(a).total, 1'881'825'088.0);
    EXPECT_EQ(countLayers(a, LayerAttention::Linear), 18);
    EXPECT_TRUE(a.attentionOutputGate);
    EXPECT_EQ(a.mtpLayers, 1);
    EXPECT_EQ(a.ropeTheta, 10'000'000.0);
    EXPECT_EQ(a.ropeFraction, 0.25);
    // The 6 full-attention layers cache K and V: 2 x 6 x 2 x 256 x 2 B = 12,288 B a token.
    EXPECT_EQ(kvBytesPerToken(a, 16), 12'288.0);
    // mamba_ssm_dtype "float32": the 18 linear layers keep their conv state (6,144 x 3 values)
    // in bf16 and their recurrent state (16 x 128 x 128 = 262,144 values) in fp32:
    // 18 x (36,864 + 1,048,576) = 19,537,920 B a sequence (18 x 561,152 = 10,100,736 in bf16).
    ASSERT_TRUE(a.linearAttention);
    EXPECT_TRUE(a.linearAttention->float32State);
    EXPECT_EQ(linearStateBytesPerSequence(a, 1, true), 19'537'920.0);
    EXPECT_EQ(linearStateBytesPerSequence(a, 1, false), 10'100'736.0);
    // The state dtype survives the plan's architecture JSON.
    const nlohmann::json j = archToJson(a);
    EXPECT_EQ(j.at("linear_attention").at("state_dtype"), "float32");
    const Expected<ModelArch> back = archFromJson(j, "model");
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(*back, a);
}

TEST(HfFamilies, Qwen35MoeTextModelMatchesAPublishedCheckpoint)
{
    // Qwen3.5-35B-A3B with its experts pruned to 180 by REAP, saved by transformers 5.2 as the
    // text model alone: bryce-hoehn/Qwen3.5-25B-REAP-A3B-Coding config.json (qwen3_5_moe_text,
    // no intermediate_size) and model.safetensors.index.json total_parameters 25,091,371,648.
    // By hand: a Gated DeltaNet layer (value_dim 32 x 128 = 4,096) 33,718,464 and a gated
    // full-attention layer (16 heads) 27,263,488, as Qwen3-Next's; every layer's MoE 180
    // experts x 3 x 2,048 x 512 = 566,231,040 + shared expert 3,145,728 + its gate 2,048 +
    // router 2,048 x 180 = 368,640, and norms 4,096. 30 x 603,470,016 + 10 x 597,015,040 +
    // embedding and head 2 x 508,559,360 + final norm 2,048 = 25,091,371,648.
    const ModelArch a = imported(R"({"architectures": ["Qwen3_5ForConditionalGeneration"],
        "attention_bias": false, "attn_output_gate": true, "dtype": "float16",
        "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu", "hidden_size": 2048,
        "layer_types": [)" + qwen35Layers(40) + R"(],
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
        "max_position_embeddings": 262144, "mlp_only_layers": [], "model_type": "qwen3_5_moe_text",
        "moe_intermediate_size": 512, "mtp_num_hidden_layers": 1,
        "mtp_use_dedicated_embeddings": false, "num_attention_heads": 16, "num_experts": 180,
        "num_experts_per_tok": 8, "num_hidden_layers": 40, "num_key_value_heads": 2,
        "output_router_logits": false, "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06,
        "rope_parameters": {"mrope_interleaved": true, "mrope_section": [11, 11, 10],
        "partial_rotary_factor": 0.25, "rope_theta": 10000000, "rope_type": "default"},
        "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": 512,
        "tie_word_embeddings": false, "transformers_version": "5.2.0", "use_cache": true,
        "vocab_size": 248320})");
    EXPECT_EQ(countParameters(a).total, 25'091'371'648.0);
    ASSERT_TRUE(a.moe);
    EXPECT_EQ(a.moe->experts, 180);
    EXPECT_EQ(a.moe->sharedExperts, 1);
    EXPECT_TRUE(a.moe->sharedExpertGate);
}

TEST(HfFamilies, Qwen35MultimodalCountsItsVisionTowerAndItsStateInFp32)
{
    // Qwen/Qwen3.5-35B-A3B as Qwen3_5MoeForConditionalGeneration: the text_config above with
    // all 256 experts, keys it leaves out taken from Qwen3_5MoeTextConfig's defaults, and the
    // vision_config of the released checkpoint (depth 27, width 1,152, intermediate 4,304,
    // out_hidden_size 2,048). Text by hand: the MoE of 256 experts is 805,306,368 + 3,145,728
    // + 2,048 + 524,288 = 808,978,432 a layer: 30 x 842,700,992 + 10 x 836,246,016 +
    // 1,017,118,720 + 2,048 = 34,660,610,688. Vision (Qwen3_5VisionModel): patch_embed
    // Conv3d 3 x 2 x 16 x 16 x 1,152 + 1,152 = 1,770,624; pos_embed 2,304 x 1,152 = 2,654,208;
    // a block: two LayerNorms 4,608, qkv 1,152 x 3,456 + 3,456 = 3,984,768, proj 1,328,256,
    // fc1 1,152 x 4,304 + 4,304 = 4,962,512, fc2 4,304 x 1,152 + 1,152 = 4,959,360:
    // 15,239,504 x 27 = 411,466,608; merger: LayerNorm 2,304, fc1 4,608 x 4,608 + 4,608 =
    // 21,238,272, fc2 4,608 x 2,048 + 2,048 = 9,439,232. Vision 446,571,248; the checkpoint
    // 35,107,181,936 (the MTP module ships beside it: mtp_num_hidden_layers 1).
    std::string config = R"({"architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe", "image_token_id": 248056, "tie_word_embeddings": false,
        "text_config": {"model_type": "qwen3_5_moe_text", "attn_output_gate": true,
        "hidden_size": 2048, "num_hidden_layers": 40,
        "layer_types": [)" + qwen35Layers(40) + R"(],
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "mamba_ssm_dtype": "float32",
        "num_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "mtp_num_hidden_layers": 1,
        "max_position_embeddings": 262144, "rope_parameters": {"rope_theta": 10000000,
        "partial_rotary_factor": 0.25, "mrope_section": [11, 11, 10], "mrope_interleaved": true,
        "rope_type": "default"}},
        "vision_config": {"model_type": "qwen3_5_moe_vision", "depth": 27, "hidden_size": 1152,
        "intermediate_size": 4304, "num_heads": 16, "in_channels": 3, "patch_size": 16,
        "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 2048,
        "num_position_embeddings": 2304, "hidden_act": "gelu_pytorch_tanh"}})";
    const ModelArch a = imported(config);
    EXPECT_EQ(a.visionParams, 446'571'248.0);
    EXPECT_EQ(countParameters(a).total, 34'660'610'688.0 + 446'571'248.0);
    EXPECT_EQ(a.mtpLayers, 1);
    // Active: 8 of 256 experts, so 40 x 248 x 3,145,728 = 31,205,621,760 fewer text
    // parameters: 3,454,988,928 (the name's "A3B"; the vision tower is not in the per-token
    // count).
    EXPECT_EQ(countParameters(a).active, 3'454'988'928.0);
    // KV: 2 x 10 x 2 x 256 x 2 B = 20,480 B a token. State: 30 x (24,576 x 2 B + 524,288 x
    // 4 B) = 64,389,120 B a sequence at TP 1, split by TP.
    EXPECT_EQ(kvBytesPerToken(a, 16), 20'480.0);
    EXPECT_EQ(linearStateBytesPerSequence(a, 1, true), 64'389'120.0);
    EXPECT_EQ(linearStateBytesPerSequence(a, 2, true), 64'389'120.0 / 2);

    // Serving holds that state for every sequence whatever the engine, since the config asks
    // for fp32.
    ServingConfig serving;
    serving.context = 4096;
    serving.concurrency = 4;
    const ServingEstimate e
        = estimateServing(a, countParameters(a), serving, testing::h100(), nullptr, false);
    EXPECT_EQ(e.linearStateBytesPerSequence, 64'389'120.0);

    // The preset is the same model.
    const Expected<PresetLibrary> lib = builtinPresets();
    ASSERT_TRUE(lib.ok());
    const ModelPreset* preset = lib->findModel("qwen3.5-35b-a3b");
    ASSERT_NE(preset, nullptr);
    nlohmann::json presetJson = archToJson(preset->arch), importedJson = archToJson(a);
    presetJson.erase("name");
    importedJson.erase("name");
    EXPECT_EQ(presetJson, importedJson);

    // A vision tower with DeepStack mergers (Qwen3-VL's) is not Qwen3.5's: refused by name.
    std::string deepstack = config;
    deepstack.replace(deepstack.find("\"hidden_act\": \"gelu_pytorch_tanh\""),
        std::string("\"hidden_act\": \"gelu_pytorch_tanh\"").size(),
        "\"deepstack_visual_indexes\": [8, 16, 24]");
    const Expected<ModelArch> refused = importHfConfig(deepstack);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().path, "vision_config.deepstack_visual_indexes");
}

TEST(HfFamilies, SglangKeepsGatedDeltaNetStateInFp32)
{
    // Qwen3-Next states no mamba_ssm_dtype: vLLM keeps its state in the model dtype, SGLang in
    // fp32 (server_args.py mamba_ssm_dtype "float32"). The 36 layers: 36 x (24,576 x 2 B +
    // 524,288 x 4 B) = 77,266,944 B a sequence under SGLang, 39,518,208 B under vLLM.
    const ModelArch a = imported(kQwen3CoderNext);
    const Expected<PresetLibrary> lib = builtinPresets();
    ASSERT_TRUE(lib.ok());
    const EngineProfile* sglang = lib->findEngine("sglang");
    const EngineProfile* vllm = lib->findEngine("vllm");
    ASSERT_NE(sglang, nullptr);
    ASSERT_NE(vllm, nullptr);
    EXPECT_TRUE(float32RecurrentState(a, *sglang));
    EXPECT_NE(sglang->stateSource.find("mamba_ssm_dtype"), std::string::npos);
    EXPECT_FALSE(float32RecurrentState(a, *vllm));
    ServingConfig serving;
    serving.context = 4096;
    serving.concurrency = 4;
    Gpu h200;
    h200.name = "H200";
    h200.memoryBytes = 150e9;
    h200.hbmBytesPerS = 4.8e12;
    h200.bf16Flops = 989e12;
    serving.engineProfile = *sglang;
    EXPECT_EQ(estimateServing(a, countParameters(a), serving, h200, nullptr, false)
                  .linearStateBytesPerSequence,
        77'266'944.0);
    serving.engineProfile = *vllm;
    EXPECT_EQ(estimateServing(a, countParameters(a), serving, h200, nullptr, false)
                  .linearStateBytesPerSequence,
        39'518'208.0);
    // A lightning layer's state is not SGLang's mamba cache: MiniMax-Text-01 stays in bf16.
    const ModelPreset* minimax = lib->findModel("minimax-text-01");
    ASSERT_NE(minimax, nullptr);
    EXPECT_FALSE(float32RecurrentState(minimax->arch, *sglang));
}

TEST(HfFamilies, Gemma3ServingHoldsPerLayerWindowsAndTheVisionTower)
{
    // The gemma-3-27b preset served in bf16 on one H200, one 32,768-token sequence. KV per
    // token: 2 x 62 layers x 16 KV heads x 128 x 2 B = 507,904 B; the 52 local layers keep
    // 1,024 tokens and the 10 global ones 32,768: mean (52 x 1,024 + 10 x 32,768) / 62 = 6,144,
    // so the sequence holds 507,904 x 6,144 = 3,120,562,176 B (16.6 GB if every layer were
    // full). Weights: the whole checkpoint, tower included, 27,432,406,640 x 2 B.
    const Expected<PresetLibrary> lib = builtinPresets();
    ASSERT_TRUE(lib.ok());
    const ModelPreset* gemma = lib->findModel("gemma-3-27b");
    const GpuPreset* h200 = lib->findGpu("h200");
    ASSERT_NE(gemma, nullptr);
    ASSERT_NE(h200, nullptr);
    ServingConfig config;
    config.context = 32768;
    config.concurrency = 1;
    const ServingEstimate s = estimateServing(
        gemma->arch, countParameters(gemma->arch), config, h200->gpu, nullptr, false);
    EXPECT_EQ(s.kvBytesPerToken, 507'904.0);
    EXPECT_EQ(s.perGpu.kvCache, 3'120'562'176.0);
    EXPECT_EQ(s.weightsBytesPerGpu, 27'432'406'640.0 * 2);
}

TEST(HfFamilies, NestedErrorsNameTheTextConfigKey)
{
    const auto missing = importHfConfig(R"({"model_type": "mistral3", "vision_config": {}})");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().path, "text_config");
    const auto bad = importHfConfig(R"({"model_type": "gemma3",
        "text_config": {"num_hidden_layers": 0}, "vision_config": {}})");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "text_config.num_hidden_layers");
    const auto lightning = importHfConfig(R"({"model_type": "minimax_m2", "attn_type_list": [0, 1],
        "head_dim": 128, "hidden_size": 3072, "intermediate_size": 1536,
        "num_attention_heads": 48, "num_experts_per_tok": 8, "num_hidden_layers": 2,
        "num_key_value_heads": 8, "num_local_experts": 256, "vocab_size": 200064})");
    ASSERT_FALSE(lightning.ok());
    EXPECT_EQ(lightning.error().path, "attn_type_list");
    const auto types = importHfConfig(R"({"model_type": "gemma2", "layer_types": ["full_attention"],
        "head_dim": 256, "hidden_size": 3584, "intermediate_size": 14336,
        "num_attention_heads": 16, "num_hidden_layers": 42, "num_key_value_heads": 8,
        "vocab_size": 256000})");
    ASSERT_FALSE(types.ok());
    EXPECT_EQ(types.error().path, "layer_types");
}

TEST(HfFamilies, ALayerPeriodBelowOneIsRefusedByName)
{
    // A period of 0 local-then-global layers (fuzz_hf's first finding on the Qwen3.5 seeds,
    // fuzz/corpus/hf/crash-qwen35-zero-interval.json) threw std::length_error from a vector of
    // 2^64 - 1 layers before the error could be returned; each family names its key instead.
    const std::pair<std::string, std::string> cases[] = {
        { R"({"model_type": "qwen3_5_text", "full_attention_interval": 0})",
            "full_attention_interval" },
        { std::string(kQwen3CoderNext).replace(
              std::string(kQwen3CoderNext).find("\"full_attention_interval\": 4"),
              std::string("\"full_attention_interval\": 4").size(),
              "\"full_attention_interval\": 0"),
            "full_attention_interval" },
        { R"({"model_type": "gemma3", "text_config": {"sliding_window_pattern": 0},
              "vision_config": {}})",
            "text_config.sliding_window_pattern" },
    };
    for (const auto& [config, key] : cases) {
        SCOPED_TRACE(key);
        const Expected<ModelArch> refused = importHfConfig(config);
        ASSERT_FALSE(refused.ok());
        EXPECT_EQ(refused.error().path, key);
    }
}

} // namespace
} // namespace envelope
