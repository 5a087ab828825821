// Vision towers and projectors of multimodal Hugging Face checkpoints: the weights the engines
// load beside the language model (issue 23: `model.params` is the whole checkpoint,
// `model.vision_params` this share). Counts follow the modules transformers creates:
//   Mistral 3: PixtralVisionModel + Mistral3MultiModalProjector (modeling_pixtral.py,
//     modeling_mistral3.py); Mistral-Small-3.1-24B: 403,305,472 + 35,652,608.
//   LLaVA with a Pixtral tower (Pixtral 12B in transformers' format, mistral-community/
//     pixtral-12b): PixtralVisionModel + LlavaMultiModalProjector (modeling_llava.py);
//     403,489,792 + 31,467,520.
//   Gemma 3: SiglipVisionModel without its head + Gemma3MultiModalProjector
//     (modeling_siglip.py, modeling_gemma3.py); gemma-3-4b: 416,866,032 + 2,950,272.
//   Llama 4: Llama4VisionModel (unfold patch embedding, class and position embeddings, encoder,
//     pixel-shuffle MLP adapter) + Llama4MultiModalProjector (modeling_llama4.py); Scout:
//     850,960,896 + 20,971,520.
//   Qwen3.5: Qwen3_5VisionModel with its patch merger (modeling_qwen3_5.py); the 35B-A3B's
//     (out_hidden_size 2048): 446,571,248.
// The worked figures are in tests/core/test_hf_families.cpp.
#include <cmath>
#include <string>

#include "model/detail.h"

