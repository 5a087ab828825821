// Text that came from a user's file, made safe to show in a message: bounded in length, cut only
// between UTF-8 characters, control characters and invalid bytes escaped. Every Error passes
// through it when printed (Error::toString), so no input can put a NUL, an escape sequence or
// megabytes of text on a terminal or into a dialog.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace envelope {

// `text` with control characters written as \n, \t, \u0000 ... and bytes that are not valid
// UTF-8 as \xNN; longer than `maxBytes` is cut at a character boundary and ends in "...".
std::string printable(std::string_view text, std::size_t maxBytes = 4000);

// The longest prefix of `text` of at most `maxBytes` bytes that does not split a UTF-8 character.
std::string_view utf8Prefix(std::string_view text, std::size_t maxBytes);

// For "did you mean": the name in `names` nearest `word` by edit distance (Levenshtein) when it
// is near enough to be a typo (at most max(2, a third of `word`'s length) edits), else "".
std::string nearestName(std::string_view word, const std::vector<std::string>& names);

} // namespace envelope
