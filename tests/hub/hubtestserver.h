// The local stand-in for the Hugging Face Hub (hub_server.py) as a test fixture: started on a
// free port of 127.0.0.1 in the constructor, killed in the destructor. Shared by the hub
// library's, the CLI's and the model box's tests; none of them reaches the internet.
#pragma once

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "hubhttp.h"

extern char** environ;

namespace envelope::hubtest {

// The token hub_server.py's gated-org accepts.
inline constexpr const char* kToken = "hf_test_token";

class HubTestServer {
public:
    // `script`: hub_server.py; `configDir`: the folder of NAME.json configs it serves.
    HubTestServer(const std::string& script, const std::string& configDir)
    {
        // A proxy in the environment must not carry requests meant for 127.0.0.1.
        ::setenv("no_proxy", "127.0.0.1,localhost", 1);
        ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
        int out[2];
        if (::pipe(out) != 0)
            return;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        posix_spawn_file_actions_addclose(&actions, out[1]);
        std::string python = "python3";
        char* argv[] = { python.data(), const_cast<char*>(script.c_str()),
            const_cast<char*>(configDir.c_str()), nullptr };
        const int spawned = posix_spawnp(&m_pid, "python3", &actions, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        if (spawned != 0) {
            m_pid = -1;
            ::close(out[0]);
            return;
        }
        // The port, one line, within 20 s (a loaded CI machine starts Python slowly).
        std::string line;
        pollfd fd { out[0], POLLIN, 0 };
        while (line.find('\n') == std::string::npos && ::poll(&fd, 1, 20'000) > 0) {
            char buffer[64];
            const ssize_t n = ::read(out[0], buffer, sizeof buffer);
            if (n <= 0)
                break;
            line.append(buffer, static_cast<std::size_t>(n));
        }
        ::close(out[0]);
        m_port = std::atoi(line.c_str());
    }

    ~HubTestServer()
    {
        if (m_pid > 0) {
            ::kill(m_pid, SIGTERM);
            int status = 0;
            ::waitpid(m_pid, &status, 0);
        }
    }

    HubTestServer(const HubTestServer&) = delete;
    HubTestServer& operator=(const HubTestServer&) = delete;

    // 0 when the server did not start (no python3): the tests skip.
    int port() const { return m_port; }
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    // How many config.json requests the server has answered so far.
    int configRequests() const
    {
        hub::HttpRequest request;
        request.url = endpoint() + "/_stats";
        const hub::HttpResponse r = hub::httpGet(request);
        if (r.status != 200)
            return -1;
        return nlohmann::json::parse(r.body, nullptr, false).value("config_requests", -1);
    }

private:
    pid_t m_pid = -1;
    int m_port = 0;
};

} // namespace envelope::hubtest
