#include "document/modelimport.h"

namespace envelope::ui {

ModelChoice importedHfModel(
    ModelArch arch, const std::string& configPath, const std::string& fallbackName)
{
    ModelChoice model;
    model.form = configPath.empty() ? ModelChoice::Form::Architecture : ModelChoice::Form::HfConfig;
    model.hfConfigPath = configPath;
    model.arch = std::move(arch);
    if (model.arch.name.empty())
        model.arch.name = fallbackName;
    return model;
}

} // namespace envelope::ui
