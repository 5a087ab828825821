// import-hf: a Hugging Face config.json as a model object, from a file or by Hub id (issue 23).
// The Hub's copy goes through envelope_hub (fetch and cache) and is then imported exactly as a
// local file is.
#include "cmd_importhf.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "hubfetch.h"
#include "io/files.h"
#include "model/attention.h"
#include "model/model.h"
#include "serving/checkpoint.h"
#include "plan/planio.h"
#include "planload.h"

namespace envelope::cli {
namespace {

int fail(const std::string& message)
{
    std::cerr << "envelope-cli: " << message << "\n";
    return kExitFailure;
}

// One line a planning doc can paste; a mixture of experts names its experts and top-k.
// MLA caches one latent per token, not KV heads: name its width instead (issue 23).
std::string summaryLine(const ModelArch& arch, const ParamCounts& counts)
{
    std::string summary = arch.mla
        ? fmt::format("{} layers, hidden {}, {} heads (MLA: KV latent {} + RoPE {}{})", arch.layers,
            arch.hidden, arch.heads, arch.mla->kvLoraRank, arch.mla->qkRopeHeadDim,
            arch.mla->sparse() ? fmt::format("; sparse: top-{} by a {}-head indexer",
                                     arch.mla->indexTopK, arch.mla->indexHeads)
                               : std::string())
        : fmt::format("{} layers, hidden {}, {} heads ({} KV)", arch.layers, arch.hidden,
            arch.heads, arch.kvHeadsOrDefault());
    if (!arch.attentionPattern.empty()) {
        const int full = countLayers(arch, LayerAttention::Full);
        const int sliding = countLayers(arch, LayerAttention::Sliding);
        const int chunked = countLayers(arch, LayerAttention::Chunked);
        const int linear = countLayers(arch, LayerAttention::Linear);
        std::string kinds;
        const auto add = [&](int n, const std::string& what) {
            if (n > 0)
                kinds += (kinds.empty() ? "" : ", ") + fmt::format("{} {}", n, what);
        };
        add(sliding, fmt::format("sliding-window ({})", arch.slidingWindow));
        add(chunked, fmt::format("chunked ({})", arch.attentionChunk));
        add(linear, "linear-attention");
        add(full, "full-attention");
        summary += ", layers: " + kinds;
    }
    if (arch.moe)
        summary += fmt::format(", MoE {} experts, top-{}{}", arch.moe->experts, arch.moe->topK,
            arch.moe->sharedExperts > 0 ? fmt::format(" + {} shared", arch.moe->sharedExperts)
                                        : std::string());
    summary += fmt::format(
        ", {} parameters ({} active)", formatCount(counts.total), formatCount(counts.active));
    if (counts.vision > 0)
        summary += fmt::format(", vision tower {}", formatCount(counts.vision));
    return summary;
}

// The config.json text and the name errors are reported under: the file as given, or the id.
struct Source {
    std::string text;
    std::string name;
};

// An existing path (or "-") is a file, read as before; so is anything that reads as a path
// (hub::looksLikeLocalPath), to keep "no such file" for a mistyped one. Else a Hub id.
std::optional<Source> readSource(const ImportHfCommand& c, int& status)
{
    std::error_code ec;
    if (c.source == "-" || std::filesystem::exists(c.source, ec)
        || hub::looksLikeLocalPath(c.source)) {
        Expected<std::string> text = io::readTextInput(c.source);
        if (!text) {
            status = fail(text.error().toString());
            return std::nullopt;
        }
        return Source { std::move(*text), c.source };
    }
    Expected<hub::HubId> id = hub::parseHubId(c.source);
    if (!id) {
        status = fail("CONFIG: not a file, and " + id.error().message);
        return std::nullopt;
    }
    hub::HubSettings settings = hub::hubSettingsFromEnvironment();
    settings.offline = settings.offline || c.offline;
    Expected<hub::HubConfig> config = hub::fetchHubConfig(*id, settings);
    if (!config) {
        status = fail(config.error().toString());
        return std::nullopt;
    }
    for (const std::string& w : config->warnings)
        std::cerr << "warning: " << w << "\n";
    return Source { std::move(config->text), id->toString() };
}

} // namespace

void registerImportHf(CLI::App& app, ImportHfCommand& c)
{
    c.command = app.add_subcommand("import-hf",
        "Print the model object (JSON) of a Hugging Face config.json, from a file or by Hub id, "
        "and its params");
    c.command
        ->add_option("CONFIG", c.source,
            "config.json, or a Hub id OWNER/NAME[@REVISION] (HF_ENDPOINT, HF_TOKEN)")
        ->required();
    c.command->add_flag("--model-only", c.modelOnly, "print only the model object");
    c.command->add_flag("--offline", c.offline,
        "Hub id: use only the cache (~/.cache/envelope/hf), as HF_HUB_OFFLINE=1 does");
}

int runImportHf(const ImportHfCommand& c)
{
    int status = kExitOk;
    const std::optional<Source> source = readSource(c, status);
    if (!source)
        return status;
    Expected<ModelArch> arch = importHfConfig(source->text);
    if (!arch)
        return fail(source->name + ": " + arch.error().toString());
    if (c.modelOnly) {
        std::cout << writeArchitecture(*arch);
        return kExitOk;
    }
    const ParamCounts counts = countParameters(*arch);
    nlohmann::ordered_json out;
    out["model"] = nlohmann::ordered_json::parse(writeArchitecture(*arch));
    out["params"] = static_cast<std::int64_t>(std::llround(counts.total));
    out["active_params"] = static_cast<std::int64_t>(std::llround(counts.active));
    out["summary"] = summaryLine(*arch, counts);
    // The checkpoint's own formats (quantization_config), as the plan's serving keys.
    Expected<std::optional<CheckpointFormats>> formats = checkpointFormats(source->text);
    if (!formats)
        std::cerr << "warning: " << source->name << ": " << formats.error().toString()
                  << "; no serving formats are printed\n";
    else if (*formats) {
        out["serving"] = checkpointServingKeys(**formats);
        out["serving_source"] = (*formats)->reason;
    }
    std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    return kExitOk;
}

} // namespace envelope::cli
