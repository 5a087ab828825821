// Launchable jobs: torchrun scripts, Slurm batch scripts and Kubernetes manifests around an export.
//
// torchrun (PyTorch torch/distributed/run.py): one agent per node; --standalone on one node,
// otherwise --nnodes with a c10d rendezvous at one node's address that every agent dials.
// Slurm (sbatch(1), srun(1)): one task per node runs the agent; the job's first host is the
// rendezvous. Kubernetes: Kubeflow's PyTorchJob (kubeflow.org/v1: a Master replica and nnodes - 1
// Workers; the training operator sets MASTER_ADDR, MASTER_PORT and RANK, the replica's index, on
// each pod) for training; an apps/v1 Deployment of single-node engines and a Service for serving.
#include "export/launcher.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "export/common.h"

namespace envelope {
namespace {

using exportdetail::c10dRendezvous;
using exportdetail::NodeLayout;
using exportdetail::nodeLayout;
using exportdetail::servingEngines;
using exportdetail::yamlString;

// A name Slurm and Kubernetes accept (RFC 1123 label: lower-case letters, digits and '-', at most
// 63, starting and ending alphanumeric), from the plan's name.
std::string jobName(const Plan& plan)
{
    std::string out;
    for (const char c : plan.name) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (std::isalnum(u) && u < 128)
            out += static_cast<char>(std::tolower(u));
        else if (!out.empty() && out.back() != '-')
            out += '-';
        if (out.size() >= 48)
            break;
    }
    while (!out.empty() && out.back() == '-')
        out.pop_back();
    return out.empty() ? std::string("envelope-job") : "envelope-" + out;
}

// A file's text as a YAML value under a key at `indent`: a literal block when every line is
// printable ASCII or UTF-8 without tabs, carriage returns or trailing blanks (as written),
// otherwise a quoted string.
std::string yamlFile(const std::string& text, int indent)
{
    bool plain = !text.empty() && text.back() == '\n';
    std::size_t lineStart = 0;
    for (std::size_t i = 0; plain && i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            if (i > lineStart && (text[i - 1] == ' '))
                plain = false;
            lineStart = i + 1;
        } else if (c < 0x20 || c == 0x7f || c >= 0x80) {
            plain = false;
        }
    }
    if (!plain)
        return " " + yamlString(text) + "\n";
    // "|N": the content's indentation stated, so a first line that starts with a blank is kept.
    const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    std::string out = " |2\n";
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        const std::string line = text.substr(start, end - start);
        out += line.empty() ? "\n" : pad + line + "\n";
        start = end + 1;
    }
    return out;
}

// The torchrun line one node runs. `rendezvous`: the options that join the nodes (empty on one
// node: --standalone). Megatron's arguments file goes through xargs, which honours its quotes.
std::string torchrunLine(const EngineConfig& c, int perNode, int nodes, const std::string& rendezvous)
{
    const std::string options = nodes > 1
        ? fmt::format("--nnodes {} --nproc-per-node {} {}", nodes, perNode, rendezvous)
        : fmt::format("--standalone --nproc-per-node {}", perNode);
    const std::string line = fmt::format("torchrun {} {}", options, c.program);
    return c.programArgsFile.empty()
        ? line
        : fmt::format("grep -v \"^#\" {} | xargs {}", c.programArgsFile, line);
}

// The export's files: the configuration and its companions (name, text).
std::vector<std::pair<std::string, std::string>> jobFiles(const EngineConfig& c)
{
    std::vector<std::pair<std::string, std::string>> files { { c.fileName, c.text } };
    for (const EngineConfig::Companion& companion : c.companions)
        files.emplace_back(companion.fileName, companion.text);
    return files;
}

std::string headerComment(const Plan& plan, const EngineConfig& c, std::string_view what)
{
    const auto [nodes, perNode] = nodeLayout(plan);
    // printable(): a name's newline cannot end the comment and start a command.
    return fmt::format("# Envelope: {} for \"{}\" ({}), {} GPUs as {} node(s) of {}.\n", what,
        printable(plan.name, 120), engineId(c.engine), plan.cluster.gpus, nodes, perNode);
}

