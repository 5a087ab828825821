// Internal to the core: what serving.cpp, serving_explain.cpp and rl.cpp share.
#pragma once

#include "serving/serving.h"

namespace envelope {

// Records every serving.* figure of `r` with its formula (serving_explain.cpp).
void explainServing(const ModelArch& arch, const ParamCounts& counts, const ServingConfig& config,
    const Gpu& gpu, const ServingWeights& weights, const ServingEstimate& r, Explainer& ex);

// The disaggregated deployment's own figures: the prefill pool, the KV transfer, TTFT, each
// pool's rate and the bottleneck.
void explainDisaggregation(
    const ServingConfig& config, const Gpu& gpu, const ServingEstimate& r, Explainer& ex);

// Bytes for explanations: "13.48 GB", small figures in MB/KB.
std::string servingBytesText(double bytes);

} // namespace envelope
