// Launchable jobs (issue 25): an engine export wrapped in what starts it on a cluster.
//
//   torchrun  launch.sh: the torchrun line each node runs (c10d rendezvous at $MASTER_ADDR)
//   slurm     job.sbatch: nodes and GPUs per node, the first node as the rendezvous, srun
//   k8s       job.yaml: a ConfigMap with the export's files, and a Kubeflow PyTorchJob
//             (training) or a Deployment and Service (serving)
//
// The container image, the data, the tokenizer and the learning rate stay named placeholders
// (IMAGE, DATA, ...), as in the exports themselves.
#pragma once

#include <string_view>

#include "base/expected.h"
#include "export/export.h"

namespace envelope {

enum class Launcher { Torchrun, Slurm, K8s };
inline constexpr Launcher kAllLaunchers[] = { Launcher::Torchrun, Launcher::Slurm, Launcher::K8s };
inline constexpr const char* kLauncherIdList = "torchrun, slurm or k8s";

// "torchrun" "slurm" "k8s"
std::string_view launcherId(Launcher launcher);
bool parseLauncher(std::string_view id, Launcher& out);

// `config` (an export of `plan`) with the launcher's file added as a companion and `launch`
// replaced by the command that starts the job. Refused, with the reason: torchrun for a serving
// engine (it starts its own workers), and a serving engine wider than one node (vLLM needs a
// Ray cluster, SGLang --nnodes/--node-rank per node: not written).
Expected<EngineConfig> withLauncher(EngineConfig config, const Plan& plan, Launcher launcher);

} // namespace envelope
