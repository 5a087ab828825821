// verl (issue 28): the plan's RL job as `python3 -m verl.trainer.main_ppo` with Hydra overrides, or
// for an asynchronous disjoint plan as its recipe/fully_async_policy (exportFullyAsync).
//
// Keys as verl v0.7.0 declares them (verl/trainer/config/_generated_ppo_trainer.yaml, the full
// config main_ppo composes; Hydra refuses a key it does not have): data.train_batch_size prompts
// per step, actor_rollout_ref.rollout.n completions per prompt, ppo_mini_batch_size in prompts
// (one update per step: the whole batch), *_micro_batch_size_per_gpu per forward/backward,
// rollout.name "vllm" or "sglang" (verl/workers/rollout/replica.py registers those two),
// trainer.nnodes x n_gpus_per_node. main_ppo's hybrid engine colocates actor, rollout and
// reference on every GPU, and its FSDP actor shards with FSDP alone.
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "base/units.h"
#include "export/common.h"

namespace envelope::exportdetail {
namespace {

// A pool of `gpus` as verl places it (nnodes x n_gpus_per_node: wholeNodes), warned when that
// is not whole nodes; `what` names the pool in the warning ("" for main_ppo's one pool).
NodeLayout poolOf(int gpus, int gpusPerNode, std::string_view what, std::vector<std::string>& warnings)
{
    const NodeLayout p = wholeNodes(gpus, gpusPerNode);
    if (gpus % p.perNode != 0)
        warnings.push_back(fmt::format("{}{} GPUs are not whole nodes of {}: verl places "
                                       "n_gpus_per_node on every node ({} x {})",
            what, gpus, p.perNode, p.nodes, p.perNode));
    return p;
}

// verl v0.7.0's recipe/fully_async_policy (config/fully_async_ppo_trainer.yaml over main_ppo's
// config; the rollouter's asserts at start): the rollout engine on its own pool (rollout.nnodes
// x rollout.n_gpus_per_node) streaming completions to the trainer's (trainer.*), the weights
// synced every trigger_parameter_sync_step updates of ppo_mini_batch_size x require_batches
// prompts, generation running up to staleness_threshold of a sync's prompts ahead.
std::string exportFullyAsync(const Plan& plan, const Estimate& estimate, EngineConfig& out,
    std::vector<std::string>& keys)
{
    const RlConfig& rl = plan.rl;
    const auto set = [&](std::string key, auto value) {
        keys.push_back(fmt::format("{}={}", key, value));
    };
    set("actor_rollout_ref.hybrid_engine", "False");
    set("actor_rollout_ref.rollout.mode", "async");
    set("actor_rollout_ref.rollout.calculate_log_probs", "True");
    const bool divides = rl.prompts % rl.updatesPerSync == 0;
    set("async_training.staleness_threshold", numberText(rlStaleness(rl)));
    set("async_training.trigger_parameter_sync_step", divides ? rl.updatesPerSync : 1);
    set("async_training.require_batches", 1);
    set("async_training.partial_rollout", rl.partialRollouts ? "True" : "False");
    // rl.old_log_prob_forward = false: the rollout engine's log-probs stand for the old
    // policy's (the recipe's default); true: the trainer recomputes them.
    set("async_training.use_rollout_log_probs", rl.oldLogProbForward ? "False" : "True");
    // Every GPU that is not the rollout engine's is the trainer's: the recipe runs the reference
    // (and PPO's critic and reward model) on the trainer's workers.
    const int rollout = std::max(rl.rolloutGpus, 1);
    const int trainer = std::max(1, estimate.rl.totalGpus - rollout);
    if (trainer != rl.trainerGpus)
        out.warnings.push_back(fmt::format(
            "verl's fully_async trainer pool holds the actor and the reference{} together: "
            "written as {} trainer GPUs (the plan's {} trainer{})",
            rl.algorithm == RlAlgorithm::Ppo ? ", critic and reward model" : "", trainer,
            rl.trainerGpus,
            rl.referenceGpus > 0 ? fmt::format(" + {} reference", rl.referenceGpus) : std::string()));
    const NodeLayout t = poolOf(trainer, plan.cluster.gpusPerNode, "the trainer pool's ", out.warnings);
    const NodeLayout r = poolOf(rollout, plan.cluster.gpusPerNode, "the rollout pool's ", out.warnings);
    set("trainer.nnodes", t.nodes);
    set("trainer.n_gpus_per_node", t.perNode);
    set("rollout.nnodes", r.nodes);
    set("rollout.n_gpus_per_node", r.perNode);
    // null: every prompt of the dataset x trainer.total_epochs (the recipe's default of 100
    // would stop after 100 prompts).
    set("rollout.total_rollout_steps", "null");
    set("trainer.logger", "'[\"console\"]'");

    std::string s = commentBlock(
        fmt::format("Envelope export for verl {} recipe/fully_async_policy (fully_async_main Hydra "
                    "overrides)",
            kVerlVersion),
        out.figures);
    s += "# Run from verl's source tree (recipe/ is not in the verl wheel). DATA_TRAIN and "
         "DATA_VAL are the prompt parquet files";
    s += rl.algorithm == RlAlgorithm::Ppo ? "; REWARD_MODEL the reward model's path.\n" : ".\n";
    keys.insert(keys.begin(), "python3 -m recipe.fully_async_policy.fully_async_main");
    // Ray places both pools' bundles on the cluster's nodes: as many as all their GPUs fill.
    const int nodes = wholeNodes(trainer + rollout, plan.cluster.gpusPerNode).nodes;
    out.launch = nodes > 1
        ? fmt::format("bash {}  # in verl's source tree, on the head node of a {}-node Ray "
                      "cluster (ray start --head; ray start --address HEAD:6379 on the others)",
              out.fileName, nodes)
        : "bash " + out.fileName + "  # in verl's source tree";
    return s + joinCommand(keys, "");
}

} // namespace

EngineConfig exportVerl(const Plan& plan, const Estimate& estimate, const std::string& modelRepo)
{
    const RlConfig& rl = plan.rl;
    const TrainingConfig& t = plan.training;
    const ServingConfig& sc = plan.serving;
    // Separate pools with bounded staleness, partial rollouts or streamed updates: verl's
    // recipe/fully_async_policy (its own rollouter and trainer pools), else main_ppo.
    const double staleness = rlStaleness(rl);
    const bool fullyAsync = rl.placement == RlPlacement::Disjoint
        && (rl.partialRollouts || rl.updatesPerSync > 1 || (staleness > 0 && staleness != 1));
    std::string model;
    EngineConfig out = startRlExport(plan, estimate, Engine::Verl,
        fullyAsync ? "verl_fully_async.sh" : "verl_main_ppo.sh",
        { "verl", "verl's FSDP actor", "enable_gradient_checkpointing", "data.max_response_length",
            // fully_async takes the rollout's log-probs as the old policy's (its
            // async_training.use_rollout_log_probs), or recomputes them: either can be written.
            fullyAsync ? "" : "verl's main_ppo (compute_log_prob)" },
        modelRepo, model);
    const Precision p = precisionOf(t.recipe);
    if (p.kind != Precision::Kind::Bf16 || p.eightBitOptimizer)
        out.warnings.push_back(fmt::format("training.recipe = \"{}\": verl's FSDP actor trains "
                                           "bf16 mixed precision with fp32 master weights and "
                                           "Adam (fsdp_config.model_dtype fp32)",
            t.recipe.presetId.empty() ? std::string("custom") : t.recipe.presetId));

    std::vector<std::string> keys;
    const auto set = [&](std::string key, auto value) {
        keys.push_back(fmt::format("{}={}", key, value));
    };
    const auto flag = [](bool on) { return on ? "True" : "False"; };

    // The algorithm. DPO is not main_ppo's: written as GRPO and said first.
    if (rl.algorithm == RlAlgorithm::Dpo)
        out.warnings.push_back("rl.algorithm = \"dpo\": verl's main_ppo trains PPO and GRPO; the "
                               "overrides are GRPO's (no rollout-free DPO trainer in main_ppo)");
    const bool ppo = rl.algorithm == RlAlgorithm::Ppo;
    set("algorithm.adv_estimator", ppo ? "gae" : "grpo");
    set("data.train_files", "DATA_TRAIN");
    set("data.val_files", "DATA_VAL");
    // fully_async: the rollouter feeds the trainer prompt by prompt (its asserts: train_batch_size
    // 0, gen_batch_size 1); the step is ppo_mini_batch_size x require_batches prompts.
    set("data.train_batch_size", fullyAsync ? 0 : rl.prompts);
    if (fullyAsync)
        set("data.gen_batch_size", 1);
    set("data.max_prompt_length", rl.promptLen);
    set("data.max_response_length", rl.responseLen);

    // The policy (actor), its reference and the rollout engine share one model path.
    set("actor_rollout_ref.model.path", model);
    set("actor_rollout_ref.model.enable_gradient_checkpointing",
        flag(t.recompute != Recompute::None));
    if (t.lora.enabled) {
        set("actor_rollout_ref.model.lora_rank", t.lora.rank);
        set("actor_rollout_ref.model.lora_alpha", numberText(t.lora.alpha));
        if (t.lora.baseBits < 16)
            out.warnings.push_back(fmt::format("training.lora.base_bits = {}: verl's LoRA trains "
                                               "over a 16-bit base (no QLoRA)",
                t.lora.baseBits));
    }
    // rl.updates_per_sync: the step's update in N mini-batches, the weights synced once per step
    // (main_ppo's mini-batches; fully_async streams them, trigger_parameter_sync_step).
    if (rl.updatesPerSync > 1 && rl.prompts % rl.updatesPerSync != 0)
        out.warnings.push_back(fmt::format(
            "rl.updates_per_sync = {} does not divide rl.prompts_per_step = {}: verl's "
            "ppo_mini_batch_size is a whole number of prompts; written as one update per step",
            rl.updatesPerSync, rl.prompts));
    set("actor_rollout_ref.actor.ppo_mini_batch_size",
        rl.prompts % rl.updatesPerSync == 0 ? rl.prompts / rl.updatesPerSync : rl.prompts);
    if (rl.updateEpochs > 1)
        set("actor_rollout_ref.actor.ppo_epochs", rl.updateEpochs);
    set("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", t.microBatch);
    set("actor_rollout_ref.actor.use_kl_loss", flag(!ppo && rl.kl));
    if (ppo)
        set("algorithm.use_kl_in_reward", flag(rl.kl));
    set("actor_rollout_ref.actor.fsdp_config.param_offload", flag(t.offloadParams));
    set("actor_rollout_ref.actor.fsdp_config.optimizer_offload", flag(t.offloadOptimizer));
    if (t.zeroStage != 3)
        out.warnings.push_back(fmt::format("training.zero_stage = {}: verl's FSDP actor shards "
                                           "parameters, gradients and optimizer state (ZeRO-3)",
            t.zeroStage));
    if (t.tp > 1 || t.pp > 1 || t.cp > 1)
        out.warnings.push_back(fmt::format(
            "training.tp = {}, pp = {}, cp = {}: verl's FSDP actor shards with FSDP alone; "
            "tensor and pipeline parallelism are its Megatron backend (ppo_megatron_trainer), "
            "not written",
            t.tp, t.pp, t.cp));
    // Old log-probs and the reference's log-probs: forwards of the same micro-batch.
    set("actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu", t.microBatch);
    set("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", t.microBatch);

    // The rollout engine, started in-process by verl with its own memory share.
    std::string rollout = "vllm";
    if (sc.engine == ServingEngine::Sglang)
        rollout = "sglang";
    else if (sc.engine != ServingEngine::Vllm)
        out.warnings.push_back(fmt::format("serving.engine = \"{}\": verl's rollout engines are "
                                           "vllm and sglang; written as vllm",
            servingEngineId(sc.engine)));
    set("actor_rollout_ref.rollout.name", rollout);
    set("actor_rollout_ref.rollout.tensor_model_parallel_size", sc.tp);
    set("actor_rollout_ref.rollout.gpu_memory_utilization", numberText(sc.gpuMemoryUtilization));
    set("actor_rollout_ref.rollout.n", rl.groupSize);
    set("actor_rollout_ref.rollout.max_num_batched_tokens",
        std::max<long long>(sc.maxBatchedTokens, sc.maxNumSeqs));
    set("actor_rollout_ref.rollout.max_num_seqs", sc.maxNumSeqs);
    if (sc.speculative)
        out.warnings.push_back("serving.speculative: verl's rollout config has no speculative "
                               "decoding setting");

    if (ppo) {
        // The critic is a second copy of the model with a value head; the reward model a third.
        set("critic.model.path", model);
        set("critic.model.enable_gradient_checkpointing", flag(t.recompute != Recompute::None));
        set("critic.ppo_micro_batch_size_per_gpu", t.microBatch);
        set("reward_model.enable", "True");
        set("reward_model.model.path", "REWARD_MODEL");
        set("reward_model.micro_batch_size_per_gpu", t.microBatch);
    }

    if (fullyAsync) {
        const std::string text = exportFullyAsync(plan, estimate, out, keys);
        out.text = text;
        return out;
    }

    // Placement: one pool of every GPU the plan uses.
    const int gpus = std::max(1, estimate.rl.totalGpus);
    if (rl.placement == RlPlacement::Disjoint)
        out.warnings.push_back(fmt::format(
            "rl.placement = \"disjoint\": verl's main_ppo colocates actor, reference and rollout "
            "on one pool (its hybrid engine); this runs them together on all {} GPUs instead of "
            "the plan's {} trainer / {} rollout / {} reference, and Envelope's figures are the "
            "disjoint plan's (separate pools are verl's recipe/one_step_off_policy, not written; "
            "export --to openrlhf keeps them)",
            gpus, rl.trainerGpus, rl.rolloutGpus, rl.referenceGpus));
    // Colocated with a staleness bound or partial rollouts (disjoint ones are fully_async's).
    if (rl.partialRollouts || (staleness > 0 && staleness != 1))
        out.warnings.push_back(fmt::format(
            "rl.staleness = {:g}{}, rl.updates_per_sync = {}: bounded staleness, partial "
            "rollouts and streamed updates are verl's recipe/fully_async_policy "
            "(async_training.staleness_threshold={:g}, partial_rollout={}, "
            "trigger_parameter_sync_step={} with require_batches x ppo_mini_batch_size = {} "
            "prompts), not main_ppo; not written",
            staleness, rl.partialRollouts ? " with rl.partial_rollouts" : "",
            rl.updatesPerSync, staleness, rl.partialRollouts ? "True" : "False",
            rl.updatesPerSync, rl.prompts / rl.updatesPerSync));
    else if (staleness == 1)
        out.warnings.push_back("rl.off_policy_pipeline: one-step-off-policy is verl's "
                               "recipe/one_step_off_policy, not main_ppo; not written");
    const NodeLayout pool = poolOf(gpus, plan.cluster.gpusPerNode, "", out.warnings);
    // verl/utils/config.py validate_config: the step's completions split evenly over the GPUs.
    const long long completions = static_cast<long long>(rl.prompts) * rl.groupSize;
    if (completions % pool.gpus() != 0)
        out.warnings.push_back(fmt::format(
            "rl.prompts_per_step x rl.group_size = {} is not a multiple of the {} GPUs: verl "
            "asserts real_train_batch_size % n_gpus == 0 and refuses this job at start",
            completions, pool.gpus()));
    set("trainer.nnodes", pool.nodes);
    set("trainer.n_gpus_per_node", pool.perNode);
    // Quoted: unquoted brackets are a glob to the shell.
    set("trainer.logger", "'[\"console\"]'");

    std::string s = commentBlock(
        fmt::format("Envelope export for verl {} (verl.trainer.main_ppo Hydra overrides)",
            kVerlVersion),
        out.figures);
    s += "# DATA_TRAIN and DATA_VAL are the prompt parquet files";
    s += ppo ? "; REWARD_MODEL the reward model's path.\n" : ".\n";
    keys.insert(keys.begin(), "python3 -m verl.trainer.main_ppo");
    out.text = s + joinCommand(keys, "");
    out.launch = pool.nodes > 1
        ? fmt::format("bash {}  # on the head node of a {}-node Ray cluster (ray start --head; "
                      "ray start --address HEAD:6379 on the others)",
              out.fileName, pool.nodes)
        : "bash " + out.fileName;
    return out;
}

} // namespace envelope::exportdetail
