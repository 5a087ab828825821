#include "planload.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "hubfetch.h"
#include "hubsettings.h"
#include "io/files.h"
#include "plan/planio.h"
#include "plan/setpath.h"

namespace envelope::cli {

// A plan's {"hf_id": ...}: the Hub's config.json as import-hf fetches it (HF_ENDPOINT,
// HF_TOKEN, the cache, HF_HUB_OFFLINE=1 for the cache alone); its warnings (a cached copy used
// when the Hub cannot be reached) on stderr.
Expected<std::string> readHubConfig(const std::string& text)
{
    Expected<hub::HubId> id = hub::parseHubId(text);
    if (!id)
        return id.error();
    Expected<hub::HubConfig> config = hub::fetchHubConfig(*id, hub::hubSettingsFromEnvironment());
    if (!config)
        return config.error();
    for (const std::string& w : config->warnings)
        std::cerr << "warning: " << w << "\n";
    return std::move(config->text);
}

std::optional<PlanFile> readPlanFile(
    const std::string& path, const std::vector<std::string>& sets, int& status)
{
    Expected<PresetLibrary> presets = io::loadPresets();
    if (!presets) {
        std::cerr << "envelope-cli: " << presets.error().toString() << "\n";
        status = kExitFailure;
        return std::nullopt;
    }
    Expected<std::string> text = io::readTextInput(path);
    if (!text) {
        std::cerr << "envelope-cli: " << text.error().toString() << "\n";
        status = kExitFailure;
        return std::nullopt;
    }
    std::string planText = std::move(text).value();
    if (!sets.empty()) {
        Expected<std::string> edited = applySetsToText(planText, sets);
        if (!edited) {
            std::cerr << path << ": " << edited.error().toString() << "\n";
            status = kExitBadPlan;
            return std::nullopt;
        }
        planText = std::move(edited).value();
    }
    ReadOptions options;
    options.readFile = io::readTextFile;
    options.readHub = readHubConfig;
    // A plan on standard input finds its hf_config relative to the working directory.
    options.baseDir = path == "-" ? std::string() : std::filesystem::path(path).parent_path().string();
    Expected<Plan> plan = readPlan(planText, *presets, options);
    if (!plan) {
        std::cerr << path << (sets.empty() ? "" : " (with --set)") << ": "
                  << plan.error().toString() << "\n";
        status = kExitBadPlan;
        return std::nullopt;
    }
    return PlanFile { std::move(presets).value(), std::move(plan).value(),
        report::planSections(planText) };
}

void addSetOption(CLI::App* command, std::vector<std::string>& sets)
{
    command
        ->add_option("--set", sets,
            "override one plan field by its JSON path, e.g. --set training.tp=8 --set gpu=h200 "
            "(repeatable)")
        ->allow_extra_args(false);
}

Estimate estimatePlan(const Plan& plan, bool explain)
{
    EstimateOptions options;
    options.explain = explain;
    Estimate e = estimate(plan, options);
    for (std::string& w : planWarnings(plan))
        if (std::find(e.warnings.begin(), e.warnings.end(), w) == e.warnings.end())
            e.warnings.push_back(std::move(w));
    return e;
}

} // namespace envelope::cli
