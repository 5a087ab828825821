#include "export/toml.h"

#include <cctype>
#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/json_fields.h"
#include "base/text.h"
#include "base/utf8.h"

namespace envelope::exportdetail {
namespace {

// Reads the document statement by statement. A statement sits on one line, except an array,
// which may span lines (TOML 1.0: newlines and comments are allowed between its values).
class Parser {
public:
    Parser(std::string_view text, std::size_t start)
        : m_s(text)
        , m_i(start)
    { }

    bool done() const { return m_i >= m_s.size(); }
    int line() const { return m_line; }

    void skipSpace()
    {
        while (m_i < m_s.size() && (m_s[m_i] == ' ' || m_s[m_i] == '\t'))
            ++m_i;
    }
    // At the end of the statement's line: nothing but a comment left on it.
    bool atEnd()
    {
        skipSpace();
        return m_i >= m_s.size() || m_s[m_i] == '#' || m_s[m_i] == '\n'
            || (m_s[m_i] == '\r' && (m_i + 1 == m_s.size() || m_s[m_i + 1] == '\n'));
    }
    // Past the rest of this line (its comment included) to the start of the next one.
    void nextLine()
    {
        const std::size_t end = m_s.find('\n', m_i);
        m_i = end == std::string_view::npos ? m_s.size() : end + 1;
        ++m_line;
    }
    // Inside an array: past spaces, newlines and comments; false at the end of the text.
    bool skipBlank()
    {
        for (;;) {
            skipSpace();
            if (m_i >= m_s.size())
                return false;
            if (m_s[m_i] == '#' || m_s[m_i] == '\n' || m_s[m_i] == '\r')
                nextLine();
            else
                return true;
        }
    }
    bool peek(char c)
    {
        skipSpace();
        return m_i < m_s.size() && m_s[m_i] == c;
    }
    bool eat(char c)
    {
        if (!peek(c))
            return false;
        ++m_i;
        return true;
    }
    Error error(const std::string& what) const
    {
        return Error { fmt::format("line {}", m_line), what };
    }

    Expected<std::string> string()
    {
        skipSpace();
        const char quote = m_s[m_i++];
        std::string out;
        while (m_i < m_s.size() && m_s[m_i] != quote && m_s[m_i] != '\n') {
            char c = m_s[m_i++];
            if (quote == '"' && c == '\\' && m_i < m_s.size()) {
                const char e = m_s[m_i++];
                switch (e) {
                case 'n':
                    c = '\n';
                    break;
                case 't':
                    c = '\t';
                    break;
                case '"':
                    c = '"';
                    break;
                case '\\':
                    c = '\\';
                    break;
                case 'r':
                    c = '\r';
                    break;
                case 'b':
                    c = '\b';
                    break;
                case 'f':
                    c = '\f';
                    break;
                case 'u': {
                    // \uXXXX, as the exporters escape control characters; written as UTF-8.
                    if (m_i + 4 > m_s.size())
                        return error("\\u needs four hex digits");
                    unsigned code = 0;
                    for (int k = 0; k < 4; ++k) {
                        const char h = m_s[m_i++];
                        const int v = h >= '0' && h <= '9' ? h - '0'
                            : h >= 'a' && h <= 'f'         ? h - 'a' + 10
                            : h >= 'A' && h <= 'F'         ? h - 'A' + 10
                                                           : -1;
                        if (v < 0)
                            return error("\\u needs four hex digits");
                        code = code * 16 + static_cast<unsigned>(v);
                    }
                    if (code >= 0xD800 && code <= 0xDFFF)
                        return error("\\u names a surrogate, not a character");
                    if (code < 0x80) {
                        c = static_cast<char>(code);
                        break;
                    }
                    if (code < 0x800) {
                        out += static_cast<char>(0xC0 | (code >> 6));
                    } else {
                        out += static_cast<char>(0xE0 | (code >> 12));
                        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
                    }
                    c = static_cast<char>(0x80 | (code & 0x3F));
                    break;
                }
                default:
                    return error(fmt::format("unsupported escape \\{} in a string", e));
                }
            }
            out += c;
        }
        if (m_i >= m_s.size() || m_s[m_i] == '\n')
            return error("unterminated string");
        ++m_i;
        return out;
    }

    // A dotted key: bare parts [A-Za-z0-9_-] or quoted parts.
    Expected<std::vector<std::string>> key()
    {
        std::vector<std::string> parts;
        do {
            skipSpace();
            if (peek('"') || peek('\'')) {
                Expected<std::string> s = string();
                if (!s)
                    return s.error();
                parts.push_back(*s);
                continue;
            }
            const std::size_t start = m_i;
            while (m_i < m_s.size()
                && (std::isalnum(static_cast<unsigned char>(m_s[m_i])) || m_s[m_i] == '_'
                    || m_s[m_i] == '-'))
                ++m_i;
            if (m_i == start)
                return error("expected a key");
            parts.emplace_back(m_s.substr(start, m_i - start));
        } while (eat('.') && parts.size() <= static_cast<std::size_t>(kMaxJsonDepth));
        if (parts.size() > static_cast<std::size_t>(kMaxJsonDepth))
            return error(fmt::format("a key nests deeper than {} tables", kMaxJsonDepth));
        return parts;
    }

