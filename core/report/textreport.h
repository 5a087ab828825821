// Human-readable estimate reports (envelope-cli's text and Markdown, the app's copied summary): aligned text tables or Markdown, with every
// byte figure in the unit the user chose (GB = 1e9 or GiB = 2^30, always labelled).
#pragma once

#include <string>

#include "estimate/estimate.h"
#include "base/units.h"

namespace envelope::report {

enum class ReportFormat { Text, Markdown };

std::string formatReport(
    const Plan& plan, const Estimate& estimate, ByteUnits units, ReportFormat format);

// The app's "copy summary as Markdown": a heading, one line of model, GPUs and parallelism, the
// training memory of the most-loaded GPU (every training tenant, total, HBM) in `units`, and
// the verdict with the minimum GPU count and, when given, the best single change.
std::string formatSummaryMarkdown(
    const Plan& plan, const Estimate& estimate, ByteUnits units, const std::string& bestChange = {});

// Every explained figure: "figure = value unit", its formula and its source.
std::string formatExplanations(const Plan& plan, const Estimate& estimate, ByteUnits units);

// A byte figure in the chosen family, scaled to TB/GB/MB/KB (or TiB/GiB/MiB/KiB).
std::string humanBytes(double bytes, ByteUnits units);

} // namespace envelope::report
