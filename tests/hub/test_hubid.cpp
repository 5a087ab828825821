// The pure parts of envelope_hub, no network: id parsing and validation, the URL and cache path
// an id gives, the message for each HTTP status, and the settings the HF_* variables give.
#include <gtest/gtest.h>

#include <map>

#include "hubid.h"
#include "hubsettings.h"

namespace {

using namespace envelope;
using namespace envelope::hub;

TEST(HubId, OwnerNameWithTheDefaultRevision)
{
    const Expected<HubId> id = parseHubId("meta-llama/Llama-3.1-8B");
    ASSERT_TRUE(id) << id.error().toString();
    EXPECT_EQ(id->owner, "meta-llama");
    EXPECT_EQ(id->name, "Llama-3.1-8B");
    EXPECT_EQ(id->revision, "main");
    EXPECT_EQ(id->toString(), "meta-llama/Llama-3.1-8B");
}

TEST(HubId, RevisionAfterAt)
{
    const Expected<HubId> id
        = parseHubId("Qwen/Qwen3-32B@0123456789abcdef0123456789abcdef01234567");
    ASSERT_TRUE(id) << id.error().toString();
    EXPECT_EQ(id->repo(), "Qwen/Qwen3-32B");
    EXPECT_EQ(id->revision, "0123456789abcdef0123456789abcdef01234567");
    EXPECT_EQ(id->toString(), "Qwen/Qwen3-32B@0123456789abcdef0123456789abcdef01234567");
    EXPECT_EQ(parseHubId("a/b@v1.0")->revision, "v1.0");
}

TEST(HubId, MalformedIdsAreRefusedNamingTheAllowedForm)
{
    // Each of these would leave the cache folder, reach another URL, or is not an id at all.
    const std::vector<std::pair<std::string, std::string>> bad = {
        { "gpt2", "no '/'" },
        { "a/b/c", "more than one '/'" },
        { "/name", "the owner is empty" },
        { "owner/", "the name is empty" },
        { "../etc", "the owner \"..\"" },
        { "owner/..", "contains \"..\"" },
        { "owner/a..b", "contains \"..\"" },
        { "owner/.hidden", "starts or ends" },
        { "owner/name-", "starts or ends" },
        { "own er/name", "a character other than" },
        { "owner/na%2Fme", "a character other than" },
        { "owner/name?x=1", "a character other than" },
        { "owner/name@", "the revision is empty" },
        { "owner/name@refs/pr/1", "the revision \"refs/pr/1\" has a character" },
        { "owner/name@..", "the revision" },
        { "owner/" + std::string(97, 'a'), "longer than 96" },
    };
    for (const auto& [text, why] : bad) {
        const Expected<HubId> id = parseHubId(text);
        ASSERT_FALSE(id) << text;
        const std::string message = id.error().toString();
        EXPECT_NE(message.find(why), std::string::npos) << text << ": " << message;
        EXPECT_NE(message.find("OWNER/NAME or OWNER/NAME@REVISION"), std::string::npos) << message;
    }
}

TEST(HubId, LocalPathsAreToldApartFromIds)
{
    for (const char* path : { "-", "/abs/config.json", "./config.json", "../x/config.json",
             "~/config.json", "models/llama/config.json", "config.json", "llama/config.json" })
        EXPECT_TRUE(looksLikeLocalPath(path)) << path;
    for (const char* id : { "meta-llama/Llama-3.1-8B", "Qwen/Qwen3-32B@main", "gpt2", "a/b.c" })
        EXPECT_FALSE(looksLikeLocalPath(id)) << id;
}

TEST(HubId, ConfigUrlAndCachePath)
{
    const HubId id = *parseHubId("meta-llama/Llama-3.1-8B@v2");
    EXPECT_EQ(configUrl(id, "https://huggingface.co"),
        "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/v2/config.json");
    EXPECT_EQ(configUrl(id, "http://127.0.0.1:8080/"),
        "http://127.0.0.1:8080/meta-llama/Llama-3.1-8B/resolve/v2/config.json");
    EXPECT_EQ(cachePath(id, "/home/u/.cache/envelope/hf"),
        "/home/u/.cache/envelope/hf/meta-llama/Llama-3.1-8B/v2/config.json");
    EXPECT_EQ(cachePath(id, "/c/"), "/c/meta-llama/Llama-3.1-8B/v2/config.json");
}

TEST(HubId, CachePathBackToTheId)
{
    const HubId id = *parseHubId("meta-llama/Llama-3.1-8B@v2");
    const std::optional<HubId> back = hubIdFromCachePath(cachePath(id, "/c/hf"), "/c/hf/");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->toString(), "meta-llama/Llama-3.1-8B@v2");
    EXPECT_EQ(hubIdFromCachePath("/c/hf/o/n/main/config.json", "/c/hf")->toString(), "o/n");
    for (const char* other :
        { "/c/hf/o/config.json", "/c/hf/o/n/main/x/config.json", "/d/hf/o/n/main/config.json",
            "/c/hf/o/n/main/other.json", "/c/hf/../n/main/config.json" })
        EXPECT_FALSE(hubIdFromCachePath(other, "/c/hf")) << other;
    EXPECT_FALSE(hubIdFromCachePath("/c/hf/o/n/main/config.json", ""));
}

