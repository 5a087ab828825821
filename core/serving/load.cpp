// Serving under load (issue 27): the event simulation of one engine's scheduler, its closed
// form, and the deployment's TTFT / TPOT percentiles and goodput. docs/formulas-serving.md,
// "Serving under load".
#include "serving/load.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <string_view>

#include <fmt/format.h>

#include "base/numeric.h"
#include "base/units.h"
#include "serving/serving.h"

namespace envelope {
namespace {

constexpr double kZ90 = 1.2815515655446004; // the standard normal's 90th percentile

// Log-linear interpolation on an increasing axis (values at or below the first point take the
// first value; above the last, the last slope continues).
double interpolateLog(const std::vector<double>& x, const std::vector<double>& y, double at)
{
    if (x.empty())
        return 0;
    if (x.size() == 1 || at <= x.front())
        return y.front();
    std::size_t i = 1;
    while (i + 1 < x.size() && at > x[i])
        ++i;
    const double f = (std::log(at) - std::log(x[i - 1])) / (std::log(x[i]) - std::log(x[i - 1]));
    return std::max(0.0, y[i - 1] + (y[i] - y[i - 1]) * f);
}

// Powers of two from `from` up to `to`, with `to` itself last.
std::vector<double> powersOfTwo(double from, double to)
{
    std::vector<double> v;
    for (double x = from; x < to && v.size() < 64; x *= 2)
        v.push_back(x);
    v.push_back(std::max(to, from));
    return v;
}

// The p50, p90 and p99 (nearest rank) of `v`, which it reorders: a selection for each, from the
// highest down within the part below the last (linear time; a sort was a sixth of a simulation).
struct Percentiles {
    double p50 = 0, p90 = 0, p99 = 0;
};
Percentiles percentiles(std::vector<double>& v)
{
    Percentiles out;
    if (v.empty())
        return out;
    const auto index = [&](double p) {
        const double rank = std::ceil(p * double(v.size()));
        return std::size_t(std::clamp(rank, 1.0, double(v.size()))) - 1;
    };
    auto end = v.end();
    double* const slots[] = { &out.p99, &out.p90, &out.p50 };
    const double ps[] = { 0.99, 0.90, 0.50 };
    for (int k = 0; k < 3; ++k) {
        const auto at = v.begin() + std::ptrdiff_t(index(ps[k]));
        // Every element before `end` is no larger than the one selected there, so the smaller
        // quantile is the same element it would be in the whole.
        std::nth_element(v.begin(), at, end);
        *slots[k] = *at;
        end = at;
    }
    return out;
}

double mean(const std::vector<double>& v)
{
    if (v.empty())
        return 0;
    double s = 0;
    for (double x : v)
        s += x;
    return s / double(v.size());
}

// Draws a length distribution fast: a histogram's cumulative weights once.
struct LengthSampler {
    const LengthDistribution* d = nullptr;
    LogNormal logNormal;
    std::vector<double> cumulative;

    explicit LengthSampler(const LengthDistribution& dist) : d(&dist)
    {
        if (dist.form == LengthDistribution::Form::MeanP90)
            logNormal = logNormalFromMeanP90(dist.mean, dist.p90);
        if (dist.form == LengthDistribution::Form::Histogram) {
            double sum = 0;
            for (const auto& [tokens, weight] : dist.histogram)
                cumulative.push_back(sum += std::max(0.0, weight));
        }
    }

