// envelope-cli import-hf by Hugging Face Hub id (issue 23), against the local stand-in for the
// Hub (tests/hub/hub_server.py on 127.0.0.1, HF_ENDPOINT pointing at it): the same output as
// importing the local file, the cache and --offline / HF_HUB_OFFLINE, HF_TOKEN, and the
// messages for gated, missing and malformed ids. Never the internet.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "cli_testing.h"
#include "hubservertest.h"

namespace {

namespace fs = std::filesystem;

using HubRun = envelope::clitest::CliRun;
using envelope::clitest::readFile;
const auto& quote = envelope::clitest::shellQuote;

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

class CliHub : public envelope::hubtest::HubServerTest {
protected:
    void SetUp() override { startTest("envelope-cli-hub"); }

    // envelope-cli `args` with HF_ENDPOINT at the stand-in, the cache under the test's folder,
    // no HF_TOKEN or HF_HUB_OFFLINE from the caller's shell; `env`: more VAR=value words.
    HubRun cli(const std::string& args, const std::string& env = "") const
    {
        return envelope::clitest::runCli(m_dir,
            "env -u HF_TOKEN -u HF_HUB_OFFLINE -u HF_HUB_DOWNLOAD_TIMEOUT HF_ENDPOINT="
                + quote(s_server->endpoint()) + " XDG_CACHE_HOME="
                + quote((m_dir / "cache").string()) + " XDG_CONFIG_HOME="
                + quote((m_dir / "config").string()) + " " + env,
            args);
    }

};

TEST_F(CliHub, AHubIdImportsExactlyAsTheLocalFile)
{
    for (const char* name : { "llama-2-7b", "mixtral-8x7b", "deepseek-v3" }) {
        const HubRun local = cli(
            "import-hf " + quote(std::string(ENVELOPE_TEST_DATA_DIR "/hf/") + name + ".json"));
        ASSERT_EQ(local.status, 0) << local.err;
        const HubRun hub = cli(std::string("import-hf test-org/") + name);
        ASSERT_EQ(hub.status, 0) << hub.err;
        EXPECT_EQ(hub.out, local.out) << name;
        EXPECT_EQ(hub.err, "") << name;
        const HubRun modelOnly = cli(std::string("import-hf test-org/") + name + " --model-only");
        ASSERT_EQ(modelOnly.status, 0) << modelOnly.err;
        EXPECT_EQ(modelOnly.out,
            cli("import-hf --model-only "
                + quote(std::string(ENVELOPE_TEST_DATA_DIR "/hf/") + name + ".json"))
                .out);
    }
}

// A plan may name its model by Hub id: {"hf_id": "test-org/mixtral-8x7b"} estimates exactly as
// the same plan with the config.json file (Mixtral 8x7B: 46,702,792,704 parameters). A gated
// repo's refusal names model.hf_id (exit 2, bad input).
TEST_F(CliHub, APlanNamesItsModelByHubId)
{
    const auto planWith = [&](const std::string& model, const char* file) {
        const fs::path path = m_dir / file;
        std::ofstream(path) << R"({"format": "envelope.plan", "version": 1, "model": )" << model
                            << R"(, "gpu": "h100-sxm", "cluster": {"gpus": 8, "gpus_per_node": 8}})";
        return path.string();
    };
    const std::string byId = planWith(R"({"hf_id": "test-org/mixtral-8x7b"})", "by-id.json");
    const std::string byFile = planWith(
        R"({"hf_config": ")" + std::string(ENVELOPE_TEST_DATA_DIR "/hf/mixtral-8x7b.json") + R"("})",
        "by-file.json");
    const HubRun id = cli("estimate " + quote(byId) + " --format text");
    ASSERT_EQ(id.status, 0) << id.err;
    const HubRun file = cli("estimate " + quote(byFile) + " --format text");
    ASSERT_EQ(file.status, 0) << file.err;
    EXPECT_TRUE(has(id.out, "46.70B")) << id.out;
    EXPECT_TRUE(has(id.out, "model             test-org/mixtral-8x7b")) << id.out;
    // The same figures; only the model line names it differently (the id, or the config).
    const auto withoutModelLine = [](std::string text) {
        const std::size_t at = text.find("\n  model ");
        if (at != std::string::npos)
            text.erase(at, text.find('\n', at + 1) - at);
        return text;
    };
    EXPECT_EQ(withoutModelLine(id.out), withoutModelLine(file.out));

    const HubRun gated = cli("estimate " + quote(planWith(R"({"hf_id": "gated-org/llama-2-7b"})", "gated.json")));
    EXPECT_EQ(gated.status, 2);
    EXPECT_TRUE(has(gated.err, "model.hf_id: gated-org/llama-2-7b")) << gated.err;
}

TEST_F(CliHub, TheCacheServesOfflineWithoutAsking)
{
    const HubRun online = cli("import-hf test-org/gpt2");
    ASSERT_EQ(online.status, 0) << online.err;
    const fs::path cached = m_dir / "cache/envelope/hf/test-org/gpt2/main/config.json";
    EXPECT_EQ(readFile(cached), readFile(ENVELOPE_TEST_DATA_DIR "/hf/gpt2.json"));

    const int before = s_server->configRequests();
    const HubRun flag = cli("import-hf test-org/gpt2 --offline");
    ASSERT_EQ(flag.status, 0) << flag.err;
    EXPECT_EQ(flag.out, online.out);
    const HubRun env = cli("import-hf test-org/gpt2", "HF_HUB_OFFLINE=1");
    ASSERT_EQ(env.status, 0) << env.err;
    EXPECT_EQ(env.out, online.out);
    EXPECT_EQ(s_server->configRequests(), before);
}

TEST_F(CliHub, AnOfflineMissSaysSo)
{
    const HubRun r = cli("import-hf test-org/gpt2 --offline");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(has(r.err,
        "envelope-cli: test-org/gpt2: offline (--offline or HF_HUB_OFFLINE) "
        "and not in the cache"))
        << r.err;
    EXPECT_TRUE(has(r.err, "import it once with the network")) << r.err;
}

TEST_F(CliHub, AnUnreachableHubFallsBackToTheCacheWithAWarning)
{
    ASSERT_EQ(cli("import-hf test-org/gpt2").status, 0);
    const HubRun r = cli("import-hf test-org/gpt2", "HF_ENDPOINT=http://127.0.0.1:1");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.err.starts_with("warning: test-org/gpt2: cannot reach the Hub")) << r.err;
    EXPECT_TRUE(has(r.err, "using the cached copy")) << r.err;
}

