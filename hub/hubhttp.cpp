#include "hubhttp.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cctype>
#include <memory>
#include <mutex>
#include <string_view>

namespace envelope::hub {
namespace {

struct Transfer {
    std::string body;
    std::size_t maxBytes = 0;
    bool tooLarge = false;
    std::string errorCode;
};

std::size_t onBody(char* data, std::size_t size, std::size_t count, void* user)
{
    auto* transfer = static_cast<Transfer*>(user);
    const std::size_t bytes = size * count;
    if (transfer->body.size() + bytes > transfer->maxBytes) {
        transfer->tooLarge = true;
        return 0; // anything but `bytes` aborts the transfer (CURLE_WRITE_ERROR)
    }
    transfer->body.append(data, bytes);
    return bytes;
}

// Keeps X-Error-Code; every response of a redirect chain passes here, the last one wins.
std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user)
{
    auto* transfer = static_cast<Transfer*>(user);
    const std::size_t bytes = size * count;
    std::string_view line(data, bytes);
    if (line.starts_with("HTTP/"))
        transfer->errorCode.clear(); // a new response (after a redirect) starts
    constexpr std::string_view kName = "x-error-code:";
    if (line.size() > kName.size()) {
        bool match = true;
        for (std::size_t i = 0; i < kName.size() && match; ++i)
            match = std::tolower(static_cast<unsigned char>(line[i])) == kName[i];
        if (match) {
            std::string_view value = line.substr(kName.size());
            while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
                value.remove_prefix(1);
            while (!value.empty()
                && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
                value.remove_suffix(1);
            transfer->errorCode = std::string(value.substr(0, 100));
        }
    }
    return bytes;
}

void initOnce()
{
    // Once per process and never cleaned up: curl_global_cleanup at exit could race a GUI fetch
    // still running on its worker thread. What it holds stays reachable while the threads that
    // fetched are joined before exit (app/main.cpp waits for the thread pool): OpenSSL's own
    // atexit cleanup strands a live thread's state, which LeakSanitizer reports.
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
    void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

} // namespace

HttpResponse httpGet(const HttpRequest& request)
{
    initOnce();
    HttpResponse response;
    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    if (!curl) {
        response.failure = HttpResponse::Failure::Network;
        response.failureMessage = "libcurl could not start a transfer";
        return response;
    }
    Transfer transfer;
    transfer.maxBytes = request.maxBytes;
    char errorBuffer[CURL_ERROR_SIZE] = {};
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    if (!request.bearerToken.empty()) {
        const std::string auth = "Authorization: Bearer " + request.bearerToken;
        headers.reset(curl_slist_append(nullptr, auth.c_str()));
    }
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errorBuffer);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(
        c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connectTimeout.count()));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(request.totalTimeout.count()));
    // Refused up front when the server states a larger Content-Length; onBody bounds the rest.
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.maxBytes));
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, ""); // whatever this libcurl can decode
    curl_easy_setopt(c, CURLOPT_USERAGENT, "envelope/" ENVELOPE_VERSION);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &transfer);
    if (headers)
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode code = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
    response.errorCode = transfer.errorCode;
    if (transfer.tooLarge || code == CURLE_FILESIZE_EXCEEDED) {
        response.failure = HttpResponse::Failure::TooLarge;
        response.failureMessage = "the answer is larger than "
            + std::to_string(request.maxBytes / 1024) + " KiB, too large for a config.json; "
            + "the transfer was stopped";
        return response;
    }
    if (code != CURLE_OK) {
        response.failure = HttpResponse::Failure::Network;
        std::string what = errorBuffer[0] ? std::string(errorBuffer) : curl_easy_strerror(code);
        if (code == CURLE_OPERATION_TIMEDOUT)
            what += fmt::format(
                " (limits: {:g} s to connect, {:g} s in all; HF_HUB_DOWNLOAD_TIMEOUT "
                "sets the second)",
                request.connectTimeout.count() / 1000.0, request.totalTimeout.count() / 1000.0);
        response.failureMessage = what;
        return response;
    }
    response.body = std::move(transfer.body);
    return response;
}

} // namespace envelope::hub
