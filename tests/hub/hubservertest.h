// A GoogleTest suite against the local stand-in Hub (hubtestserver.h): the server started once
// per suite, and a fresh folder per test under the system's temp directory. A test skips when
// python3 cannot start the server. Shared by the hub library's and the CLI's tests.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "hubtestserver.h"

namespace envelope::hubtest {

class HubServerTest : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        s_server = std::make_unique<HubTestServer>(ENVELOPE_HUB_SERVER, ENVELOPE_TEST_DATA_DIR "/hf");
    }
    static void TearDownTestSuite() { s_server.reset(); }

    // The test's folder: `prefix`-TEST-PID, empty.
    void startTest(const std::string& prefix)
    {
        if (s_server->port() == 0)
            GTEST_SKIP() << "python3 could not start tests/hub/hub_server.py";
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = std::filesystem::temp_directory_path()
            / (prefix + "-" + info->name() + "-" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override
    {
        if (!m_dir.empty())
            std::filesystem::remove_all(m_dir);
    }

    static inline std::unique_ptr<HubTestServer> s_server;
    std::filesystem::path m_dir;
};

} // namespace envelope::hubtest
