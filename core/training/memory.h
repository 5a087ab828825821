// Training memory per GPU: weights, gradients, optimizer state, activations, overhead.
//
// Sources: ZeRO (Rajbhandari et al. 2019) for the per-parameter states and their sharding;
// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models") for
// activations; seeds 000-003 for the worked examples. docs/formulas.md has every formula.
#pragma once

#include <memory>

#include "plan/plan.h"
#include "result/result.h"

namespace envelope {

struct TrainingSetup;

// Memory of the most-loaded GPU for a training job. `counts` must be countParameters(arch).
// Preconditions: the config passed validation (tp, pp, cp, ep >= 1, gpus divisible by
// tp*pp*cp, ...). Pure; explanations recorded when `ex` is non-null.
TrainingMemory estimateTrainingMemory(const ModelArch& arch, const ParamCounts& counts,
                                      const TrainingConfig& config, const Cluster& cluster,
                                      const Gpu& gpu, Explainer* ex = nullptr);

// The most-loaded GPU's total for one job at several cluster sizes, sharing the work that does
// not depend on the size: estimateTrainingMemory(arch, counts, config, cluster, gpu)
// .perGpu.total() for each cluster, without min GPUs or explanations. The RL split search asks
// it for every split of the trainer's pool.
class TrainingPeakProbe {
public:
    TrainingPeakProbe(const ModelArch& arch, const ParamCounts& counts,
        const TrainingConfig& config, const Gpu& gpu);
    ~TrainingPeakProbe();
    double perGpuTotal(const Cluster& cluster) const;

private:
    std::unique_ptr<const TrainingSetup> m_setup;
    const TrainingConfig& m_config; // must outlive the probe
};

}  // namespace envelope
