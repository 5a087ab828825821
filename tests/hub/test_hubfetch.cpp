// fetchHubConfig against the local stand-in for the Hub (hub_server.py, started by the fixture
// on 127.0.0.1): the fetched text, the cache and offline use, the fallback to the cache when the
// Hub cannot be reached, and every refusal (gated, private, missing, too large, too slow, not
// JSON) as a message, never a crash. Nothing here reaches the internet.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "hubfetch.h"
#include "hubservertest.h"

namespace {

using namespace envelope;
using namespace envelope::hub;
namespace fs = std::filesystem;

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

class HubFetch : public hubtest::HubServerTest {
protected:
    void SetUp() override
    {
        startTest("envelope-hub");
        m_settings.endpoint = s_server->endpoint();
        m_settings.cacheDir = (m_dir / "hf").string();
    }

    Expected<HubConfig> fetch(const std::string& id) const
    {
        const Expected<HubId> parsed = parseHubId(id);
        if (!parsed)
            return parsed.error();
        return fetchHubConfig(*parsed, m_settings);
    }

    std::string errorOf(const std::string& id) const
    {
        const Expected<HubConfig> r = fetch(id);
        return r ? std::string("(no error)") : r.error().toString();
    }

    HubSettings m_settings;
};

TEST_F(HubFetch, FetchesTheConfigAndCachesIt)
{
    const Expected<HubConfig> r = fetch("test-org/llama-2-7b");
    ASSERT_TRUE(r) << r.error().toString();
    const std::string local = readFile(ENVELOPE_TEST_DATA_DIR "/hf/llama-2-7b.json");
    EXPECT_EQ(r->text, local);
    EXPECT_FALSE(r->fromCache);
    EXPECT_TRUE(r->warnings.empty());
    const fs::path cached = m_dir / "hf/test-org/llama-2-7b/main/config.json";
    EXPECT_EQ(r->cachePath, cached.string());
    EXPECT_EQ(readFile(cached), local);
    // Written atomically: no temporary file is left beside it.
    EXPECT_EQ(
        std::distance(fs::directory_iterator(cached.parent_path()), fs::directory_iterator()), 1);
}

TEST_F(HubFetch, OfflineUsesTheCacheAndAsksNothing)
{
    ASSERT_TRUE(fetch("test-org/mixtral-8x7b"));
    const int before = s_server->configRequests();
    m_settings.offline = true;
    const Expected<HubConfig> r = fetch("test-org/mixtral-8x7b");
    ASSERT_TRUE(r) << r.error().toString();
    EXPECT_TRUE(r->fromCache);
    EXPECT_TRUE(r->warnings.empty());
    EXPECT_EQ(r->text, readFile(ENVELOPE_TEST_DATA_DIR "/hf/mixtral-8x7b.json"));
    EXPECT_EQ(s_server->configRequests(), before);
}

TEST_F(HubFetch, OfflineMissIsAClearError)
{
    m_settings.offline = true;
    const std::string e = errorOf("test-org/gpt2");
    EXPECT_TRUE(e.starts_with("test-org/gpt2: offline")) << e;
    EXPECT_TRUE(has(e, "not in the cache")) << e;
    EXPECT_TRUE(has(e, (m_dir / "hf/test-org/gpt2/main/config.json").string())) << e;
    m_settings.cacheDir.clear();
    EXPECT_TRUE(has(errorOf("test-org/gpt2"), "no cache folder")) << errorOf("test-org/gpt2");
}

TEST_F(HubFetch, UnreachableHubFallsBackToTheCacheWithAWarning)
{
    ASSERT_TRUE(fetch("test-org/gpt2"));
    // Port 1 of 127.0.0.1: nothing listens there, the connection is refused at once.
    HubSettings closed = m_settings;
    closed.endpoint = "http://127.0.0.1:1";
    const Expected<HubConfig> r = fetchHubConfig(*parseHubId("test-org/gpt2"), closed);
    ASSERT_TRUE(r) << r.error().toString();
    EXPECT_TRUE(r->fromCache);
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_TRUE(has(r->warnings[0], "cannot reach the Hub at http://127.0.0.1:1"))
        << r->warnings[0];
    EXPECT_TRUE(has(r->warnings[0], "using the cached copy")) << r->warnings[0];
    // Without a cached copy it is an error naming the endpoint and what to check.
    const Expected<HubConfig> miss = fetchHubConfig(*parseHubId("test-org/gemma-7b"), closed);
    ASSERT_FALSE(miss);
    EXPECT_TRUE(has(miss.error().toString(), "test-org/gemma-7b: cannot reach the Hub"))
        << miss.error().toString();
    EXPECT_TRUE(has(miss.error().toString(), "HF_ENDPOINT")) << miss.error().toString();
}

TEST_F(HubFetch, ServerErrorFallsBackToTheCache)
{
    // busy-org answers 503: a cached copy (put there by hand) stands in, with a warning.
    const fs::path cached = m_dir / "hf/busy-org/gpt2/main/config.json";
    fs::create_directories(cached.parent_path());
    std::ofstream(cached) << readFile(ENVELOPE_TEST_DATA_DIR "/hf/gpt2.json");
    const Expected<HubConfig> r = fetch("busy-org/gpt2");
    ASSERT_TRUE(r) << r.error().toString();
    EXPECT_TRUE(r->fromCache);
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_TRUE(has(r->warnings[0], "server error (HTTP 503)")) << r->warnings[0];
    EXPECT_TRUE(has(errorOf("busy-org/other"), "server error (HTTP 503)"));
}

TEST_F(HubFetch, GatedRepoNeedsTheToken)
{
    const std::string anonymous = errorOf("gated-org/llama-2-7b");
    EXPECT_TRUE(anonymous.starts_with("gated-org/llama-2-7b: access denied (HTTP 401)"))
        << anonymous;
    EXPECT_TRUE(has(anonymous, "accept the licence on the model page")) << anonymous;
    EXPECT_TRUE(has(anonymous, "set HF_TOKEN")) << anonymous;

    m_settings.token = "hf_wrong";
    const std::string wrong = errorOf("gated-org/llama-2-7b");
    EXPECT_TRUE(has(wrong, "HTTP 403")) << wrong;
    EXPECT_TRUE(has(wrong, "the HF_TOKEN sent has no access to it")) << wrong;

    // The server answers only "Authorization: Bearer hf_test_token".
    m_settings.token = hubtest::kToken;
    const Expected<HubConfig> r = fetch("gated-org/llama-2-7b");
    ASSERT_TRUE(r) << r.error().toString();
    EXPECT_EQ(r->text, readFile(ENVELOPE_TEST_DATA_DIR "/hf/llama-2-7b.json"));
}

TEST_F(HubFetch, RefusalsAreNeverServedFromOrWrittenToTheCache)
{
    // A cached copy of a repo that is now private stays unused: 403 is the repo's answer.
    const fs::path cached = m_dir / "hf/private-org/gpt2/main/config.json";
    fs::create_directories(cached.parent_path());
    std::ofstream(cached) << "{}";
    const std::string e = errorOf("private-org/gpt2");
    EXPECT_TRUE(has(e, "access denied (HTTP 403): the repository is gated or private")) << e;
    EXPECT_EQ(readFile(cached), "{}");
}

TEST_F(HubFetch, MissingRepoRevisionOrFile)
{
    EXPECT_TRUE(
        has(errorOf("nobody/nothing"), "nobody/nothing: no such repository on the Hub (HTTP 404)"))
        << errorOf("nobody/nothing");
    EXPECT_TRUE(has(errorOf("anon-org/secret"), "if it is private, set HF_TOKEN"))
        << errorOf("anon-org/secret");
    EXPECT_TRUE(has(errorOf("test-org/llama-2-7b@missing"), "no revision \"missing\""))
        << errorOf("test-org/llama-2-7b@missing");
    EXPECT_TRUE(has(errorOf("test-org/no-such-model"), "has no config.json"))
        << errorOf("test-org/no-such-model");
    EXPECT_FALSE(fs::exists(m_dir / "hf/nobody"));
}

TEST_F(HubFetch, OversizedAnswersAreStopped)
{
    // 8 MiB against the 4 MiB bound, with and without a Content-Length.
    for (const char* id : { "big-org/length", "big-org/stream" }) {
        const auto start = std::chrono::steady_clock::now();
        const std::string e = errorOf(id);
        EXPECT_TRUE(has(e, "larger than 4096 KiB")) << id << ": " << e;
        EXPECT_TRUE(has(e, "the transfer was stopped")) << e;
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    }
    EXPECT_FALSE(fs::exists(m_dir / "hf/big-org"));
}

TEST_F(HubFetch, SlowAnswersTimeOut)
{
    m_settings.totalTimeout = std::chrono::milliseconds(500);
    const auto start = std::chrono::steady_clock::now();
    const std::string e = errorOf("slow-org/x");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
    EXPECT_TRUE(has(e, "slow-org/x: cannot reach the Hub")) << e;
    EXPECT_TRUE(has(e, "0.5 s in all")) << e;
}

TEST_F(HubFetch, InvalidJsonIsAnErrorAndNotCached)
{
    const std::string e = errorOf("bad-org/x");
    EXPECT_TRUE(has(e, "bad-org/x: the Hub's config.json is not valid JSON")) << e;
    EXPECT_FALSE(fs::exists(m_dir / "hf/bad-org"));
}

TEST_F(HubFetch, RedirectsAreFollowed)
{
    // The Hub redirects a renamed repository to its new name.
    const Expected<HubConfig> r = fetch("moved-org/gpt2");
    ASSERT_TRUE(r) << r.error().toString();
    EXPECT_EQ(r->text, readFile(ENVELOPE_TEST_DATA_DIR "/hf/gpt2.json"));
}

TEST_F(HubFetch, AnUnwritableCacheIsAWarningNotAFailure)
{
    // The cache folder is a file: the fetch still succeeds and says it could not cache.
    fs::create_directories(m_dir);
    std::ofstream(m_dir / "blocker") << "x";
    m_settings.cacheDir = (m_dir / "blocker").string();
    const Expected<HubConfig> r = fetch("test-org/gpt2");
    ASSERT_TRUE(r) << r.error().toString();
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_TRUE(has(r->warnings[0], "fetched, but not cached")) << r->warnings[0];
}

} // namespace
