// Explanations of the RL figures: each formula with the plan's values substituted and its
// source. Only runs when an Explainer is given (never on the fast path).
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "rl/detail.h"
#include "serving/detail.h"
#include "base/units.h"

namespace envelope {
namespace {

constexpr const char* kSeed = "seed 000, 'The four copies cost' and the 7B GRPO on 8x H100 "
                              "worked example";

constexpr const char* kEngine = "vLLM 0.19 Worker.determine_available_memory: the engine "
                                "allocates its whole KV pool at startup (docs/formulas-serving.md "
                                "§3, docs/formulas-rl.md §2)";

std::string num(double x)
{
    return fmt::format("{:.4g}", x);
}
std::string bytes(double b)
{
    return servingBytesText(b);
}

std::string breakdown(const MemoryBreakdown& m)
{
    std::string text;
    auto part = [&](std::string_view name, double v) {
        if (v <= 0)
            return;
        if (!text.empty())
            text += " + ";
        text += fmt::format("{} {}", name, bytes(v));
    };
    // Every tenant of the table (result/tenants.h), so the parts always add up to the total;
    // the KV cache keeps its short name in these formulas.
    for (const TenantInfo& tenant : kTenantTable)
        part(tenant.id == Tenant::KvCache ? std::string_view("KV") : tenant.key, m.*tenant.bytes);
    return text.empty() ? std::string("0") : text;
}

std::string roleFormula(
    const Plan& plan, const ParamCounts& counts, const RlSetup& s, const RoleEstimate& e)
{
    const double P = counts.total;
    const std::string parts = breakdown(e.perGpu);
    if (e.role == "trainer" || e.role == "critic")
        return fmt::format("training memory (ZeRO-{}, recipe {} B/param) on {} GPUs: {} = {}",
            plan.training.zeroStage,
            num(plan.training.recipe.recipe.weightBytes + plan.training.recipe.recipe.gradientBytes
                + plan.training.recipe.recipe.masterBytes
                + 2 * plan.training.recipe.recipe.momentBytes),
            e.gpus, parts, bytes(e.perGpu.total()));
    if (e.role == "reference" || e.role == "reward")
        return fmt::format("forward only: 2 B x {} params / {} GPUs + one micro-batch forward: {} "
                           "= {}",
            num(P), e.gpus, parts, bytes(e.perGpu.total()));
    if (e.role == "old-policy")
        return fmt::format("{} B x {} params / {} GPUs (on the trainer's GPUs) = {}",
            num(plan.rl.oldPolicyBytesPerParam), num(P), e.gpus, bytes(e.perGpu.weights));
    const ServingEstimate& engine = s.engine;
    const std::string name = plan.serving.engineProfile.name.empty()
        ? std::string(servingEngineId(plan.serving.engine))
        : plan.serving.engineProfile.name;
    return fmt::format("what the {} engine allocates per GPU (tp {}): {}-bit weights + the KV pool "
                       "sized from torch total {} at the engine's memory fraction {} + its "
                       "activation reserve + non-torch memory: {} = {}",
        name, std::max(plan.serving.tp, 1), plan.serving.weightBits, bytes(engine.torchTotalBytes),
        num(engine.memoryFraction), parts, bytes(e.perGpu.total()));
}

std::string fitsFormula(
    const Plan& plan, const RlSetup& s, const RlEstimate& r, const RoleEstimate& e)
{
    const std::string memory = bytes(plan.gpu.gpu.memoryBytes);
    if (!e.problem.empty())
        return fmt::format("{} (per-GPU figure: a lower bound, every state sharded over the "
                           "pool) -> {}",
            e.problem, verdictId(e.verdict));
    const double usable = plan.training.usableFraction;
    if (s.colocated)
        return fmt::format("colocated peak {} vs usable {} ({} x {}) and memory {} -> {}",
            bytes(r.colocatedPeakBytes), bytes(usable * plan.gpu.gpu.memoryBytes), num(usable),
            memory, memory, verdictId(e.verdict));
    if (e.role == "rollout")
        return fmt::format("the engine's {} per GPU leaves a KV pool of {} that holds {} "
                           "sequences of {} tokens (at least 1)",
            bytes(e.perGpu.total()), bytes(r.rolloutKvPoolBytes), num(r.rolloutMaxSequences),
            num(s.tokensPerSequence));
    const bool trainerGpus = e.role == "trainer" || e.role == "old-policy";
    return fmt::format("{} per GPU{} vs usable {} ({} x {}) -> {} (the training tab's rule: "
                       "fits under the usable line, tight up to HBM)",
        bytes(e.perGpu.total()), trainerGpus ? " (trainer + old-policy together)" : "",
        bytes(usable * plan.gpu.gpu.memoryBytes), num(usable), memory, verdictId(e.verdict));
}

} // namespace

void explainRl(const Plan& plan, const ParamCounts& counts, const RlSetup& s, const RlEstimate& r,
    Explainer& ex)
{
    const RlConfig& c = plan.rl;
    for (const RoleEstimate& e : r.perRole) {
        ex.add(fmt::format("rl.per_role.{}.per_gpu_bytes", e.role), roleFormula(plan, counts, s, e),
            e.perGpu.total(), "bytes", e.role == "rollout" ? kEngine : kSeed);
        ex.add(fmt::format("rl.per_role.{}.fits", e.role), fitsFormula(plan, s, r, e),
            e.fits ? 1 : 0, "", kSeed);
    }
    if (s.rollout) {
        const RolloutWaves w = rolloutWaves(plan, s, s.colocated ? s.totalGpus : s.rolloutGpus);
        const double perSequence = std::max(1.0,
            std::ceil(kvTokensKept(plan.model.arch, s.tokensPerSequence)
                / std::max(plan.serving.blockSize, 1)));
        ex.add("rl.rollout_kv_pool_bytes",
            fmt::format("usable {} - weights {} - activation peak {} - non-torch {} = {} per GPU "
                        "(the serving engine's own accounting at context prompt + response = {})",
                bytes(s.engine.usableBytes), bytes(s.engine.weightsBytesPerGpu),
                bytes(s.engine.activationPeakBytes), bytes(s.engine.overheadBytes),
                bytes(r.rolloutKvPoolBytes), num(s.tokensPerSequence)),
            r.rolloutKvPoolBytes, "bytes", "docs/formulas-serving.md §3; docs/formulas-rl.md §2");
        ex.add("rl.rollout_max_sequences",
            fmt::format("min(floor({} blocks / {} blocks per sequence){}) = {}",
                num(s.engine.blocks), num(perSequence),
                plan.serving.engine == ServingEngine::Vllm
                    ? fmt::format(", max_num_seqs {}", plan.serving.maxNumSeqs)
                    : std::string(),
                num(r.rolloutMaxSequences)),
            r.rolloutMaxSequences, "sequences",
            "vLLM scheduler: a sequence is admitted when its blocks are free, at most "
            "max_num_seqs");
        ex.add("rl.rollout_waves",
            fmt::format("ceil(ceil({} completions / {} engines) / {} at once) = ceil({} / {}) = {}",
                num(s.completions),
                num(std::max(
                    1, (s.colocated ? s.totalGpus : s.rolloutGpus) / std::max(plan.serving.tp, 1))),
                num(std::max(1.0, r.rolloutMaxSequences)), num(w.sequencesPerEngine),
                num(std::max(1.0, r.rolloutMaxSequences)), num(r.rolloutWaves)),
            r.rolloutWaves, "waves",
            "docs/formulas-rl.md §2 (every response is response_len long)");
    }
    if (s.colocated)
        ex.add("rl.colocated_peak_bytes",
            fmt::format("max(rollout phase = fixed + (1 + fragmentation) x resident + the engine's "
                        "own allocation, forward and training phases = fixed + (1 + "
                        "fragmentation) x (resident + their working set)); rollout {}, training "
                        "{} -> {}",
                bytes(r.rolloutPhaseBytes), bytes(r.trainingPhaseBytes),
                bytes(r.colocatedPeakBytes)),
            r.colocatedPeakBytes, "bytes",
            "verl HybridEngine / vLLM sleep mode: the engine's weights and KV are released "
            "between rollouts; docs/formulas-rl.md");

    ex.add("rl.train_tokens",
        fmt::format("prompts x {} x (prompt_len + response_len) = {} x {} x ({} + {}) = {}",
            c.algorithm == RlAlgorithm::Dpo ? "2 (chosen, rejected)" : "group_size", c.prompts,
            c.algorithm == RlAlgorithm::Dpo ? 2 : c.groupSize, c.promptLen, c.responseLen,
            num(r.trainTokens)),
        r.trainTokens, "tokens", kSeed);
    ex.add("rl.rollout_tokens",
        s.rollout ? fmt::format("every completion's prompt + response = {}", num(r.rolloutTokens))
                  : std::string("DPO trains on a fixed preference dataset: no rollout = 0"),
        r.rolloutTokens, "tokens", kSeed);
    // Responses of a mean under the cap (or carried over): continuous batching at the running
    // batch, then the wait for the longest (rl.cpp rlRollout).
    const bool continuous = s.partial || s.meanResponse < c.responseLen;
    const double running = std::max(1.0, r.rolloutRunningBatch);
    ex.add("rl.rollout_s",
        !s.rollout ? std::string("no rollout = 0")
            : c.rolloutTokensPerS
            ? fmt::format("rollout tokens / rate = {} / {} = {}", num(r.rolloutTokens),
                num(*c.rolloutTokensPerS), formatDuration(r.rolloutS))
            : continuous
            ? fmt::format("per engine, {} sequences at a running batch of {}: {} / {} prefills of "
                          "{}-token prompts + {} x {} / {} = {} decode steps at mean context {} + "
                          "{} tail steps of one sequence{}, every step timed from its ops as the "
                          "serving engine's are = {}",
                num(r.rolloutSequencesPerEngine), num(running), num(r.rolloutSequencesPerEngine),
                num(running), c.promptLen, num(r.rolloutSequencesPerEngine),
                num(r.meanResponseTokens), num(running),
                num(r.rolloutSequencesPerEngine * r.meanResponseTokens / running),
                num(c.promptLen + r.meanResponseTokens / 2), num(r.rolloutTailSteps),
                s.partial ? fmt::format(" + the carried batch's KV recomputed ({})",
                                formatDuration(r.rolloutReprefillS))
                          : std::string(),
                formatDuration(r.rolloutS))
            : fmt::format("per engine, {} wave{} of at most {} sequences: each prefills its "
                          "sequences' {}-token prompts, then {} decode steps of the wave at mean "
                          "context {}, every step timed from its ops as the serving engine's "
                          "are = {}",
                num(r.rolloutWaves), r.rolloutWaves == 1 ? "" : "s",
                num(std::max(1.0, r.rolloutMaxSequences)), c.promptLen, c.responseLen,
                num(c.promptLen + c.responseLen / 2.0), formatDuration(r.rolloutS)),
        r.rolloutS, "s",
        c.rolloutTokensPerS ? kSeed
                            : "docs/formulas-serving.md, 'Step time from ops'; docs/formulas-rl.md "
                              "§2");
    ex.add("rl.reference_s",
        fmt::format("train tokens x forward share {} / (trainer {} tokens/s per GPU{} x the "
                    "pool's GPUs) for the reference{}{}{} = {}",
            num(s.forwardShare), num(s.trainerTokensPerSPerGpu),
            c.trainTokensPerS ? std::string(", measured") : ", " + s.trainerTimingSource,
            s.reward ? ", reward model" : "", s.critic ? ", critic values" : "",
            r.oldLogProbS > 0
                ? fmt::format(", the policy's old log-probs on the trainer's GPUs ({})",
                    formatDuration(r.oldLogProbS))
                : std::string(),
            s.colocated
                ? fmt::format("(one after another) {}", formatDuration(r.referenceS))
                : fmt::format("(side by side: the slowest) {}", formatDuration(r.referenceS))),
        r.referenceS, "s",
        "a forward is the forward's share of a trained token's FLOPs (2 P of 6 P, more with "
        "recompute; Kaplan et al. 2020)");
    const std::string epochs = s.updateEpochs > 1
        ? fmt::format("{} update epochs x ", num(s.updateEpochs))
        : std::string();
    ex.add("rl.train_s",
        c.trainTokensPerS
            ? fmt::format("{}train tokens / rate = {}{} / {} = {}", epochs, epochs,
                num(r.trainTokens), num(*c.trainTokensPerS), formatDuration(r.trainS))
            : fmt::format("{}train tokens / (the trainer's step on its own {} GPUs, {}: {} "
                          "tokens/s per GPU x {}) = {}{} / {}{}{} = {}",
                epochs, s.colocated ? s.totalGpus : s.trainerGpus, s.trainerTimingSource,
                num(s.trainerTokensPerSPerGpu), s.colocated ? s.totalGpus : s.trainerGpus, epochs,
                num(r.trainTokens),
                num(s.trainerTokensPerSPerGpu * (s.colocated ? s.totalGpus : s.trainerGpus)),
                s.critic ? " (and the critic's update)" : "",
                s.phaseOffloadS > 0
                    ? fmt::format(", + {} moving the offloaded states out and back over the host "
                                  "link",
                        formatDuration(s.phaseOffloadS))
                    : std::string(),
                formatDuration(r.trainS)),
        r.trainS, "s",
        c.trainTokensPerS ? kSeed
                          : "training.step_time_s of the trainer's layout on its pool "
                            "(docs/formulas-compute.md, 'Step time from ops'); epochs: verl "
                            "actor.ppo_epochs, OpenRLHF --train.max_epochs, TRL num_iterations");
    if (s.rollout) {
        ex.add("rl.old_log_prob_s",
            c.oldLogProbForward
                ? fmt::format("train tokens x forward share {} / (trainer {} tokens/s per GPU x "
                              "{} GPUs) = {}",
                    num(s.forwardShare), num(s.trainerTokensPerSPerGpu),
                    s.colocated ? s.totalGpus : s.trainerGpus, formatDuration(r.oldLogProbS))
                : std::string("rl.old_log_prob_forward off: the update reuses the rollout's "
                              "log-probs = 0"),
            r.oldLogProbS, "s",
            "verl ray_trainer compute_log_prob / OpenRLHF make_experience: the actor's forward "
            "over the rollout before the update");
        const double bytesPerGpu = 2.0 * counts.total / std::max(plan.serving.tp, 1);
        ex.add("rl.weight_sync_s",
            fmt::format("2 B x {} params / rollout tp {} = {} per rollout GPU, over {} = {}",
                num(counts.total), std::max(plan.serving.tp, 1), bytes(bytesPerGpu),
                s.colocated ? "the pool's links (resharded in place)"
                            : "the links between the trainer and rollout pools",
                formatDuration(r.weightSyncS)),
            r.weightSyncS, "s",
            "verl sharding manager / OpenRLHF broadcast_to_vllm: the new weights reach every "
            "engine before the next rollout; docs/formulas-rl.md §4");
    }
    if (r.rolloutTailSteps > 0)
        ex.add("rl.rollout_tail_steps",
            s.partial
                ? fmt::format("response_len {} / (staleness {:g} + 1) - sequences per engine {} x "
                              "mean response {} / running batch {} = {} decode steps: a carried "
                              "sequence may span {:g} steps' rollouts, so each runs at least L / "
                              "(k + 1) of its decode steps",
                    c.responseLen, s.staleness, num(r.rolloutSequencesPerEngine),
                    num(r.meanResponseTokens), num(r.rolloutRunningBatch),
                    num(r.rolloutTailSteps), s.staleness + 1)
                : fmt::format("response_len {} - sequences per engine {} x mean response {} / "
                              "running batch {} = {} decode steps waiting for the longest "
                              "responses",
                    c.responseLen, num(r.rolloutSequencesPerEngine), num(r.meanResponseTokens),
                    num(r.rolloutRunningBatch), num(r.rolloutTailSteps)),
            r.rolloutTailSteps, "steps",
            s.partial ? "AReaL (Fu et al. 2025) sec. 5: interruptible generation under a staleness "
                        "bound; docs/formulas-rl.md §4"
                      : "a synchronous step waits for its longest sequence (docs/formulas-rl.md §2)");
    if (s.partial)
        ex.add("rl.rollout_reprefill_s",
            fmt::format("partial rollouts: the running batch of {} sequences per engine is "
                        "carried into the next step and its KV recomputed under the new weights: "
                        "a prefill of {} sequences at mean context prompt {} + mean response {} / "
                        "2 = {} (included in rl.rollout_s)",
                num(r.rolloutRunningBatch), num(r.rolloutRunningBatch), c.promptLen,
                num(r.meanResponseTokens), formatDuration(r.rolloutReprefillS)),
            r.rolloutReprefillS, "s",
            "AReaL (Fu et al. 2025) sec. 5.1: interrupted generations discard the KV computed with "
            "the old weights and recompute it with the new ones");
    const double trainSide = r.referenceS + r.trainS;
    if (s.overlap) {
        const int n = s.updatesPerSync;
        ex.add("rl.rollout_idle_s",
            fmt::format("max(0, (forwards + train) / updates per sync - staleness x rollout) = "
                        "max(0, {} / {} - {:g} x {}) = {}: the rollout pool waits for the last "
                        "update, less what the bound lets it generate meanwhile",
                formatDuration(trainSide), n, s.staleness, formatDuration(r.rolloutS),
                formatDuration(r.rolloutIdleS)),
            r.rolloutIdleS, "s",
            "verl recipe/fully_async_policy (rollouter/idle_ratio): between two syncs the "
            "rollouter generates at most (1 + staleness_threshold) x the step's samples");
        ex.add("rl.trainer_idle_s",
            fmt::format("max(0, rollout / updates per sync - staleness x rollout) = max(0, {} / "
                        "{} - {:g} x {}) = {}: the trainer waits for its first {} of the step's "
                        "completions, less what the bound had ready",
                formatDuration(r.rolloutS), n, s.staleness, formatDuration(r.rolloutS),
                formatDuration(r.trainerIdleS), n == 1 ? std::string("all") : "1/" + std::to_string(n)),
            r.trainerIdleS, "s",
            "verl recipe/fully_async_policy (trainer/idle_ratio; trigger_parameter_sync_step "
            "local updates per sync, streamed as samples arrive)");
    }
    const std::string async = rlAsyncText(s.staleness, false, s.updatesPerSync);
    const std::string how = s.staleness > 0 ? async
        : async.empty()                     ? std::string("on-policy")
                                            : "on-policy, " + async;
    ex.add("rl.step_s",
        s.overlap ? fmt::format("{}: weight sync + max(rollout + its wait, forwards + train + its "
                                "wait) = {} + max({} + {}, {} + {} + {}) = {}",
            how, formatDuration(r.weightSyncS), formatDuration(r.rolloutS),
            formatDuration(r.rolloutIdleS), formatDuration(r.referenceS),
            formatDuration(r.trainS), formatDuration(r.trainerIdleS), formatDuration(r.stepS))
                  : fmt::format("{}: rollout + weight sync + forwards + train = {} + {} + "
                                "{} + {} = {}",
                      (s.staleness > 0 || s.updatesPerSync > 1) && s.colocated
                          ? how + ", colocated (the phases share the GPUs, so they take turns)"
                          : std::string("synchronous"),
                      formatDuration(r.rolloutS), formatDuration(r.weightSyncS),
                      formatDuration(r.referenceS), formatDuration(r.trainS),
                      formatDuration(r.stepS)),
        r.stepS, "s",
        "seed 000 (~30 s rollout + ~5 s train = ~35 s/step); one-step off-policy: Noukhovitch "
        "et al. 2025 (Asynchronous RLHF); bounded staleness: AReaL (Fu et al. 2025); streamed "
        "updates and fractional bounds: verl recipe/fully_async_policy; docs/formulas-rl.md §4");
    ex.add("rl.steps_per_hour",
        fmt::format("3600 / step = 3600 / {} = {}", num(r.stepS), num(r.stepsPerHour)),
        r.stepsPerHour, "steps/h", kSeed);
    ex.add("rl.bottleneck",
        fmt::format("{}: rollout {} vs forwards + train {}", r.bottleneck,
            formatDuration(r.rolloutS), formatDuration(r.referenceS + r.trainS)),
        r.bottleneck == "rollout" ? 1 : 0, "", "seed 000 ('find the bottleneck, scale that side')");
    // When no split lets the trainer fit, the figure is the current split and the formula says
    // why; a trainer whose per-GPU states exceed HBM at every count needs more GPUs or ZeRO-3.
    const int splitGpus = s.rolloutGpus + s.trainerGpus;
    std::string suggestion;
    if (!s.rollout)
        suggestion = r.suggestionFits
            ? std::string("DPO has no rollout: every GPU trains")
            : fmt::format("DPO has no rollout: every GPU trains, but the trainer does not fit on "
                          "{} GPUs of {}",
                r.suggestedTrainerGpus, bytes(plan.gpu.gpu.memoryBytes));
    else if (r.suggestionFits)
        suggestion = fmt::format("of {} rollout + trainer GPUs, the split minimising max(rollout, "
                                 "forwards + train) with the trainer fitting: {} rollout / {} "
                                 "trainer",
            splitGpus, r.suggestedRolloutGpus, r.suggestedTrainerGpus);
    else
        suggestion = fmt::format("no split of these {} rollout + trainer GPUs{} lets the trainer "
                                 "(ZeRO-{}) fit in {} per GPU; the current {} rollout / {} trainer "
                                 "stands: add GPUs or shard the trainer (ZeRO-3)",
            splitGpus,
            plan.serving.tp > 1
                ? fmt::format(" into whole TP-{} rollout engines", plan.serving.tp)
                : std::string(),
            plan.training.zeroStage, bytes(plan.gpu.gpu.memoryBytes), r.suggestedRolloutGpus,
            r.suggestedTrainerGpus);
    ex.add("rl.suggested_rollout_gpus", suggestion, r.suggestedRolloutGpus, "GPUs",
        "seed 000 ('usually 2:1 inference:training')");
    ex.add("rl.suggested_trainer_gpus", fmt::format("{} trainer GPUs", r.suggestedTrainerGpus),
        r.suggestedTrainerGpus, "GPUs", "seed 000");
}

} // namespace envelope