std::string message(
    long status, const char* code = "", bool token = false, const char* text = "o/m")
{
    return httpStatusMessage(*parseHubId(text), status, code, "https://huggingface.co", token);
}

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

TEST(HubStatus, GatedOrPrivateSaysAcceptTheLicenceAndSetTheToken)
{
    for (long status : { 401L, 403L }) {
        const std::string m = message(status);
        EXPECT_TRUE(m.starts_with("o/m: ")) << m;
        EXPECT_TRUE(has(m, "gated or private")) << m;
        EXPECT_TRUE(has(m, "accept the licence on the model page (https://huggingface.co/o/m)"))
            << m;
        EXPECT_TRUE(has(m, "set HF_TOKEN")) << m;
        EXPECT_TRUE(has(m, "HF_TOKEN is not set")) << m;
        EXPECT_TRUE(has(m, "HTTP " + std::to_string(status))) << m;
    }
    const std::string gated = message(403, "GatedRepo", true);
    EXPECT_TRUE(has(gated, "the repository is gated;")) << gated;
    EXPECT_TRUE(has(gated, "the HF_TOKEN sent has no access to it")) << gated;
}

TEST(HubStatus, NotFoundSaysWhichPartIsMissing)
{
    EXPECT_TRUE(has(message(404), "no such repository, revision \"main\" or config.json"));
    EXPECT_TRUE(has(message(404, "RepoNotFound"), "no such repository on the Hub (HTTP 404)"));
    // The Hub answers 401 RepoNotFound for a repository it will not admit exists.
    EXPECT_TRUE(has(message(401, "RepoNotFound"), "if it is private, set HF_TOKEN"));
    EXPECT_TRUE(has(message(404, "RevisionNotFound", false, "o/m@v9"), "no revision \"v9\""));
    EXPECT_TRUE(has(message(404, "EntryNotFound"), "has no config.json at revision \"main\""));
}

TEST(HubStatus, OtherStatuses)
{
    EXPECT_TRUE(has(message(429), "rate-limiting"));
    EXPECT_TRUE(has(message(503), "server error (HTTP 503)"));
    EXPECT_TRUE(has(message(418),
        "unexpected answer from the Hub (HTTP 418) for "
        "https://huggingface.co/o/m/resolve/main/config.json"));
    EXPECT_TRUE(isTransientStatus(503));
    EXPECT_TRUE(isTransientStatus(429));
    EXPECT_FALSE(isTransientStatus(404));
    EXPECT_FALSE(isTransientStatus(401));
}

HubSettings fromMap(const std::map<std::string, std::string>& vars)
{
    return hubSettingsFromEnvironment([&](const char* name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
}

TEST(HubSettings, DefaultsAndTheHfVariables)
{
    const HubSettings none = fromMap({ { "HOME", "/home/u" } });
    EXPECT_EQ(none.endpoint, "https://huggingface.co");
    EXPECT_EQ(none.token, "");
    EXPECT_FALSE(none.offline);
    EXPECT_EQ(none.cacheDir, "/home/u/.cache/envelope/hf");
    EXPECT_EQ(none.connectTimeout.count(), 10'000);
    EXPECT_EQ(none.totalTimeout.count(), 30'000);
    EXPECT_EQ(none.maxBytes, 4u << 20);

    const HubSettings set = fromMap({ { "HOME", "/home/u" }, { "XDG_CACHE_HOME", "/xdg" },
        { "HF_ENDPOINT", "https://hf-mirror.example" }, { "HF_TOKEN", "hf_x" },
        { "HF_HUB_OFFLINE", "1" }, { "HF_HUB_DOWNLOAD_TIMEOUT", "2.5" } });
    EXPECT_EQ(set.endpoint, "https://hf-mirror.example");
    EXPECT_EQ(set.token, "hf_x");
    EXPECT_TRUE(set.offline);
    EXPECT_EQ(set.cacheDir, "/xdg/envelope/hf");
    EXPECT_EQ(set.totalTimeout.count(), 2500);
}

TEST(HubSettings, OddValues)
{
    // A relative XDG_CACHE_HOME is ignored (XDG spec); no HOME either: no cache at all.
    EXPECT_EQ(fromMap({ { "XDG_CACHE_HOME", "rel" }, { "HOME", "/h" } }).cacheDir,
        "/h/.cache/envelope/hf");
    EXPECT_EQ(fromMap({}).cacheDir, "");
    EXPECT_EQ(fromMap({ { "HF_ENDPOINT", "" } }).endpoint, "https://huggingface.co");
    for (const char* v : { "1", "true", "TRUE", "yes", "On" })
        EXPECT_TRUE(fromMap({ { "HF_HUB_OFFLINE", v } }).offline) << v;
    for (const char* v : { "0", "false", "", "no", "2" })
        EXPECT_FALSE(fromMap({ { "HF_HUB_OFFLINE", v } }).offline) << v;
    for (const char* v : { "0", "-1", "abc", "1e9", "nan", "3s" })
        EXPECT_EQ(fromMap({ { "HF_HUB_DOWNLOAD_TIMEOUT", v } }).totalTimeout.count(), 30'000) << v;
}

} // namespace
