// The compute side of training: FLOPs per token, step time, tokens/s, time and cost to train,
// communication per step, pipeline bubble, the bottleneck, observed MFU and the budget solver.
//
// Sources: Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM") eq. 3; Korthikanti et al. 2022 eqs. 7-8; seeds 000 and 001.
#pragma once

#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

// Pure; `counts` must be countParameters(arch). Explanations recorded when `ex` is non-null.
TrainingCompute estimateCompute(const ModelArch& arch, const ParamCounts& counts,
                                const TrainingConfig& config, const Cluster& cluster,
                                const Gpu& gpu, Explainer* ex = nullptr);

}  // namespace envelope
