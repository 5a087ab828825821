#include "export/args.h"

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

Expected<std::vector<Argument>> parseArguments(std::string_view text)
{
    if (text.starts_with("\xEF\xBB\xBF")) // a UTF-8 byte order mark, as in parseToml
        text.remove_prefix(3);
    std::vector<std::string> words = splitWords(text);
    std::size_t first = 0;
    for (std::size_t i = 0; i < words.size(); ++i)
        if (words[i].size() > 3 && words[i].ends_with(".py")) {
            first = i + 1;
            break;
        }
    std::vector<Argument> args;
    for (std::size_t i = first; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (!w.starts_with("--"))
            return Error { w, fmt::format("expected an argument starting with --, got \"{}\"", w) };
        Argument a;
        const std::size_t eq = w.find('=');
        if (eq != std::string::npos) {
            a.flag = w.substr(0, eq);
            a.value = w.substr(eq + 1);
        } else {
            a.flag = w;
            if (i + 1 < words.size() && !words[i + 1].starts_with("--"))
                a.value = words[++i];
        }
        args.push_back(std::move(a));
    }
    return args;
}

} // namespace envelope::exportdetail
