// A model's config.json by Hub id, through the cache: what `envelope-cli import-hf OWNER/NAME`
// and the GUI's model box call. The text is then imported exactly as a local file is
// (importHfConfig); nothing here knows about models.
//
// Cache: HubSettings::cacheDir/{owner}/{name}/{revision}/config.json, written atomically
// (io::saveFile: a temporary file renamed over the old one) after every successful fetch.
// - offline (HF_HUB_OFFLINE, --offline): the cache only; a miss is an error saying so;
// - online: always asks the Hub (a branch moves); when the Hub cannot be reached (network,
//   timeout, TLS, 429, 5xx) and a cached copy exists, that copy is used with a warning;
// - 401/403/404, an oversized answer or one that is not JSON are errors, never served from the
//   cache (the repository's answer is definite) and never written to it.
#pragma once

#include <string>
#include <vector>

#include "base/expected.h"
#include "hubid.h"
#include "hubsettings.h"

namespace envelope::hub {

struct HubConfig {
    std::string text; // the config.json
    std::string cachePath; // where it is cached (empty when there is no cache folder)
    bool fromCache = false;
    std::vector<std::string> warnings; // e.g. the cached copy stood in for an unreachable Hub
};

// Errors start with the id and say what to do (Error::path is empty).
Expected<HubConfig> fetchHubConfig(const HubId& id, const HubSettings& settings);

} // namespace envelope::hub
