// One bounded HTTPS GET through libcurl: the only code in Envelope that opens a connection.
// libcurl (Debian's libcurl4-openssl-dev) brings TLS with the system's CA store, the proxy
// variables (https_proxy, no_proxy), redirects and timeouts; a hand-written client would have
// to get each of those right again.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace envelope::hub {

struct HttpRequest {
    std::string url;
    std::string bearerToken; // empty: no Authorization header
    std::chrono::milliseconds connectTimeout { 10'000 };
    std::chrono::milliseconds totalTimeout { 30'000 };
    std::size_t maxBytes = 4u << 20; // the transfer is aborted past this many body bytes
};

struct HttpResponse {
    enum class Failure {
        None, // an HTTP answer arrived: see status
        Network, // no answer: DNS, connection, TLS, a timeout, a broken transfer
        TooLarge, // the body passed maxBytes; the transfer was aborted
    };
    Failure failure = Failure::None;
    std::string failureMessage; // for Network and TooLarge: what happened, in words
    long status = 0; // the final HTTP status after redirects
    std::string body;
    std::string errorCode; // the Hub's X-Error-Code header (GatedRepo, RepoNotFound, ...)
};

// GET `request.url`, following up to 5 redirects over http/https only (the Authorization
// header is sent to the first host only, libcurl's rule). Never throws; safe to call from any
// thread (libcurl is initialised once, signals are not used for timeouts).
HttpResponse httpGet(const HttpRequest& request);

} // namespace envelope::hub
