// Serving under load (issue 27): the requests a deployment serves and the latency it promises.
// Plan keys `serving.workload` and `serving.slo` (docs/plan-format.md); the model that turns them
// into TTFT / TPOT percentiles and goodput is core/serving/load.h.
#pragma once

#include <optional>
#include <utility>
#include <vector>

namespace envelope {

// Request lengths in tokens, written one of three ways and written back the same way:
//   N                                  every request N tokens
//   {"mean": m, "p90": x}              a log-normal with that mean and 90th percentile
//   {"histogram": [[tokens, weight]]}  lengths drawn with those weights
struct LengthDistribution {
    enum class Form { Fixed, MeanP90, Histogram };
    Form form = Form::Fixed;
    double fixed = 0;
    double mean = 0, p90 = 0;
    std::vector<std::pair<double, double>> histogram; // (tokens, weight), weights > 0 in sum

    bool operator==(const LengthDistribution&) const = default;
};

struct ServingWorkload {
    LengthDistribution input, output;
    // Exactly one: a closed loop of `concurrency` users (each sends its next request when the
    // last one finishes) or an open loop of Poisson arrivals at `requestRate` requests/s. Both
    // are for the whole deployment (cluster.gpus / serving.tp engines share them).
    std::optional<int> concurrency;
    std::optional<double> requestRate;
    double prefixHitRate = 0; // share of each prompt's tokens whose KV is already cached

    bool operator==(const ServingWorkload&) const = default;
};

// Latency objectives, seconds; unset ones are not checked. Goodput: the highest request rate
// whose percentiles all meet them.
struct ServingSlo {
    std::optional<double> ttftP50S, ttftP90S, ttftP99S;
    std::optional<double> tpotP50S, tpotP90S, tpotP99S;

    bool any() const
    {
        return ttftP50S || ttftP90S || ttftP99S || tpotP50S || tpotP90S || tpotP99S;
    }
    bool operator==(const ServingSlo&) const = default;
};

} // namespace envelope
