// A Hugging Face Hub model id ("meta-llama/Llama-3.1-8B", optionally "@revision") and what
// follows from it without a network: the config.json URL, the cache path, and the message for
// an HTTP status. Pure functions, unit-tested in tests/hub/test_hubid.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/expected.h"

namespace envelope::hub {

// The allowed form, quoted by every message about a malformed id.
inline constexpr std::string_view kHubIdForm
    = "OWNER/NAME or OWNER/NAME@REVISION, each part made of letters, digits, '.', '_' and '-' "
      "(not starting or ending with '.' or '-', no '..', at most 96 characters), e.g. "
      "meta-llama/Llama-3.1-8B";

struct HubId {
    std::string owner;
    std::string name;
    std::string revision = "main";

    std::string repo() const { return owner + "/" + name; } // "meta-llama/Llama-3.1-8B"
    // The id as the user would write it: "owner/name", with "@revision" unless it is main.
    std::string toString() const;
};

// Parses "owner/name" or "owner/name@revision" (default revision "main"). Exactly one '/';
// owner, name and revision each non-empty, of [A-Za-z0-9._-], not starting or ending with '.'
// or '-', without "..", at most 96 characters (the Hub's own rules for repo names; they also
// keep every part a plain folder name in the cache). The error names the allowed form.
Expected<HubId> parseHubId(std::string_view text);

// True when `arg` reads as a local path rather than an id: "-" (standard input), an absolute
// or ./ ../ ~ path, more than one '/', or a name ending in ".json". The caller checks first
// whether the file exists; this decides what a missing one was meant to be.
bool looksLikeLocalPath(std::string_view arg);

// {endpoint}/{owner}/{name}/resolve/{revision}/config.json; trailing '/' of the endpoint dropped.
std::string configUrl(const HubId& id, std::string_view endpoint);

// {cacheDir}/{owner}/{name}/{revision}/config.json, where cacheDir is the hf cache folder
// (HubSettings::cacheDir: ${XDG_CACHE_HOME:-~/.cache}/envelope/hf).
std::string cachePath(const HubId& id, std::string_view cacheDir);

// The id whose cached config.json `path` is (cachePath's inverse), for naming an imported
// model by its id rather than a cache path; nullopt for any other path.
std::optional<HubId> hubIdFromCachePath(std::string_view path, std::string_view cacheDir);

// What an HTTP status other than 200 means for `id`, and what to do: 401/403 a gated or private
// repository (accept the licence, set HF_TOKEN), 404 no such repository, revision or file, 429
// rate limited, 5xx the Hub's trouble. `errorCode` is the Hub's X-Error-Code header
// (GatedRepo, RepoNotFound, RevisionNotFound, EntryNotFound) when it sent one; `tokenSet`
// whether HF_TOKEN was sent. The message starts with the id.
std::string httpStatusMessage(const HubId& id, long status, std::string_view errorCode,
    std::string_view endpoint, bool tokenSet);

// True for the statuses that say nothing about the repository (429, 5xx): like a network
// failure, a cached copy may stand in.
bool isTransientStatus(long status);

} // namespace envelope::hub
