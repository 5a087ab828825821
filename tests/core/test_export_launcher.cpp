// Issue 25, launchable jobs: `export --launcher torchrun|slurm|k8s`. Each test writes out what
// the launcher's own documentation requires (torchrun's c10d rendezvous options, sbatch's
// directives, PyTorchJob's replica specs) for one plan and checks the file has exactly that.
// tests/cli/check_launchers.py parses every launcher file of every preset (bash -n, YAML).
#include <gtest/gtest.h>

#include <algorithm>

#include "export/launcher.h"
#include "export_fixtures.h"

namespace envelope::testing {
namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// The launcher's file, checked to be the one companion the launcher added.
std::string launcherFile(const EngineConfig& c, const std::string& name)
{
    EXPECT_FALSE(c.companions.empty());
    if (c.companions.empty())
        return {};
    EXPECT_EQ(c.companions.back().fileName, name);
    return c.companions.back().text;
}

EngineConfig launched(const Plan& plan, Engine engine, Launcher launcher)
{
    Expected<EngineConfig> c = withLauncher(exportOf(plan, engine), plan, launcher);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().toString());
    return c.ok() ? *c : EngineConfig {};
}

// 16 GPUs as 2 nodes of 8: torchrun's multi-node form (torch.distributed.run: --nnodes,
// --nproc-per-node, and a c10d rendezvous every node's agent dials).
TEST(ExportLauncher, SlurmRunsOneTorchrunAgentPerNodeWithTheFirstHostAsRendezvous)
{
    const Plan plan = defaultPlanWith({ "cluster.gpus=16", "cluster.gpus_per_node=8" });
    const EngineConfig c = launched(plan, Engine::TorchTitan, Launcher::Slurm);
    const std::string s = launcherFile(c, "job.sbatch");
    EXPECT_EQ(c.launch, "sbatch job.sbatch");
    EXPECT_EQ(s.rfind("#!/bin/bash\n#SBATCH --job-name=envelope-", 0), 0u) << s;
    for (const char* line : { "#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=1\n",
             "#SBATCH --gpus-per-node=8\n",
             "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n" })
        EXPECT_TRUE(contains(s, line)) << line << "\n" << s;
    EXPECT_TRUE(contains(s,
        "srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes 2 --nproc-per-node 8 "
        "--rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" --rdzv-id "
        "\"$SLURM_JOB_ID\" -m torchtitan.train --job.config_file job.toml'\n"))
        << s;
    // The export itself is unchanged beside it.
    EXPECT_EQ(c.text, exportOf(plan, Engine::TorchTitan).text);
}

// Megatron's arguments go through xargs (which honours --moe-layer-freq's quotes) on each node;
// one node needs no rendezvous (--standalone).
TEST(ExportLauncher, MegatronArgumentsArePipedAndOneNodeIsStandalone)
{
    const Plan plan = defaultPlanWith({ "cluster.gpus=8" });
    const EngineConfig c = launched(plan, Engine::Megatron, Launcher::Torchrun);
    const std::string s = launcherFile(c, "launch.sh");
    EXPECT_EQ(c.launch, "bash launch.sh");
    EXPECT_TRUE(contains(s, "grep -v \"^#\" megatron.args | xargs torchrun --standalone "
                            "--nproc-per-node 8 pretrain_gpt.py\n"))
        << s;
    EXPECT_FALSE(contains(s, "MASTER_ADDR"));
    // DeepSpeed under torchrun: the engine reads torchrun's environment (deepspeed.init_distributed).
    const EngineConfig ds = launched(
        defaultPlanWith({ "cluster.gpus=32" }), Engine::DeepSpeed, Launcher::Torchrun);
    const std::string t = launcherFile(ds, "launch.sh");
    EXPECT_TRUE(contains(t, "torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d "
                            "--rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" --rdzv-id \"$JOB_ID\" "
                            "train.py --deepspeed ds_config.json\n"))
        << t;
    EXPECT_TRUE(contains(t, ": \"${MASTER_ADDR:?"));
    EXPECT_TRUE(contains(ds.launch, "on each of the 4 nodes"));
}

// Kubeflow's PyTorchJob: one Master and nodes - 1 Workers, each pod all of a node's GPUs, the
// operator's MASTER_ADDR / MASTER_PORT / RANK as torchrun's static rendezvous; the export's files
// from a ConfigMap.
TEST(ExportLauncher, KubernetesTrainingIsAPyTorchJobOfMasterAndWorkers)
{
    const Plan plan = defaultPlanWith({ "cluster.gpus=24", "name=\"Llama 2: SFT \\\"v2\\\"\"" });
    const EngineConfig c = launched(plan, Engine::Hf, Launcher::K8s);
    const std::string y = launcherFile(c, "job.yaml");
    EXPECT_EQ(c.launch, "kubectl apply -f job.yaml");
    EXPECT_TRUE(contains(y, "kind: ConfigMap\nmetadata:\n  name: envelope-llama-2-sft-v2-files\n"))
        << y;
    EXPECT_TRUE(contains(y, "kind: PyTorchJob\nmetadata:\n  name: envelope-llama-2-sft-v2\n"));
    EXPECT_TRUE(contains(y, "    Master:\n      replicas: 1\n"));
    EXPECT_TRUE(contains(y, "    Worker:\n      replicas: 2\n"));
    std::size_t gpuLimits = 0;
    for (std::size_t at = y.find("nvidia.com/gpu: 8\n"); at != std::string::npos;
         at = y.find("nvidia.com/gpu: 8\n", at + 1))
        ++gpuLimits;
    EXPECT_EQ(gpuLimits, 2u); // the Master's and the Workers' template
    EXPECT_TRUE(contains(y, "torchrun --nnodes 3 --nproc-per-node 8 --node-rank \\\"$RANK\\\" "
                            "--master-addr \\\"$MASTER_ADDR\\\" --master-port \\\"$MASTER_PORT\\\" "
                            "train.py training_args.json"))
        << y;
    // The file is in the ConfigMap line for line, indented under its key.
    EXPECT_TRUE(contains(y, "  \"training_args.json\": |2\n    {\n"));
    EXPECT_TRUE(contains(y, "mountPath: \"/workspace/training_args.json\", subPath: "
                            "\"training_args.json\""));
    EXPECT_TRUE(anyWarningMentions(c, "Kubeflow's training operator"));
}

