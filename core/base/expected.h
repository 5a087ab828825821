// A small expected-or-error value for parsers and resolvers (C++20 has no std::expected).
//
// Errors carry the JSON path of the offending field ("training.zero_stage") and a message
// ("must be 0..3, got 5"); `toString()` joins them the way the CLI prints them.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "base/text.h"

namespace envelope {

struct Error {
    std::string path;     // JSON path of the field, e.g. "training.zero_stage"; may be empty
    std::string message;  // what is wrong and what is allowed

    // Bounded and with control characters escaped (base/text.h): paths and messages quote what
    // the user wrote, which may be a megabyte-long key or contain NUL.
    std::string toString() const
    {
        return path.empty() ? printable(message) : printable(path, 300) + ": " + printable(message);
    }
};

template <class T>
class Expected {
public:
    Expected(T value) : m_value(std::move(value)) {}  // NOLINT(google-explicit-constructor)
    Expected(Error error) : m_value(std::move(error)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return std::holds_alternative<T>(m_value); }
    explicit operator bool() const { return ok(); }

    const T& value() const& { return std::get<T>(m_value); }
    T& value() & { return std::get<T>(m_value); }
    T&& value() && { return std::get<T>(std::move(m_value)); }
    const T& operator*() const& { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }

    const Error& error() const { return std::get<Error>(m_value); }

private:
    std::variant<T, Error> m_value;
};

}  // namespace envelope
