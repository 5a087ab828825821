// OpenRLHF (issue 28): the plan's RL job as `python3 -m openrlhf.cli.train_ppo_ray` arguments.
//
// Flags as OpenRLHF v0.11.0 declares them (openrlhf/cli/train_ppo_ray.py). OpenRLHF places each
// role on its own Ray placement group (--actor/--ref/--critic/--reward.num_nodes x
// num_gpus_per_node, --vllm.num_engines x --vllm.tensor_parallel_size), which is Envelope's
// disjoint layout; --train.colocate_all with --vllm.enable_sleep is its colocated one, and
// --train.async_enable overlaps rollout and training (one step off policy, queue size 1).
#include <algorithm>

#include <fmt/format.h>

#include "export/common.h"

namespace envelope::exportdetail {
namespace {

// A pool of `gpus` as Ray bundles: one node of `gpus`, or whole nodes of gpus_per_node.
NodeLayout poolOf(int gpus, int gpusPerNode, const char* field, std::vector<std::string>& warnings)
{
    const NodeLayout pool = wholeNodes(gpus, gpusPerNode);
    if (pool.nodes > 1 && gpus % pool.perNode != 0)
        warnings.push_back(fmt::format("{} = {} is not whole nodes of {}: OpenRLHF places "
                                       "num_gpus_per_node on each of {} nodes",
            field, gpus, pool.perNode, pool.nodes));
    return pool;
}

} // namespace

EngineConfig exportOpenRlhf(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    const RlConfig& rl = plan.rl;
    const TrainingConfig& t = plan.training;
    const ServingConfig& sc = plan.serving;
    std::string model;
    EngineConfig out = startRlExport(plan, estimate, Engine::OpenRlhf, "openrlhf_train_ppo.sh",
        { "OpenRLHF", "OpenRLHF", "--actor.gradient_checkpointing_enable",
            "--rollout.max_new_tokens", "OpenRLHF's make_experience" },
        modelRepo, model);

    std::vector<std::string> args;
    const auto arg = [&](std::string flag, auto value) {
        args.push_back(fmt::format("{} {}", flag, value));
    };
    const auto on = [&](std::string flag) { args.push_back(std::move(flag)); };

    const bool ppo = rl.algorithm == RlAlgorithm::Ppo;
    const bool colocated = rl.placement == RlPlacement::Colocated;
    if (rl.algorithm == RlAlgorithm::Dpo)
        out.warnings.push_back("rl.algorithm = \"dpo\": DPO is OpenRLHF's openrlhf.cli.train_dpo, "
                               "not train_ppo_ray; the arguments are GRPO's");
    arg("--actor.model_name_or_path", model);
    if (ppo) {
        arg("--reward.model_name_or_path", "REWARD_MODEL");
        arg("--critic.model_name_or_path", model);
    } else {
        // GRPO's reward is a function or service; the reward model's pool is PPO's.
        arg("--reward.remote_url", "REWARD_URL");
    }
    arg("--data.prompt_dataset", "DATA");

    // Pools. Colocated: every role on the actor's GPUs, the engines filling them.
    const int trainerGpus = std::max(1, rl.trainerGpus);
    const NodeLayout actor = poolOf(trainerGpus, plan.cluster.gpusPerNode, "rl.trainer_gpus", out.warnings);
    arg("--actor.num_nodes", actor.nodes);
    arg("--actor.num_gpus_per_node", actor.perNode);
    const int tp = std::max(1, sc.tp);
    const int rolloutGpus = colocated ? actor.nodes * actor.perNode : rl.rolloutGpus;
    const int engines = rolloutGpus / tp;
    if (engines < 1 || rolloutGpus % tp != 0)
        out.warnings.push_back(fmt::format("{} rollout GPUs are not whole engines of serving.tp = "
                                           "{}: {} engine(s) written",
            rolloutGpus, tp, std::max(1, engines)));
    const bool kl = rl.kl && rl.referenceGpus > 0;
    if (kl) {
        const NodeLayout ref = colocated ? actor
                                   : poolOf(rl.referenceGpus, plan.cluster.gpusPerNode,
                                         "rl.reference_gpus", out.warnings);
        arg("--ref.num_nodes", ref.nodes);
        arg("--ref.num_gpus_per_node", ref.perNode);
    }
    if (ppo) {
        const NodeLayout critic = colocated ? actor
                                      : poolOf(rl.criticGpus > 0 ? rl.criticGpus : trainerGpus,
                                            plan.cluster.gpusPerNode, "rl.critic_gpus",
                                            out.warnings);
        arg("--critic.num_nodes", critic.nodes);
        arg("--critic.num_gpus_per_node", critic.perNode);
        const int rewardGpus = rl.rewardGpus > 0 ? rl.rewardGpus : std::max(1, rl.referenceGpus);
        const NodeLayout reward = colocated
            ? actor
            : poolOf(rewardGpus, plan.cluster.gpusPerNode, "rl.reward_gpus", out.warnings);
        arg("--reward.num_nodes", reward.nodes);
        arg("--reward.num_gpus_per_node", reward.perNode);
    }
    arg("--vllm.num_engines", std::max(1, engines));
    arg("--vllm.tensor_parallel_size", tp);
    arg("--vllm.gpu_memory_utilization", numberText(sc.gpuMemoryUtilization));
    if (colocated) {
        on("--train.colocate_all");
        on("--vllm.enable_sleep");
    }
    if (rlStaleness(rl) > 0 && rlStaleness(rl) < 1)
        out.warnings.push_back(fmt::format(
            "rl.staleness = {:g}{}: OpenRLHF's --train.async_enable overlaps a whole step "
            "(staleness 1); a fraction of a step is verl fully_async's staleness_threshold; "
            "written on-policy (no --train.async_enable), which waits longer than Envelope's step",
            rlStaleness(rl), rl.partialRollouts ? ", rl.partial_rollouts" : ""));
    if (rlStaleness(rl) >= 1) {
        if (rlStaleness(rl) > 1 || rl.partialRollouts)
            out.warnings.push_back(fmt::format(
                "rl.staleness = {:g}{}: OpenRLHF's --train.async_enable overlaps one step "
                "(staleness 1) and finishes every sequence it starts; written as that",
                rlStaleness(rl), rl.partialRollouts ? ", rl.partial_rollouts" : ""));
        // Async RLHF refuses sleep mode: the engines keep their memory.
        if (colocated)
            args.erase(std::find(args.begin(), args.end(), "--vllm.enable_sleep"));
        on("--train.async_enable");
    }
    if (sc.engine != ServingEngine::Vllm && sc.engine != ServingEngine::Generic)
        out.warnings.push_back(fmt::format("serving.engine = \"{}\": OpenRLHF's rollout engine "
                                           "is vLLM",
            servingEngineId(sc.engine)));

    // The step: prompts x completions, one update over all of them.
    arg("--rollout.batch_size", rl.prompts);
    arg("--rollout.n_samples_per_prompt", rl.groupSize);
    // rl.updates_per_sync: N optimizer steps over the step's completions, the engines updated
    // once after them; OpenRLHF trains after the whole rollout, not streamed as they arrive.
    const long long completions = static_cast<long long>(rl.prompts) * rl.groupSize;
    const bool split = rl.updatesPerSync > 1 && completions % rl.updatesPerSync == 0;
    if (rl.updatesPerSync > 1)
        out.warnings.push_back(split
                ? fmt::format("rl.updates_per_sync = {}: written as --train.batch_size {} ({} "
                              "updates per rollout); OpenRLHF starts them after the whole "
                              "rollout, so on disjoint pools its step is longer than Envelope's "
                              "streamed one",
                      rl.updatesPerSync, completions / rl.updatesPerSync, rl.updatesPerSync)
                : fmt::format("rl.updates_per_sync = {} does not divide the {} completions of a "
                              "step: written as one update",
                      rl.updatesPerSync, completions));
    arg("--train.batch_size", split ? completions / rl.updatesPerSync : completions);
    if (rl.updateEpochs > 1)
        arg("--train.max_epochs", rl.updateEpochs);
    arg("--train.micro_batch_size", t.microBatch);
    arg("--rollout.micro_batch_size", t.microBatch);
    arg("--data.max_len", static_cast<long long>(rl.promptLen) + rl.responseLen);
    arg("--rollout.max_new_tokens", rl.responseLen);

    // The algorithm: GRPO's group-normalised advantage, PPO's GAE with the critic.
    arg("--algo.advantage.estimator", ppo ? "gae" : "group_norm");
    if (!kl) {
        arg("--algo.kl.init_coef", 0);
    } else if (!ppo) {
        // GRPO puts the KL in the loss (k3, as the GRPO paper).
        on("--algo.kl.use_loss");
        arg("--algo.kl.estimator", "k3");
    }

    // The trainer: DeepSpeed ZeRO under each role.
    arg("--ds.zero_stage", std::min(t.zeroStage, 3));
    if (t.tp > 1)
        arg("--ds.tensor_parallel_size", t.tp);
    if (t.pp > 1 || t.cp > 1)
        out.warnings.push_back(fmt::format("training.pp = {}, cp = {}: OpenRLHF's DeepSpeed "
                                           "trainer has no pipeline or context parallelism "
                                           "(--ds.ring_attn_size is ring attention, not written)",
            t.pp, t.cp));
    if (t.offloadOptimizer)
        on("--ds.adam_offload");
    if (t.offloadParams)
        out.warnings.push_back("training.offload_params: OpenRLHF offloads the optimizer "
                               "(--ds.adam_offload) and the reference (--ref.offload), not the "
                               "actor's parameters");
    if (t.recompute != Recompute::None)
        on("--actor.gradient_checkpointing_enable");
    const Precision p = precisionOf(t.recipe);
    arg("--ds.param_dtype", p.kind == Precision::Kind::Fp16 ? "fp16" : "bf16");
    if (p.kind == Precision::Kind::Fp32 || p.kind == Precision::Kind::Fp8 || p.eightBitOptimizer)
        out.warnings.push_back(fmt::format("training.recipe = \"{}\": OpenRLHF trains bf16 or fp16 "
                                           "with DeepSpeed's fp32 master weights and Adam",
            t.recipe.presetId.empty() ? std::string("custom") : t.recipe.presetId));
    if (t.lora.enabled) {
        arg("--ds.lora.rank", t.lora.rank);
        // argparse reads --ds.lora.alpha as an int.
        arg("--ds.lora.alpha", static_cast<long long>(t.lora.alpha));
        if (t.lora.alpha != static_cast<double>(static_cast<long long>(t.lora.alpha)))
            out.warnings.push_back(fmt::format("training.lora.alpha = {}: OpenRLHF reads an "
                                               "integer; written as {}",
                numberText(t.lora.alpha), static_cast<long long>(t.lora.alpha)));
        if (t.lora.baseBits == 4)
            on("--ds.load_in_4bit");
        else if (t.lora.baseBits == 8)
            out.warnings.push_back("training.lora.base_bits = 8: OpenRLHF loads a 4-bit base "
                                   "(--ds.load_in_4bit) or a 16-bit one");
    }

    std::string s = commentBlock(
        fmt::format("Envelope export for OpenRLHF {} (openrlhf.cli.train_ppo_ray arguments)",
            kOpenRlhfVersion),
        out.figures);
    s += ppo ? "# DATA is the prompt dataset; REWARD_MODEL the reward model's path.\n"
             : "# DATA is the prompt dataset; REWARD_URL the reward service (or "
               "--train.agent_func_path).\n";
    args.insert(args.begin(), "python3 -m openrlhf.cli.train_ppo_ray");
    out.text = s + joinCommand(args, "");
    out.launch = fmt::format("bash {}  # with a Ray cluster of the job's {} GPUs up (ray start "
                             "--head; ray start --address HEAD:6379 on the other nodes)",
        out.fileName, estimate.rl.totalGpus);
    return out;
}

} // namespace envelope::exportdetail