    // `depth`: the arrays this value sits in. Capped like JSON's nesting (kMaxJsonDepth): a
    // value nested 50,000 deep once overflowed the stack here.
    Expected<nlohmann::json> value(int depth = 0)
    {
        skipSpace();
        if (m_i >= m_s.size())
            return error("missing value");
        const char c = m_s[m_i];
        if (c == '"' || c == '\'') {
            if (m_s.substr(m_i, 3) == "\"\"\"" || m_s.substr(m_i, 3) == "'''")
                return error("multi-line strings are not supported");
            Expected<std::string> s = string();
            if (!s)
                return s.error();
            return nlohmann::json(*s);
        }
        if (c == '[') {
            if (depth >= kMaxJsonDepth)
                return error(fmt::format("arrays nest deeper than {} levels", kMaxJsonDepth));
            ++m_i;
            const int opened = m_line;
            const auto unclosed = [opened] {
                return Error { fmt::format("line {}", opened), "the array opened here is not closed" };
            };
            nlohmann::json array = nlohmann::json::array();
            for (;;) {
                if (!skipBlank())
                    return unclosed();
                if (eat(']'))
                    break;
                Expected<nlohmann::json> v = value(depth + 1);
                if (!v)
                    return v.error();
                array.push_back(*v);
                if (!skipBlank())
                    return unclosed();
                if (!eat(',') && !peek(']'))
                    return error("expected , or ] in an array");
            }
            return array;
        }
        if (c == '{')
            return error("inline tables are not supported");
        const std::size_t start = m_i;
        while (m_i < m_s.size() && m_s[m_i] != ',' && m_s[m_i] != ']' && m_s[m_i] != '#'
            && m_s[m_i] != ' ' && m_s[m_i] != '\t' && m_s[m_i] != '\n' && m_s[m_i] != '\r')
            ++m_i;
        std::string word(m_s.substr(start, m_i - start));
        if (word == "true" || word == "false")
            return nlohmann::json(word == "true");
        std::string digits;
        for (char d : word)
            if (d != '_')
                digits += d;
        const bool isFloat = digits.find_first_of(".eE") != std::string::npos || digits == "inf"
            || digits == "+inf" || digits == "-inf" || digits == "nan";
        if (!isFloat) {
            long long v = 0;
            const char* begin = digits.data() + (digits.size() > 1 && digits[0] == '+' ? 1 : 0);
            auto [end, ec] = std::from_chars(begin, digits.data() + digits.size(), v);
            if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty())
                return nlohmann::json(v);
        } else {
            try {
                std::size_t used = 0;
                const double v = std::stod(digits, &used);
                if (used == digits.size())
                    return nlohmann::json(v);
            } catch (const std::exception&) { }
        }
        return error(fmt::format("\"{}\" is not a string, number, boolean or array", word));
    }

private:
    std::string_view m_s;
    std::size_t m_i = 0;
    int m_line = 1;
};

// The object at `parts` under `root`, created as needed; nullptr when a part is not a table.
nlohmann::json* tableAt(nlohmann::json& root, const std::vector<std::string>& parts, std::size_t n)
{
    nlohmann::json* t = &root;
    for (std::size_t i = 0; i < n; ++i) {
        nlohmann::json& next = (*t)[parts[i]];
        if (next.is_null())
            next = nlohmann::json::object();
        if (!next.is_object())
            return nullptr;
        t = &next;
    }
    return t;
}

} // namespace

Expected<nlohmann::json> parseToml(std::string_view text)
{
    nlohmann::json root = nlohmann::json::object();
    std::vector<std::string> current;
    std::size_t start = 0;
    // A UTF-8 byte order mark (Windows editors write one) is not part of the first key.
    if (text.starts_with("\xEF\xBB\xBF"))
        start = 3;
    // TOML files are UTF-8 (TOML 1.0, "Spec"); a plan can hold nothing else. Checked line by
    // line first, so the message names the line.
    int number = 0;
    for (std::size_t pos = start; pos <= text.size();) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        ++number;
        if (!isValidUtf8(text.substr(pos, end - pos)))
            return Error { fmt::format("line {}", number),
                "is not valid UTF-8 (a TOML file is UTF-8 text)" };
        pos = end + 1;
    }
    for (Parser p(text, start); !p.done(); p.nextLine()) {
        if (p.atEnd())
            continue;
        if (p.eat('[')) {
            if (p.peek('['))
                return p.error("arrays of tables ([[...]]) are not supported");
            Expected<std::vector<std::string>> k = p.key();
            if (!k)
                return k.error();
            if (!p.eat(']') || !p.atEnd())
                return p.error("expected ] after the table name");
            if (!tableAt(root, *k, k->size()))
                return p.error(fmt::format("table [{}] redefines a value", fmt::join(*k, ".")));
            current = *k;
            continue;
        }
        Expected<std::vector<std::string>> k = p.key();
        if (!k)
            return k.error();
        if (!p.eat('='))
            return p.error("expected = after the key");
        Expected<nlohmann::json> v = p.value();
        if (!v)
            return v.error();
        if (!p.atEnd())
            return p.error("unexpected text after the value");
        std::vector<std::string> full = current;
        full.insert(full.end(), k->begin(), k->end());
        if (full.size() > static_cast<std::size_t>(kMaxJsonDepth))
            return p.error(fmt::format("a key nests deeper than {} tables", kMaxJsonDepth));
        nlohmann::json* table = tableAt(root, full, full.size() - 1);
        if (!table)
            return p.error(fmt::format("{} is inside a value, not a table", fmt::join(full, ".")));
        if (table->contains(full.back()))
            return p.error(fmt::format("{} is set twice", fmt::join(full, ".")));
        (*table)[full.back()] = *v;
    }
    return root;
}

} // namespace envelope::exportdetail
