// The serving capacity curve: estimateServing at each power-of-two context. Nothing is
// recomputed here; every figure is the serving estimate's own (docs/formulas-serving.md).
#include "serving/sweep.h"

#include <algorithm>
#include <cmath>

#include "plan/lengths.h"
#include "serving/load.h"
#include "serving/serving.h"

namespace envelope {
namespace {

// The engine whose decode the charts sweep: the plan's, or its decode pool's under
// serving.disaggregation (the pool that holds the sequences and sets ITL).
ServingConfig decodeEngine(const Plan& plan)
{
    const ServingConfig config = servingOfPlan(plan);
    return config.disaggregation ? servingPoolConfig(config, config.disaggregation->decode) : config;
}

} // namespace


std::vector<ServingSweepPoint> servingContextSweep(const Plan& plan)
{
    const ModelArch& arch = plan.model.arch;
    const ParamCounts counts = countParameters(arch);
    std::vector<ServingSweepPoint> points;
    points.reserve(kServingSweepMaxLog2 - kServingSweepMinLog2 + 1);
    for (int log2 = kServingSweepMinLog2; log2 <= kServingSweepMaxLog2; ++log2) {
        ServingConfig config = decodeEngine(plan);
        config.context = 1 << log2;
        ServingSweepPoint p;
        p.context = config.context;
        const ServingEstimate e = estimateServing(arch, counts, config, plan.gpu.gpu, nullptr, false);
        p.maxSequences = e.maxSequences;
        p.kvBudgetBytes = e.kvBudgetBytes;
        p.fitsConcurrency = e.fits;
        // Decode speed at what actually runs: the plan's concurrency, or fewer when the
        // budget admits fewer sequences at this context (vLLM preempts the rest).
        const double running
            = std::min<double>(std::max(plan.serving.concurrency, 1), e.maxSequences);
        if (running >= 1) {
            const double step = decodeTokenTime(arch, config, plan.gpu.gpu, running, config.context);
            p.decodeTokensPerS = step > 0 ? running / step : 0.0;
        }
        points.push_back(p);
    }
    return points;
}

InteractivityCurve servingInteractivityCurve(const Plan& plan)
{
    InteractivityCurve curve;
    const ModelArch& arch = plan.model.arch;
    const ServingConfig config = decodeEngine(plan);
    const ServingEstimate e
        = estimateServing(arch, countParameters(arch), config, plan.gpu.gpu, nullptr, false);
    if (!e.fitsWeights)
        return curve;
    const ServingWorkload* w = config.workload ? &*config.workload : nullptr;
    curve.kvTokens = w ? meanTokens(w->input) + meanTokens(w->output) / 2
                       : double(std::max(config.context, 1));
    const double blockSize = std::max(config.blockSize, 1);
    const double blocksPerSequence
        = std::max(1.0, std::ceil(kvTokensKept(arch, curve.kvTokens) / blockSize));
    curve.maxBatch = std::min(double(std::max(config.maxNumSeqs, 1)),
        std::floor(e.blocks / blocksPerSequence));
    if (!(curve.maxBatch >= 1))
        return curve;
    const double tp = std::max(config.tp, 1);
    const auto pointAt = [&](const ServingConfig& c, double batch) {
        const DecodeStepTiming t = decodeStepTiming(arch, c, plan.gpu.gpu, batch, curve.kvTokens);
        InteractivityPoint p;
        p.batch = batch;
        p.stepS = t.stepS;
        if (t.stepS > 0) {
            p.tokensPerSPerUser = t.tokensPerStep / t.stepS;
            p.tokensPerSPerGpu = batch * t.tokensPerStep / t.stepS / tp;
        }
        return p;
    };
    // The batch is one attention rank's: the engine's sequences spread over its ranks.
    const double rankBatch = std::ceil(double(config.concurrency) / servingParallel(config).dp);
    if (rankBatch >= 1 && rankBatch <= curve.maxBatch)
        curve.current = pointAt(config, rankBatch);
    if (config.slo) {
        const std::optional<double>& tpot = config.slo->tpotP90S ? config.slo->tpotP90S
            : config.slo->tpotP50S                                 ? config.slo->tpotP50S
                                                                   : config.slo->tpotP99S;
        if (tpot && *tpot > 0)
            curve.sloTokensPerSPerUser = 1.0 / *tpot;
    }
    ServingConfig plain = config;
    plain.speculative.reset();
    for (int i = 0; i < kInteractivityMaxPoints; ++i) {
        const double batch = std::min(std::ldexp(1.0, i), curve.maxBatch);
        curve.points.push_back(pointAt(config, batch));
        if (config.speculative)
            curve.plainPoints.push_back(pointAt(plain, batch));
        if (batch >= curve.maxBatch)
            break;
    }
    return curve;
}

bool servingRateCurveApplies(const Plan& plan, const Estimate& estimate)
{
    const ServingEstimate& base = estimate.serving;
    return plan.serving.workload && base.load && base.fits && base.load->requests > 0
        && std::isfinite(base.load->capacityRps) && base.load->capacityRps > 0;
}

ServingRateCurve servingRateCurve(const Plan& plan, const Estimate& estimate)
{
    ServingRateCurve curve;
    if (!servingRateCurveApplies(plan, estimate))
        return curve;
    const ServingEstimate& base = estimate.serving;
    curve.capacityRps = base.load->capacityRps;
    ServingConfig config = servingOfPlan(plan);
    config.workload->concurrency.reset();
    for (const double fraction : kServingRateFractions) {
        config.workload->requestRate = fraction * curve.capacityRps;
        const ServingLoad load = estimateServingLoad(
            plan.model.arch, config, plan.gpu.gpu, base, plan.cluster.gpus, false, 1000);
        curve.points.push_back({ .rateRps = *config.workload->requestRate,
            .ttftP90S = load.ttftP90S,
            .tpotP90S = load.tpotP90S,
            .saturated = load.saturated,
            .meetsSlo = load.meetsSlo });
    }
    return curve;
}

} // namespace envelope
