#include "hubsettings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace envelope::hub {

bool isTruthy(const std::string& value)
{
    std::string v = value;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    return v == "1" || v == "true" || v == "yes" || v == "on";
}

HubSettings hubSettingsFromEnvironment(const EnvLookup& env)
{
    const auto get = [&](const char* name) -> std::string {
        const std::optional<std::string> value = env(name);
        return value ? *value : std::string();
    };
    HubSettings s;
    if (std::string endpoint = get("HF_ENDPOINT"); !endpoint.empty())
        s.endpoint = endpoint;
    s.token = get("HF_TOKEN");
    s.offline = isTruthy(get("HF_HUB_OFFLINE"));
    if (const std::string seconds = get("HF_HUB_DOWNLOAD_TIMEOUT"); !seconds.empty()) {
        char* end = nullptr;
        const double value = std::strtod(seconds.c_str(), &end);
        if (end && *end == '\0' && std::isfinite(value) && value > 0 && value <= 86400)
            s.totalTimeout = std::chrono::milliseconds(static_cast<long long>(value * 1000));
    }
    std::string cacheHome = get("XDG_CACHE_HOME");
    if (cacheHome.empty() || cacheHome.front() != '/') {
        const std::string home = get("HOME");
        cacheHome = home.empty() ? std::string() : home + "/.cache";
    }
    if (!cacheHome.empty())
        s.cacheDir = cacheHome + "/envelope/hf";
    return s;
}

HubSettings hubSettingsFromEnvironment()
{
    return hubSettingsFromEnvironment([](const char* name) -> std::optional<std::string> {
        const char* value = std::getenv(name);
        return value ? std::optional<std::string>(value) : std::nullopt;
    });
}

} // namespace envelope::hub
