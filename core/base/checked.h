// Checked arithmetic for integers a user wrote (engine configs, args files, plan counts).
//
// Engine files hold 64-bit integers that Envelope multiplies (tp x pp x cp, micro x accum x dp):
// a product that wraps became 0 and then a divisor (issue 26: SIGFPE in three importers). Every
// such product goes through `checkedProduct`, which returns the product or an Error naming the
// field and the largest value it may take, never a wrapped number.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "base/expected.h"

namespace envelope {

// a x b of two plan ints, exact: a product of two 32-bit values always fits in 64 bits (an int
// product wrapped in the vLLM exporter: 1e7 prompts x 1000 printed --max-num-seqs 470021803).
constexpr long long wideProduct(int a, int b)
{
    return static_cast<long long>(a) * b;
}

// a x b, or nullopt when it does not fit in a long long.
inline std::optional<long long> checkedMul(long long a, long long b)
{
    long long out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        return std::nullopt;
    return out;
}

// a + b, or nullopt when it does not fit in a long long.
inline std::optional<long long> checkedAdd(long long a, long long b)
{
    long long out = 0;
    if (__builtin_add_overflow(a, b, &out))
        return std::nullopt;
    return out;
}

// The product of `factors` when it is 1..max; else an Error at `path` saying what was multiplied
// (`what`, e.g. "tp x pp x cp") and the allowed range. Factors are expected >= 1.
inline Expected<long long> checkedProduct(std::initializer_list<long long> factors, long long max,
    const std::string& path, const std::string& what)
{
    long long product = 1;
    bool overflow = false;
    for (long long f : factors) {
        const std::optional<long long> next = checkedMul(product, f);
        if (!next || *next > max) {
            overflow = true;
            break;
        }
        product = *next;
    }
    if (overflow || product < 1)
        return Error { path,
            fmt::format("{} must be 1..{}, got {}", what, max, [&] {
                std::string s;
                for (long long f : factors)
                    s += (s.empty() ? "" : " x ") + std::to_string(f);
                return s;
            }()) };
    return product;
}

} // namespace envelope