// The serving engine's HTTP port as its launcher defaults it (vllm serve and trtllm-serve 8000,
// sglang.launch_server 30000); every one answers GET /health.
int servingPort(Engine engine)
{
    return engine == Engine::Sglang ? 30000 : 8000;
}

EngineConfig::Companion torchrunScript(const Plan& plan, const EngineConfig& c)
{
    const auto [nodes, perNode] = nodeLayout(plan);
    std::string s = "#!/usr/bin/env bash\n" + headerComment(plan, c, "torchrun launch script");
    if (nodes > 1)
        s += fmt::format("# Run it on each of the {} nodes, with MASTER_ADDR set to the first "
                         "node's address\n# (reachable from the others on MASTER_PORT).\n",
            nodes);
    s += "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n";
    std::string rendezvous;
    if (nodes > 1) {
        s += ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"\n"
             "MASTER_PORT=${MASTER_PORT:-29500}\nJOB_ID=${JOB_ID:-envelope}\n";
        rendezvous = c10dRendezvous("JOB_ID");
    }
    s += torchrunLine(c, perNode, nodes, rendezvous) + "\n";
    return { "launch.sh", s };
}

EngineConfig::Companion slurmScript(const Plan& plan, const EngineConfig& c)
{
    const auto [nodes, perNode] = nodeLayout(plan);
    const bool serving = engineServes(c.engine);
    std::string s = "#!/bin/bash\n";
    s += fmt::format("#SBATCH --job-name={}\n", jobName(plan));
    if (serving) {
        // One engine per array task, each on one node.
        const int engines = servingEngines(plan);
        s += fmt::format("#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gpus-per-node={}\n",
            std::max(1, plan.serving.tp));
        if (engines > 1)
            s += fmt::format("#SBATCH --array=0-{}\n", engines - 1);
    } else {
        s += fmt::format("#SBATCH --nodes={}\n#SBATCH --ntasks-per-node=1\n"
                         "#SBATCH --gpus-per-node={}\n#SBATCH --exclusive\n",
            nodes, perNode);
    }
    s += "#SBATCH --output=%x-%j.out\n";
    s += headerComment(plan, c, "Slurm batch script");
    s += "# Submit from the folder that holds the exported files (the job runs there).\n"
         "set -euo pipefail\n";
    if (serving) {
        s += fmt::format("srun sh {}\n", c.fileName);
        return { "job.sbatch", s };
    }
    std::string rendezvous;
    if (nodes > 1) {
        s += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
             "MASTER_PORT=29500\nexport MASTER_ADDR MASTER_PORT\n";
        rendezvous = c10dRendezvous("SLURM_JOB_ID");
    }
    // One agent per node; bash -c so that each node pipes Megatron's arguments itself.
    s += fmt::format("srun --kill-on-bad-exit=1 bash -c '{}'\n",
        torchrunLine(c, perNode, nodes, rendezvous));
    return { "job.sbatch", s };
}

// The ConfigMap holding the export's files, mounted file by file into the working directory.
std::string configMap(const std::string& name, const EngineConfig& c)
{
    std::string s = fmt::format("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}-files\n"
                                "data:\n",
        name);
    for (const auto& [file, text] : jobFiles(c))
        s += fmt::format("  {}:{}", yamlString(file), yamlFile(text, 2));
    return s;
}

