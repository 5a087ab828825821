// Units used across the core.
//
// Every byte quantity inside the core is a `double` counting bytes (exact for integers up to
// 2^53 B, about 9 PB, far beyond any per-GPU or per-cluster figure we produce). Names of such
// variables end in `Bytes`. Times are seconds (`...S`), rates per second (`...PerS`), FLOP counts
// are plain FLOPs, FLOP rates FLOP/s. Decimal (GB, 1e9) and binary (GiB, 2^30) units are kept
// apart and always labelled when shown.
#pragma once

#include <string>
#include <string_view>

namespace envelope {

inline constexpr double kKB = 1e3;
inline constexpr double kMB = 1e6;
inline constexpr double kGB = 1e9;
inline constexpr double kTB = 1e12;
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kTiB = kGiB * 1024.0;

// How byte figures are shown to people. The core computes in bytes; only output formats.
enum class ByteUnits { GB, GiB };

// "GB" or "GiB".
std::string_view unitLabel(ByteUnits units);

// Parses "gb" / "gib" (case-insensitive). Returns false on anything else.
bool parseByteUnits(std::string_view text, ByteUnits& out);

// Value of `bytes` in the display unit (GB = 1e9, GiB = 2^30).
double toDisplayUnits(double bytes, ByteUnits units);

// "12.9 GB" / "12.0 GiB"; for |bytes| >= 1e13 (or 10 TiB) switches to TB/TiB. `decimals` digits.
std::string formatBytes(double bytes, ByteUnits units, int decimals = 1);

// Like formatBytes, but in the largest unit that keeps the figure at or above 1: "524.3 KB",
// "677.3 MB", "13.5 GB" (GB: 1e3 steps; GiB: KiB/MiB/GiB, 1024 steps); below 1 KB "512 B".
// One decimal. For figures that span bytes to terabytes, such as KV cache per token.
std::string formatBytesScaled(double bytes, ByteUnits units);

// "1.23 s", "45 ms", "3.2 h", "12.5 days" — a human duration from seconds.
std::string formatDuration(double seconds);

// "6.74B", "124.4M", "1.23T" — a parameter (or any large) count.
std::string formatCount(double count);

} // namespace envelope
