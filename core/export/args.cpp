#include "export/args.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace envelope::exportdetail {

std::vector<std::string> splitWords(std::string_view text)
{
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size()) {
            const char next = text[++i];
            if (next == '\n' || (next == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
                if (next == '\r')
                    ++i;
                continue; // line continuation
            }
            word += next;
            inWord = true;
        } else if (c == '\'' || c == '"') {
            const std::size_t close = text.find(c, i + 1);
            const std::size_t end = close == std::string_view::npos ? text.size() : close;
            word += text.substr(i + 1, end - i - 1);
            inWord = true;
            i = end;
        } else if (c == '#' && !inWord) {
            while (i < text.size() && text[i] != '\n')
                ++i;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (inWord)
                words.push_back(std::move(word));
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (inWord)
        words.push_back(std::move(word));
    return words;
}

Expected<Command> parseCommand(std::string_view text)
{
    if (text.starts_with("\xEF\xBB\xBF")) // a UTF-8 byte order mark, as in parseToml
        text.remove_prefix(3);
    const std::string expanded = expandLaunchScript(text);
    std::vector<std::string> words = splitWords(expanded);
    std::size_t first = 0;
    for (std::size_t i = 0; i < words.size(); ++i)
        if (words[i].size() > 3 && words[i].ends_with(".py")) {
            first = i + 1;
            break;
        }
    Command command;
    command.launcher.assign(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(first));
    for (std::size_t i = first; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (!w.starts_with("--"))
            return Error { w, fmt::format("expected an argument starting with --, got \"{}\"", w) };
        Argument a;
        const std::size_t eq = w.find('=');
        if (eq != std::string::npos) {
            a.flag = w.substr(0, eq);
            a.values.push_back(w.substr(eq + 1));
        } else {
            a.flag = w;
            while (i + 1 < words.size() && !words[i + 1].starts_with("--"))
                a.values.push_back(words[++i]);
        }
        if (!a.values.empty())
            a.value = a.values.front();
        command.args.push_back(std::move(a));
    }
    return command;
}

Expected<std::vector<Argument>> parseArguments(std::string_view text)
{
    Expected<Command> command = parseCommand(text);
    if (!command)
        return command.error();
    return std::move(command.value().args);
}

namespace {

bool isNameStart(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool isNameChar(char c)
{
    return isNameStart(c) || (c >= '0' && c <= '9');
}

// "NAME=" at the start of `line` (after "export "): the name's length, or 0.
std::size_t assignedName(std::string_view line)
{
    std::size_t i = 0;
    if (line.empty() || !isNameStart(line[0]))
        return 0;
    while (i < line.size() && isNameChar(line[i]))
        ++i;
    return i < line.size() && line[i] == '=' ? i : 0;
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

} // namespace

std::string shellWord(const std::string& w)
{
    bool plain = !w.empty();
    for (char c : w)
        plain = plain
            && (isNameChar(c) || std::string_view("-./:,=+@%").find(c) != std::string_view::npos);
    if (plain)
        return w;
    std::string out = "'";
    for (char c : w)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string expandLaunchScript(std::string_view text)
{
    // Lines, with backslash-newline continuations joined.
    std::vector<std::string> lines;
    std::string current;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
            ++i;
            current += ' ';
        } else if (text[i] == '\n') {
            lines.push_back(std::move(current));
            current.clear();
        } else {
            current += text[i];
        }
    }
    lines.push_back(std::move(current));

    std::map<std::string, std::vector<std::string>> vars;
    // $NAME, ${NAME}, ${NAME[@]} (quoted or not), expanded as bash does at each assignment and on
    // the command line: an array's words are spliced, each quoted back so that the command
    // line splits into the same words. Unknown names stay as written. Arrays that name arrays
    // grow geometrically: past 16 times the script (and 1 MB) the expansion stops and the script
    // is read as it is written.
    const std::size_t budget = std::max<std::size_t>(1 << 20, 16 * text.size());
    bool overflow = false;
    const auto expand = [&](const std::string& in) -> std::string {
        std::string out;
        for (std::size_t i = 0; i < in.size() && !overflow; ++i) {
            if (out.size() > budget) {
                overflow = true;
                break;
            }
            if (in[i] != '$' || i + 1 >= in.size()) {
                out += in[i];
                continue;
            }
            std::size_t j = i + 1;
            const bool braced = in[j] == '{';
            if (braced)
                ++j;
            const std::size_t nameStart = j;
            while (j < in.size() && isNameChar(in[j]))
                ++j;
            const std::string name = in.substr(nameStart, j - nameStart);
            bool all = false;
            if (braced && in.compare(j, 4, "[@]}") == 0) {
                all = true;
                j += 4;
            } else if (braced && j < in.size() && in[j] == '}') {
                ++j;
            } else if (braced) {
                out += in[i];
                continue;
            }
            const auto found = vars.find(name);
            if (name.empty() || found == vars.end()) {
                out += in.substr(i, j - i);
                i = j - 1;
                continue;
            }
            std::string words;
            const std::vector<std::string>& values = found->second;
            for (std::size_t k = 0; k < values.size() && (all || k == 0); ++k)
                words += (k ? " " : "") + (all ? shellWord(values[k]) : values[k]);
            // "${NAME[@]}" in double quotes: drop the quotes around the expansion.
            if (all && !out.empty() && out.back() == '"' && j < in.size() && in[j] == '"') {
                out.pop_back();
                ++j;
            }
            out += words;
            i = j - 1;
        }
        return out;
    };
    bool assigns = false;
    std::string commandLine;
    for (std::size_t n = 0; n < lines.size(); ++n) {
        std::string_view line = trimmed(lines[n]);
        if (line.starts_with("export "))
            line = trimmed(line.substr(7));
        const std::size_t nameLength = assignedName(line);
        if (nameLength > 0) {
            assigns = true;
            const std::string name(line.substr(0, nameLength));
            std::string_view rest = line.substr(nameLength + 1);
            if (rest.starts_with("(")) {
                // An array: its words up to the closing parenthesis, over as many lines as it
                // takes.
                std::string body(rest.substr(1));
                while (body.find(')') == std::string::npos && n + 1 < lines.size())
                    body += "\n" + lines[++n];
                body = body.substr(0, body.rfind(')'));
                vars[name] = splitWords(expand(body));
            } else {
                const std::vector<std::string> words = splitWords(expand(std::string(rest)));
                // "VAR=1 torchrun ... pretrain_gpt.py ...": an environment prefix, not an
                // assignment of its own; the line is the command.
                bool runs = false;
                for (std::size_t k = 1; k < words.size(); ++k)
                    runs = runs || (words[k].size() > 3 && words[k].ends_with(".py"));
                if (runs) {
                    if (commandLine.empty())
                        commandLine = std::string(line);
                    continue;
                }
                vars[name] = words.empty() ? std::vector<std::string> { "" }
                                           : std::vector<std::string> { words.front() };
            }
            continue;
        }
        if (commandLine.empty()) {
            for (const std::string& w : splitWords(line))
                if (w.size() > 3 && w.ends_with(".py")) {
                    commandLine = std::string(line);
                    break;
                }
        }
    }
    if (!assigns || commandLine.empty())
        return std::string(text);

    const std::string expanded = expand(commandLine);
    return overflow ? std::string(text) : expanded;
}

} // namespace envelope::exportdetail