// Serving: one single-node engine per replica (cluster.gpus / serving.tp of them), each pod the
// engine's GPUs, the engine's default port behind a Service, readiness on GET /health.
TEST(ExportLauncher, KubernetesServingIsADeploymentOfEngines)
{
    const Plan plan = defaultPlanWith({ "cluster.gpus=16", "serving.tp=4" });
    const EngineConfig c = launched(plan, Engine::Sglang, Launcher::K8s);
    const std::string y = launcherFile(c, "job.yaml");
    EXPECT_TRUE(contains(y, "kind: Deployment\n"));
    EXPECT_TRUE(contains(y, "  replicas: 4\n"));
    EXPECT_TRUE(contains(y, "nvidia.com/gpu: 4\n"));
    EXPECT_TRUE(contains(y, "containerPort: 30000\n"));
    EXPECT_TRUE(contains(y, "httpGet: {path: /health, port: 30000}"));
    EXPECT_TRUE(contains(y, "kind: Service\n"));
    EXPECT_TRUE(contains(y, "command: [\"bash\", \"-c\", \"sh sglang_serve.sh\"]"));
    // SGLang listens on 127.0.0.1 unless told: the job's server listens where the Service and
    // the kubelet's probe reach it (the ConfigMap holds that file).
    EXPECT_TRUE(c.text.ends_with(" \\\n  --host 0.0.0.0\n")) << c.text;
    EXPECT_TRUE(contains(y, "      --host 0.0.0.0\n"));
    EXPECT_FALSE(contains(exportOf(plan, Engine::Sglang).text, "--host"));
    // Slurm: an array of one-node engines.
    const EngineConfig s = launched(plan, Engine::Vllm, Launcher::Slurm);
    const std::string b = launcherFile(s, "job.sbatch");
    EXPECT_TRUE(contains(b, "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gpus-per-node=4\n"
                            "#SBATCH --array=0-3\n"))
        << b;
    EXPECT_TRUE(contains(b, "srun sh serve.sh\n"));
}

TEST(ExportLauncher, RefusesWhatItCannotStartAndSaysSo)
{
    const Expected<EngineConfig> torchrun = withLauncher(
        exportOf(defaultPlanWith({}), Engine::Vllm), defaultPlanWith({}), Launcher::Torchrun);
    ASSERT_FALSE(torchrun.ok());
    EXPECT_EQ(torchrun.error().path, "--launcher");
    EXPECT_TRUE(contains(torchrun.error().message, "vllm starts its own workers"));
    const Plan wide = defaultPlanWith({ "cluster.gpus=16", "serving.tp=16" });
    const Expected<EngineConfig> multiNode
        = withLauncher(exportOf(wide, Engine::Vllm), wide, Launcher::K8s);
    ASSERT_FALSE(multiNode.ok());
    EXPECT_TRUE(contains(multiNode.error().message, "serving.tp = 16 spans more than one node of 8"));
    // Training on GPUs that are not whole nodes: the job takes whole nodes, and says so.
    const EngineConfig partial
        = launched(defaultPlanWith({ "cluster.gpus=12" }), Engine::DeepSpeed, Launcher::Slurm);
    EXPECT_TRUE(anyWarningMentions(partial, "cluster.gpus = 12 is not a multiple of"));
}

// A plan name cannot break out of the comment, the job name or the YAML.
TEST(ExportLauncher, HostileNamesStayInsideTheirFields)
{
    const Plan plan = defaultPlanWith({ "name=\"x\\nrm -rf /\\n'; touch /tmp/p; '\"" });
    for (const Launcher l : kAllLaunchers) {
        const EngineConfig c = launched(plan, Engine::Megatron, l);
        const std::string text = c.companions.back().text;
        EXPECT_FALSE(contains(text, "\nrm -rf")) << text;
        EXPECT_FALSE(contains(text, "\n'; touch")) << text;
    }
    const std::string sbatch
        = launched(plan, Engine::Megatron, Launcher::Slurm).companions.back().text;
    EXPECT_TRUE(contains(sbatch, "#SBATCH --job-name=envelope-x-rm-rf-touch-tmp-p\n")) << sbatch;
}

} // namespace
} // namespace envelope::testing
