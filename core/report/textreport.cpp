#include "report/textreport.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "report/detail.h"
#include "serving/serving.h"

namespace envelope::report {
namespace {

using namespace detail;

std::string flops(double f)
{
    return std::isfinite(f) ? fmt::format("{:.3g} FLOPs", f) : "n/a";
}

// "fits (8.1 GB headroom)", "tight: 84.8 GB is above the usable 77.0 GB (0.7 GB below HBM)",
// "over: does not fit (12.0 GB over HBM)".
std::string verdictText(const TrainingMemory& m, ByteUnits units)
{
    const double total = m.perGpu.total();
    switch (m.verdict) {
    case Verdict::Fits:
        return fmt::format("fits ({} headroom)", humanBytes(m.gpuMemoryBytes - total, units));
    case Verdict::Tight:
        return fmt::format("tight: {} is above the usable {} ({} below HBM)",
            humanBytes(total, units), humanBytes(m.usableBytes, units),
            humanBytes(m.gpuMemoryBytes - total, units));
    case Verdict::Over:
        break;
    }
    return fmt::format(
        "over: does not fit ({} over HBM)", humanBytes(total - m.gpuMemoryBytes, units));
}

constexpr const char* kDoesNotFit = "does not fit";

Table trainingMemory(const Estimate& e, ByteUnits units)
{
    const TrainingMemory& m = e.training;
    Table t { "Training memory per GPU (most-loaded GPU)", {}, {} };
    for (Tenant tenant : kTrainingTenants)
        if (const double b = m.perGpu.*tenantInfo(tenant).bytes; tenantShown(tenant, b))
            t.add(std::string(tenantInfo(tenant).label), humanBytes(b, units));
    t.add("total", humanBytes(m.perGpu.total(), units));
    t.add("GPU memory", humanBytes(m.gpuMemoryBytes, units));
    t.add("usable (fits line)", humanBytes(m.usableBytes, units));
    t.add("verdict", verdictText(m, units));
    // The fewest GPUs whose verdict is `fits` (at or below the usable line, not merely within
    // HBM), growing data parallelism with TP x PP x CP kept.
    t.add("min GPUs (verdict fits)",
        m.minGpus > 0 ? std::to_string(m.minGpus)
                      : "none: no data-parallel size brings it below the usable line");
    // The planner's answer (the GUI's summary line), when the CLI asked for it.
    if (e.whatMakesItFitSearched && m.verdict == Verdict::Over)
        t.add("what makes it fit",
            e.whatMakesItFit ? fmt::format("{} ({} GPUs)", e.whatMakesItFit->description,
                                   e.whatMakesItFit->gpus)
                             : e.whatMakesItFitNote);
    t.add("data parallel", std::to_string(m.dataParallel));
    t.add("host memory per node", humanBytes(m.hostBytesPerNode, units));
    return t;
}

Table trainingCompute(const Plan& plan, const Estimate& e)
{
    const TrainingCompute& c = e.compute;
    // A plan that does not fit runs no step: no time, throughput or cost that looks real.
    const bool runs = e.training.verdict != Verdict::Over;
    // A tight plan (above the usable line, within HBM) may run: its figures stand, marked
    // (issue 24: only `over` withholds them).
    const bool tight = e.training.verdict == Verdict::Tight;
    const auto ifRuns = [runs, tight](std::string text) {
        return runs ? (tight ? text + " [tight: memory above the usable line]" : text)
                    : std::string(kDoesNotFit);
    };
    Table t { "Training compute", {}, {} };
    t.add("FLOPs per token (model)", flops(c.flopsPerToken));
    t.add("FLOPs per token (hardware)", flops(c.hardwareFlopsPerToken));
    t.add("global batch", fmt::format("{} tokens", formatCount(c.globalBatchTokens)));
    // A time figure says how sure it is (issue 22: "14.6 s +- 8%", not "14.57 s").
    t.add("step time",
        ifRuns(fmt::format("{} +- {:.0f}% ({})", duration(c.stepTimeS), 100 * c.uncertainty,
            c.timingSource)));
    t.add("throughput",
        ifRuns(fmt::format("{} tokens/s ({} per GPU)", formatCount(c.tokensPerS),
            formatCount(c.tokensPerSPerGpu))));
    if (plan.training.mfuOverride)
        t.add("MFU (override -> achieved)",
            ifRuns(fmt::format(
                "{} % -> {} %", number(100 * plan.training.mfu), number(100 * c.effectiveMfu))));
    else
        t.add("MFU / HFU (achieved)",
            ifRuns(fmt::format("{} % / {} %", number(100 * c.effectiveMfu), number(100 * c.hfu))));
    if (!plan.training.mfuOverride)
        t.add("step by op class",
            ifRuns(fmt::format("GEMMs {}, attention {}, elementwise {}, optimizer {}",
                duration(c.gemmS), duration(c.attentionS), duration(c.elementwiseS),
                duration(c.optimizerS))));
    t.add("time to train", ifRuns(duration(c.trainTimeS)));
    t.add("GPU-hours", ifRuns(formatCount(c.gpuHours)));
    t.add("cost", ifRuns(usd(c.cost)));
    t.add("DP communication", duration(c.communication.dpS));
    t.add("TP communication", duration(c.communication.tpS));
    t.add("pipeline bubble", number(100 * c.communication.ppBubbleFraction) + " %");
    t.add("bottleneck",
        c.bottleneck.empty() || !runs ? ifRuns("n/a")
                                      : fmt::format("{}, {} ({:.0f}% of the step)", c.bottleneck,
                                          duration(c.bottleneckS), 100 * c.bottleneckShare));
    if (c.observedMfu)
        t.add("observed MFU", number(100 * *c.observedMfu) + " %");
    if (c.observedHfu)
        t.add("observed HFU", number(100 * *c.observedHfu) + " %");
    // The budget solver's answers (seed 001 ex. 3), when the plan gives a budget or deadline.
    if (c.gpusForDeadline)
        t.add("GPUs for the deadline", std::to_string(*c.gpusForDeadline));
    if (c.affordableGpus)
        t.add("GPUs the budget affords", std::to_string(*c.affordableGpus));
    if (c.requiredMfu)
        t.add("MFU the deadline requires", number(100 * *c.requiredMfu) + " %");
    if (c.budgetTokens)
        t.add("tokens the budget buys", ifRuns(formatCount(*c.budgetTokens)));
    if (c.achievableDeadlineS)
        t.add("time within the budget", ifRuns(duration(*c.achievableDeadlineS)));
    return t;
}

Table serving(const Plan& plan, const Estimate& e, ByteUnits units)
{
    const ServingEstimate& s = e.serving;
    const std::string layout = s.disaggregation
        ? std::string("disaggregated")
        : s.attentionRanks > 1
        ? fmt::format("tp {} x dp-attention {}, ep {}", plan.serving.tp, s.attentionRanks, s.ep)
        : s.ep > 1 ? fmt::format("tp {}, ep {}", plan.serving.tp, s.ep)
                   : fmt::format("tp {}", plan.serving.tp);
    const std::string weights = servingWeightFormatText(plan.serving);
    const std::string kv = s.kvFormat.empty() || s.kvFormat == "bf16"
        ? fmt::format("{}-bit", plan.serving.kvBits)
        : s.kvFormat;
    Table t { fmt::format("Serving ({}, {} KV, {})", weights, kv, layout), {}, {} };
    if (s.disaggregation) {
        const DisaggregationEstimate& g = *s.disaggregation;
        const auto pool = [&](const ServingPoolEstimate& p) {
            return fmt::format("{} worker{} of {} GPU{} (tp {}{}{}): weights {} per GPU, KV {} "
                               "per GPU{}",
                p.workers, p.workers == 1 ? "" : "s", p.tp * p.dp, p.tp * p.dp == 1 ? "" : "s",
                p.tp, p.dp > 1 ? fmt::format(" x dp-attention {}", p.dp) : std::string(),
                p.ep > 1 ? fmt::format(", ep {}", p.ep) : std::string(),
                humanBytes(p.weightsBytesPerGpu, units), humanBytes(p.kvBudgetBytes, units),
                p.fits ? "" : " — does not fit");
        };
        t.add("prefill pool", pool(g.prefill));
        t.add("decode pool", pool(g.decode) + " (the figures below)");
        t.add("KV transfer per prompt",
            s.fits ? fmt::format("{} in {} ({} tokens)", humanBytes(g.kvTransferBytes, units),
                         duration(g.kvTransferS), plan.serving.context)
                   : kDoesNotFit);
        t.add("pool rates",
            s.fits ? fmt::format("prefill {} tokens/s, decode {} tokens/s: {} requests/s, the {} "
                                 "pool is the bottleneck",
                         formatCount(g.prefillTokensPerS), formatCount(g.decodeTokensPerS),
                         number(g.requestsPerS, 3), g.bottleneck)
                   : kDoesNotFit);
    }
    t.add("weights per GPU", humanBytes(s.weightsBytesPerGpu, units));
    t.add("KV cache per token", humanBytes(s.kvBytesPerToken, units));
    t.add("KV budget per GPU", humanBytes(s.kvBudgetBytes, units));
    if (plan.serving.engine != ServingEngine::Generic) {
        // Whose accounting sized the pool, at which modelled version (presets/engines.json).
        const std::string_view fraction = servingMemoryFractionKey(plan.serving.engine);
        std::string row = fmt::format("{}{} ({} {})",
            plan.serving.engineProfile.name.empty() ? s.engine : plan.serving.engineProfile.name,
            s.engineVersion.empty() ? std::string() : " " + s.engineVersion, fraction,
            fmt::format("{:g}", s.memoryFraction));
        if (!s.engineVersionNote.empty())
            row += "; " + s.engineVersionNote;
        t.add("KV pool sized as", row);
    }
    t.add("max tokens in cache", formatCount(s.maxTokens));
    t.add(fmt::format("max sequences at {} tokens", plan.serving.context),
        formatCount(s.maxSequences));
    if (s.speculative) {
        const SpeculativeEstimate& p = *s.speculative;
        t.add("speculative decoding",
            fmt::format("{} ({}), {} draft token{} at acceptance {}: {} tokens per step; draft "
                        "weights {} per GPU",
                p.kind, p.draftName, p.tokens, p.tokens == 1 ? "" : "s", number(p.acceptance, 2),
                number(p.meanTokensPerStep, 2), humanBytes(p.draftWeightsBytesPerGpu, units)));
        t.add(fmt::format("speculative step at {} sequences", plan.serving.concurrency),
            s.fits ? fmt::format("verify {} + draft {} = {} for {} tokens, against {} for 1 "
                                 "without: {}x the tokens/s",
                         duration(p.verifyStepS), duration(p.draftStepS), duration(p.stepS),
                         number(p.meanTokensPerStep, 2), duration(p.plainStepS), number(p.speedup, 2))
                   : kDoesNotFit);
    }
    if (s.load && plan.serving.workload) {
        // Under a workload: the pool the engine reserves; the rates are the next table's.
        t.add("KV pool reserved", fmt::format("{} per GPU ({} token slots)",
                                      humanBytes(s.kvBudgetBytes, units), formatCount(s.maxTokens)));
        t.add("fits", s.fits ? "yes: the engine admits requests as its KV pool frees (serving under load)"
                             : "no: " + s.load->sloNote);
        t.add("weights fit", yesNo(s.fitsWeights));
        return t;
    }
    // Rates at the requested concurrency only when it fits.
    const auto ifFits = [&s](std::string text) { return s.fits ? text : kDoesNotFit; };
    t.add(fmt::format("decode at {} sequences", plan.serving.concurrency),
        ifFits(fmt::format("{} tokens/s", formatCount(s.decodeTokensPerS))));
    t.add("time to first token",
        ifFits(fmt::format("{} +- {:.0f}%", duration(s.ttftS), 100 * s.ttftUncertainty)));
    t.add("inter-token latency",
        ifFits(fmt::format("{} +- {:.0f}% ({})", duration(s.itlS), 100 * s.uncertainty, s.timingSource)));
    t.add("fits",
        s.fits ? fmt::format("yes ({} of at most {} sequences)", plan.serving.concurrency,
            formatCount(s.maxSequences))
               : fmt::format("no: {} sequences requested, at most {} fit", plan.serving.concurrency,
                   formatCount(s.maxSequences)));
    t.add("weights fit", yesNo(s.fitsWeights));
    return t;
}

// Serving under the plan's workload (issue 27): percentiles are simulated, rates are the
// deployment's; nothing is shown that the engine cannot serve.
std::optional<Table> servingLoad(const Plan& plan, const Estimate& e)
{
    const ServingEstimate& s = e.serving;
    if (!s.load || !plan.serving.workload)
        return std::nullopt;
    const ServingLoad& l = *s.load;
    const ServingWorkload& w = *plan.serving.workload;
    const int engineGpus = s.disaggregation ? s.disaggregation->decode.tp * s.disaggregation->decode.dp
                                            : s.engineGpus;
    Table t { fmt::format("Serving under load ({}{} engine{} of {} GPU{}, {})",
                  s.disaggregation ? "disaggregated: " : "", l.replicas,
                  l.replicas == 1 ? "" : "s", engineGpus, engineGpus == 1 ? "" : "s",
                  w.concurrency ? fmt::format("{} users in a closed loop", *w.concurrency)
                                : fmt::format("{} requests/s, Poisson", number(*w.requestRate, 2))),
        {}, {} };
    t.add("mean request", fmt::format("{} input + {} output tokens", number(l.meanInputTokens, 0),
                              number(l.meanOutputTokens, 0)));
    if (!l.scheduler.empty())
        t.add("engine scheduler", l.scheduler);
    if (l.requests <= 0) {
        t.add("served", "no: " + (l.sloNote.empty() ? std::string("nothing simulated") : l.sloNote));
        return t;
    }
    t.add("TTFT mean / p50 / p90 / p99", l.saturated ? std::string("unbounded (above capacity)")
            : fmt::format("{} / {} / {} / {} (simulated)", duration(l.ttftMeanS), duration(l.ttftP50S),
                  duration(l.ttftP90S), duration(l.ttftP99S)));
    t.add("TPOT mean / p50 / p90 / p99",
        fmt::format("{} / {} / {} / {} (simulated)", duration(l.tpotMeanS), duration(l.tpotP50S),
            duration(l.tpotP90S), duration(l.tpotP99S)));
    t.add(fmt::format("one {}-token request alone", plan.serving.context),
        fmt::format("TTFT {}, ITL {}", duration(s.ttftMinS), duration(s.itlMinS)));
    t.add("requests served", fmt::format("{} /s of {} offered (capacity {} /s)", number(l.requestRateRps, 2),
                                 number(l.offeredRateRps, 2), number(l.capacityRps, 2)));
    t.add("output tokens/s", fmt::format("{} per GPU, {} per user", number(l.outputTokensPerSPerGpu, 0),
                                 number(l.outputTokensPerSPerUser, 1)));
    t.add("in the engine", fmt::format("{} requests, {} decoding per step", number(l.meanConcurrency, 1),
                               number(l.meanBatch, 1)));
    if (l.meetsSlo)
        t.add("meets the SLO", *l.meetsSlo ? std::string("yes") : "no: " + l.sloMiss);
    if (l.goodputRps)
        t.add("goodput", *l.goodputRps > 0 ? fmt::format("{} requests/s within the SLO", number(*l.goodputRps, 2))
                                           : "0: " + l.sloNote);
    return t;
}

std::vector<Table> rl(const Plan& plan, const Estimate& e, ByteUnits units)
{
    const RlEstimate& r = e.rl;
    const bool colocated = plan.rl.placement == RlPlacement::Colocated;
    Table roles { fmt::format("RL ({}, {} placement)", rlAlgorithmId(plan.rl.algorithm),
                      rlPlacementId(plan.rl.placement)),
        { "role", "GPUs", "per-GPU memory", "verdict" }, {} };
    if (colocated) {
        // Every role shares the cluster's GPUs: what matters is what is resident together.
        roles.title = fmt::format("RL ({}, colocated on {} GPUs: trainer states resident, "
                                  "rollout engine released after generation)",
            rlAlgorithmId(plan.rl.algorithm), r.totalGpus);
        roles.header = { "phase", "GPUs", "per-GPU memory", "verdict" };
        const double hbm = plan.gpu.gpu.memoryBytes;
        // The training tab's rule: fits under the usable line, tight up to HBM.
        const auto phase = [&](const char* name, double bytes) {
            roles.rows.push_back({ name, std::to_string(r.totalGpus), humanBytes(bytes, units),
                std::string(verdictId(memoryVerdict(bytes, hbm, plan.training.usableFraction))) });
        };
        phase("rollout", r.rolloutPhaseBytes);
        phase("training", r.trainingPhaseBytes);
        phase("colocated peak", r.colocatedPeakBytes);
    } else {
        for (const RoleEstimate& role : r.perRole)
            roles.rows.push_back({ role.role, std::to_string(role.gpus),
                role.problem.empty() ? humanBytes(role.perGpu.total(), units)
                                     : ">= " + humanBytes(role.perGpu.total(), units),
                role.problem.empty() ? std::string(verdictId(role.verdict))
                                     : "cannot be laid out" });
    }
    // The step's terms as rl.cpp adds them: rollout, then the frozen models' forwards (the
    // reference; PPO's reward model and critic values too), then the update(s).
    const bool ppo = plan.rl.algorithm == RlAlgorithm::Ppo;
    // A job that does not fit runs no step: no time or rate that looks real.
    const auto term = [&r](double s) {
        return !r.fits ? std::string(kDoesNotFit) : s > 0 ? duration(s) : std::string("none");
    };
    Table timing { "RL step", {}, {} };
    timing.add("rollout", term(r.rolloutS));
    if (r.rolloutS > 0)
        timing.add("weight sync to the engines", term(r.weightSyncS));
    const std::string frozen = ppo ? "reference, reward and value forwards" : "reference forward";
    timing.add(r.oldLogProbS > 0
            ? frozen + (colocated ? " + old log-probs" : " (old log-probs alongside)")
            : frozen,
        term(r.referenceS));
    timing.add(ppo ? "policy and critic training" : "policy training", term(r.trainS));
    const bool overlapped = r.overlapped && r.rolloutS > 0;
    if (overlapped) {
        // What lets the pools overlap: a staleness bound, streamed updates, or both (partial
        // rollouts have their own row).
        timing.add("rollout waits for the update", term(r.rolloutIdleS));
        timing.add("trainer waits for completions", term(r.trainerIdleS));
        timing.add("step (" + rlAsyncText(r.staleness, false, r.updatesPerSync) + ")",
            r.fits ? duration(r.stepS) : std::string(kDoesNotFit));
    } else
        timing.add("step (the sum of the rows above)",
            r.fits ? duration(r.stepS) : std::string(kDoesNotFit));
    if (r.partialRollouts)
        timing.add("partial rollouts",
            fmt::format("{} sequences per engine carried into the next step, their KV recomputed "
                        "in {} (in the rollout)",
                number(r.rolloutRunningBatch, 0),
                r.fits ? duration(r.rolloutReprefillS) : std::string(kDoesNotFit)));
    if (r.rolloutTailSteps > 0)
        timing.add("response lengths",
            fmt::format("mean {} of at most {} tokens: {} decode steps wait for the longest{}",
                number(r.meanResponseTokens, 0), plan.rl.responseLen,
                number(r.rolloutTailSteps, 0),
                r.partialRollouts ? fmt::format(" (a sequence may span {:g} steps)", r.staleness + 1)
                                  : std::string()));
    else if (r.rolloutWaves > 0 && !r.partialRollouts) // partial rollouts run no waves
        timing.add("rollout waves",
            fmt::format("{} of up to {} sequences per engine (KV pool {} per GPU)",
                number(r.rolloutWaves, 0), number(r.rolloutMaxSequences, 0),
                humanBytes(r.rolloutKvPoolBytes, units)));
    timing.add("steps per hour", r.fits ? number(r.stepsPerHour) : std::string(kDoesNotFit));
    timing.add("bottleneck", r.bottleneck.empty() ? "n/a" : r.bottleneck);
    if (!colocated && (r.suggestedRolloutGpus > 0 || r.suggestedTrainerGpus > 0))
        timing.add("balanced split",
            fmt::format(
                "{} rollout / {} trainer GPUs", r.suggestedRolloutGpus, r.suggestedTrainerGpus));
    return { roles, timing };
}

} // namespace

std::string humanBytes(double bytes, ByteUnits units)
{
    if (!std::isfinite(bytes))
        return "n/a";
    // Below a kilobyte (a zero, in practice) reads best in the table's unit: "0.0 GB".
    const double k = units == ByteUnits::GB ? kKB : kKiB;
    if (std::fabs(bytes) < k)
        return formatBytes(bytes, units, 1);
    return formatBytesScaled(bytes, units);
}

std::string formatReport(const Plan& plan, const Estimate& e, ByteUnits units, ReportFormat format,
    const ReportSections& sections)
{
    std::vector<Table> tables { configuration(plan, e, units, sections) };
    if (sections.training)
        tables.push_back(trainingMemory(e, units));
    if (sections.compute)
        tables.push_back(trainingCompute(plan, e));
    if (sections.serving) {
        tables.push_back(serving(plan, e, units));
        if (std::optional<Table> load = servingLoad(plan, e))
            tables.push_back(std::move(*load));
    }
    if (sections.rl)
        for (Table& t : rl(plan, e, units))
            tables.push_back(std::move(t));
    Table w { "Warnings", {}, {} };
    for (const std::string& warning : e.warnings)
        if (warningShown(warning, sections))
            w.add(std::to_string(w.rows.size() + 1), warning);
    if (!w.rows.empty())
        tables.push_back(std::move(w));
    if (format == ReportFormat::Markdown)
        return "# " + escapeCell(plan.name) + "\n\n" + renderMarkdown(tables);
    return renderText(tables);
}

std::string formatSummaryMarkdown(
    const Plan& plan, const Estimate& e, ByteUnits units, const std::string& bestChange)
{
    const TrainingMemory& m = e.training;
    auto bytes = [units](double b) { return formatBytes(b, units); };
    std::string md = fmt::format("### {}\n\n", escapeCell(plan.name));
    ReportSections trainingOnly;
    trainingOnly.serving = trainingOnly.rl = false;
    md += renderMarkdown({ configuration(plan, e, units, trainingOnly) }, 4);
    md += fmt::format("| Per GPU | {} |\n|---|---:|\n", unitLabel(units));
    for (Tenant tenant : kTrainingTenants)
        if (const double b = m.perGpu.*tenantInfo(tenant).bytes; tenantShown(tenant, b))
            md += fmt::format("| {} | {} |\n", tenantInfo(tenant).name, bytes(b));
    md += fmt::format("| **Total** | **{}** |\n", bytes(m.perGpu.total()));
    md += fmt::format("| HBM | {} |\n\n", bytes(m.gpuMemoryBytes));
    const double room = m.gpuMemoryBytes - m.perGpu.total();
    switch (m.verdict) {
    case Verdict::Fits:
        md += fmt::format("**Fits**, {} headroom.", bytes(room));
        break;
    case Verdict::Tight:
        md += fmt::format(
            "**Tight**: above the usable {}, {} below HBM.", bytes(m.usableBytes), bytes(room));
        break;
    case Verdict::Over:
        md += fmt::format("**Does not fit**: {} over.", bytes(-room));
        break;
    }
    // min_gpus is the fewest GPUs whose verdict is `fits`, not merely within HBM.
    md += m.minGpus > 0 ? fmt::format(" Min GPUs to fit below the usable line: {}.", m.minGpus)
                        : std::string(" No GPU count fits below the usable line at this "
                                      "parallelism.");
    if (!bestChange.empty())
        md += fmt::format(" What makes it fit: {}.", bestChange);
    md += "\n";
    return md;
}

std::string formatExplanations(const Plan& plan, const Estimate& e, ByteUnits units)
{
    std::string out = plan.name + "\n\n";
    for (const Explanation& x : e.explain) {
        const bool whole
            = std::isfinite(x.value) && x.value == std::floor(x.value) && std::fabs(x.value) < 1e15;
        std::string value = whole ? fmt::format("{:.0f}", x.value) : fmt::format("{:.6g}", x.value);
        if (x.unit == "bytes")
            value = fmt::format("{} bytes ({})", value, humanBytes(x.value, units));
        else if (!x.unit.empty())
            value += " " + x.unit;
        out += fmt::format("{} = {}\n  formula: {}\n", x.figure, value, x.formula);
        if (!x.source.empty())
            out += "  source:  " + x.source + "\n";
        out += "\n";
    }
    return out;
}

} // namespace envelope::report
