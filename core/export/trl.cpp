// TRL (issue 28): the plan's RL job as a GRPOTrainer run, `python -m trl.scripts.grpo --config
// trl_grpo.yaml`, with trl_grpo.sh beside it to start it.
//
// Keys as TRL v1.9.0 declares them: trl/scripts/grpo.py reads one YAML through TrlParser into
// GRPOScriptArguments, GRPOConfig, ModelConfig and DatasetMixtureConfig, and drops a key none of
// them has without a word (parse_args_and_config(fail_with_unknown_args=False)), so
// tests/data/engines/trl-v1.9.0.json is what catches a misspelt one. GRPOConfig extends
// transformers' TrainingArguments; the few of its keys written here are listed there by hand.
//
// The step: TRL counts completions. per_device_train_batch_size completions per process and
// micro-step, gradient_accumulation_steps micro-steps per update, and one generation per update
// (steps_per_generation defaults to the accumulation steps; GRPOConfig.__post_init__): so
// per-device x processes x accumulation = prompts x num_generations, the plan's step.
// Placement: a colocated plan is vllm_mode "colocate" (vLLM inside every training process, asleep
// while it trains: Envelope's colocated peak releases the engine after generation); a disjoint one
// "server", `trl vllm-serve` on the rollout GPUs and the trainer on its own. Sharding is DeepSpeed
// ZeRO under TrainingArguments' `deepspeed` (a dict in the same YAML, its "auto" values filled by
// the Trainer from the keys beside it): the file then shards the same under torchrun, accelerate
// launch or the --launcher jobs, where an accelerate config would be read by `accelerate launch`
// alone.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "export/common.h"