    double draw(Draws& r, double cap) const
    {
        double tokens = 1;
        switch (d->form) {
        case LengthDistribution::Form::Fixed:
            tokens = d->fixed;
            break;
        case LengthDistribution::Form::MeanP90:
            tokens = std::round(std::exp(logNormal.mu + logNormal.sigma * r.normal()));
            break;
        case LengthDistribution::Form::Histogram: {
            const double u = r.uniform() * cumulative.back();
            const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
            const std::size_t i = std::min<std::size_t>(it - cumulative.begin(), cumulative.size() - 1);
            tokens = d->histogram[i].first;
            break;
        }
        }
        return std::clamp(tokens, 1.0, std::max(1.0, cap));
    }
};

} // namespace

std::uint64_t Draws::next()
{
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double Draws::uniform() { return double(next() >> 11) * 0x1.0p-53; }

double Draws::exponential(double rate) { return -std::log1p(-uniform()) / rate; }

double Draws::normal()
{
    const double u1 = 1.0 - uniform(); // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

double Draws::length(const LengthDistribution& d, double cap) { return LengthSampler(d).draw(*this, cap); }

LogNormal logNormalFromMeanP90(double mean, double p90)
{
    LogNormal r;
    if (!(mean > 0) || !(p90 > mean)) {
        r.mu = mean > 0 ? std::log(mean) : 0;
        return r;
    }
    const double a = std::log(p90 / mean);
    const double disc = kZ90 * kZ90 - 2 * a;
    r.sigma = kZ90 - std::sqrt(std::max(0.0, disc));
    r.mu = std::log(mean) - r.sigma * r.sigma / 2;
    return r;
}

StepTimes tabulatedStepTimes(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    double maxBatch, double maxTokens)
{
    struct Table {
        std::vector<double> batch, decodeLo, decodeHi, prompt, prefill;
        double kvLo = 0, kvHi = 0;
    };
    auto t = std::make_shared<Table>();
    maxBatch = std::max(1.0, std::floor(maxBatch));
    maxTokens = std::max(2.0, std::floor(maxTokens));
    t->batch = powersOfTwo(1, maxBatch);
    t->kvLo = std::min(128.0, maxTokens / 2);
    t->kvHi = maxTokens;
    for (double b : t->batch) {
        t->decodeLo.push_back(decodeStepTime(arch, config, gpu, b, t->kvLo));
        t->decodeHi.push_back(decodeStepTime(arch, config, gpu, b, t->kvHi));
    }
    t->prompt = powersOfTwo(16, maxTokens);
    for (double p : t->prompt)
        t->prefill.push_back(prefillOpsTime(arch, config, gpu, 1, p));
    StepTimes s;
    s.tokensPerStep = decodeTokensPerStep(config);
    s.promptHostFloorS = eagerHostFloorS(arch, config);
    s.decodeS = [t](double batch, double kv) {
        if (!(batch > 0))
            return 0.0;
        const double lo = interpolateLog(t->batch, t->decodeLo, batch);
        const double hi = interpolateLog(t->batch, t->decodeHi, batch);
        const double f = (kv - t->kvLo) / (t->kvHi - t->kvLo);
        return std::max(0.0, lo + (hi - lo) * f);
    };
    s.decodeLine = [t](double batch) {
        const double lo = interpolateLog(t->batch, t->decodeLo, batch);
        const double hi = interpolateLog(t->batch, t->decodeHi, batch);
        const double slope = (hi - lo) / (t->kvHi - t->kvLo);
        return std::pair<double, double>(lo - slope * t->kvLo, slope);
    };
    s.prefillS = [t](double tokens) {
        if (!(tokens > 0))
            return 0.0;
        return interpolateLog(t->prompt, t->prefill, tokens);
    };
    return s;
}

EngineRun simulateEngine(const ServingWorkload& workload, const EngineLimits& limits,
    const StepTimes& steps, double contextTokens, int requests, std::uint64_t seed)
{
    EngineRun run;
    const bool closedLoop = workload.concurrency.has_value();
    // Bounded work whatever the plan says (docs/reliability.md): at most 16,384 users per engine
    // (an engine runs max_num_seqs at once; more only queue), 100,000 requests, 20 M steps.
    const int users = closedLoop ? std::clamp(*workload.concurrency, 1, 16'384) : 0;
    // A closed loop starts with every user's request at once: run six rounds of them and
    // measure the four between the first and the last (and never the first 10% of requests).
    const int n = std::clamp(std::max(requests, 6 * users), 1, 100'000);
    const double rate = workload.requestRate.value_or(0);
    const double block = std::max(1, limits.blockSize);
    const double hit = std::clamp(workload.prefixHitRate, 0.0, 0.999);
    const double budgetTokens = std::max(1, limits.maxBatchedTokens);
    const double perStep = std::max(1.0, steps.tokensPerStep);
    // The engine's scheduler (docs/formulas-serving.md, "The engine's step"): whether a step
    // carries decodes and prompt tokens together, whether a prompt may split over steps, and
    // how many decode steps run per scheduling (vLLM V0's multi-step bursts).
    const bool mixed = limits.mixedBatches;
    const bool chunked = limits.chunkedPrefill;
    const int burst = std::clamp(limits.schedulerSteps, 1, 1024);
    // An overlap scheduler forms step k + 1 while step k runs, from the requests it had when
    // step k began: a request is scheduled only once it arrived before the last step started.
    const bool overlap = limits.overlapScheduler;
    double lastStepStart = 0;

    struct Request {
        double arrival = 0, first = -1, finish = -1;
        double input = 0, output = 0, computeLeft = 0, reserve = 0, prefillPerToken = 0;
        double decodeSteps = 0; // ceil((output - 1) / tokensPerStep)
        long long decodeStart = 0; // the engine's decode-step count when it began decoding
    };
    std::vector<Request> req;
    req.reserve(n);
    Draws draws(seed);
    const LengthSampler inputs(workload.input), outputs(workload.output);
    const auto create = [&](double arrival) {
        Request r;
        r.arrival = arrival;
        r.input = inputs.draw(draws, std::max(1.0, contextTokens - 1));
        r.output = outputs.draw(draws, std::max(1.0, contextTokens - r.input));
        const double computed = std::max(1.0, std::ceil(r.input * (1 - hit)));
        r.computeLeft = computed;
        r.prefillPerToken = steps.prefillS(computed) / computed;
        r.reserve = std::ceil((r.input + r.output) / block) * block;
        r.decodeSteps = std::ceil(std::max(0.0, r.output - 1) / perStep);
        if (r.reserve > limits.kvTokens)
            run.tooLong = true;
        req.push_back(r);
    };

    // Open loop: every arrival up front; closed loop: the users' first requests at t = 0.
    if (closedLoop) {
        // Users join spread over one request's decode time (at the full batch), so that a
        // closed loop of equal requests starts in its steady state instead of in lockstep.
        const double in = meanTokens(workload.input), out = meanTokens(workload.output);
        const double spread = std::max(1.0, out / perStep) * steps.decodeS(double(users), in + out / 2);
        for (int u = 0; u < std::min(users, n); ++u)
            create(spread * u / users);
    } else {
        double t = 0;
        for (int i = 0; i < n; ++i)
            create(t += draws.exponential(rate));
    }
    if (run.tooLong)
        return run;

    std::deque<int> waiting, prefilling;
    std::priority_queue<std::pair<long long, int>, std::vector<std::pair<long long, int>>, std::greater<>> decoding;
    double t = 0, kvSum = 0, reserved = 0;
    // iter counts every step, decodeIter the steps that decode (a prefill-only step advances
    // no running sequence); burstLeft: decode steps left in a multi-step burst.
    long long iter = 0, decodeIter = 0, batch = 0;
    int burstLeft = 0;
    std::size_t nextArrival = 0;
    int completed = 0;
    const int warmup = std::max(n / 10, users);
    // Time-weighted means over the measured window (from the warm-up's last arrival).
    double windowStart = -1, batchArea = 0, inEngineArea = 0, areaTime = 0;
    // Output tokens emitted so far, at the window's start and end: the rate counts the tokens
    // generated inside the window, not the lengths of the requests that finish in it (which
    // under-counts long requests when a request outlasts the window).
    double emitted = 0, emittedAtStart = 0, emittedAtEnd = -1, windowEndTime = -1;
    std::vector<std::pair<int, double>> chunks;
    const long long maxIterations = 20'000'000;
    long long lineBatch = -1;
    std::pair<double, double> line { 0, 0 };

    const auto finish = [&](int i) {
        Request& r = req[i];
        r.finish = t;
        reserved -= r.reserve;
        ++completed;
        if (closedLoop && int(req.size()) < n) {
            create(t);
            waiting.push_back(int(req.size()) - 1);
        }
    };

    while (completed < int(req.size()) && iter < maxIterations) {
        // Arrivals: every request of an open loop; a closed loop's first requests (its later
        // ones enter the queue as they are created).
        const std::size_t arriving = closedLoop ? std::size_t(std::min(users, n)) : req.size();
        while (nextArrival < arriving && req[nextArrival].arrival <= t)
            waiting.push_back(int(nextArrival++));
        if (batch == 0 && prefilling.empty() && waiting.empty()) {
            if (nextArrival < arriving) {
                t = req[nextArrival].arrival;
                continue;
            }
            break;
        }
        if (windowStart < 0 && int(closedLoop ? req.size() : nextArrival) > warmup)
        {
            windowStart = t;
            emittedAtStart = emitted;
        }

        // Schedule: decodes first, then prompt chunks in admission order, then new requests.
        // Inside a multi-step burst the scheduler does not run: the step decodes only. Without
        // mixed batches a step that computes prompt tokens computes nothing else (prefill
        // first: vLLM V0 without chunked prefill, SGLang), and its budget is all prompt tokens.
        // Without chunked prefill a prompt runs whole in one step (alone when it is longer than
        // the budget, as the engine's max_num_batched_tokens >= max_model_len rule allows).
        chunks.clear();
        if (burstLeft == 0) {
            double budget = mixed ? std::max(0.0, budgetTokens - double(batch)) : budgetTokens;
            for (int i : prefilling) {
                if (budget <= 0)
                    break;
                const double c = std::min(req[i].computeLeft, budget);
                chunks.emplace_back(i, c);
                budget -= c;
            }
            while (budget > 0 && !waiting.empty()) {
                const int i = waiting.front();
                if (overlap && req[i].arrival > lastStepStart)
                    break;
                const double running = double(batch) + double(prefilling.size());
                if (running >= limits.maxNumSeqs || reserved + req[i].reserve > limits.kvTokens)
                    break;
                if (!chunked && req[i].computeLeft > budget && !chunks.empty())
                    break;
                waiting.pop_front();
                reserved += req[i].reserve;
                prefilling.push_back(i);
                const double c = chunked ? std::min(req[i].computeLeft, budget) : req[i].computeLeft;
                chunks.emplace_back(i, c);
                budget -= c;
            }
        }
        const bool decodes = batch > 0 && (mixed || chunks.empty());
        double dt = 0;
        if (decodes) {
            const double meanKv = kvSum / double(batch);
            if (steps.decodeLine) {
                if (batch != lineBatch) {
                    line = steps.decodeLine(double(batch));
                    lineBatch = batch;
                }
                dt = std::max(0.0, line.first + line.second * meanKv);
            } else {
                dt = steps.decodeS(double(batch), meanKv);
            }
        }
        for (const auto& [i, c] : chunks)
            dt += c * req[i].prefillPerToken;
        if (!chunks.empty())
            dt = std::max(dt, steps.promptHostFloorS);
        if (!(dt > 0))
            dt = 1e-6; // a step takes time even when the table says 0 (a broken GPU spec)
        if (windowStart >= 0) {
            batchArea += double(decodes ? batch : 0) * dt;
            inEngineArea += double(batch + prefilling.size() + waiting.size()) * dt;
            areaTime += dt;
        }
        lastStepStart = t;
        t += dt;
        ++iter;

        // The running sequences each emit a token (perStep on average under speculative
        // decoding); those that reach their length finish. In a multi-step burst they finish
        // at its end (the engine returns the burst's tokens together and keeps every sequence
        // in the batch until then): the steps past a sequence's length are computed and
        // discarded.
        if (decodes) {
            ++decodeIter;
            burstLeft = burstLeft > 0 ? burstLeft - 1 : burst - 1;
            kvSum += double(batch) * perStep;
            emitted += double(batch) * perStep;
        }
        while (burstLeft == 0 && !decoding.empty() && decoding.top().first <= decodeIter) {
            const int i = decoding.top().second;
            decoding.pop();
            --batch;
            const double stepsRun = double(decodeIter - req[i].decodeStart);
            kvSum -= req[i].input + 1 + stepsRun * perStep;
            emitted -= (stepsRun - req[i].decodeSteps) * perStep;
            finish(i);
        }
        // Prompts whose last chunk ran emit their first token.
        for (const auto& [i, c] : chunks) {
            Request& r = req[i];
            r.computeLeft -= c;
            if (r.computeLeft > 0)
                continue;
            r.first = t;
            emitted += 1;
            if (r.output <= 1) {
                finish(i);
            } else {
                ++batch;
                kvSum += r.input + 1;
                r.decodeStart = decodeIter;
                decoding.emplace(decodeIter + (long long)(r.decodeSteps), i);
            }
        }
        // The window ends when the last request arrives (open loop) or is created (closed).
        if (emittedAtEnd < 0 && int(req.size()) == n && t >= req.back().arrival) {
            emittedAtEnd = emitted;
            windowEndTime = t;
        }
        prefilling.erase(std::remove_if(prefilling.begin(), prefilling.end(),
                             [&](int i) { return req[i].computeLeft <= 0; }),
            prefilling.end());

        // Steady decoding: no prompt in flight and none the scheduler could admit before the
        // next finish or arrival, so the steps until then differ only in the KV length. Run
        // them here with the same arithmetic, without the scheduler's bookkeeping: a lightly
        // loaded engine (a data-parallel attention rank, a disaggregated decode pool) spends
        // most of its steps this way.
        if (batch == 0 || !prefilling.empty() || !steps.decodeLine || batch != lineBatch || burst > 1)
            continue;
        if (!waiting.empty()) {
            const double running = double(batch);
            const bool admissible = (mixed ? budgetTokens - double(batch) : budgetTokens) > 0
                && running < limits.maxNumSeqs
                && reserved + req[waiting.front()].reserve <= limits.kvTokens;
            if (admissible)
                continue;
        }
        const std::size_t arrivingNow = closedLoop ? std::size_t(std::min(users, n)) : req.size();
        const double nextArrivalTime
            = nextArrival < arrivingNow ? req[nextArrival].arrival : std::numeric_limits<double>::infinity();
        const long long nextFinish
            = decoding.empty() ? std::numeric_limits<long long>::max() : decoding.top().first;
        const double inEngine = double(batch) + double(waiting.size());
        while (decodeIter + 1 < nextFinish && t < nextArrivalTime && iter < maxIterations) {
            double dt = std::max(0.0, line.first + line.second * (kvSum / double(batch)));
            if (!(dt > 0))
                dt = 1e-6;
            if (windowStart >= 0) {
                batchArea += double(batch) * dt;
                inEngineArea += inEngine * dt;
                areaTime += dt;
            }
            lastStepStart = t;
            t += dt;
            ++iter;
            ++decodeIter;
            kvSum += double(batch) * perStep;
            emitted += double(batch) * perStep;
            if (emittedAtEnd < 0 && int(req.size()) == n && t >= req.back().arrival) {
                emittedAtEnd = emitted;
                windowEndTime = t;
            }
        }
    }

    // The measured window: from the warm-up's end to the last arrival (open loop) or the last
    // request's creation (closed loop), so that neither the ramp nor the drain counts.
    const double windowEnd = req.back().arrival;
    std::vector<double> ttft, tpot;
    double gaps = 0, gapTokens = 0, e2e = 0, inTokens = 0, outTokens = 0;
    // The last requests run into the drain (fewer arrivals behind them, so faster steps): a
    // closed loop's final round of users, an open loop's last 5%, are not measured either.
    const int tail = closedLoop ? users : n / 20;
    const int measuredEnd = std::max(warmup + 1, int(req.size()) - tail);
    for (int i = warmup; i < std::min(measuredEnd, int(req.size())); ++i) {
        const Request& r = req[i];
        if (r.finish < 0)
            continue;
        ttft.push_back(r.first - r.arrival + limits.requestOverheadS);
        e2e += r.finish - r.arrival + limits.requestOverheadS;
        inTokens += r.input;
        outTokens += r.output;
        if (r.output > 1) {
            tpot.push_back((r.finish - r.first) / (r.output - 1));
            gaps += r.finish - r.first;
            gapTokens += r.output - 1;
        }
    }
    run.requests = int(ttft.size());
    if (emittedAtEnd < 0) {
        emittedAtEnd = emitted;
        windowEndTime = t;
    }
    run.durationS = std::max(0.0, windowEndTime - windowStart);
    double drawnOutput = 0;
    for (const Request& r : req)
        drawnOutput += r.output;
    drawnOutput /= double(req.size());
    if (run.durationS > 0 && windowStart >= 0) {
        // Steady state: requests complete at the rate tokens are generated / mean output.
        run.outputTokensPerS = (emittedAtEnd - emittedAtStart) / run.durationS;
        run.requestsPerS = drawnOutput > 0 ? run.outputTokensPerS / drawnOutput : 0;
    }
    run.ttftMeanS = mean(ttft);
    run.tpotMeanS = mean(tpot);
    const Percentiles ttftAt = percentiles(ttft);
    run.ttftP50S = ttftAt.p50;
    run.ttftP90S = ttftAt.p90;
    run.ttftP99S = ttftAt.p99;
    const Percentiles tpotAt = percentiles(tpot);
    run.tpotP50S = tpotAt.p50;
    run.tpotP90S = tpotAt.p90;
    run.tpotP99S = tpotAt.p99;
    run.itlMeanS = gapTokens > 0 ? gaps / gapTokens : 0;
    if (run.requests > 0) {
        run.e2eMeanS = e2e / run.requests;
        run.meanInputTokens = inTokens / run.requests;
        run.meanOutputTokens = outTokens / run.requests;
    }
    if (areaTime > 0) {
        run.meanBatch = batchArea / areaTime;
        run.meanInEngine = inEngineArea / areaTime;
    }
    run.truncated = iter >= maxIterations;
    // Open loop: requests still queued when the last one arrived, beyond what one step's
    // admissions clear, mean the queue was growing.
    run.backlog = !closedLoop && completed < int(req.size());
    if (!closedLoop) {
        std::size_t queuedAtEnd = 0;
        for (const Request& r : req)
            if (r.first < 0 || r.first > windowEnd)
                ++queuedAtEnd;
        run.backlog = run.backlog || double(queuedAtEnd) > std::max(0.05 * n, double(limits.maxNumSeqs));
    }
    return run;
}

EngineScheduler engineScheduler(const ServingConfig& config)
{
    const EngineProfile& e = config.engineProfile;
    const std::string engine = e.name.empty() ? std::string("the engine")
        : e.version.empty()                   ? e.name
                                              : e.name + " " + e.version;
    EngineScheduler s;
    s.schedulerSteps = std::max(1, config.schedulerSteps);
    if (config.chunkedPrefill) {
        s.chunkedPrefill = *config.chunkedPrefill;
        s.chunkedWhy = "serving.chunked_prefill";
    } else if (config.mixedBatches && e.mixedBatches == EngineProfile::Mixing::WhenChunked) {
        // vLLM V0 mixes exactly under chunked prefill: asking for one is asking for both.
        s.chunkedPrefill = *config.mixedBatches;
        s.chunkedWhy = "serving.mixed_batches (" + engine + " mixes only under chunked prefill)";
    } else if (e.chunkedPrefill) {
        s.chunkedWhy = engine + "'s default";
    } else if (e.chunkedPrefillAboveContext > 0) {
        s.chunkedPrefill = config.context > e.chunkedPrefillAboveContext;
        s.chunkedWhy = fmt::format("{}'s default at max_model_len {}; on above {}", engine,
            config.context, e.chunkedPrefillAboveContext);
    } else {
        s.chunkedPrefill = false;
        s.chunkedWhy = engine + "'s default";
    }
    if (config.overlapScheduler) {
        s.overlapScheduler = *config.overlapScheduler;
        s.overlapWhy = "serving.overlap_scheduler";
    } else {
        s.overlapScheduler = e.overlapScheduler && s.schedulerSteps == 1;
        s.overlapWhy = engine + "'s default";
    }
    if (config.mixedBatches) {
        s.mixedBatches = *config.mixedBatches;
        s.mixedWhy = "serving.mixed_batches";
    } else {
        switch (e.mixedBatches) {
        case EngineProfile::Mixing::Always:
            s.mixedBatches = true;
            s.mixedWhy = engine + " always mixes";
            break;
        case EngineProfile::Mixing::WhenChunked:
            s.mixedBatches = s.chunkedPrefill;
            s.mixedWhy = engine + " mixes only under chunked prefill";
            break;
        case EngineProfile::Mixing::Never:
            s.mixedBatches = false;
            s.mixedWhy = engine + "'s default";
            break;
        }
    }
    return s;
}

std::string schedulerDescription(const ServingConfig& config)
{
    const EngineScheduler s = engineScheduler(config);
    std::string text = fmt::format("{} ({}); {} prompts ({})",
        s.mixedBatches ? "decodes and prompt tokens in one step" : "prompt steps alone, before decodes",
        s.mixedWhy, s.chunkedPrefill ? "chunked" : "whole", s.chunkedWhy);
    if (s.schedulerSteps > 1)
        text += fmt::format("; bursts of {} decode steps per scheduling (serving.scheduler_steps)",
            s.schedulerSteps);
    if (s.overlapScheduler)
        text += fmt::format("; the next step formed while one runs, so a new request joins the "
                            "step after next ({})",
            s.overlapWhy);
    return text;
}

ClosedFormLoad closedFormLoad(double input, double output, double concurrency,
    double prefixHitRate, const EngineLimits& limits, const StepTimes& steps)
{
    ClosedFormLoad r;
    const double computed = std::max(1.0, std::ceil(input * (1 - std::clamp(prefixHitRate, 0.0, 0.999))));
    const double users = std::max(1.0, concurrency);
    const double budget = std::max(1.0, double(limits.maxBatchedTokens) - users);
    const double k = std::ceil(computed / budget);
    // Decode steps per request: output - 1 tokens at tokensPerStep a step.
    const double perStep = std::max(1.0, steps.tokensPerStep);
    const double decodeSteps = std::max(0.0, output - 1) / perStep;
    const double cycle = std::max(1.0 / perStep, decodeSteps) + k;
    r.batch = users * decodeSteps / cycle;
    r.stepS = steps.decodeS(r.batch, input + output / 2) + users / cycle * steps.prefillS(computed);
    r.tpotS = r.stepS / perStep;
    r.ttftS = k * r.stepS;
    r.requestsPerS = users / (cycle * r.stepS);
    r.outputTokensPerS = r.requestsPerS * output;
    return r;
}

namespace {

// The first objective a run misses, as "TTFT p90 1.2 s over 1.0 s"; empty when it meets all.
std::string sloMissText(const ServingSlo& slo, const EngineRun& r, bool saturated)
{
    const auto check = [](const char* what, double value, const std::optional<double>& limit) {
        return limit && value > *limit
            ? fmt::format("{} {} over {}", what, formatDuration(value), formatDuration(*limit))
            : std::string();
    };
    if (saturated && (slo.ttftP50S || slo.ttftP90S || slo.ttftP99S))
        return "TTFT grows without bound (above capacity)";
    for (const std::string& m : { check("TTFT p50", r.ttftP50S, slo.ttftP50S),
             check("TTFT p90", r.ttftP90S, slo.ttftP90S), check("TTFT p99", r.ttftP99S, slo.ttftP99S),
             check("TPOT p50", r.tpotP50S, slo.tpotP50S), check("TPOT p90", r.tpotP90S, slo.tpotP90S),
             check("TPOT p99", r.tpotP99S, slo.tpotP99S) })
        if (!m.empty())
            return m;
    return {};
}

// The objective one pool's run alone misses, which the disaggregated pair's run then misses too
// (every figure of the pair's run is at least that pool's, and either backlog saturates it): a
// prefill rank's TTFT is part of the pair's (its TPOT is the decode rank's, not judged here); a
// decode rank's TPOT is the pair's and its TTFT wait part of it.
std::string poolAloneMiss(const ServingSlo& slo, EngineRun run, bool prefill)
{
    if (prefill)
        run.tpotP50S = run.tpotP90S = run.tpotP99S = 0;
    return sloMissText(slo, run, run.backlog);
}

// A prefill worker's requests end at their first token.
LengthDistribution oneToken()
{
    LengthDistribution d;
    d.fixed = 1;
    return d;
}

// The figures of a run through `units` engines alike (attention ranks, replicas or a pool's
// ranks): per-request figures as they are, rates times the engines.
void takeRunFigures(ServingLoad& load, const EngineRun& run, int units)
{
    load.requests = run.requests;
    load.requestRateRps = run.requestsPerS * units;
    load.meanConcurrency = run.meanInEngine * units;
    load.meanBatch = run.meanBatch;
    load.ttftMeanS = run.ttftMeanS;
    load.ttftP50S = run.ttftP50S;
    load.ttftP90S = run.ttftP90S;
    load.ttftP99S = run.ttftP99S;
    load.tpotMeanS = run.tpotMeanS;
    load.tpotP50S = run.tpotP50S;
    load.tpotP90S = run.tpotP90S;
    load.tpotP99S = run.tpotP99S;
    load.itlMeanS = run.itlMeanS;
    load.e2eMeanS = run.e2eMeanS;
    load.outputTokensPerS = run.outputTokensPerS * units;
    load.outputTokensPerSPerUser = run.tpotMeanS > 0 ? 1 / run.tpotMeanS : 0;
}

// The notes every simulated load carries when they apply: a run cut at its step limit, and an
// offered rate above what `sustainer` ("the pools sustain", "the deployment sustains") holds.
void noteTruncatedOrSaturated(ServingLoad& load, bool truncated, std::string_view sustainer)
{
    if (truncated)
        load.notes.push_back("the simulation stopped at its 20 million steps before every request "
                             "finished: the figures are of the requests that did");
    if (load.saturated)
        load.notes.push_back(fmt::format("{:.3g} requests/s is above the {:.3g} {}: the queue "
                                         "grows without bound, so TTFT is withheld",
            load.offeredRateRps, load.capacityRps, sustainer));
}

// Goodput: the highest rate whose run meets every objective (`missAt` empty), by bisection
// between 1% of `capacity` and `capacity` (the percentiles grow with the rate), 12 halvings at
// most. 0, with the 1% rate's miss in `lowMiss`, when even that misses.
double highestRateMeeting(
    double capacity, const std::function<std::string(double)>& missAt, std::string& lowMiss)
{
    double lo = 0.01 * capacity, hi = capacity;
    lowMiss = missAt(lo);
    if (!lowMiss.empty())
        return 0.0;
    for (int i = 0; i < 12 && hi - lo > 1e-3 * capacity; ++i) {
        const double mid = (lo + hi) / 2;
        (missAt(mid).empty() ? lo : hi) = mid;
    }
    return lo;
}

EngineLimits poolLimits(const ServingConfig& config, double kvTokens)
{
    EngineLimits limits;
    limits.kvTokens = kvTokens;
    limits.blockSize = std::max(1, config.blockSize);
    limits.maxNumSeqs = std::max(1, config.maxNumSeqs);
    limits.maxBatchedTokens = std::max(1, config.maxBatchedTokens);
    const EngineScheduler scheduler = engineScheduler(config);
    limits.mixedBatches = scheduler.mixedBatches;
    limits.chunkedPrefill = scheduler.chunkedPrefill;
    limits.schedulerSteps = scheduler.schedulerSteps;
    limits.overlapScheduler = scheduler.overlapScheduler;
    limits.requestOverheadS = requestOverheadS(config);
    return limits;
}

// The most sequences an engine runs at once: its max_num_seqs, or what its KV pool holds at the
// workload's mean request length in whole blocks, whichever is fewer.
double saturatingSequences(const EngineLimits& limits, const ServingWorkload& w)
{
    const double meanReserve
        = std::ceil((meanTokens(w.input) + meanTokens(w.output)) / limits.blockSize)
        * limits.blockSize;
    return std::max(1.0,
        std::min(double(limits.maxNumSeqs), std::floor(limits.kvTokens / std::max(1.0, meanReserve))));
}

// Capacity: a closed loop of `sequences` users that keeps the engine as full as its limits
// allow.
EngineRun capacityRun(const ServingWorkload& w, double sequences, const EngineLimits& limits,
    const StepTimes& steps, double context, int requests)
{
    ServingWorkload full = w;
    full.requestRate.reset();
    full.concurrency = int(sequences);
    return simulateEngine(full, limits, steps, context, requests, 7);
}

// An aggregated deployment as the simulation runs it: engines of tp x dp GPUs; under
// data-parallel attention each of an engine's dp ranks schedules its own sequences over its own
// KV pool, so the simulation runs one rank (an engine of its own, its steps the rank's share of
// the engine's step) and the workload splits over every rank (`units`).
struct AggregatedEngine {
    ServingParallel parallel;
    int replicas = 1, units = 1;
    EngineLimits limits;
    double context = 2, saturating = 1;
    StepTimes steps;
};

AggregatedEngine aggregatedEngine(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const ServingEstimate& base, int clusterGpus)
{
    AggregatedEngine e;
    e.parallel = servingParallel(config);
    e.replicas = std::max(1, clusterGpus / e.parallel.gpus());
    e.units = e.replicas * e.parallel.dp;
    e.limits = poolLimits(config, base.maxTokens);
    e.context = std::max(2, config.context);
    e.saturating = saturatingSequences(e.limits, *config.workload);
    e.steps = tabulatedStepTimes(arch, config, gpu, e.saturating, e.context);
    return e;
}

// A disaggregated deployment's two pools as the simulation runs them: one decode rank whose
// requests arrive with their KV (no prompt to compute: it came from a prefill worker) and one
// prefill rank whose requests end at their first token, each with its step table and its
// capacity run (kept as full as its limits allow).
struct DisaggregatedPools {
    EngineLimits decodeLimits, prefillLimits;
    StepTimes decodeSteps, prefillSteps;
    double context = 2;
    EngineRun decodeCapacity, prefillCapacity;
    int prefillUnits = 1, decodeUnits = 1;
};

DisaggregatedPools disaggregatedPools(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const DisaggregationEstimate& g, int requests, bool prefillSide = true,
    bool decodeSide = true, bool capacity = true)
{
    const ServingWorkload& w = *config.workload;
    const ServingDisaggregation& d = *config.disaggregation;
    DisaggregatedPools p;
    p.context = std::max(2, config.context);
    p.prefillUnits = std::max(1, d.prefill.workers * g.prefill.dp);
    p.decodeUnits = std::max(1, d.decode.workers * g.decode.dp);

    if (decodeSide) {
        const ServingConfig decodeConfig = servingPoolConfig(config, d.decode);
        p.decodeLimits = poolLimits(config, g.decode.maxTokens);
        // Its requests arrive with their KV: admitting one computes nothing, so it joins the
        // next decode step whatever the engine does with prompts.
        p.decodeLimits.mixedBatches = true;
        // The request entered at the prefill pool, which carries its front-end time.
        p.decodeLimits.requestOverheadS = 0;
        const double saturating = saturatingSequences(p.decodeLimits, w);
        p.decodeSteps = tabulatedStepTimes(arch, decodeConfig, gpu, saturating, p.context);
        p.decodeSteps.prefillS = [](double) { return 0.0; }; // the prompt's KV arrives computed
        p.decodeSteps.promptHostFloorS = 0.0; // and no prompt forward is launched for it
        if (capacity)
            p.decodeCapacity
                = capacityRun(w, saturating, p.decodeLimits, p.decodeSteps, p.context, requests);
    }
    if (!prefillSide)
        return p;
    ServingConfig prefillConfig = servingPoolConfig(config, d.prefill);
    prefillConfig.speculative.reset();
    p.prefillLimits = poolLimits(config, g.prefill.maxTokens);
    // TensorRT-LLM's context servers run without the overlap scheduler (its disaggregated
    // serving docs: disable_overlap_scheduler on the context side; the export writes it).
    if (config.engine == ServingEngine::Trtllm)
        p.prefillLimits.overlapScheduler = false;
    p.prefillSteps = tabulatedStepTimes(arch, prefillConfig, gpu, 1, p.context);
    if (!capacity)
        return p;
    ServingWorkload prefillFull = w;
    prefillFull.output = oneToken();
    const double prefillSequences = std::max(1.0, std::min(double(p.prefillLimits.maxNumSeqs),
        std::floor(p.prefillLimits.kvTokens / std::max(1.0, meanTokens(w.input) + 1))));
    p.prefillCapacity = capacityRun(
        prefillFull, prefillSequences, p.prefillLimits, p.prefillSteps, p.context, requests);
    return p;
}

// Disaggregated prefill and decode under a workload (docs/formulas-serving.md, "Disaggregated
// prefill and decode"): the decode pool's ranks are engines whose requests arrive with their KV,
// the prefill pool's ranks engines whose requests end at their first token, offered the rate the
// decode pool completes. A request's TTFT is its prefill queue and prompt, the KV transfer and
// its wait for a decode slot: the percentiles add each part's, an upper bound on the percentile
// of the sum.
// `knownCapacity`: the goodput alone, at this capacity_rps (servingGoodputAt).
ServingLoad disaggregatedLoad(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    const ServingEstimate& base, bool goodput, int requests, const double* knownCapacity)
{
    ServingLoad load;
    if (!base.disaggregation)
        return load;
    const ServingWorkload& w = *config.workload;
    const ServingDisaggregation& d = *config.disaggregation;
    const DisaggregationEstimate& g = *base.disaggregation;
    load.latencyKind = "simulated";
    load.scheduler = schedulerDescription(config) + "; the decode pool admits arriving KV into its next decode step";
    load.meanInputTokens = meanTokens(w.input);
    load.meanOutputTokens = meanTokens(w.output);
    load.replicas = std::max(1, d.decode.workers);
    const DisaggregatedPools pools = disaggregatedPools(
        arch, config, gpu, g, requests, true, true, /*capacity=*/knownCapacity == nullptr);
    const double context = pools.context;
    const int prefillUnits = pools.prefillUnits;
    const int decodeUnits = pools.decodeUnits;
    const EngineLimits& decodeLimits = pools.decodeLimits;
    const EngineLimits& prefillLimits = pools.prefillLimits;
    const StepTimes& decodeSteps = pools.decodeSteps;
    const StepTimes& prefillSteps = pools.prefillSteps;
    if (pools.decodeCapacity.tooLong || pools.prefillCapacity.tooLong) {
        load.sloNote = "a request longer than a pool's whole KV pool cannot be served";
        return load;
    }
    // A prefill rank's capacity counts requests; the decode pool's output rate converts.
    // Capacity: the slower pool's, each kept as full as its limits allow.
    load.capacityRps = knownCapacity ? *knownCapacity
                                     : std::min(pools.prefillCapacity.requestsPerS * prefillUnits,
                                         pools.decodeCapacity.requestsPerS * decodeUnits);
    const double transferPerToken = context > 0 ? g.kvTransferS / context : 0.0;

    // One rate through both pools: the decode ranks' share of it, then the prefill ranks'.
    struct Combined {
        EngineRun run;
        bool saturated = false;
        double rateRps = 0;
    };
    // The decode ranks' share of a rate, and their run.
    const auto decodeRun = [&](const ServingWorkload& offered, int n, std::uint64_t seed) {
        ServingWorkload dw = offered;
        if (offered.concurrency)
            dw.concurrency = std::max(1, int(std::lround(double(*offered.concurrency) / decodeUnits)));
        else
            dw.requestRate = *offered.requestRate / decodeUnits;
        return simulateEngine(dw, decodeLimits, decodeSteps, context, n, seed);
    };
    // The prefill ranks' share of a rate (requests/s through the pair), and their run.
    const auto prefillRun = [&](const ServingWorkload& offered, double rateRps, int n,
                                std::uint64_t seed) {
        ServingWorkload pw = offered;
        pw.concurrency.reset();
        pw.output = oneToken();
        pw.requestRate = std::max(rateRps, 1e-9) / prefillUnits;
        return simulateEngine(pw, prefillLimits, prefillSteps, context, n, seed);
    };
    // `decoded`, `prefilled`: the pools' runs of this rate when already simulated.
    const auto simulate = [&](const ServingWorkload& offered, int n, std::uint64_t seed,
                              const EngineRun* decoded = nullptr,
                              const EngineRun* prefilled = nullptr) {
        Combined c;
        const EngineRun dr = decoded ? *decoded : decodeRun(offered, n, seed);
        c.rateRps = offered.requestRate ? *offered.requestRate : dr.requestsPerS * decodeUnits;
        const EngineRun pr = prefilled ? *prefilled : prefillRun(offered, c.rateRps, n, seed);
        c.run = dr;
        const double transfer = transferPerToken * pr.meanInputTokens;
        c.run.ttftMeanS = pr.ttftMeanS + transfer + dr.ttftMeanS;
        c.run.ttftP50S = pr.ttftP50S + transfer + dr.ttftP50S;
        c.run.ttftP90S = pr.ttftP90S + transfer + dr.ttftP90S;
        c.run.ttftP99S = pr.ttftP99S + transfer + dr.ttftP99S;
        c.run.e2eMeanS = dr.e2eMeanS + pr.ttftMeanS + transfer;
        c.run.truncated = dr.truncated || pr.truncated;
        c.run.requests = std::min(dr.requests, pr.requests);
        c.saturated = dr.backlog || pr.backlog || c.rateRps >= load.capacityRps;
        return c;
    };
    // Goodput: the highest Poisson rate through both pools whose percentiles meet every
    // objective, by bisection between 1% of capacity and capacity.
    const auto disaggregatedGoodput = [&]() -> ServingLoad {
        const ServingSlo& slo = *config.slo;
        const int searchRequests = std::min(requests, 1000);
        bool first = true;
        const auto missAt = [&](double rate) {
            ServingWorkload open = w;
            open.concurrency.reset();
            open.requestRate = rate;
            if (first) {
                // The 1% rate runs both pools: its words name the objective the pair misses
                // first.
                first = false;
                const Combined c = simulate(open, searchRequests, 3);
                return sloMissText(slo, c.run, c.saturated);
            }
            // Each pool alone first: a miss of either is a miss of the pair, and the other pool
            // need not run.
            const EngineRun pr = prefillRun(open, rate, searchRequests, 3);
            if (std::string miss = poolAloneMiss(slo, pr, true); !miss.empty())
                return miss;
            const EngineRun dr = decodeRun(open, searchRequests, 3);
            if (std::string miss = poolAloneMiss(slo, dr, false); !miss.empty())
                return miss;
            const Combined c = simulate(open, searchRequests, 3, &dr, &pr);
            return sloMissText(slo, c.run, c.saturated);
        };
        std::string lowMiss;
        const double lo = highestRateMeeting(load.capacityRps, missAt, lowMiss);
        load.goodputRps = lo;
        if (!lowMiss.empty()) {
            load.sloNote = fmt::format("no request rate meets the SLO: even at {:.3g} "
                                       "requests/s (1% of capacity) {}",
                0.01 * load.capacityRps, lowMiss);
            return load;
        }
        load.sloNote = fmt::format("goodput {:.3g} requests/s: the highest Poisson rate whose "
                                   "percentiles meet the SLO ({} prefill x {} GPUs, {} decode x {} "
                                   "GPUs)",
            lo, d.prefill.workers, d.prefill.tp * d.prefill.dp, d.decode.workers,
            d.decode.tp * d.decode.dp);
        return load;
    };
    if (knownCapacity && config.slo && goodput && load.capacityRps > 0)
        return disaggregatedGoodput();
    const Combined at = simulate(w, requests, 1);
    if (at.run.requests == 0) {
        load.sloNote = "no request finished in the simulation";
        return load;
    }
    const EngineRun& run = at.run;
    takeRunFigures(load, run, decodeUnits);
    load.offeredRateRps = at.rateRps;
    load.saturated = w.requestRate && at.saturated;
    const int gpus = d.prefill.gpus() + d.decode.gpus();
    load.outputTokensPerSPerGpu = gpus > 0 ? load.outputTokensPerS / gpus : 0.0;
    load.notes.push_back(fmt::format("disaggregated: {} prefill and {} decode ranks; TTFT adds "
                                     "the prefill queue and prompt, the KV transfer ({:.3g} ms "
                                     "per 1k tokens) and the wait for a decode slot: its "
                                     "percentiles are the sums of each part's (an upper bound)",
        prefillUnits, decodeUnits, transferPerToken * 1e6));
    load.notes.push_back(fmt::format("tokens/s per GPU count both pools' {} GPUs", gpus));
    if (w.concurrency)
        load.notes.push_back("closed loop: the users cycle through the decode pool; the prefill "
                             "pool's latency is in each TTFT but not in the loop, so the rate is "
                             "an upper bound");
    noteTruncatedOrSaturated(load, run.truncated, "the pools sustain");
    if (!config.slo)
        return load;
    const ServingSlo& slo = *config.slo;
    load.sloMiss = sloMissText(slo, run, load.saturated);
    load.meetsSlo = load.sloMiss.empty();
    if (!goodput || !(load.capacityRps > 0))
        return load;
    return disaggregatedGoodput();
}

// estimateServingLoad, or with `knownCapacity` its goodput alone (servingGoodputAt).
ServingLoad servingLoad(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    const ServingEstimate& base, int clusterGpus, bool goodput, int requests,
    const double* knownCapacity)
{
    ServingLoad load;
    if (!config.workload)
        return load;
    const ServingWorkload& w = *config.workload;
    if (config.disaggregation)
        return disaggregatedLoad(arch, config, gpu, base, goodput, requests, knownCapacity);
    const int tp = std::max(1, config.tp);
    const AggregatedEngine engine = aggregatedEngine(arch, config, gpu, base, clusterGpus);
    const ServingParallel& parallel = engine.parallel;
    const EngineLimits& limits = engine.limits;
    const StepTimes& steps = engine.steps;
    const double context = engine.context;
    const int units = engine.units;
    load.replicas = engine.replicas;
    load.latencyKind = "simulated";
    load.scheduler = schedulerDescription(config);
    load.meanInputTokens = meanTokens(w.input);
    load.meanOutputTokens = meanTokens(w.output);

    ServingWorkload perEngine = w;
    if (w.concurrency) {
        perEngine.concurrency = std::max(1, int(std::lround(double(*w.concurrency) / units)));
        if (*w.concurrency % units != 0)
            load.notes.push_back(fmt::format("{} users over {} {}: each simulated with {}",
                *w.concurrency, units, parallel.dp > 1 ? "attention ranks" : "engines",
                *perEngine.concurrency));
        if (*perEngine.concurrency > 16'384)
            load.notes.push_back(fmt::format("{} users per engine simulated as 16,384: past what "
                                             "the engine runs at once, more users only queue",
                *perEngine.concurrency));
    } else {
        perEngine.requestRate = *w.requestRate / units;
    }

    EngineRun capacity;
    if (knownCapacity) {
        load.capacityRps = *knownCapacity;
    } else {
        capacity = capacityRun(w, engine.saturating, limits, steps, context, requests);
        if (capacity.tooLong) {
            load.sloNote = "a request longer than the whole KV pool cannot be served";
            load.notes.push_back(fmt::format("the KV pool holds {:.0f} tokens per engine; the "
                                             "workload draws longer requests",
                limits.kvTokens));
            return load;
        }
        load.capacityRps = capacity.requestsPerS * units;
    }

    // Goodput: the highest Poisson rate whose percentiles meet every objective, by bisection
    // between 1% of capacity and capacity (the percentiles grow with the rate).
    const auto aggregatedGoodput = [&]() -> ServingLoad {
        const ServingSlo& slo = *config.slo;
        const double capacityPerEngine = load.capacityRps / units;
        const int searchRequests = std::min(requests, 1000);
        const auto runAt = [&](double perEngineRate) {
            ServingWorkload open = w;
            open.concurrency.reset();
            open.requestRate = perEngineRate;
            return simulateEngine(open, limits, steps, context, searchRequests, 3);
        };
        std::string lowMiss;
        const double lo = highestRateMeeting(
            capacityPerEngine,
            [&](double rate) {
                const EngineRun r = runAt(rate);
                return sloMissText(slo, r, r.backlog);
            },
            lowMiss);
        load.goodputRps = lo * units;
        if (!lowMiss.empty()) {
            load.sloNote = fmt::format("no request rate meets the SLO: even at {:.3g} "
                                       "requests/s (1% of capacity) {}",
                0.01 * capacityPerEngine * units, lowMiss);
            return load;
        }
        load.sloNote = fmt::format("goodput {:.3g} requests/s: the highest Poisson rate whose "
                                   "percentiles meet the SLO ({} engines of {} GPUs)",
            *load.goodputRps, load.replicas, parallel.gpus());
        return load;
    };
    if (knownCapacity && config.slo && goodput && load.capacityRps > 0)
        return aggregatedGoodput();

    const EngineRun run = simulateEngine(perEngine, limits, steps, context, requests, 1);
    if (run.requests == 0) {
        load.sloNote = run.truncated
            ? "the simulation stopped at its 20 million steps before a measured request finished "
              "(requests this long need a shorter workload to simulate)"
            : "no request finished in the simulation";
        return load;
    }
    takeRunFigures(load, run, units);
    load.offeredRateRps = w.requestRate ? *w.requestRate : run.requestsPerS * units;
    load.saturated = w.requestRate && (*w.requestRate >= load.capacityRps || run.backlog);
    load.outputTokensPerSPerGpu = run.outputTokensPerS / tp;
    noteTruncatedOrSaturated(load, run.truncated || capacity.truncated, "the deployment sustains");
    load.notes.push_back("each step costs decode(B, mean KV) + its prompt chunks: the weights "
                         "are read once in a fused step, so mixed steps are an upper bound");
    load.notes.push_back("a request is admitted when the KV pool holds its whole length (no "
                         "preemption): fewer run at once than an engine that preempts");

    if (!config.slo)
        return load;
    const ServingSlo& slo = *config.slo;
    const auto miss = [&](const EngineRun& r, bool saturated) { return sloMissText(slo, r, saturated); };
    load.sloMiss = miss(run, load.saturated);
    load.meetsSlo = load.sloMiss.empty();
    if (!goodput)
        return load;
    return aggregatedGoodput();
}

} // namespace

ServingLoad estimateServingLoad(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const ServingEstimate& base, int clusterGpus, bool goodput, int requests)
{
    return servingLoad(arch, config, gpu, base, clusterGpus, goodput, requests, nullptr);
}

ServingLoad servingGoodputAt(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    const ServingEstimate& base, int clusterGpus, double capacityRps, int requests)
{
    return servingLoad(arch, config, gpu, base, clusterGpus, true, requests, &capacityRps);
}

double servingCapacityRps(const ModelArch& arch, const ServingConfig& config, const Gpu& gpu,
    const ServingEstimate& base, int clusterGpus, int requests)
{
    if (!config.workload || config.disaggregation)
        return 0;
    const AggregatedEngine engine = aggregatedEngine(arch, config, gpu, base, clusterGpus);
    const EngineRun capacity = capacityRun(*config.workload, engine.saturating, engine.limits,
        engine.steps, engine.context, requests);
    return capacity.tooLong ? 0 : capacity.requestsPerS * engine.units;
}

RankCapacities disaggregatedRankCapacities(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const ServingEstimate& base, int requests)
{
    RankCapacities r;
    if (!config.workload || !config.disaggregation || !base.disaggregation)
        return r;
    const DisaggregatedPools pools
        = disaggregatedPools(arch, config, gpu, *base.disaggregation, requests);
    if (!pools.prefillCapacity.tooLong)
        r.prefillRps = pools.prefillCapacity.requestsPerS;
    if (!pools.decodeCapacity.tooLong)
        r.decodeRps = pools.decodeCapacity.requestsPerS;
    r.prefillRanks = base.disaggregation->prefill.dp;
    r.decodeRanks = base.disaggregation->decode.dp;
    return r;
}

PoolAlone disaggregatedPoolAlone(const ModelArch& arch, const ServingConfig& config,
    const Gpu& gpu, const ServingEstimate& base, PoolSide side, double capacityRps, bool bound,
    int requests)
{
    PoolAlone out;
    if (!config.workload || !config.slo || !config.disaggregation || !base.disaggregation
        || !(capacityRps > 0))
        return out;
    const bool prefill = side == PoolSide::Prefill;
    const DisaggregatedPools pools = disaggregatedPools(arch, config, gpu, *base.disaggregation,
        requests, prefill, !prefill, /*capacity=*/false);
    const ServingSlo& slo = *config.slo;
    ServingWorkload open = *config.workload;
    open.concurrency.reset();
    // disaggregatedLoad's bisection runs each pool with these requests and this seed.
    const auto missAt = [&](double rate) {
        ServingWorkload rank = open;
        rank.requestRate = std::max(rate, 1e-12);
        if (!prefill)
            return poolAloneMiss(slo,
                simulateEngine(rank, pools.decodeLimits, pools.decodeSteps, pools.context, requests, 3),
                false);
        rank.output = oneToken();
        return poolAloneMiss(slo,
            simulateEngine(rank, pools.prefillLimits, pools.prefillSteps, pools.context, requests, 3),
            true);
    };
    // Unloaded: requests a million times their service time apart meet no queue, and a lower
    // rate changes nothing (the same lengths are drawn whatever the rate).
    out.unloadedMiss = missAt(1e-6 * capacityRps);
    if (!out.unloadedMiss.empty()) {
        out.boundRps = 0;
        return out;
    }
    if (!bound)
        return out;
    // The lowest rate found to miss (the capacity when none did), by a bisection from 1% of
    // capacity as highestRateMeeting's: where the percentiles grow with the rate, every rate
    // above misses. Six halvings (within 1.6% of capacity): a bound need not be tight, and each
    // halving is a simulation.
    double lo = 0.01 * capacityRps, hi = capacityRps;
    if (!missAt(lo).empty()) {
        out.boundRps = lo;
        return out;
    }
    for (int i = 0; i < 6; ++i) {
        const double mid = (lo + hi) / 2;
        (missAt(mid).empty() ? lo : hi) = mid;
    }
    out.boundRps = hi;
    return out;
}

void attachServingGoodput(const Plan& plan, Estimate& estimate)
{
    if (!plan.serving.workload || !plan.serving.slo || !estimate.serving.load)
        return;
    estimate.serving.load = estimateServingLoad(
        plan.model.arch, servingOfPlan(plan), plan.gpu.gpu, estimate.serving, plan.cluster.gpus, true);
}

void explainServingLoad(const ServingConfig& config, const ServingEstimate& serving, Explainer& ex)
{
    if (!serving.load || !config.workload || serving.load->requests <= 0)
        return;
    const ServingLoad& l = *serving.load;
    const ServingWorkload& w = *config.workload;
    std::string source = "event simulation of continuous batching (Orca, Yu et al. 2022; "
                         "Sarathi-Serve, Agrawal et al. 2024) over the op-timed decode and "
                         "prefill steps, scheduled as the engine does: "
        + l.scheduler + "; docs/formulas-serving.md sec. 7";
    if (!config.engineProfile.schedulerSource.empty())
        source += "; " + config.engineProfile.schedulerSource;
    const std::string load = w.concurrency
        ? fmt::format("{} users in a closed loop over {} engine(s)", *w.concurrency, l.replicas)
        : fmt::format("{:.3g} requests/s (Poisson) over {} engine(s)", *w.requestRate, l.replicas);
    const std::string sample = fmt::format("{} simulated requests per engine after a 10% warm-up, "
                                           "{:.0f} + {:.0f} tokens on average",
        l.requests, l.meanInputTokens, l.meanOutputTokens);
    if (!l.saturated) {
        ex.add("serving.ttft_p90_s",
            fmt::format("p90 of first token - arrival over {}; {}: mean {}, p50 {}, p90 {}, p99 {}",
                sample, load, formatDuration(l.ttftMeanS), formatDuration(l.ttftP50S),
                formatDuration(l.ttftP90S), formatDuration(l.ttftP99S)),
            l.ttftP90S, "s", source);
    }
    ex.add("serving.tpot_p90_s",
        fmt::format("p90 of (finish - first token) / (output - 1) over {}; {}: mean {}, p50 {}, "
                    "p90 {}, p99 {}; {:.1f} sequences decode per step on average",
            sample, load, formatDuration(l.tpotMeanS), formatDuration(l.tpotP50S),
            formatDuration(l.tpotP90S), formatDuration(l.tpotP99S), l.meanBatch),
        l.tpotP90S, "s", source);
    // The deployment's GPUs: its engines' (tp x attention ranks each), or both pools'.
    const double gpus = serving.disaggregation
        ? double(serving.disaggregation->prefill.gpus + serving.disaggregation->decode.gpus)
        : double(l.replicas) * std::max(serving.engineGpus, 1);
    ex.add("serving.output_tokens_per_s_per_gpu",
        fmt::format("output tokens completed in the measured window / its length / the "
                    "deployment's GPUs = {:.0f} / {:.0f} = {:.0f}",
            l.outputTokensPerS, gpus, l.outputTokensPerSPerGpu),
        l.outputTokensPerSPerGpu, "tokens/s", source);
    ex.add("serving.output_tokens_per_s_per_user",
        fmt::format("1 / mean TPOT = 1 / {} = {:.1f}", formatDuration(l.tpotMeanS),
            l.outputTokensPerSPerUser),
        l.outputTokensPerSPerUser, "tokens/s", source);
    ex.add("serving.load.capacity_rps",
        fmt::format("requests/s of a closed loop that keeps each engine full (min(max_num_seqs, "
                    "KV tokens / mean request) users) x {} engines = {:.3g}",
            l.replicas, l.capacityRps),
        l.capacityRps, "requests/s", source);
    if (l.goodputRps)
        ex.add("serving.goodput_rps",
            *l.goodputRps > 0
                ? fmt::format("the highest Poisson rate whose simulated percentiles meet every "
                              "serving.slo objective, by bisection between 1% of capacity and "
                              "capacity = {:.3g}",
                    *l.goodputRps)
                : l.sloNote,
            *l.goodputRps, "requests/s", "goodput as in DistServe (Zhong et al. 2024); " + source);
}

} // namespace envelope
