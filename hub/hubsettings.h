// Where and how to fetch from the Hub, from the environment variables the Hugging Face tools
// use (huggingface_hub's conventions), so a shell set up for them works unchanged:
//   HF_ENDPOINT               the Hub's base URL (default https://huggingface.co; a mirror)
//   HF_TOKEN                  sent as "Authorization: Bearer ..." (gated and private repos)
//   HF_HUB_OFFLINE            1/true/yes/on: the cache only, no network
//   HF_HUB_DOWNLOAD_TIMEOUT   seconds for the whole transfer (default 30)
//   XDG_CACHE_HOME, HOME      the cache: ${XDG_CACHE_HOME:-~/.cache}/envelope/hf
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace envelope::hub {

inline constexpr const char* kDefaultEndpoint = "https://huggingface.co";

struct HubSettings {
    std::string endpoint = kDefaultEndpoint;
    std::string token; // empty: no Authorization header
    bool offline = false;
    // The hf cache folder; empty when neither XDG_CACHE_HOME nor HOME is set (no cache then).
    std::string cacheDir;
    std::chrono::milliseconds connectTimeout { 10'000 };
    std::chrono::milliseconds totalTimeout { 30'000 };
    // A config.json is a few KB (DeepSeek-V3's: 1.7 KB); a bigger answer is not one.
    std::size_t maxBytes = 4u << 20;
};

// An environment variable's value, nullopt when unset (tests pass a map instead of getenv).
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The settings the variables above give; a variable that is set but empty counts as unset, a
// relative XDG_CACHE_HOME is ignored (the XDG spec), and an HF_HUB_DOWNLOAD_TIMEOUT that is not
// a positive number of seconds leaves the default.
HubSettings hubSettingsFromEnvironment(const EnvLookup& env);

// The same from the process environment.
HubSettings hubSettingsFromEnvironment();

// HF_HUB_OFFLINE's truth values, as huggingface_hub reads them: 1, true, yes, on (any case).
bool isTruthy(const std::string& value);

} // namespace envelope::hub
