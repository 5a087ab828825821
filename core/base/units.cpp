#include "base/units.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace envelope {

std::string_view unitLabel(ByteUnits units)
{
    return units == ByteUnits::GB ? "GB" : "GiB";
}

bool parseByteUnits(std::string_view text, ByteUnits& out)
{
    std::string lower;
    for (char c : text)
        lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (lower == "gb") {
        out = ByteUnits::GB;
        return true;
    }
    if (lower == "gib") {
        out = ByteUnits::GiB;
        return true;
    }
    return false;
}

double toDisplayUnits(double bytes, ByteUnits units)
{
    return bytes / (units == ByteUnits::GB ? kGB : kGiB);
}

std::string formatBytes(double bytes, ByteUnits units, int decimals)
{
    const bool decimal = units == ByteUnits::GB;
    const double giga = decimal ? kGB : kGiB;
    const double tera = decimal ? kTB : kTiB;
    if (!std::isfinite(bytes))
        return "n/a";
    // Past a million TB a figure is a sign of absurd inputs; exponent form keeps it readable.
    if (std::fabs(bytes) >= 1e6 * tera)
        return fmt::format("{:.2e} {}", bytes / tera, decimal ? "TB" : "TiB");
    if (std::fabs(bytes) >= 10.0 * tera)
        return fmt::format("{:.{}f} {}", bytes / tera, decimals, decimal ? "TB" : "TiB");
    return fmt::format("{:.{}f} {}", bytes / giga, decimals, decimal ? "GB" : "GiB");
}

std::string formatBytesScaled(double bytes, ByteUnits units)
{
    const bool decimal = units == ByteUnits::GB;
    const double k = decimal ? kKB : kKiB;
    const double a = std::fabs(bytes);
    if (!std::isfinite(bytes) || a >= k * k * k)
        return formatBytes(bytes, units, 1);
    if (a >= k * k)
        return fmt::format("{:.1f} {}", bytes / (k * k), decimal ? "MB" : "MiB");
    if (a >= k)
        return fmt::format("{:.1f} {}", bytes / k, decimal ? "KB" : "KiB");
    return fmt::format("{:.0f} B", bytes);
}

std::string formatDuration(double seconds)
{
    if (!std::isfinite(seconds))
        return "n/a";
    if (seconds < 1e-3)
        return fmt::format("{:.1f} µs", seconds * 1e6);
    if (seconds < 1.0)
        return fmt::format("{:.1f} ms", seconds * 1e3);
    if (seconds < 120.0)
        return fmt::format("{:.2f} s", seconds);
    if (seconds < 7200.0)
        return fmt::format("{:.1f} min", seconds / 60.0);
    if (seconds < 2.0 * 86400.0)
        return fmt::format("{:.1f} h", seconds / 3600.0);
    if (seconds < 1e6 * 86400.0)
        return fmt::format("{:.1f} days", seconds / 86400.0);
    return fmt::format("{:.2e} days", seconds / 86400.0);
}

std::string formatCount(double count)
{
    const double a = std::fabs(count);
    if (!std::isfinite(count))
        return "n/a";
    if (a >= 1e15)
        return fmt::format("{:.2e}", count);
    if (a >= 1e12)
        return fmt::format("{:.2f}T", count / 1e12);
    if (a >= 1e9)
        return fmt::format("{:.2f}B", count / 1e9);
    if (a >= 1e6)
        return fmt::format("{:.1f}M", count / 1e6);
    if (a >= 1e3)
        return fmt::format("{:.1f}K", count / 1e3);
    return fmt::format("{:.0f}", count);
}

} // namespace envelope
