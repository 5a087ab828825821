#include "hubid.h"

#include <algorithm>

namespace envelope::hub {
namespace {

constexpr std::size_t kMaxPartLength = 96; // the Hub's limit on a repo name

bool allowedChar(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.'
        || c == '_' || c == '-';
}

// Empty when `part` is a valid owner, name or revision; else what is wrong with it.
std::string partProblem(std::string_view part, std::string_view what)
{
    const std::string name(what);
    if (part.empty())
        return name + " is empty";
    if (part.size() > kMaxPartLength)
        return name + " is longer than 96 characters";
    if (!std::all_of(part.begin(), part.end(), allowedChar))
        return name + " \"" + std::string(part) + "\" has a character other than letters, digits, "
            + "'.', '_' and '-'";
    if (part.find("..") != std::string_view::npos)
        return name + " \"" + std::string(part) + "\" contains \"..\"";
    const char first = part.front(), last = part.back();
    if (first == '.' || first == '-' || last == '.' || last == '-')
        return name + " \"" + std::string(part) + "\" starts or ends with '.' or '-'";
    return {};
}

} // namespace

std::string HubId::toString() const
{
    return revision == "main" ? repo() : repo() + "@" + revision;
}

Expected<HubId> parseHubId(std::string_view text)
{
    const auto bad = [&](const std::string& why) {
        return Error { {},
            "\"" + std::string(text) + "\" is not a Hugging Face Hub id (" + why + "); expected "
                + std::string(kHubIdForm) };
    };
    HubId id;
    std::string_view repo = text;
    if (const std::size_t at = text.find('@'); at != std::string_view::npos) {
        repo = text.substr(0, at);
        id.revision = std::string(text.substr(at + 1));
        if (std::string problem = partProblem(id.revision, "the revision"); !problem.empty())
            return bad(problem);
    }
    const std::size_t slash = repo.find('/');
    if (slash == std::string_view::npos)
        return bad("no '/' between owner and name");
    if (repo.find('/', slash + 1) != std::string_view::npos)
        return bad("more than one '/'");
    id.owner = std::string(repo.substr(0, slash));
    id.name = std::string(repo.substr(slash + 1));
    if (std::string problem = partProblem(id.owner, "the owner"); !problem.empty())
        return bad(problem);
    if (std::string problem = partProblem(id.name, "the name"); !problem.empty())
        return bad(problem);
    return id;
}

bool looksLikeLocalPath(std::string_view arg)
{
    if (arg == "-" || arg.empty())
        return true;
    if (arg.starts_with('/') || arg.starts_with("./") || arg.starts_with("../")
        || arg.starts_with('~'))
        return true;
    if (std::count(arg.begin(), arg.end(), '/') > 1)
        return true;
    return arg.ends_with(".json");
}

std::string configUrl(const HubId& id, std::string_view endpoint)
{
    std::string base(endpoint);
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return base + "/" + id.owner + "/" + id.name + "/resolve/" + id.revision + "/config.json";
}

std::string cachePath(const HubId& id, std::string_view cacheDir)
{
    std::string base(cacheDir);
    while (base.size() > 1 && base.back() == '/')
        base.pop_back();
    return base + "/" + id.owner + "/" + id.name + "/" + id.revision + "/config.json";
}

std::optional<HubId> hubIdFromCachePath(std::string_view path, std::string_view cacheDir)
{
    std::string base(cacheDir);
    while (base.size() > 1 && base.back() == '/')
        base.pop_back();
    constexpr std::string_view kFile = "/config.json";
    if (base.empty() || !path.starts_with(base + "/") || !path.ends_with(kFile))
        return std::nullopt;
    const std::string_view rest
        = path.substr(base.size() + 1, path.size() - base.size() - 1 - kFile.size());
    // owner/name/revision: exactly two '/', each part valid.
    const std::size_t first = rest.find('/');
    const std::size_t second = first == std::string_view::npos ? first : rest.find('/', first + 1);
    if (second == std::string_view::npos || rest.find('/', second + 1) != std::string_view::npos)
        return std::nullopt;
    Expected<HubId> id = parseHubId(
        std::string(rest.substr(0, second)) + "@" + std::string(rest.substr(second + 1)));
    return id ? std::optional<HubId>(*id) : std::nullopt;
}

std::string httpStatusMessage(const HubId& id, long status, std::string_view errorCode,
    std::string_view endpoint, bool tokenSet)
{
    std::string page(endpoint);
    while (!page.empty() && page.back() == '/')
        page.pop_back();
    page += "/" + id.repo();
    const std::string who = id.toString() + ": ";
    const std::string http = " (HTTP " + std::to_string(status) + ")";
    // The Hub answers 401 for a repository it will not admit exists to an anonymous caller.
    if (errorCode == "RepoNotFound")
        return who + "no such repository on the Hub" + http + "; check the id (" + id.repo() + ")"
            + (tokenSet ? "" : ", or, if it is private, set HF_TOKEN");
    if (errorCode == "RevisionNotFound")
        return who + "the repository has no revision \"" + id.revision + "\"" + http
            + "; name a branch, tag or commit after '@' (default main)";
    if (errorCode == "EntryNotFound")
        return who + "the repository has no config.json at revision \"" + id.revision + "\"" + http
            + "; it may not be a transformers model";
    if (status == 401 || status == 403 || errorCode == "GatedRepo") {
        const std::string gated = errorCode == "GatedRepo" ? "the repository is gated"
                                                           : "the repository is gated or private";
        return who + "access denied" + http + ": " + gated
            + "; accept the licence on the model page (" + page
            + ") and set HF_TOKEN to a token of that account"
            + (tokenSet ? " (the HF_TOKEN sent has no access to it)" : " (HF_TOKEN is not set)");
    }
    if (status == 404)
        return who + "not found" + http + ": no such repository, revision \"" + id.revision
            + "\" or config.json on the Hub; check the id (" + std::string(kHubIdForm) + ")";
    if (status == 429)
        return who + "the Hub is rate-limiting requests" + http + "; try again later"
            + (tokenSet ? "" : ", or set HF_TOKEN");
    if (status >= 500 && status < 600)
        return who + "the Hub answered with a server error" + http + "; try again later";
    return who + "unexpected answer from the Hub" + http + " for " + configUrl(id, endpoint);
}

bool isTransientStatus(long status)
{
    return status == 429 || (status >= 500 && status < 600);
}

} // namespace envelope::hub