namespace envelope::hf {
namespace {

constexpr std::int64_t kImage = 100'000;

// One encoder layer: q, k, v, o of width x width, an FFN, two norms. `gated`: gate/up/down
// (Pixtral), else fc1/fc2. Biases on every projection when `bias`; LayerNorm (weight + bias)
// or RMSNorm (weight) by `layerNorm`.
double encoderLayer(double width, double inner, bool gated, bool bias, bool layerNorm)
{
    const double attention = 4 * width * width + (bias ? 4 * width : 0.0);
    const double ffn = gated ? 3 * width * inner : 2 * width * inner + (bias ? inner + width : 0.0);
    const double norms = 2 * (layerNorm ? 2 * width : width);
    return attention + ffn + norms;
}

// Reads vision_config with the vision class's defaults for keys it leaves out.
json withDefaults(const json& config, json defaults)
{
    if (config.contains("vision_config") && config.at("vision_config").is_object())
        for (const auto& item : config.at("vision_config").items())
            defaults[item.key()] = item.value();
    return defaults;
}

// PixtralVisionModel alone (patch_conv, ln_pre, the encoder layers).
double pixtralTower(ConfigReader& v)
{
    const double width = static_cast<double>(v.integer("hidden_size", 1, kHidden));
    const double inner = static_cast<double>(v.integer("intermediate_size", 1, kFfn));
    const double layers = static_cast<double>(v.integer("num_hidden_layers", 1, kLayers));
    const double channels = static_cast<double>(v.integer("num_channels", 1, 64));
    const double patch = static_cast<double>(v.integer("patch_size", 1, kImage));
    return channels * patch * patch * width + width
        + layers * encoderLayer(width, inner, true, false, false);
}

double pixtral(ConfigReader& v, ConfigReader& top, std::int64_t textHidden)
{
    // PixtralVisionModel: patch_conv (no bias), ln_pre RMSNorm, layers of attention_norm,
    // q/k/v/o without bias, gated feed_forward, ffn_norm. Mistral3MultiModalProjector: norm
    // (RMSNorm of the vision width), patch_merger (width x merge^2 -> width, no bias),
    // linear_1 (width -> text hidden) and linear_2 (text -> text), biased when
    // multimodal_projector_bias.
    const double width = static_cast<double>(v.integer("hidden_size", 1, kHidden));
    const double tower = pixtralTower(v);
    const double merge = static_cast<double>(top.integer("spatial_merge_size", 1, 64, 2));
    const bool bias = top.boolean("multimodal_projector_bias", false);
    const double text = static_cast<double>(textHidden);
    const double projector = width + width * merge * merge * width + width * text
        + (bias ? text : 0.0) + text * text + (bias ? text : 0.0);
    return tower + projector;
}

double llavaPixtral(ConfigReader& v, ConfigReader& top, std::int64_t textHidden)
{
    // LlavaMultiModalProjector: linear_1 (vision width -> text hidden), the activation,
    // linear_2 (text -> text), both biased when multimodal_projector_bias (LlavaConfig's
    // default true; vision_feature_layer -1 feeds one layer's width, not a concatenation).
    const double width = static_cast<double>(v.integer("hidden_size", 1, kHidden));
    const bool bias = top.boolean("multimodal_projector_bias", true);
    const double text = static_cast<double>(textHidden);
    if (top.raw().contains("vision_feature_layer") && top.raw().at("vision_feature_layer").is_array())
        top.fail("vision_feature_layer", "must be one layer (a list concatenates layers: not counted)");
    return pixtralTower(v) + width * text + (bias ? text : 0.0) + text * text + (bias ? text : 0.0);
}

double siglip(ConfigReader& v, std::int64_t textHidden)
{
    // SiglipVisionModel: patch_embedding Conv2d with bias, a learned position per patch of
    // (image_size / patch_size)^2, layers of LayerNorm + biased q/k/v/out + LayerNorm +
    // fc1/fc2, post_layernorm; vision_use_head false drops the pooling head (Gemma 3).
    // Gemma3MultiModalProjector: mm_input_projection_weight (vision width x text hidden) and
    // mm_soft_emb_norm (RMSNorm of the vision width).
    const double width = static_cast<double>(v.integer("hidden_size", 1, kHidden));
    const double inner = static_cast<double>(v.integer("intermediate_size", 1, kFfn));
    const double layers = static_cast<double>(v.integer("num_hidden_layers", 1, kLayers));
    const double channels = static_cast<double>(v.integer("num_channels", 1, 64));
    const double patch = static_cast<double>(v.integer("patch_size", 1, kImage));
    const double image = static_cast<double>(v.integer("image_size", 1, kImage));
    if (v.boolean("vision_use_head", false))
        v.fail("vision_use_head", "must be false (Gemma 3's tower has no pooling head)");
    const double side = std::floor(image / patch);
    const double tower = channels * patch * patch * width + width + side * side * width
        + layers * encoderLayer(width, inner, false, true, true) + 2 * width;
    return tower + width * static_cast<double>(textHidden) + width;
}

double llama4Vision(ConfigReader& v, std::int64_t textHidden)
{
    // Llama4VisionModel: patch_embedding (an unfold + linear of channels x patch^2 -> width,
    // no bias), class_embedding, positional_embedding_vlm ((image / patch)^2 + 1 positions),
    // layernorm_pre and layernorm_post (LayerNorm), encoder layers (biased q/k/v/o and
    // fc1/fc2, two LayerNorms), vision_adapter: pixel shuffle then fc1 (intermediate ->
    // projector_input_dim) and fc2 (projector_output_dim -> projector_output_dim), no bias.
    // Llama4MultiModalProjector: linear_1 (vision_output_dim -> text hidden, no bias).
    const double width = static_cast<double>(v.integer("hidden_size", 1, kHidden));
    const double inner = static_cast<double>(v.integer("intermediate_size", 1, kFfn));
    const double layers = static_cast<double>(v.integer("num_hidden_layers", 1, kLayers));
    const double channels = static_cast<double>(v.integer("num_channels", 1, 64));
    const double patch = static_cast<double>(v.integer("patch_size", 1, kImage));
    const double image = static_cast<double>(v.integer("image_size", 1, kImage));
    const double projIn = static_cast<double>(v.integer("projector_input_dim", 1, kFfn));
    const double projOut = static_cast<double>(v.integer("projector_output_dim", 1, kFfn));
    const double output = static_cast<double>(v.integer("vision_output_dim", 1, kFfn));
    if (v.boolean("multi_modal_projector_bias", false))
        v.fail("multi_modal_projector_bias", "must be false (Llama 4's projector has no bias)");
    const double side = std::floor(image / patch);
    const double tower = channels * patch * patch * width + width + (side * side + 1) * width
        + 2 * (2 * width) + layers * encoderLayer(width, inner, false, true, true);
    const double adapter = inner * projIn + projOut * projOut;
    return tower + adapter + output * static_cast<double>(textHidden);
}

double qwen35Vision(ConfigReader& v)
{
    // Qwen3_5VisionModel (modeling_qwen3_5.py; Qwen3-VL's tower without DeepStack):
    // patch_embed Conv3d (channels x temporal x patch x patch -> width, with bias), pos_embed
    // (num_position_embeddings x width), blocks of LayerNorm + biased qkv/proj + LayerNorm +
    // biased linear_fc1/linear_fc2, and the merger: a LayerNorm of the width, linear_fc1
    // (width x merge^2 square, biased) and linear_fc2 (-> out_hidden_size, biased).
    const double width = static_cast<double>(v.integer("hidden_size", 1, kHidden));
    const double inner = static_cast<double>(v.integer("intermediate_size", 1, kFfn));
    const double layers = static_cast<double>(v.integer("depth", 1, kLayers));
    const double channels = static_cast<double>(v.integer("in_channels", 1, 64));
    const double patch = static_cast<double>(v.integer("patch_size", 1, kImage));
    const double temporal = static_cast<double>(v.integer("temporal_patch_size", 1, 64));
    const double positions = static_cast<double>(v.integer("num_position_embeddings", 1, kPositions));
    const double merge = static_cast<double>(v.integer("spatial_merge_size", 1, 64));
    const double out = static_cast<double>(v.integer("out_hidden_size", 1, kHidden));
    if (v.raw().contains("deepstack_visual_indexes") && v.raw().at("deepstack_visual_indexes").is_array()
        && !v.raw().at("deepstack_visual_indexes").empty())
        v.fail("deepstack_visual_indexes", "must be empty (Qwen3.5's tower has no DeepStack mergers)");
    const double merged = width * merge * merge;
    const double tower = channels * temporal * patch * patch * width + width + positions * width
        + layers * encoderLayer(width, inner, false, true, true);
    return tower + 2 * width + merged * merged + merged + merged * out + out;
}

} // namespace

Expected<double> visionParams(
    const std::string& modelType, const json& config, std::int64_t textHidden)
{
    if (!config.contains("vision_config") || !config.at("vision_config").is_object())
        return Error { "vision_config",
            fmt::format("is required for model_type \"{}\" (an object)", modelType) };
    ConfigReader top(config);
    double params = 0;
    if (modelType == "mistral3") {
        // PixtralVisionConfig defaults (configuration_pixtral.py).
        const json vision = withDefaults(config,
            json { { "hidden_size", 1024 }, { "intermediate_size", 4096 },
                { "num_hidden_layers", 24 }, { "num_channels", 3 }, { "patch_size", 16 } });
        ConfigReader v(vision, "vision_config.");
        params = pixtral(v, top, textHidden);
        if (auto e = v.error())
            return *e;
    } else if (modelType == "llava") {
        const json& vc = config.at("vision_config");
        const std::string tower = vc.contains("model_type") && vc.at("model_type").is_string()
            ? vc.at("model_type").get<std::string>()
            : std::string("clip_vision_model");
        if (tower != "pixtral")
            return Error { "vision_config.model_type",
                fmt::format("must be \"pixtral\" (the LLaVA towers counted), got \"{}\"", tower) };
        // PixtralVisionConfig defaults (configuration_pixtral.py).
        const json vision = withDefaults(config,
            json { { "hidden_size", 1024 }, { "intermediate_size", 4096 },
                { "num_hidden_layers", 24 }, { "num_channels", 3 }, { "patch_size", 16 } });
        ConfigReader v(vision, "vision_config.");
        params = llavaPixtral(v, top, textHidden);
        if (auto e = v.error())
            return *e;
    } else if (modelType == "gemma3") {
        // SiglipVisionConfig defaults (configuration_siglip.py).
        const json vision = withDefaults(config,
            json { { "hidden_size", 768 }, { "intermediate_size", 3072 },
                { "num_hidden_layers", 12 }, { "num_channels", 3 }, { "patch_size", 16 },
                { "image_size", 224 } });
        ConfigReader v(vision, "vision_config.");
        params = siglip(v, textHidden);
        if (auto e = v.error())
            return *e;
    } else if (modelType == "llama4") {
        // Llama4VisionConfig defaults (configuration_llama4.py).
        const json vision = withDefaults(config,
            json { { "hidden_size", 768 }, { "intermediate_size", 5632 },
                { "num_hidden_layers", 34 }, { "num_channels", 3 }, { "patch_size", 14 },
                { "image_size", 448 }, { "projector_input_dim", 4096 },
                { "projector_output_dim", 4096 }, { "vision_output_dim", 7680 } });
        ConfigReader v(vision, "vision_config.");
        params = llama4Vision(v, textHidden);
        if (auto e = v.error())
            return *e;
    } else if (modelType == "qwen3_5" || modelType == "qwen3_5_moe") {
        // Qwen3_5VisionConfig defaults (configuration_qwen3_5.py); out_hidden_size is the
        // text model's hidden size in the released checkpoints.
        const json vision = withDefaults(config,
            json { { "depth", 27 }, { "hidden_size", 1152 }, { "intermediate_size", 4304 },
                { "num_heads", 16 }, { "in_channels", 3 }, { "patch_size", 16 },
                { "spatial_merge_size", 2 }, { "temporal_patch_size", 2 },
                { "out_hidden_size", 3584 }, { "num_position_embeddings", 2304 } });
        ConfigReader v(vision, "vision_config.");
        params = qwen35Vision(v);
        if (auto e = v.error())
            return *e;
    } else {
        return Error { "model_type",
            fmt::format("\"{}\" has no vision tower counter (mistral3, llava with pixtral, gemma3, "
                        "llama4, qwen3_5, qwen3_5_moe)",
                modelType) };
    }
    if (auto e = top.error())
        return *e;
    return params;
}

} // namespace envelope::hf
