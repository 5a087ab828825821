// Byte figures shown to people: decimal and binary units kept apart and always labelled.
#include <gtest/gtest.h>

#include "base/units.h"

namespace envelope {
namespace {

TEST(Units, ScaledBytesPickTheLargestUnitAtOrAboveOne)
{
    // Llama-2 7B's KV cache per token: 2 x 32 layers x 4096 x 2 B = 524,288 B (seed 000).
    EXPECT_EQ(formatBytesScaled(524288, ByteUnits::GB), "524.3 KB");
    EXPECT_EQ(formatBytesScaled(524288, ByteUnits::GiB), "512.0 KiB");
    EXPECT_EQ(formatBytesScaled(677330944, ByteUnits::GB), "677.3 MB");
    EXPECT_EQ(formatBytesScaled(13476831232, ByteUnits::GB), "13.5 GB");
    EXPECT_EQ(formatBytesScaled(13476831232, ByteUnits::GiB), "12.6 GiB");
    EXPECT_EQ(formatBytesScaled(2.6e13, ByteUnits::GB), "26.0 TB");
    EXPECT_EQ(formatBytesScaled(512, ByteUnits::GB), "512 B");
    EXPECT_EQ(formatBytesScaled(1000, ByteUnits::GiB), "1000 B");
}

} // namespace
} // namespace envelope
