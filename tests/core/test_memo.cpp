// RecentMemo (core/base/memo.h): the per-shape memo of op times (issue 22). A memo of a pure
// function must give what the function gives: these pin the lookup's rules, not a timing.
#include <gtest/gtest.h>

#include <string>

#include "base/memo.h"

namespace envelope {
namespace {

struct Key {
    std::string name;
    double x = 0;
    bool operator==(const Key&) const = default;
};

TEST(RecentMemo, EqualTagsOfUnequalKeysAreToldApartByTheKey)
{
    RecentMemo<Key, int, 4> memo;
    int computed = 0;
    const auto lookup = [&](const Key& key, std::uint64_t tag, int value) {
        return memo.getTagged(
            tag, [&](const Key& k) { return k == key; }, [&] { return key; },
            [&] {
                ++computed;
                return value;
            });
    };
    EXPECT_EQ(lookup({ "a", 1 }, 7, 10), 10);
    // The same tag, another key: computed, not the first key's value.
    EXPECT_EQ(lookup({ "b", 1 }, 7, 20), 20);
    EXPECT_EQ(computed, 2);
    // Each found again without computing.
    EXPECT_EQ(lookup({ "a", 1 }, 7, -1), 10);
    EXPECT_EQ(lookup({ "b", 1 }, 7, -1), 20);
    EXPECT_EQ(computed, 2);
}

TEST(RecentMemo, KeepsTheLastNKeysRoundRobin)
{
    RecentMemo<Key, int, 2> memo;
    int computed = 0;
    const auto lookup = [&](double x) {
        const Key key { "k", x };
        return memo.getTagged(
            memoTag(x), [&](const Key& k) { return k == key; }, [&] { return key; },
            [&] {
                ++computed;
                return static_cast<int>(x * 10);
            });
    };
    lookup(1);
    lookup(2);
    lookup(3); // replaces 1, the oldest
    EXPECT_EQ(computed, 3);
    EXPECT_EQ(lookup(2), 20);
    EXPECT_EQ(lookup(3), 30);
    EXPECT_EQ(computed, 3);
    EXPECT_EQ(lookup(1), 10);
    EXPECT_EQ(computed, 4);
}

TEST(RecentMemo, TagsAreEqualForEqualPartsAndTellPlacesApart)
{
    EXPECT_EQ(memoTag(1.5, 2, true), memoTag(1.5, 2, true));
    // The same values in other places: other tags (each part rotated by its place).
    EXPECT_NE(memoTag(1.0, 2.0), memoTag(2.0, 1.0));
    EXPECT_NE(memoTag(3, 5), memoTag(5, 3));
    int a = 0, b = 0;
    EXPECT_NE(memoTag(&a), memoTag(&b));
}

} // namespace
} // namespace envelope
