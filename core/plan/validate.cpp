// validatePlan and planWarnings: the ranges of every field (the same tables readPlan uses) and
// the checks that involve several fields. A combination no framework can run is an error; one
// that runs but is probably not meant is a warning (docs/plan-format.md, "Cross-field checks").
#include <cmath>

#include <fmt/format.h>

#include "plan/planio.h"
#include "plan/fields.h"
#include "plan/lengths.h"
#include "plan/preset_json.h"

namespace envelope {
namespace {

using namespace planfields;

std::optional<Error> checkRanges(Plan plan)
{
    if (auto e = validateArch(plan.model.arch))
        return Error { e->path.empty() ? "model" : "model." + e->path, e->message };

    // The GPU and recipe figures are checked in their JSON units, through the reader itself.
    {
        const nlohmann::json gpu = gpuToJson(plan.gpu.gpu); // FieldReader keeps a reference
        FieldReader f(gpu, "gpu");
        readGpuFields(f, plan.gpu.gpu, true);
        if (auto e = f.finish())
            return e;
    }
    {
        Expected<Recipe> recipe = customRecipeFromJson(
            customRecipeToJson(plan.training.recipe.recipe), "training.recipe");
        if (!recipe)
            return recipe.error();
    }

    CheckVisitor cluster { "cluster", {} };
    visitCluster(plan.cluster, cluster);
    cluster.integer("nvlink_domain", plan.cluster.nvlinkDomain, 0, 100'000);
    if (cluster.error)
        return cluster.error;
    // An NVLink domain is whole nodes (an NVL72 rack: 18 trays of 4).
    if (plan.cluster.nvlinkDomain > 0
        && (plan.cluster.nvlinkDomain < plan.cluster.gpusPerNode
            || plan.cluster.nvlinkDomain % plan.cluster.gpusPerNode != 0))
        return Error { "cluster.nvlink_domain",
            fmt::format("must be 0 (the node) or a multiple of gpus_per_node ({}), got {}",
                plan.cluster.gpusPerNode, plan.cluster.nvlinkDomain) };

    CheckVisitor training { "training", {} };
    visitTrainingSetup(plan.training, training);
    visitTrainingObserved(plan.training, training);
    if (training.error)
        return training.error;
    CheckVisitor overhead { "training.overhead", {} };
    visitOverhead(plan.training.overhead, overhead);
    if (overhead.error)
        return overhead.error;
    if (plan.training.activationModel.kind == ActivationModel::Kind::SimpleSbh) {
        CheckVisitor activation { "training.activation_model", {} };
        activation.number("bytes_per_sbh_per_layer",
            plan.training.activationModel.bytesPerSbhPerLayer, Range::above(0, 10'000));
        if (activation.error)
            return activation.error;
    }

    CheckVisitor serving { "serving", {} };
    visitServing(plan.serving, serving);
    if (serving.error)
        return serving.error;
    if (plan.serving.speculative) {
        ServingSpeculative spec = *plan.serving.speculative;
        CheckVisitor speculative { "serving.speculative", {} };
        visitSpeculative(spec, speculative);
        if (speculative.error)
            return speculative.error;
        if (spec.draftModel)
            if (auto e = validateArch(spec.draftModel->arch))
                return Error { e->path.empty() ? "serving.speculative.draft_model"
                                               : "serving.speculative.draft_model." + e->path,
                    e->message };
    }
    CheckVisitor rl { "rl", {} };
    visitRl(plan.rl, rl);
    return rl.error;
}

bool isBitWidth(int bits)
{
    return bits == 4 || bits == 8 || bits == 16;
}

// serving.workload and serving.slo of a plan built in code (the GUI): the rules read.cpp
// applies to the JSON (readWorkload, readSlo), on the values.
std::optional<Error> checkLength(const LengthDistribution& d, const std::string& path)
{
    const auto tokens = [](double t) { return std::isfinite(t) && t >= 1 && t <= kMaxTokens; };
    switch (d.form) {
    case LengthDistribution::Form::Fixed:
        if (!tokens(d.fixed) || d.fixed != std::floor(d.fixed))
            return Error { path, fmt::format("must be a whole number of tokens 1..{}, got {}", kMaxTokens, d.fixed) };
        break;
    case LengthDistribution::Form::MeanP90:
        if (!tokens(d.mean))
            return Error { path + ".mean", fmt::format("must be 1..{}, got {}", kMaxTokens, d.mean) };
        if (!tokens(d.p90) || d.p90 < d.mean || d.p90 > kMaxLogNormalP90OverMean * d.mean)
            return Error { path + ".p90",
                fmt::format("must be between the mean ({}) and {}x it (a log-normal), got {}",
                    d.mean, kMaxLogNormalP90OverMean, d.p90) };
        break;
    case LengthDistribution::Form::Histogram: {
        double total = 0;
        for (const auto& [t, w] : d.histogram) {
            if (!tokens(t) || !(std::isfinite(w) && w >= 0))
                return Error { path + ".histogram",
                    fmt::format("needs [tokens 1..{}, weight >= 0] pairs, got [{}, {}]", kMaxTokens, t, w) };
            total += w;
        }
        if (d.histogram.empty() || d.histogram.size() > 10'000 || !(total > 0))
            return Error { path + ".histogram",
                "must hold 1 to 10000 [tokens, weight] pairs with some weight" };
        break;
    }
    }
    return std::nullopt;
}

std::optional<Error> checkWorkload(const ServingWorkload& w, int context)
{
    if (auto e = checkLength(w.input, "serving.workload.input_tokens"))
        return e;
    if (auto e = checkLength(w.output, "serving.workload.output_tokens"))
        return e;
    if (w.concurrency.has_value() == w.requestRate.has_value())
        return Error { "serving.workload",
            "needs one of \"concurrency\" (users in a closed loop) or \"request_rate\" "
            "(Poisson arrivals per second)" };
    if (w.concurrency && (*w.concurrency < 1 || *w.concurrency > 10'000'000))
        return Error { "serving.workload.concurrency",
            fmt::format("must be 1..10000000, got {}", *w.concurrency) };
    if (w.requestRate && !(std::isfinite(*w.requestRate) && *w.requestRate >= 1e-6 && *w.requestRate <= 1e9))
        return Error { "serving.workload.request_rate",
            fmt::format("must be 1e-06..1e+09 requests/s, got {}", *w.requestRate) };
    if (!(std::isfinite(w.prefixHitRate) && w.prefixHitRate >= 0 && w.prefixHitRate <= 0.999))
        return Error { "serving.workload.prefix_hit_rate",
            fmt::format("must be 0..0.999, got {}", w.prefixHitRate) };
    if (longestTokens(w.input) + longestTokens(w.output) > context)
        return Error { "serving.workload",
            fmt::format("the longest request ({} + {} tokens) exceeds serving.context = {}",
                longestTokens(w.input), longestTokens(w.output), context) };
    return std::nullopt;
}

// The draft a kind needs: MTP the checkpoint's own module, a draft model its own shape with the
// target's tokenizer (the verifier compares token ids).
std::optional<Error> checkSpeculative(const ServingSpeculative& s, const ModelArch& arch)
{
    if (s.kind == SpeculativeKind::Mtp && arch.mtpLayers < 1)
        return Error { "serving.speculative.kind",
            fmt::format("\"mtp\" drafts with the checkpoint's multi-token-prediction module and "
                        "{} has none (mtp_layers 0; DeepSeek-V3/R1 and GLM-4.5 have one): use "
                        "\"eagle\" or \"draft\"",
                arch.name.empty() ? std::string("this model") : arch.name) };
    if (s.kind != SpeculativeKind::Draft && s.draftModel)
        return Error { "serving.speculative.draft_model",
            fmt::format("is only for kind \"draft\", got kind \"{}\"", speculativeKindId(s.kind)) };
    if (s.kind == SpeculativeKind::Draft) {
        if (!s.draftModel)
            return Error { "serving.speculative.draft_model",
                "missing: kind \"draft\" needs the draft model (a preset id or a model object)" };
        if (s.draftModel->arch.vocab != arch.vocab)
            return Error { "serving.speculative.draft_model",
                fmt::format("has a vocabulary of {} tokens and the model {}: a draft model must "
                            "share the model's tokenizer",
                    s.draftModel->arch.vocab, arch.vocab) };
    }
    return std::nullopt;
}

std::optional<Error> checkSlo(const ServingSlo& slo)
{
    const std::pair<const char*, const std::optional<double>*> keys[] = {
        { "ttft_p50_s", &slo.ttftP50S }, { "ttft_p90_s", &slo.ttftP90S }, { "ttft_p99_s", &slo.ttftP99S },
        { "tpot_p50_s", &slo.tpotP50S }, { "tpot_p90_s", &slo.tpotP90S }, { "tpot_p99_s", &slo.tpotP99S }
    };
    for (const auto& [key, value] : keys)
        if (*value && !(std::isfinite(**value) && **value >= 1e-6 && **value <= 1e6))
            return Error { fmt::format("serving.slo.{}", key),
                fmt::format("must be 1e-06..1e+06 seconds, got {}", **value) };
    if (!slo.any())
        return Error { "serving.slo", "names no objective: give ttft_p90_s and/or tpot_p90_s (or p50 / p99)" };
    return std::nullopt;
}

std::optional<Error> checkServingLayout(
    const ModelArch& arch, int tp, int ep, int dp, const std::string& path)
{
    // dp: the pool's attention DP ranks; 0 = the aggregated engine's serving.dp_attention (its
    // ranks are ep / tp).
    const bool moe = arch.moe && arch.moe->experts > 0;
    if (arch.heads > 0 && arch.heads % tp != 0)
        return Error { path + ".tp",
            fmt::format("must divide the model's {} attention heads, got {}", arch.heads, tp) };
    if (ep > 1 && !moe)
        return Error { path + ".ep",
            fmt::format("must be 1: {} has no routed experts to spread, got {}",
                arch.name.empty() ? std::string("the model") : arch.name, ep) };
    if (dp == 0) { // serving.dp_attention
        if (ep % tp != 0 || ep < tp)
            return Error { path + ".ep",
                fmt::format("must be a multiple of serving.tp = {} with dp_attention (the engine "
                            "is ep GPUs: ep / tp attention ranks of tp), got {}",
                    tp, ep) };
        if (!moe)
            return Error { path + ".dp_attention",
                "must be false: data-parallel attention spreads a MoE model's experts over the "
                "attention ranks, and this model has none" };
        return std::nullopt;
    }
    if (dp > 1) {
        if (!moe)
            return Error { path + ".dp",
                fmt::format("must be 1: data-parallel attention is for MoE models (the experts "
                            "spread over the ranks), got {}",
                    dp) };
        if (ep != tp * dp)
            return Error { path + ".ep",
                fmt::format("must be tp x dp = {} with dp > 1 (the experts spread over every GPU "
                            "of the worker), got {}",
                    tp * dp, ep) };
        return std::nullopt;
    }
    if (tp % ep != 0)
        return Error { path + ".ep",
            fmt::format("must divide tp = {} (the experts split inside one tensor-parallel "
                        "group; more expert parallelism needs data-parallel attention), got {}",
                tp, ep) };
    return std::nullopt;
}

std::optional<Error> checkCrossFields(const Plan& plan)
{
    const TrainingConfig& t = plan.training;
    const ModelArch& arch = plan.model.arch;
    const long long modelParallel = static_cast<long long>(t.tp) * t.pp * t.cp;

    // Every GPU belongs to exactly one (tp, pp, cp) replica (Megatron-LM's world-size rule).
    if (plan.cluster.gpus % modelParallel != 0)
        return Error { "cluster.gpus",
            fmt::format("must be a multiple of tp x pp x cp = {} x {} x {} = {}, got {}", t.tp,
                t.pp, t.cp, modelParallel, plan.cluster.gpus) };
    const long long dataParallel = plan.cluster.gpus / modelParallel;
    // Expert parallelism groups are carved out of the data-parallel ranks.
    if (dataParallel % t.ep != 0)
        return Error { "training.ep",
            fmt::format("must divide the data-parallel size gpus / (tp x pp x cp) = "
                        "{} / {} = {}, got {}",
                plan.cluster.gpus, modelParallel, dataParallel, t.ep) };
    if (arch.moe && arch.moe->experts % t.ep != 0)
        return Error { "training.ep",
            fmt::format("must divide the model's {} experts, got {}", arch.moe->experts, t.ep) };
    // HSDP (training.hsdp_shard): shard within groups of that many data-parallel ranks (x cp
    // where the framework shards over cp), replicate across the groups.
    const long long shardGroup = dataParallel * (t.framework.shardOverCp ? t.cp : 1);
    if (t.hsdpShard > 0 && (t.zeroStage < 3 || shardGroup % t.hsdpShard != 0))
        return Error { "training.hsdp_shard",
            t.zeroStage < 3
                ? fmt::format(
                    "needs zero_stage 3 (HSDP shards like FSDP), got zero_stage {}", t.zeroStage)
                : fmt::format("must divide the sharding group {} ({}), got {}", shardGroup,
                    t.framework.shardOverCp ? "dp x cp" : "dp", t.hsdpShard) };
    // Tensor parallelism splits attention by heads (Megatron-LM requires heads % tp == 0).
    if (arch.heads > 0 && arch.heads % t.tp != 0)
        return Error { "training.tp",
            fmt::format("must divide the model's {} attention heads, got {}", arch.heads, t.tp) };
    if (arch.layers > 0 && t.pp > arch.layers)
        return Error { "training.pp",
            fmt::format("must be at most the model's {} layers, got {}", arch.layers, t.pp) };
    if (arch.layers > 0 && static_cast<long long>(t.pp) * t.virtualStages > arch.layers)
        return Error { "training.virtual_stages",
            fmt::format("pp x virtual_stages must be at most the model's {} layers, got "
                        "{} x {}",
                arch.layers, t.pp, t.virtualStages) };
    // training.stage_layers: the layout is the plan's, so it must be a whole one (Megatron's
    // TransformerConfig asserts the same: the first, middle and last counts sum to num_layers).
    if (!t.stageLayers.empty()) {
        long long sum = 0;
        for (int n : t.stageLayers)
            sum += n;
        if (static_cast<long long>(t.stageLayers.size()) != t.pp)
            return Error { "training.stage_layers",
                fmt::format("needs one layer count per pipeline stage: training.pp is {}, got {} "
                            "entries",
                    t.pp, t.stageLayers.size()) };
        if (arch.layers > 0 && sum != arch.layers)
            return Error { "training.stage_layers",
                fmt::format("must add up to the model's {} layers, got {}", arch.layers, sum) };
    }
    // DualPipe feeds micro-batches from both ends: each rank pairs stage s with p - 1 - s
    // (DeepSeek-AI 2024 sec. 3.2.1), which needs an even pp and no interleaving.
    if (t.ppSchedule == PpSchedule::DualPipe && (t.pp < 2 || t.pp % 2 != 0 || t.virtualStages > 1))
        return Error { "training.pp_schedule",
            fmt::format("\"dualpipe\" needs an even pp >= 2 and virtual_stages 1, got pp {} and "
                        "virtual_stages {}",
                t.pp, t.virtualStages) };
    if (t.recompute == Recompute::EveryK && arch.layers > 0 && t.recomputeEvery > arch.layers)
        return Error { "training.recompute_every",
            fmt::format(
                "must be at most the model's {} layers, got {}", arch.layers, t.recomputeEvery) };
    // Optimizer in backward steps each parameter as its gradient is produced, so gradients
    // cannot accumulate over micro-batches (torchtune full_finetune_single_device raises
    // "Gradient accumulation is not supported with optimizer in bwd").
    if (t.optimizerInBackward && t.gradAccum != 1)
        return Error { "training.optimizer_in_backward",
            fmt::format("needs grad_accum 1 (each gradient is consumed by the optimizer as it is "
                        "produced), got grad_accum {}",
                t.gradAccum) };
    // Offloaded layers are counted per pipeline stage: at most the stage's layers.
    const int stageLayers = arch.layers > 0 ? (arch.layers + t.pp - 1) / t.pp : 0;
    if (t.activationOffload
        && (t.activationOffloadLayers < 0
            || (stageLayers > 0 && t.activationOffloadLayers > stageLayers)))
        return Error { "training.activation_offload",
            fmt::format("must be true or 1..{} (the layers of one pipeline stage), got {}",
                stageLayers, t.activationOffloadLayers) };
    // Context parallelism splits each sequence into cp pieces.
    if (t.seqLen % t.cp != 0)
        return Error { "training.seq_len",
            fmt::format("must be a multiple of cp = {}, got {}", t.cp, t.seqLen) };

    const ServingConfig& s = plan.serving;
    if (!isBitWidth(s.weightBits))
        return Error { "serving.weight_bits",
            fmt::format("must be 4, 8 or 16, got {}", s.weightBits) };
    if (!isBitWidth(s.kvBits))
        return Error { "serving.kv_bits", fmt::format("must be 4, 8 or 16, got {}", s.kvBits) };
    if (const int bits = kvCacheFormatBits(s.kvFormat); bits != 0 && bits != s.kvBits)
        return Error { "serving.kv_format",
            fmt::format("\"{}\" stores {} bits a value, but serving.kv_bits = {}",
                kvCacheFormatId(s.kvFormat), bits, s.kvBits) };
    if (const int bits = weightFormatBits(s.weightFormat); bits != 0 && bits != s.weightBits)
        return Error { "serving.weight_format",
            fmt::format("\"{}\" stores {} bits a weight, but serving.weight_bits = {}",
                weightFormatId(s.weightFormat), bits, s.weightBits) };
    for (auto [key, group] : { std::pair { "serving.attention_weight_format", s.attentionWeightFormat },
             std::pair { "serving.expert_weight_format", s.expertWeightFormat } })
        if (group && (*group == WeightFormat::Auto || weightFormatId(*group).empty()))
            return Error { key, fmt::format("must be {}", kWeightGroupFormatsAllowed) };
    if (auto e = checkServingLayout(arch, s.tp, s.ep, s.dpAttention ? 0 : 1, "serving"))
        return e;
    if (s.disaggregation)
        for (auto [key, pool] : { std::pair { "prefill", s.disaggregation->prefill },
                 std::pair { "decode", s.disaggregation->decode } })
            if (auto e = checkServingLayout(arch, pool.tp, pool.ep, pool.dp,
                    std::string("serving.disaggregation.") + key))
                return e;
    if (s.redundantExperts < 0 || s.redundantExperts > kMaxRedundantExperts)
        return Error { "serving.redundant_experts",
            fmt::format("must be 0..{}, got {}", kMaxRedundantExperts, s.redundantExperts) };
    if (s.redundantExperts > 0) {
        // Redundant copies move whole experts between expert-parallel ranks (vLLM refuses
        // num_redundant_experts without --enable-eplb, which needs --enable-expert-parallel).
        const bool moe = arch.moe && arch.moe->experts > 0;
        if (!moe || !servingHasExpertParallel(s))
            return Error { "serving.redundant_experts",
                fmt::format("must be 0 without expert parallelism ({}): the copies are whole "
                            "experts spread over the EP ranks, got {}",
                    moe ? "serving.ep > 1, or a disaggregated pool's ep" : "the model has no routed experts",
                    s.redundantExperts) };
    }
    if (s.schedulerSteps < 1 || s.schedulerSteps > 64)
        return Error { "serving.scheduler_steps",
            fmt::format("must be 1..64, got {}", s.schedulerSteps) };
    // The scheduler keys an engine has (presets/engines.json); the generic engine has them all.
    if (s.engine != ServingEngine::Generic && !s.engineProfile.id.empty()) {
        const EngineProfile& e = s.engineProfile;
        const std::string engine = e.version.empty() ? e.name : e.name + " " + e.version;
        if (s.schedulerSteps > 1 && !e.multiStepScheduling)
            return Error { "serving.scheduler_steps",
                fmt::format("{} has no multi-step scheduling (vLLM's --num-scheduler-steps, "
                            "its V0 engine, up to 0.9): must be 1, got {}",
                    engine, s.schedulerSteps) };
        if (s.overlapScheduler && *s.overlapScheduler && e.multiStepScheduling)
            return Error { "serving.overlap_scheduler",
                fmt::format("{} (the V0 engine) has no overlap scheduler (vLLM's "
                            "--async-scheduling came with V1): must be false or null, got true",
                    engine) };
        if (s.overlapScheduler && *s.overlapScheduler && s.schedulerSteps > 1)
            return Error { "serving.overlap_scheduler",
                "must be false or null with serving.scheduler_steps > 1" };
        if (s.mixedBatches && *s.mixedBatches == false
            && e.mixedBatches == EngineProfile::Mixing::Always)
            return Error { "serving.mixed_batches",
                fmt::format("{} always runs decodes and prompt tokens in one step: must be "
                            "true or null, got false",
                    engine) };
        if (s.mixedBatches && e.mixedBatches == EngineProfile::Mixing::WhenChunked
            && s.chunkedPrefill && *s.mixedBatches != *s.chunkedPrefill)
            return Error { "serving.mixed_batches",
                fmt::format("{} mixes decodes and prompt tokens exactly when chunked prefill is "
                            "on: must be null or {} (serving.chunked_prefill), got {}",
                    engine, *s.chunkedPrefill, *s.mixedBatches) };
    }
    if (s.averageLength > s.context)
        return Error { "serving.average_length",
            fmt::format("must be at most the context ({}), got {}", s.context, s.averageLength) };
    if (s.workload)
        if (auto e = checkWorkload(*s.workload, s.context))
            return e;
    if (s.slo)
        if (auto e = checkSlo(*s.slo))
            return e;
    if (s.speculative)
        if (auto e = checkSpeculative(*s.speculative, arch))
            return e;

    const RlConfig& rl = plan.rl;
    // DPO trains on a fixed preference set: it has no rollout engine to place.
    if (rl.placement == RlPlacement::Disjoint && rl.algorithm != RlAlgorithm::Dpo
        && rl.rolloutGpus < 1)
        return Error { "rl.rollout_gpus",
            fmt::format("must be at least 1 with disjoint placement, got {}", rl.rolloutGpus) };
    if (rl.responseLenMean && *rl.responseLenMean > rl.responseLen)
        return Error { "rl.response_len_mean",
            fmt::format("must be at most response_len ({}), got {}", rl.responseLen,
                *rl.responseLenMean) };
    // off_policy_pipeline generates step k + 1 whole while step k trains: a bound of a whole
    // step or more. A fractional bound is verl fully_async's staleness_threshold, not it.
    if (rl.staleness && *rl.staleness < 1 && rl.offPolicyPipeline)
        return Error { "rl.staleness",
            fmt::format("{} contradicts rl.off_policy_pipeline true, which generates step k + 1 "
                        "while step k trains (staleness 1): set rl.staleness 1 or more, or turn "
                        "off_policy_pipeline off",
                *rl.staleness == 0 ? std::string("0 (on-policy)") : fmt::format("{:g}", *rl.staleness)) };
    // A carried-over sequence finishes under a newer policy than the one that began it (verl:
    // partial_rollout only takes effect when staleness_threshold > 0).
    if (rl.partialRollouts && rlStaleness(rl) <= 0)
        return Error { "rl.partial_rollouts",
            "needs rl.staleness above 0 (or rl.off_policy_pipeline): a sequence carried into "
            "the next step is finished by a newer policy" };
    // Each update trains at least one prompt's group (verl: ppo_mini_batch_size counts prompts).
    if (rl.updatesPerSync > rl.prompts)
        return Error { "rl.updates_per_sync",
            fmt::format("must be 1..prompts_per_step ({}): each update trains at least one "
                        "prompt's group, got {}",
                rl.prompts, rl.updatesPerSync) };
    // The old-policy snapshot is absent, or kept in 8 or 16 bits (design.md, seed 000).
    const double snapshot = rl.oldPolicyBytesPerParam;
    if (snapshot != 0 && snapshot != 1 && snapshot != 2)
        return Error { "rl.old_policy_bytes_per_param",
            fmt::format("must be 0, 1 or 2, got {}", snapshot) };
    return std::nullopt;
}

} // namespace

std::optional<Error> validatePlan(const Plan& plan)
{
    if (auto e = checkRanges(plan))
        return e;
    return checkCrossFields(plan);
}

std::vector<std::string> planWarnings(const Plan& plan)
{
    std::vector<std::string> warnings;
    const TrainingConfig& t = plan.training;
    const ModelArch& arch = plan.model.arch;
    if (arch.kvHeads > 0 && t.tp > 1 && arch.kvHeads % t.tp != 0)
        warnings.push_back(fmt::format("training.tp = {} does not divide the model's {} KV heads: "
                                       "KV heads are replicated across the tensor-parallel group",
            t.tp, arch.kvHeads));
    if (arch.kvHeads > 0 && plan.serving.tp > 1 && arch.kvHeads % plan.serving.tp != 0)
        warnings.push_back(fmt::format("serving.tp = {} does not divide the model's {} KV heads: "
                                       "KV heads are replicated across the tensor-parallel group",
            plan.serving.tp, arch.kvHeads));
    if (t.ep > 1 && !arch.moe)
        warnings.push_back(fmt::format("training.ep = {} has no effect on a dense model", t.ep));
    if (t.sequenceParallel && t.tp == 1)
        warnings.push_back("training.sequence_parallel has no effect with tp = 1");
    if (t.offloadParams && t.zeroStage < 3)
        warnings.push_back(fmt::format("training.offload_params normally needs zero_stage 3 "
                                       "(ZeRO-Infinity), got {}",
            t.zeroStage));
    if (!t.stageLayers.empty())
        ; // the plan states its own layout (training.stage_layers)
    else if (arch.layers > 0 && t.virtualStages > 1 && arch.layers % (t.pp * t.virtualStages) != 0)
        warnings.push_back(fmt::format("the model's {} layers do not split evenly into pp x "
                                       "virtual_stages = {} chunks",
            arch.layers, t.pp * t.virtualStages));
    else if (arch.layers > 0 && arch.layers % t.pp != 0)
        warnings.push_back(fmt::format("the model's {} layers do not split evenly into pp = {} "
                                       "stages: each takes {} and the last the rest; the largest "
                                       "stage sets the memory and the pace (training.stage_layers "
                                       "gives another split)",
            arch.layers, t.pp, (arch.layers + t.pp - 1) / t.pp));
    if (arch.maxPositions > 0 && t.seqLen > arch.maxPositions)
        warnings.push_back(fmt::format(
            "training.seq_len = {} exceeds the model's {} positions", t.seqLen, arch.maxPositions));
    if (arch.maxPositions > 0 && plan.serving.context > arch.maxPositions)
        warnings.push_back(fmt::format("serving.context = {} exceeds the model's {} positions",
            plan.serving.context, arch.maxPositions));
    // Keys of another engine than the plan's are read but not used: say so.
    const ServingConfig& sc = plan.serving;
    if (sc.memFractionStatic && sc.engine != ServingEngine::Sglang)
        warnings.push_back(fmt::format("serving.mem_fraction_static is SGLang's; serving.engine "
                                       "= \"{}\" does not use it",
            servingEngineId(sc.engine)));
    if (sc.freeGpuMemoryFraction && sc.engine != ServingEngine::Trtllm)
        warnings.push_back(fmt::format("serving.free_gpu_memory_fraction is TensorRT-LLM's; "
                                       "serving.engine = \"{}\" does not use it",
            servingEngineId(sc.engine)));
    if (!sc.engineVersion.empty() && sc.engineProfile.version.empty())
        warnings.push_back(fmt::format("serving.engine_version = \"{}\": the {} engine has no "
                                       "modelled versions; it is not used",
            sc.engineVersion, servingEngineId(sc.engine)));
    const ServingParallel sp = servingParallel(sc);
    if (sp.gpus() > plan.cluster.gpus && !sc.disaggregation)
        warnings.push_back(sp.gpus() == plan.serving.tp
                ? fmt::format("serving.tp = {} is more than cluster.gpus = {}: one "
                              "engine does not fit on the cluster",
                      plan.serving.tp, plan.cluster.gpus)
                : fmt::format("one engine of serving.ep = {} GPUs (dp_attention) is more than "
                              "cluster.gpus = {}: it does not fit on the cluster",
                      sp.ep, plan.cluster.gpus));
    if (sc.dpAttention && sp.dp == 1)
        warnings.push_back(fmt::format("serving.dp_attention with ep = tp = {} leaves one "
                                       "attention rank: it changes nothing",
            sp.tp));
    if (arch.moe && arch.moe->experts > 0) {
        const auto unevenExperts = [&](int ep, const std::string& path) {
            if (ep > 1 && arch.moe->experts % ep != 0)
                warnings.push_back(fmt::format("{} = {} does not divide the model's {} routed "
                                               "experts: the fullest GPU holds {} (engines add "
                                               "redundant experts to even the load, as "
                                               "DeepSeek's 32)",
                    path, ep, arch.moe->experts, (arch.moe->experts + ep - 1) / ep));
        };
        unevenExperts(sc.ep, "serving.ep");
        if (sc.disaggregation) {
            unevenExperts(sc.disaggregation->prefill.ep, "serving.disaggregation.prefill.ep");
            unevenExperts(sc.disaggregation->decode.ep, "serving.disaggregation.decode.ep");
        }
    }
    if (sc.disaggregation) {
        const long long pools = static_cast<long long>(sc.disaggregation->prefill.gpus())
            + sc.disaggregation->decode.gpus();
        if (pools != plan.cluster.gpus)
            warnings.push_back(fmt::format("serving.disaggregation's pools use {} GPUs and "
                                           "cluster.gpus = {}: the deployment's figures are for "
                                           "the pools' {}",
                pools, plan.cluster.gpus, pools));
        if (sc.ep != 1 || sc.dpAttention)
            warnings.push_back("serving.ep and serving.dp_attention are the aggregated engine's; "
                               "with serving.disaggregation each pool's tp, ep and dp apply");
    }
    if (t.tp > nvlinkDomainGpus(plan.cluster, plan.gpu.gpu))
        warnings.push_back(fmt::format("training.tp = {} spans NVLink domains of {} GPUs: "
                                       "tensor-parallel all-reduces cross the inter-node network",
            t.tp, nvlinkDomainGpus(plan.cluster, plan.gpu.gpu)));
    if (plan.cluster.gpus > plan.cluster.gpusPerNode
        && plan.cluster.gpus % plan.cluster.gpusPerNode != 0)
        warnings.push_back(fmt::format("cluster.gpus = {} is not a whole number of {}-GPU nodes",
            plan.cluster.gpus, plan.cluster.gpusPerNode));
    const RlConfig& rl = plan.rl;
    if (rl.placement == RlPlacement::Disjoint) {
        const long long pools = static_cast<long long>(rl.trainerGpus) + rl.referenceGpus
            + rl.rolloutGpus + rl.criticGpus + rl.rewardGpus;
        if (pools > plan.cluster.gpus)
            warnings.push_back(fmt::format(
                "the RL pools use {} GPUs, more than the cluster's {}", pools, plan.cluster.gpus));
    }
    if (rl.updateEpochs > 1 && !rl.oldLogProbForward && rl.algorithm != RlAlgorithm::Dpo)
        warnings.push_back(fmt::format(
            "rl.update_epochs = {} with rl.old_log_prob_forward off: every pass after the first "
            "needs the policy's log-probs from before the update (TRL computes them once "
            "num_iterations > 1), so the forward is likely run",
            rl.updateEpochs));
    return warnings;
}

} // namespace envelope
