#include "document/modelimport.h"

#include "hubfetch.h"
#include "hubsettings.h"

namespace envelope::ui {

ModelChoice importedHfModel(
    ModelArch arch, const std::string& configPath, const std::string& fallbackName)
{
    ModelChoice model;
    model.form = ModelChoice::Form::HfConfig;
    model.hfConfigPath = configPath;
    model.arch = std::move(arch);
    if (model.arch.name.empty())
        model.arch.name = fallbackName;
    return model;
}

ModelChoice importedHubModel(ModelArch arch, const std::string& id)
{
    ModelChoice model;
    model.form = ModelChoice::Form::HubId;
    model.hubId = id;
    model.arch = std::move(arch);
    model.arch.name = id; // as readPlan names an {"hf_id": ...} model
    return model;
}

HubReader hubCacheReader()
{
    return [](const std::string& text) -> Expected<std::string> {
        Expected<hub::HubId> id = hub::parseHubId(text);
        if (!id)
            return id.error();
        hub::HubSettings settings = hub::hubSettingsFromEnvironment();
        settings.offline = true;
        Expected<hub::HubConfig> config = hub::fetchHubConfig(*id, settings);
        if (!config)
            return Error { config.error().path,
                config.error().message + "; fetch it with the Training tab's Hub id box, or "
                    "envelope-cli import-hf " + text };
        return std::move(config->text);
    };
}

} // namespace envelope::ui
