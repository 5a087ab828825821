// A small memo of a pure function's last results (issue 22: "cache op times per shape"). Kept
// per thread by its users (a planner search and the GUI's estimates run on different threads),
// it holds the `N` most recent keys and replaces them round-robin: a lookup compares keys with
// ==, so the key must hold every input the value depends on. Results are the same with or
// without it.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace envelope {

template <class Key, class Value, std::size_t N>
class RecentMemo {
public:
    // The value for the key that `matches`: the remembered one, or compute() remembered and
    // returned. `matches` runs only on the entries whose tag of the key's cheap parts (memoTag)
    // is equal: the tags sit in a compact array beside the entries, so a lookup does not touch
    // every entry (a key that holds a model and a GPU is a kilobyte or more), and a caller need
    // not build its key before it knows one may match (`makeKey()` runs on a miss). Equal keys
    // must have equal tags; unequal keys may share one.
    template <class Matches, class MakeKey, class Compute>
    Value getTagged(std::uint64_t tag, Matches&& matches, MakeKey&& makeKey, Compute&& compute)
    {
        for (std::size_t i = 0; i < m_tags.size(); ++i)
            if (m_tags[i] == tag && matches(m_entries[i].first))
                return m_entries[i].second;
        Value value = compute();
        if (m_entries.size() < N) {
            m_entries.emplace_back(makeKey(), value);
            m_tags.push_back(tag);
        } else {
            const std::size_t i = m_next++ % N;
            m_entries[i] = { makeKey(), value };
            m_tags[i] = tag;
        }
        return value;
    }

private:
    std::vector<std::pair<Key, Value>> m_entries;
    std::vector<std::uint64_t> m_tags; // one per entry, in the same order
    std::size_t m_next = 0;
};

// A tag for RecentMemo::getTagged: the parts' bits, each rotated by its place and xor-ed
// (independent of each other, so they cost a few cycles: a lookup computes one each call).
// Doubles by their bits: equal doubles give equal tags (a -0.0 and 0.0 differ, which only
// costs a miss).
template <class... Parts> std::uint64_t memoTag(const Parts&... parts)
{
    const auto bits = [](const auto& p) -> std::uint64_t {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, double>)
            return std::bit_cast<std::uint64_t>(p);
        else if constexpr (std::is_pointer_v<P>)
            return reinterpret_cast<std::uintptr_t>(p);
        else
            return static_cast<std::uint64_t>(p);
    };
    std::uint64_t h = 0;
    int place = 0;
    ((h ^= std::rotl(bits(parts), 23 * place++)), ...);
    return h;
}

} // namespace envelope
