// Human-readable estimate reports (envelope-cli's text and Markdown, the app's copied summary):
// aligned text tables or Markdown, with every byte figure in the unit the user chose (GB = 1e9 or
// GiB = 2^30, always labelled).
//
// A report opens with the configuration (model, GPUs, recipe, ZeRO, parallelism, batch,
// recompute, framework, efficiency, offload: enough to reproduce the plan), then the sections
// the plan is about (ReportSections), then the warnings of those sections.
#pragma once

#include <string>
#include <string_view>

#include "base/expected.h"
#include "base/units.h"
#include "plan/plan.h"
#include "result/result.h"

namespace envelope::report {

enum class ReportFormat { Text, Markdown };

// Which sections a text or Markdown report prints (`envelope-cli estimate --sections`):
// `training` memory per GPU, the verdict and min GPUs; `compute` step time, throughput, cost
// and the budget solver's answers; `serving`; `rl`. Each also selects its configuration rows
// and its warnings.
struct ReportSections {
    bool training = true;
    bool compute = true;
    bool serving = true;
    bool rl = true;

    bool operator==(const ReportSections&) const = default;
};

inline constexpr std::string_view kReportSectionNames = "training, compute, serving, rl";

// "training,compute" (comma-separated, any order, repeats allowed) -> those sections. An empty
// list or an unknown name is an error naming the allowed values.
Expected<ReportSections> parseReportSections(std::string_view list);

// The sections a plan is about, from the top-level keys of its JSON text: `training` selects
// training and compute, `serving` serving, `rl` rl. A plan with none of the three keys is a
// training job (the estimator's default), so it gets training and compute. Text that is not a
// JSON object gets every section.
ReportSections planSections(std::string_view planJson);

// Whether a plan warning belongs in a report of `sections`: a warning naming `serving.` is the
// serving section's, one naming `rl.` or the RL pools the rl section's, one naming `training.`
// or the model's pipeline split the training sections'; any other (the cluster) always shows.
bool warningShown(std::string_view warning, const ReportSections& sections);

std::string formatReport(const Plan& plan, const Estimate& estimate, ByteUnits units,
    ReportFormat format, const ReportSections& sections = {});

// The app's "copy summary as Markdown": a heading, the training configuration table, the
// training memory of the most-loaded GPU (every training tenant, total, HBM) in `units`, and
// the verdict with the minimum GPU count and, when given, the best single change.
std::string formatSummaryMarkdown(const Plan& plan, const Estimate& estimate, ByteUnits units,
    const std::string& bestChange = {});

// Every explained figure: "figure = value unit", its formula and its source.
std::string formatExplanations(const Plan& plan, const Estimate& estimate, ByteUnits units);

// A byte figure in the chosen family, scaled to TB/GB/MB/KB (or TiB/GiB/MiB/KiB).
std::string humanBytes(double bytes, ByteUnits units);

} // namespace envelope::report
