// A small memo of a pure function's last results (issue 22: "cache op times per shape"). Kept
// per thread by its users (a planner search and the GUI's estimates run on different threads),
// it holds the `N` most recent keys and replaces them round-robin: a lookup compares keys with
// ==, so the key must hold every input the value depends on. Results are the same with or
// without it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace envelope {

template <class Key, class Value, std::size_t N>
class RecentMemo {
public:
    // The value for `key`: the remembered one, or compute() remembered and returned.
    template <class Compute> Value get(Key key, Compute&& compute)
    {
        for (const auto& [k, v] : m_entries)
            if (k == key)
                return v;
        Value value = compute();
        if (m_entries.size() < N)
            m_entries.emplace_back(std::move(key), value);
        else
            m_entries[m_next++ % N] = { std::move(key), value };
        return value;
    }

    // The same, found by `matches(key)` without building a key first (a key that copies a model
    // or a GPU costs more than the comparison): `makeKey()` runs only on a miss.
    template <class Matches, class MakeKey, class Compute>
    Value getIf(Matches&& matches, MakeKey&& makeKey, Compute&& compute)
    {
        for (const auto& [k, v] : m_entries)
            if (matches(k))
                return v;
        Value value = compute();
        if (m_entries.size() < N)
            m_entries.emplace_back(makeKey(), value);
        else
            m_entries[m_next++ % N] = { makeKey(), value };
        return value;
    }

private:
    std::vector<std::pair<Key, Value>> m_entries;
    std::size_t m_next = 0;
};

} // namespace envelope
