// UTF-8 validity, for text that becomes a JSON string (nlohmann::json throws when it writes
// anything else). Implemented in text.cpp beside the decoder printable() uses.
#pragma once

#include <string_view>

namespace envelope {

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates).
bool isValidUtf8(std::string_view text);

} // namespace envelope
