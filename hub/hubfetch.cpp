#include "hubfetch.h"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "hubhttp.h"
#include "io/files.h"
#include "io/savefile.h"

namespace envelope::hub {
namespace {

namespace fs = std::filesystem;

bool cached(const std::string& path)
{
    std::error_code ec;
    return !path.empty() && fs::is_regular_file(path, ec);
}

} // namespace

Expected<HubConfig> fetchHubConfig(const HubId& id, const HubSettings& settings)
{
    HubConfig result;
    if (!settings.cacheDir.empty())
        result.cachePath = cachePath(id, settings.cacheDir);
    const std::string who = id.toString() + ": ";

    const auto fromCache = [&](const std::string& why) -> Expected<HubConfig> {
        Expected<std::string> text = io::readTextFile(result.cachePath);
        if (!text)
            return Error { {}, who + "the cached copy cannot be read: " + text.error().toString() };
        result.text = std::move(*text);
        result.fromCache = true;
        if (!why.empty())
            result.warnings.push_back(why);
        return result;
    };

    if (settings.offline) {
        if (cached(result.cachePath))
            return fromCache({});
        return Error { {},
            who + "offline (--offline or HF_HUB_OFFLINE) and not in the cache"
                + (result.cachePath.empty()
                        ? std::string(" (no cache folder: neither XDG_CACHE_HOME nor HOME is set)")
                        : " (" + result.cachePath + ")")
                + "; import it once with the network to cache it" };
    }

    HttpRequest request;
    request.url = configUrl(id, settings.endpoint);
    request.bearerToken = settings.token;
    request.connectTimeout = settings.connectTimeout;
    request.totalTimeout = settings.totalTimeout;
    request.maxBytes = settings.maxBytes;
    const HttpResponse response = httpGet(request);

    if (response.failure == HttpResponse::Failure::TooLarge)
        return Error { {}, who + request.url + ": " + response.failureMessage };
    const bool unreachable = response.failure == HttpResponse::Failure::Network;
    if (unreachable || isTransientStatus(response.status)) {
        const std::string problem = unreachable
            ? "cannot reach the Hub at " + settings.endpoint + ": " + response.failureMessage
            : httpStatusMessage(id, response.status, response.errorCode, settings.endpoint,
                !settings.token.empty());
        if (cached(result.cachePath))
            return fromCache((unreachable ? who : std::string()) + problem
                + "; using the cached copy " + result.cachePath);
        return Error { {},
            (unreachable ? who : std::string()) + problem
                + (unreachable ? "; check the network (proxies: https_proxy, no_proxy) or "
                                 "HF_ENDPOINT"
                               : "") };
    }
    if (response.status != 200)
        return Error { {},
            httpStatusMessage(id, response.status, response.errorCode, settings.endpoint,
                !settings.token.empty()) };
    if (!nlohmann::json::accept(response.body))
        return Error { {},
            who + "the Hub's config.json is not valid JSON (" + request.url
                + "); nothing was cached" };

    result.text = response.body;
    if (!result.cachePath.empty()) {
        std::error_code ec;
        fs::create_directories(fs::path(result.cachePath).parent_path(), ec);
        const std::optional<Error> saved = ec ? std::optional<Error>(Error { {}, ec.message() })
                                              : io::saveFile(result.cachePath, result.text);
        if (saved)
            result.warnings.push_back(
                who + "fetched, but not cached (" + result.cachePath + "): " + saved->toString());
    }
    return result;
}

} // namespace envelope::hub