TEST_F(CliHub, GatedRepoNeedsHfToken)
{
    const HubRun anonymous = cli("import-hf gated-org/llama-2-7b");
    EXPECT_EQ(anonymous.status, 1);
    EXPECT_TRUE(has(anonymous.err, "gated-org/llama-2-7b: access denied (HTTP 401)"))
        << anonymous.err;
    EXPECT_TRUE(has(anonymous.err, "accept the licence on the model page")) << anonymous.err;
    EXPECT_TRUE(has(anonymous.err, "set HF_TOKEN")) << anonymous.err;
    // The stand-in answers only "Authorization: Bearer hf_test_token".
    const HubRun token = cli(
        "import-hf gated-org/llama-2-7b", std::string("HF_TOKEN=") + envelope::hubtest::kToken);
    ASSERT_EQ(token.status, 0) << token.err;
    EXPECT_TRUE(has(token.out, "\"params\": 6738415616")) << token.out;
}

TEST_F(CliHub, MissingRepoAndRevision)
{
    const HubRun repo = cli("import-hf nobody/nothing");
    EXPECT_EQ(repo.status, 1);
    EXPECT_TRUE(has(repo.err, "nobody/nothing: no such repository on the Hub (HTTP 404)"))
        << repo.err;
    const HubRun revision = cli("import-hf test-org/gpt2@missing");
    EXPECT_EQ(revision.status, 1);
    EXPECT_TRUE(has(revision.err, "no revision \"missing\"")) << revision.err;
}

TEST_F(CliHub, MalformedIdsAndMissingFiles)
{
    const int before = s_server->configRequests();
    const HubRun noSlash = cli("import-hf gpt2");
    EXPECT_EQ(noSlash.status, 1);
    EXPECT_TRUE(has(noSlash.err, "CONFIG: not a file, and \"gpt2\" is not a Hugging Face Hub id"))
        << noSlash.err;
    EXPECT_TRUE(has(noSlash.err, "OWNER/NAME or OWNER/NAME@REVISION")) << noSlash.err;
    const HubRun dots = cli("import-hf 'owner/..'");
    EXPECT_EQ(dots.status, 1);
    EXPECT_TRUE(has(dots.err, "contains \"..\"")) << dots.err;
    // A path that does not exist is still a missing file, not a Hub id.
    const HubRun path = cli("import-hf models/config.json");
    EXPECT_EQ(path.status, 1);
    EXPECT_FALSE(has(path.err, "Hub")) << path.err;
    EXPECT_EQ(s_server->configRequests(), before); // none of them asked the Hub
}

TEST_F(CliHub, TimeoutAndInvalidAnswersAreErrorsNotCrashes)
{
    const HubRun slow = cli("import-hf slow-org/x", "HF_HUB_DOWNLOAD_TIMEOUT=1");
    EXPECT_EQ(slow.status, 1);
    EXPECT_TRUE(has(slow.err, "slow-org/x: cannot reach the Hub")) << slow.err;
    EXPECT_TRUE(has(slow.err, "1 s in all")) << slow.err;
    const HubRun big = cli("import-hf big-org/stream");
    EXPECT_EQ(big.status, 1);
    EXPECT_TRUE(has(big.err, "too large for a config.json")) << big.err;
    const HubRun bad = cli("import-hf bad-org/x");
    EXPECT_EQ(bad.status, 1);
    EXPECT_TRUE(has(bad.err, "not valid JSON")) << bad.err;
}

} // namespace