namespace envelope::exportdetail {
namespace {

// "0,1,2": the first `count` devices after `first`.
std::string deviceList(int first, int count)
{
    std::string out;
    for (int i = first; i < first + count; ++i)
        out += (out.empty() ? "" : ",") + std::to_string(i);
    return out;
}

// A pool of GPUs as the nodes a launcher starts on: one node of `gpus`, or whole nodes.
NodeLayout nodesOf(int gpus, int gpusPerNode, const char* field, std::vector<std::string>& warnings)
{
    const NodeLayout n = wholeNodes(gpus, gpusPerNode);
    const int perNode = n.perNode;
    if (n.nodes > 1 && gpus % perNode != 0)
        warnings.push_back(fmt::format("{} = {} is not whole nodes of {}: torchrun starts {} "
                                       "processes on each of {} nodes ({} GPUs)",
            field, gpus, perNode, perNode, n.nodes, n.gpus()));
    return n;
}

// The torchrun line of the trainer: one node standalone, several at a c10d rendezvous.
std::string trainerLine(const NodeLayout& trainer, const std::string& extra)
{
    const std::string options = trainer.nodes > 1
        ? fmt::format("--nnodes {} --nproc-per-node {} {}", trainer.nodes, trainer.perNode,
            c10dRendezvous("{JOB_ID:-envelope}"))
        : fmt::format("--standalone --nproc-per-node {}", trainer.perNode);
    return fmt::format("torchrun {} -m trl.scripts.grpo --config trl_grpo.yaml{}", options, extra);
}

// The rendezvous a multi-node trainer needs, each line after `indent`.
std::string masterAddrLines(std::string_view indent)
{
    return fmt::format("{0}: \"${{MASTER_ADDR:?set MASTER_ADDR to the address of the first trainer "
                       "node}}\"\n{0}MASTER_PORT=${{MASTER_PORT:-29500}}\n",
        indent);
}

// `trl vllm-serve` on the rollout GPUs (trl/scripts/vllm_serve.py ScriptArguments).
struct Server {
    int tp = 1;
    int dp = 1;
    bool ray = false; // tensor parallel across nodes: --distributed_executor_backend ray
    int gpus() const { return tp * dp; }
};

std::vector<std::string> serverWords(
    const Plan& plan, const Server& server, const std::string& model)
{
    std::vector<std::string> words { "trl vllm-serve", "--model " + shellWord(model),
        fmt::format("--tensor_parallel_size {}", server.tp),
        fmt::format("--data_parallel_size {}", server.dp),
        "--gpu_memory_utilization " + numberText(plan.serving.gpuMemoryUtilization),
        fmt::format(
            "--max_model_len {}", static_cast<long long>(plan.rl.promptLen) + plan.rl.responseLen),
        "--port 8000" };
    if (server.ray)
        words.emplace_back("--distributed_executor_backend ray");
    return words;
}

} // namespace

EngineConfig exportTrl(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    const RlConfig& rl = plan.rl;
    const TrainingConfig& t = plan.training;
    const ServingConfig& sc = plan.serving;
    std::string model;
    // The old log-probs: GRPOTrainer skips their forward when vLLM's importance sampling
    // correction is off and one generation feeds one update (_generate_and_score_completions),
    // so rl.old_log_prob_forward = false is expressible ("" below).
    EngineConfig out = startRlExport(plan, estimate, Engine::Trl, "trl_grpo.yaml",
        { "TRL", "TRL's Trainer", "gradient_checkpointing", "max_completion_length", "" },
        modelRepo, model);
    const bool colocated = rl.placement == RlPlacement::Colocated;
    const bool ppo = rl.algorithm == RlAlgorithm::Ppo;
    const int perNode = std::max(1, plan.cluster.gpusPerNode);

    // What GRPOTrainer is not: PPO's critic, DPO, the asynchronous pipeline.
    if (ppo)
        out.warnings.push_back(
            "rl.algorithm = \"ppo\": TRL's GRPOTrainer has no critic (TRL's PPOTrainer is "
            "trl.experimental.ppo, not this script); the config is GRPO's with the reward model, "
            "and the critic's memory and time are not in it (export --to verl or --to openrlhf "
            "runs PPO as planned)");
    else if (rl.algorithm == RlAlgorithm::Dpo)
        out.warnings.push_back("rl.algorithm = \"dpo\": DPO is TRL's DPOTrainer (trl dpo, "
                               "trl/scripts/dpo.py), not GRPO; the config is GRPO's");
    if (rlStaleness(rl) > 0)
        out.warnings.push_back(
            "rl.off_policy_pipeline / rl.staleness: GRPOTrainer generates and trains in turn, on policy; TRL's "
            "overlapped rollout is trl.experimental's AsyncGRPOTrainer (FSDP2 only, "
            "examples/scripts/async_grpo.py), not written");
    if (sc.engine != ServingEngine::Vllm && sc.engine != ServingEngine::Generic)
        out.warnings.push_back(fmt::format("serving.engine = \"{}\": TRL generates with vLLM "
                                           "(use_vllm); written as vLLM",
            servingEngineId(sc.engine)));
    if (sc.speculative)
        out.warnings.push_back("serving.speculative: GRPOConfig has no speculative decoding key "
                               "(trl vllm-serve's --speculative_config takes vLLM's JSON); not "
                               "written");

    // The training processes: every GPU when colocated, the trainer's pool otherwise.
    const NodeLayout trainer = colocated
        ? nodesOf(std::max(1, plan.cluster.gpus), perNode, "cluster.gpus", out.warnings)
        : nodesOf(std::max(1, rl.trainerGpus), perNode, "rl.trainer_gpus", out.warnings);
    const long long world = trainer.gpus();
    const bool kl = rl.kl && rl.referenceGpus > 0;
    // GRPOTrainer: beta > 0 loads the reference beside the policy, or (PEFT) disables the
    // adapter for the reference's log-probs.
    if (!colocated && kl)
        out.warnings.push_back(t.lora.enabled
                ? fmt::format("rl.reference_gpus = {}: with LoRA, TRL's reference is the base "
                              "model with the adapter disabled, in the trainer's processes; the "
                              "reference pool is not in this job",
                    rl.referenceGpus)
                : fmt::format("rl.reference_gpus = {}: TRL keeps the reference model (beta > 0) "
                              "in each trainer process, sharded like the policy on the trainer's "
                              "GPUs; the reference pool is not in this job and Envelope's "
                              "trainer memory does not count the reference",
                    rl.referenceGpus));
    if (ppo && !colocated)
        out.warnings.push_back("rl.critic_gpus, rl.reward_gpus: TRL loads the reward model in "
                               "each trainer process; the critic and reward pools are not in "
                               "this job");

    // The step. GRPOConfig.__post_init__: generation_batch_size = per_device_train_batch_size x
    // world size x steps_per_generation (= gradient_accumulation_steps), and it "must be
    // divisible by num_generations" (whole prompt groups); "GRPO requires at least 2 generations
    // per prompt".
    const long long group = std::max(1, rl.groupSize);
    const long long completions = static_cast<long long>(std::max(1, rl.prompts)) * group;
    const long long perMicroStep = static_cast<long long>(std::max(1, t.microBatch)) * world;
    long long accumulation = std::max(1LL, completions / perMicroStep);
    const long long groupStep = group / std::gcd(perMicroStep, group);
    accumulation = (accumulation + groupStep - 1) / groupStep * groupStep;
    const long long written = perMicroStep * accumulation;
    if (written != completions)
        out.warnings.push_back(fmt::format(
            "rl.prompts_per_step x rl.group_size = {} completions is not training.micro_batch = "
            "{} x {} processes x a whole gradient_accumulation_steps holding whole groups of {}: "
            "TRL trains {} completions ({} prompts) per step",
            completions, std::max(1, t.microBatch), world, group, written, written / group));
    if (group < 2)
        out.warnings.push_back(fmt::format("rl.group_size = {}: GRPOConfig refuses "
                                           "num_generations below 2 (GRPO's advantage is "
                                           "relative to the group) and the job stops at start",
            group));

    std::string s = commentBlock(
        fmt::format("Envelope export for TRL {} (GRPOTrainer: python -m trl.scripts.grpo "
                    "--config trl_grpo.yaml)",
            kTrlVersion),
        out.figures);
    s += ppo ? "# DATA is the prompt dataset (a Hub name or path); REWARD_MODEL the reward model.\n"
             : "# DATA is the prompt dataset (a Hub name or path); REWARD_FUNC a reward function "
               "(accuracy_reward, or a dotted import path).\n";
    const auto key = [&s](std::string_view name, const std::string& value) {
        s += fmt::format("{}: {}\n", name, value);
    };
    const auto flag = [](bool on) { return std::string(on ? "true" : "false"); };

    s += "\n# The model and data (ModelConfig, GRPOScriptArguments).\n";
    key("model_name_or_path", yamlString(model));
    key("dataset_name", yamlString("DATA"));
    if (ppo)
        key("reward_model_name_or_path", yamlString("REWARD_MODEL"));
    else
        key("reward_funcs", "[" + yamlString("REWARD_FUNC") + "]");

    s += fmt::format("\n# One step: {} per device x {} processes x {} accumulation steps = {} "
                     "completions = {} prompts x {}\n# (generation_batch_size; one generation "
                     "per update: steps_per_generation defaults to the accumulation steps).\n",
        std::max(1, t.microBatch), world, accumulation, written, written / group, group);
    // rl.updates_per_sync N: one generation trained in N optimizer steps
    // (steps_per_generation = N x gradient_accumulation_steps), vLLM updated once per generation.
    const long long updates = rl.updatesPerSync;
    const bool split = updates > 1 && accumulation % updates == 0;
    if (updates > 1)
        out.warnings.push_back(split
                ? fmt::format("rl.updates_per_sync = {}: written as steps_per_generation {} = {} "
                              "x gradient_accumulation_steps {}; GRPOTrainer trains after the "
                              "whole generation, not streamed as completions arrive{}",
                      updates, accumulation, updates, accumulation / updates,
                      colocated ? "" : ", so its step is longer than Envelope's streamed one")
                : fmt::format("rl.updates_per_sync = {} does not divide the {} accumulation "
                              "steps of a generation: written as one update per generation",
                      updates, accumulation));
    key("per_device_train_batch_size", std::to_string(std::max(1, t.microBatch)));
    key("gradient_accumulation_steps", std::to_string(split ? accumulation / updates : accumulation));
    if (split)
        key("steps_per_generation", std::to_string(accumulation));
    key("num_generations", std::to_string(group));
    if (rl.updateEpochs > 1)
        key("num_iterations", std::to_string(rl.updateEpochs));
    key("max_completion_length", std::to_string(rl.responseLen));
    // beta > 0 loads the reference model; 0.001 is the value GRPOConfig's help cites
    // (DeepSeek-R1). The plan states the KL, not its coefficient.
    key("beta", kl ? "0.001" : "0.0");
    if (!rl.oldLogProbForward)
        key("vllm_importance_sampling_correction", flag(false));

    // Precision and memory: the Trainer's switches (TRL's bf16 default is on unless fp16 is).
    const Precision p = precisionOf(t.recipe);
    key("bf16", flag(p.kind == Precision::Kind::Bf16 || p.kind == Precision::Kind::Fp8));
    if (p.kind == Precision::Kind::Fp16)
        key("fp16", flag(true));
    if (p.kind == Precision::Kind::Fp8)
        out.warnings.push_back("training.recipe = fp8: the Trainer has no FP8 switch; written "
                               "as bf16");
    if (!p.masterWeights && p.kind != Precision::Kind::Fp32)
        out.warnings.push_back("training.recipe: pure bf16 without an fp32 master copy cannot be "
                               "expressed; the Trainer's bf16 mode keeps fp32 master weights");
    if (p.eightBitOptimizer)
        key("optim", yamlString("adamw_bnb_8bit"));
    // gradient_checkpointing defaults to true in TRL: written either way.
    key("gradient_checkpointing", flag(t.recompute != Recompute::None));
    if (t.tp > 1 || t.pp > 1 || t.cp > 1 || t.ep > 1)
        out.warnings.push_back(fmt::format(
            "training.tp/pp/cp/ep = {}/{}/{}/{}: TRL's trainer is data-parallel (DeepSpeed "
            "ZeRO); GRPOConfig refuses context and sequence parallelism; every process is a "
            "data-parallel rank here",
            t.tp, t.pp, t.cp, t.ep));

    if (t.lora.enabled) {
        s += "\n# LoRA (ModelConfig: PEFT).\n";
        key("use_peft", flag(true));
        key("lora_r", std::to_string(t.lora.rank));
        // ModelConfig.lora_alpha is an int.
        const auto alpha = static_cast<long long>(t.lora.alpha);
        key("lora_alpha", std::to_string(alpha));
        if (t.lora.alpha != static_cast<double>(alpha))
            out.warnings.push_back(fmt::format("training.lora.alpha = {}: TRL reads an integer; "
                                               "written as {}",
                numberText(t.lora.alpha), alpha));
        std::string modules;
        for (const std::string& m : peftTargetModules(plan, out.warnings))
            modules += (modules.empty() ? "" : ", ") + yamlString(m);
        key("lora_target_modules", "[" + modules + "]");
        if (t.lora.baseBits == 4) {
            key("load_in_4bit", flag(true));
            key("use_bnb_nested_quant", flag(t.lora.doubleQuant));
        } else if (t.lora.baseBits == 8) {
            key("load_in_8bit", flag(true));
            if (colocated)
                out.warnings.push_back("training.lora.base_bits = 8: TRL's colocated vLLM refuses "
                                       "an 8-bit base (\"vLLM does not support in-flight 8-bit "
                                       "quantization\"); use 4 bits or disjoint pools");
        }
    }

    // Generation.
    const long long maxModelLen = static_cast<long long>(rl.promptLen) + rl.responseLen;
    const int tp = std::max(1, sc.tp);
    Server server;
    s += "\n# Generation with vLLM. GRPOConfig has no prompt cap: keep the dataset's prompts to "
        + std::to_string(rl.promptLen) + " tokens.\n";
    key("use_vllm", flag(true));
    if (colocated) {
        key("vllm_mode", yamlString("colocate"));
        key("vllm_tensor_parallel_size", std::to_string(tp));
        key("vllm_gpu_memory_utilization", numberText(sc.gpuMemoryUtilization));
        key("vllm_enable_sleep_mode", flag(true));
        key("vllm_max_model_length", std::to_string(maxModelLen));
        // VLLMGeneration: "tensor_parallel_size (...) must divide world size (...) evenly".
        if (world % tp != 0)
            out.warnings.push_back(fmt::format("serving.tp = {} does not divide the {} training "
                                               "processes: TRL's colocated vLLM refuses it at "
                                               "start",
                tp, world));
    } else {
        key("vllm_mode", yamlString("server"));
        key("vllm_server_port", "8000");
        const int rolloutGpus = std::max(1, rl.rolloutGpus);
        const int engines = std::max(1, rolloutGpus / tp);
        if (rolloutGpus % tp != 0)
            out.warnings.push_back(fmt::format("{} rollout GPUs are not whole engines of "
                                               "serving.tp = {}: {} engine(s) written",
                rolloutGpus, tp, engines));
        server.tp = tp;
        // trl vllm-serve's --data_parallel_size: "For dense models, keep this at 1. Setting this
        // above `1` for dense models is not supported/useful and will error out".
        server.dp = plan.model.arch.moe ? engines : 1;
        if (!plan.model.arch.moe && engines > 1)
            out.warnings.push_back(fmt::format(
                "rl.rollout_gpus = {}: {} engines of serving.tp = {}, but trl vllm-serve runs a "
                "dense model as one engine (--data_parallel_size above 1 errors for dense "
                "models); written as one engine of {} GPU(s), the other {} idle, and generation "
                "slower than Envelope's rollout time",
                rolloutGpus, engines, tp, tp, rolloutGpus - tp));
        if (tp > perNode) {
            // Its data-parallel workers are local processes: one engine over the Ray cluster.
            server.ray = true;
            server.dp = 1;
            out.warnings.push_back(fmt::format(
                "serving.tp = {} spans nodes of {}: trl vllm-serve needs a Ray cluster over the "
                "rollout nodes for it (--distributed_executor_backend ray, written), started "
                "from one of them; written as one engine",
                tp, perNode));
        } else if (server.gpus() > perNode) {
            server.dp = perNode / tp;
            out.warnings.push_back(fmt::format(
                "rl.rollout_gpus = {}: trl vllm-serve starts its data-parallel engines on one "
                "node; written as {} engine(s) on one node of {}",
                rolloutGpus, server.dp, perNode));
        }
    }

    // Sharding: DeepSpeed ZeRO through TrainingArguments' `deepspeed`; stage 0 is plain DDP.
    if (t.zeroStage >= 1) {
        s += fmt::format("\n# DeepSpeed ZeRO-{} (TrainingArguments.deepspeed; the Trainer fills "
                         "\"auto\" from the keys above).\n",
            t.zeroStage);
        s += "deepspeed:\n";
        for (const char* batchKey : { "train_micro_batch_size_per_gpu",
                 "gradient_accumulation_steps", "train_batch_size", "gradient_clipping" })
            s += fmt::format("  {}: \"auto\"\n", batchKey);
        s += "  bf16:\n    enabled: \"auto\"\n  fp16:\n    enabled: \"auto\"\n";
        // DeepSpeed refuses fp32 gradient accumulation under bf16 only without ZeRO (stage 0,
        // where this section is not written).
        if (p.fp32Gradients)
            s += "  data_types:\n    grad_accum_dtype: \"fp32\"\n";
        s += fmt::format("  zero_optimization:\n    stage: {}\n", std::min(t.zeroStage, 3));
        if (t.offloadOptimizer)
            s += "    offload_optimizer:\n      device: \"cpu\"\n      pin_memory: true\n";
        if (t.offloadParams && t.zeroStage >= 3)
            s += "    offload_param:\n      device: \"cpu\"\n      pin_memory: true\n";
        // A saved model is whole weights, not ZeRO-3 shards (TRL's zero3.yaml:
        // zero3_save_16bit_model).
        if (t.zeroStage >= 3)
            s += "    stage3_gather_16bit_weights_on_model_save: true\n";
    }
    if (t.zeroStage < 1 && (t.offloadOptimizer || t.offloadParams))
        out.warnings.push_back("training.offload_*: DeepSpeed offloads under ZeRO stage 1-3 "
                               "only; training.zero_stage = 0 is written as plain DDP, nothing "
                               "offloaded");
    else if (t.offloadParams && t.zeroStage < 3)
        out.warnings.push_back("training.offload_params: DeepSpeed offloads parameters only "
                               "under ZeRO stage 3; not written");
    if (colocated && (t.offloadOptimizer || t.offloadParams))
        out.warnings.push_back(
            "training.offload_*: Envelope times a colocated plan's offload as a trip out and "
            "back around each phase (verl's hybrid engine); DeepSpeed's ZeRO-Offload keeps the "
            "states in CPU memory and steps the optimizer there");
    out.text = s;

    // trl_grpo.sh: the trainer alone (colocated), or the vLLM server and the trainer.
    std::string script = "#!/usr/bin/env bash\n";
    script += fmt::format(
        "# Envelope export for TRL {}: the GRPO job of trl_grpo.yaml.\n", kTrlVersion);
    const std::vector<std::string> serve = serverWords(plan, server, model);
    const bool oneNode
        = !colocated && trainer.nodes == 1 && trainer.gpus() + server.gpus() <= perNode;
    if (colocated) {
        script += fmt::format("# Colocated: {} processes train and generate (vLLM in each) on {} "
                              "node(s) of {} GPUs.\n",
            world, trainer.nodes, trainer.perNode);
        if (trainer.nodes > 1)
            script += fmt::format("# Run it on each of the {} nodes, with MASTER_ADDR set to the "
                                  "first node's address.\n",
                trainer.nodes);
        script += "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n";
        if (trainer.nodes > 1)
            script += masterAddrLines("");
        script += trainerLine(trainer, "") + "\n";
        out.program = "-m trl.scripts.grpo --config trl_grpo.yaml";
        out.launch = trainer.nodes > 1
            ? fmt::format("MASTER_ADDR=<first node> bash trl_grpo.sh  # on each of the {} nodes",
                trainer.nodes)
            : "bash trl_grpo.sh";
    } else if (oneNode) {
        script += fmt::format("# Disjoint pools on one node: trl vllm-serve on GPUs {} (rollout), "
                              "the trainer on GPUs {}.\n",
            deviceList(0, server.gpus()), deviceList(server.gpus(), trainer.gpus()));
        script += "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n";
        std::vector<std::string> words = serve;
        words.front()
            = "CUDA_VISIBLE_DEVICES=" + deviceList(0, server.gpus()) + " " + words.front();
        words.back() += " &";
        script += joinCommand(words, "");
        script += "SERVER=$!\ntrap 'kill \"$SERVER\" 2>/dev/null || true' EXIT\n"
                  "# The trainer waits for the server (GRPOConfig vllm_server_timeout).\n";
        script += fmt::format("CUDA_VISIBLE_DEVICES={} {}\n",
            deviceList(server.gpus(), trainer.gpus()), trainerLine(trainer, ""));
        out.launch = "bash trl_grpo.sh";
    } else {
        script += fmt::format(
            "# Disjoint pools on {} node(s): the vLLM server on one node's GPUs {}, the trainer "
            "on {} node(s) of {}:\n#   bash trl_grpo.sh server   on the rollout node\n"
            "#   VLLM_SERVER_HOST=<rollout node>{} bash trl_grpo.sh trainer   on each trainer "
            "node\n",
            trainer.nodes + 1, deviceList(0, std::min(server.gpus(), perNode)), trainer.nodes,
            trainer.perNode, trainer.nodes > 1 ? " MASTER_ADDR=<first trainer node>" : "");
        script += "set -euo pipefail\ncd \"$(dirname \"$0\")\"\ncase \"${1:-}\" in\nserver)\n";
        std::vector<std::string> words = serve;
        words.front() = "CUDA_VISIBLE_DEVICES=" + deviceList(0, std::min(server.gpus(), perNode))
            + " exec " + words.front();
        script += joinCommand(words, "  ");
        script += "  ;;\ntrainer)\n"
                  "  : \"${VLLM_SERVER_HOST:?set VLLM_SERVER_HOST to the address of the rollout "
                  "node}\"\n";
        if (trainer.nodes > 1)
            script += masterAddrLines("  ");
        script += "  exec " + trainerLine(trainer, " --vllm_server_host \"$VLLM_SERVER_HOST\"")
            + "\n  ;;\n*)\n  echo \"usage: bash trl_grpo.sh server|trainer\" >&2\n  exit 2\n"
              "  ;;\nesac\n";
        out.launch = fmt::format("bash trl_grpo.sh server  # on the rollout node; then "
                                 "VLLM_SERVER_HOST=<rollout node>{} bash trl_grpo.sh trainer on "
                                 "each of the {} trainer node(s)",
            trainer.nodes > 1 ? " MASTER_ADDR=<first trainer node>" : "", trainer.nodes);
    }
    out.companions.push_back({ "trl_grpo.sh", script });
    return out;
}

} // namespace envelope::exportdetail