// A pod's container and volumes, at `indent`: the image placeholder, the command, the GPUs, the
// export's files in /workspace and a memory-backed /dev/shm (NCCL and data loaders need more
// than the 64 MB default).
std::string podSpec(const std::string& name, const EngineConfig& c, const std::string& command,
    int gpus, int port, int indent)
{
    const std::string p(static_cast<std::size_t>(indent), ' ');
    std::string s = p + "containers:\n";
    s += p + "  - name: " + (engineServes(c.engine) ? "server" : "pytorch") + "\n";
    // The script a training job runs must be in the image's /workspace (the working directory).
    const std::string version(engineVersion(c.engine));
    const std::string script = c.program.rfind("-m ", 0) == 0 || c.program.empty()
        ? std::string()
        : ", with " + c.program.substr(0, c.program.find(' ')) + " in /workspace";
    s += p + "    image: IMAGE  # a container with " + std::string(engineId(c.engine))
        + (version.empty() ? "" : " " + version) + script + "\n";
    s += p + "    workingDir: /workspace\n";
    s += p + "    command: [\"bash\", \"-c\", " + yamlString(command) + "]\n";
    if (port > 0) {
        s += p + fmt::format("    ports:\n{}      - containerPort: {}\n", p, port);
        s += p + fmt::format("    readinessProbe:\n{}      httpGet: {{path: /health, port: {}}}\n"
                             "{}      periodSeconds: 10\n",
                     p, port, p);
    }
    s += p + fmt::format("    resources:\n{}      limits:\n{}        nvidia.com/gpu: {}\n", p, p, gpus);
    s += p + "    volumeMounts:\n";
    for (const auto& [file, text] : jobFiles(c))
        s += p + fmt::format("      - {{name: files, mountPath: {}, subPath: {}}}\n",
                     yamlString("/workspace/" + file), yamlString(file));
    s += p + "      - {name: shm, mountPath: /dev/shm}\n";
    s += p + "volumes:\n";
    s += p + fmt::format("  - name: files\n{}    configMap: {{name: {}-files}}\n", p, name);
    s += p + "  - name: shm\n" + p + "    emptyDir: {medium: Memory}\n";
    return s;
}

EngineConfig::Companion kubernetesManifest(const Plan& plan, const EngineConfig& c)
{
    // Plain ints, not a structured binding: clang 14 cannot capture those in the lambda below.
    const NodeLayout layout = nodeLayout(plan);
    const int nodes = layout.nodes, perNode = layout.perNode;
    const std::string name = jobName(plan);
    std::string s = headerComment(plan, c, "Kubernetes manifest");
    s += "---\n" + configMap(name, c);
    if (engineServes(c.engine)) {
        const int tp = std::max(1, plan.serving.tp);
        const int engines = servingEngines(plan);
        const int port = servingPort(c.engine);
        s += fmt::format("---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {0}\n"
                         "spec:\n  replicas: {1}\n  selector:\n    matchLabels: {{app: {0}}}\n"
                         "  template:\n    metadata:\n      labels: {{app: {0}}}\n    spec:\n",
            name, engines);
        s += podSpec(name, c, "sh " + c.fileName, tp, port, 6);
        s += fmt::format("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {0}\nspec:\n"
                         "  selector: {{app: {0}}}\n  ports:\n    - {{port: {1}, targetPort: {1}}}\n",
            name, port);
        return { "job.yaml", s };
    }
    // The operator sets MASTER_ADDR, MASTER_PORT and RANK (the replica's node rank) on each pod.
    const std::string rendezvous = "--node-rank \"$RANK\" --master-addr \"$MASTER_ADDR\" "
                                   "--master-port \"$MASTER_PORT\"";
    const std::string command = torchrunLine(c, perNode, nodes, rendezvous);
    s += fmt::format("---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: {}\n"
                     "spec:\n  pytorchReplicaSpecs:\n",
        name);
    const auto replica = [&](const char* role, int count) {
        s += fmt::format("    {}:\n      replicas: {}\n      restartPolicy: OnFailure\n"
                         "      template:\n        spec:\n",
            role, count);
        s += podSpec(name, c, command, perNode, 0, 10);
    };
    replica("Master", 1);
    if (nodes > 1)
        replica("Worker", nodes - 1);
    return { "job.yaml", s };
}

} // namespace

