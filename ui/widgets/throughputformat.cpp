#include "widgets/throughputformat.h"

#include <QLocale>

#include <cmath>

#include "base/explain.h"
#include "base/units.h"

namespace envelope::ui {
namespace {
QString count(double value)
{
    return QString::fromStdString(formatCount(value));
}
} // namespace

QString durationText(double seconds)
{
    return QString::fromStdString(formatDuration(seconds));
}

QString flopsText(double flops)
{
    if (!std::isfinite(flops))
        return QStringLiteral("n/a");
    struct Prefix {
        double scale;
        const char* name;
    };
    static constexpr Prefix kPrefixes[]
        = { { 1e18, "E" }, { 1e15, "P" }, { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "K" } };
    for (const Prefix& p : kPrefixes)
        if (std::fabs(flops) >= p.scale) {
            const double v = flops / p.scale;
            // Three significant digits: "989 T", "42.3 G", "1.20 P".
            const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
            return QStringLiteral("%1 %2FLOP").arg(v, 0, 'f', decimals).arg(QLatin1String(p.name));
        }
    return QStringLiteral("%1 FLOP").arg(flops, 0, 'f', 0);
}

QString flopRateText(double flopsPerS)
{
    return flopsText(flopsPerS) + QStringLiteral("/s");
}

QString tokenRateText(double tokensPerS)
{
    return count(tokensPerS) + QStringLiteral(" tok/s");
}

QString tokensText(double tokens)
{
    return count(tokens) + QStringLiteral(" tokens");
}

QString percentText(double fraction)
{
    if (!std::isfinite(fraction))
        return QStringLiteral("n/a");
    return QStringLiteral("%1%").arg(fraction * 100, 0, 'f', 1);
}

QString usdText(double usd)
{
    if (!std::isfinite(usd))
        return QStringLiteral("n/a");
    return QStringLiteral("$") + count(usd);
}

QString gpuHoursText(double hours)
{
    if (!std::isfinite(hours))
        return QStringLiteral("n/a");
    return count(hours) + QStringLiteral(" GPU·h");
}

QString gpuCountText(int gpus)
{
    return QObject::tr("%1 GPUs").arg(QLocale().toString(gpus));
}

QString explanationToolTip(const Explanation* e)
{
    if (!e)
        return {};
    return QStringLiteral("%1<br><i>%2</i>")
        .arg(QString::fromStdString(e->formula).toHtmlEscaped(),
            QString::fromStdString(e->source).toHtmlEscaped());
}

} // namespace envelope::ui
