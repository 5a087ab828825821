// How the throughput panel writes the core's compute figures. The tests format the core's
// numbers through these same functions, so a shown text compares exactly with
// estimate(plan).compute. Formatting only: no figure is computed here.
#pragma once

#include <QString>

namespace envelope {
struct Explanation;
}

namespace envelope::ui {

QString durationText(double seconds); // "1.23 s", "12.5 days" (core formatDuration)
QString flopsText(double flops); // "42.3 GFLOP", "1.20 PFLOP"
QString flopRateText(double flopsPerS); // "989 TFLOP/s"
QString tokenRateText(double tokensPerS); // "1.23M tok/s"
QString tokensText(double tokens); // "2.00T tokens"
QString percentText(double fraction); // 0.4512 -> "45.1%"
QString usdText(double usd); // "$1.23M", "$950"
QString gpuHoursText(double hours); // "1.2M GPU·h"
QString gpuCountText(int gpus); // "1,024 GPUs"

// "formula<br><i>source</i>" for a tooltip; empty when `e` is null.
QString explanationToolTip(const Explanation* e);

} // namespace envelope::ui