std::string_view launcherId(Launcher launcher)
{
    switch (launcher) {
    case Launcher::Torchrun:
        return "torchrun";
    case Launcher::Slurm:
        return "slurm";
    case Launcher::K8s:
        return "k8s";
    }
    return "torchrun";
}

bool parseLauncher(std::string_view id, Launcher& out)
{
    for (const Launcher l : kAllLaunchers)
        if (launcherId(l) == id) {
            out = l;
            return true;
        }
    return false;
}

Expected<EngineConfig> withLauncher(EngineConfig config, const Plan& plan, Launcher launcher)
{
    const std::string id(launcherId(launcher));
    const auto [nodes, perNode] = nodeLayout(plan);
    // An RL job is a launcher's when it is one torchrun program (TRL colocated); TRL's disjoint
    // pools are two jobs, verl and OpenRLHF start Ray.
    if (engineRl(config.engine) && config.program.empty())
        return Error { "--launcher",
            config.engine == Engine::Trl
                ? fmt::format("trl runs trl vllm-serve on the rollout GPUs beside its trainer "
                              "(rl.placement = \"disjoint\"): run trl_grpo.sh as its header says; "
                              "{} writes one torchrun job (a colocated plan is one)",
                      id)
                : fmt::format("{} starts Ray and its own workers: run {} on one node, or on the "
                              "head of a Ray cluster; {} does not write that cluster",
                      engineId(config.engine), config.fileName, id) };
    if (engineServes(config.engine)) {
        if (launcher == Launcher::Torchrun)
            return Error { "--launcher",
                fmt::format("torchrun starts training jobs; {} starts its own workers (use slurm "
                            "or k8s)",
                    engineId(config.engine)) };
        if (plan.serving.tp > plan.cluster.gpusPerNode)
            return Error { "--launcher",
                fmt::format("serving.tp = {} spans more than one node of {} GPUs: a multi-node "
                            "engine needs its own cluster setup (vLLM a Ray cluster, SGLang "
                            "--nnodes and --node-rank on each node), which {} does not write",
                    plan.serving.tp, plan.cluster.gpusPerNode, id) };
    }
    if (!engineServes(config.engine) && plan.cluster.gpus % perNode != 0)
        config.warnings.push_back(fmt::format(
            "cluster.gpus = {} is not a multiple of cluster.gpus_per_node = {}: the {} job runs "
            "{} nodes of {} ({} GPUs)",
            plan.cluster.gpus, perNode, id, nodes, perNode, nodes * perNode));
    // SGLang (--host 127.0.0.1) and trtllm-serve (--host localhost) listen on the loopback by
    // default, where no Service or other node reaches them: a cluster's server listens on every
    // interface, as vLLM does by default. Their command is the file's last line.
    if ((config.engine == Engine::Sglang || config.engine == Engine::Trtllm)
        && !config.text.empty() && config.text.back() == '\n') {
        config.text.pop_back();
        config.text += " \\\n  --host 0.0.0.0\n";
    }
    EngineConfig::Companion file;
    switch (launcher) {
    case Launcher::Torchrun:
        file = torchrunScript(plan, config);
        config.launch = nodes > 1
            ? fmt::format("MASTER_ADDR=<first node> bash {}  # on each of the {} nodes",
                  file.fileName, nodes)
            : "bash " + file.fileName;
        break;
    case Launcher::Slurm:
        file = slurmScript(plan, config);
        config.launch = "sbatch " + file.fileName;
        break;
    case Launcher::K8s:
        file = kubernetesManifest(plan, config);
        config.launch = "kubectl apply -f " + file.fileName;
        if (!engineServes(config.engine))
            config.warnings.push_back("k8s: the PyTorchJob needs Kubeflow's training operator "
                                      "(kubeflow.org/v1) in the cluster");
        break;
    }
    config.companions.push_back(std::move(file));
    return config;
}

} // namespace envelope
