// Engine ids, the figures every export carries, and the dispatch to each engine's exporter.
#include "export/export.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/checked.h"
#include "base/text.h"
#include "base/units.h"
#include "export/common.h"

namespace envelope {

using namespace exportdetail;

std::string_view engineId(Engine engine)
{
    switch (engine) {
    case Engine::DeepSpeed:
        return "deepspeed";
    case Engine::TorchTitan:
        return "torchtitan";
    case Engine::Megatron:
        return "megatron";
    case Engine::Hf:
        return "hf";
    case Engine::Vllm:
        return "vllm";
    case Engine::Sglang:
        return "sglang";
    case Engine::Trtllm:
        return "trtllm";
    case Engine::Verl:
        return "verl";
    case Engine::OpenRlhf:
        return "openrlhf";
    case Engine::Trl:
        return "trl";
    }
    return "deepspeed";
}

bool engineServes(Engine engine)
{
    return engine == Engine::Vllm || engine == Engine::Sglang || engine == Engine::Trtllm;
}

bool engineRl(Engine engine)
{
    return engine == Engine::Verl || engine == Engine::OpenRlhf || engine == Engine::Trl;
}

Engine servingExportEngine(const Plan& plan)
{
    switch (plan.serving.engine) {
    case ServingEngine::Sglang:
        return Engine::Sglang;
    case ServingEngine::Trtllm:
        return Engine::Trtllm;
    case ServingEngine::Vllm:
    case ServingEngine::Generic:
        break;
    }
    return Engine::Vllm;
}

Engine rlExportEngine(const Plan& plan)
{
    return plan.rl.placement == RlPlacement::Colocated ? Engine::Verl : Engine::OpenRlhf;
}

bool parseEngine(std::string_view id, Engine& out)
{
    for (Engine e : kAllEngines)
        if (engineId(e) == id) {
            out = e;
            return true;
        }
    return false;
}

std::string_view engineVersion(Engine engine)
{
    switch (engine) {
    case Engine::DeepSpeed:
        return kDeepSpeedVersion;
    case Engine::TorchTitan:
        return kTorchTitanVersion;
    case Engine::Megatron:
        return kMegatronVersion;
    case Engine::Verl:
        return kVerlVersion;
    case Engine::OpenRlhf:
        return kOpenRlhfVersion;
    case Engine::Trl:
        return kTrlVersion;
    case Engine::Hf:
    case Engine::Vllm:
    case Engine::Sglang:
    case Engine::Trtllm:
        break;
    }
    return {};
}

bool engineImports(Engine engine)
{
    return engine == Engine::DeepSpeed || engine == Engine::TorchTitan
        || engine == Engine::Megatron;
}

namespace {

EngineConfig dispatch(
    const Plan& plan, const Estimate& estimate, Engine engine, const std::string& modelRepo)
{
    switch (engine) {
    case Engine::DeepSpeed:
        return exportDeepSpeed(plan, estimate);
    case Engine::TorchTitan:
        return exportTorchTitan(plan, estimate);
    case Engine::Megatron:
        return exportMegatron(plan, estimate);
    case Engine::Hf:
        return exportHf(plan, estimate, modelRepo);
    case Engine::Vllm:
        return exportVllm(plan, estimate, modelRepo);
    case Engine::Sglang:
        return exportSglang(plan, estimate, modelRepo);
    case Engine::Trtllm:
        return exportTrtllm(plan, estimate, modelRepo);
    case Engine::Verl:
        return exportVerl(plan, estimate, modelRepo);
    case Engine::OpenRlhf:
        return exportOpenRlhf(plan, estimate, modelRepo);
    case Engine::Trl:
        return exportTrl(plan, estimate, modelRepo);
    }
    return exportDeepSpeed(plan, estimate);
}

} // namespace

EngineConfig exportPlan(
    const Plan& plan, const Estimate& estimate, Engine engine, const std::string& modelRepo)
{
    EngineConfig config = dispatch(plan, estimate, engine, modelRepo);
    // An export is not a verdict: a plan that does not fit still exports, but says so first.
    if (engineServes(engine) && !estimate.serving.fits)
        config.warnings.insert(config.warnings.begin(),
            fmt::format("the plan does not fit: {} sequences of {} tokens requested, {} fit",
                plan.serving.concurrency, plan.serving.context,
                formatCount(std::floor(estimate.serving.maxSequences))));
    else if (engineRl(engine)) {
        if (!estimate.rl.fits)
            config.warnings.insert(config.warnings.begin(),
                fmt::format("the plan does not fit: {}", rlMiss(estimate)));
    } else if (!engineServes(engine) && !estimate.training.fits)
        config.warnings.insert(config.warnings.begin(),
            fmt::format("the plan does not fit: {} per GPU of {}",
                formatBytes(estimate.training.perGpu.total(), ByteUnits::GB),
                formatBytes(estimate.training.gpuMemoryBytes, ByteUnits::GB)));
    return config;
}

std::string modelRepository(const Plan& plan, const PresetLibrary& presets)
{
    if (plan.model.presetId.empty())
        return {};
    const ModelPreset* preset = presets.findModel(plan.model.presetId);
    if (!preset)
        return {};
    // The presets' sources start with the repository whose config.json they follow.
    const std::string& source = preset->source;
    const std::size_t end = source.find_first_of(" ;,");
    const std::string first = source.substr(0, end);
    const bool repo = first.find('/') != std::string::npos && first.find("//") == std::string::npos
        && first.front() != '/';
    return repo ? first : std::string();
}

namespace exportdetail {

Precision precisionOf(const RecipeChoice& choice)
{
    Precision p;
    const std::string& id = choice.presetId;
    const Recipe& r = choice.recipe;
    if (id == "bf16-mixed-16" || id == "bf16-adam8bit") {
        p.eightBitOptimizer = id == "bf16-adam8bit";
    } else if (id == "bf16-mixed-18") {
        p.fp32Gradients = true;
    } else if (id == "fp16-mixed") {
        p.kind = Precision::Kind::Fp16;
    } else if (id == "fp32") {
        p.kind = Precision::Kind::Fp32;
        p.masterWeights = false;
    } else if (id == "bf16-pure" || id == "bf16-pure-adam8bit") {
        p.masterWeights = false;
        p.eightBitOptimizer = id == "bf16-pure-adam8bit";
    } else if (id == "fp8-deepseek" || id == "fp8-te") {
        p.kind = Precision::Kind::Fp8;
    } else {
        // A custom recipe (or a user preset): read it by its bytes per parameter.
        p.exact = false;
        if (r.compute == ComputeDtype::Fp8)
            p.kind = Precision::Kind::Fp8;
        else if (r.weightBytes >= 4)
            p.kind = Precision::Kind::Fp32;
        p.fp32Gradients = r.gradientBytes >= 4 && r.weightBytes < 4;
        p.masterWeights = r.masterBytes > 0;
        p.eightBitOptimizer = r.momentBytes > 0 && r.momentBytes <= 1;
    }
    return p;
}

std::string recipeIdFor(Precision::Kind kind, bool fp32Gradients)
{
    switch (kind) {
    case Precision::Kind::Bf16:
        return fp32Gradients ? "bf16-mixed-18" : "bf16-mixed-16";
    case Precision::Kind::Fp16:
        return "fp16-mixed";
    case Precision::Kind::Fp32:
        return "fp32";
    case Precision::Kind::Fp8:
        return "fp8-te"; // FP8 compute, bf16 weights, fp32 master and Adam: what the engines run
    }
    return "bf16-mixed-16";
}

int dataParallel(const Plan& plan)
{
    // tp x pp x cp divides cluster.gpus in a valid plan; 64-bit so an unvalidated one cannot wrap.
    const long long modelParallel = std::max(
        1LL, wideProduct(plan.training.tp, plan.training.pp) * std::max(1, plan.training.cp));
    return static_cast<int>(std::max(1LL, plan.cluster.gpus / modelParallel));
}

std::vector<ExportPool> exportPools(const Plan& plan)
{
    std::vector<ExportPool> pools;
    if (!plan.serving.disaggregation)
        return pools;
    const int perNode = std::max(plan.cluster.gpusPerNode, 1);
    for (const bool prefill : { true, false }) {
        const ServingPool& pool
            = prefill ? plan.serving.disaggregation->prefill : plan.serving.disaggregation->decode;
        ExportPool p;
        p.prefill = prefill;
        p.role = prefill ? "prefill" : "decode";
        p.workers = pool.workers;
        p.engine = servingPoolConfig(plan.serving, pool);
        p.parallel = servingParallel(p.engine);
        p.nodes = (p.parallel.gpus() + perNode - 1) / perNode;
        pools.push_back(std::move(p));
    }
    return pools;
}

std::string poolComments(const std::vector<ExportPool>& pools)
{
    std::string text = "#\n";
    for (const ExportPool& p : pools)
        text += fmt::format("# {} pool: {} worker{} of {} GPU{} (tp {}, dp {}, ep {}), {} node{} "
                            "each\n",
            p.role, p.workers, p.workers == 1 ? "" : "s", p.parallel.gpus(),
            p.parallel.gpus() == 1 ? "" : "s", p.parallel.tp, p.parallel.dp, p.parallel.ep,
            p.nodes, p.nodes == 1 ? "" : "s");
    return text;
}

void addWarning(std::vector<std::string>& warnings, std::string warning)
{
    if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end())
        warnings.push_back(std::move(warning));
}

bool weightsFromCheckpoint(const ServingConfig& sc, const char* engineName, std::vector<std::string>& warnings)
{
    const WeightFormat weights = sc.weightFormat;
    if (sc.attentionWeightFormat || sc.expertWeightFormat) {
        // A mixed checkpoint: an in-flight --quantization would quantize every linear alike.
        warnings.push_back(fmt::format("serving weights \"{}\": {} reads a mixed checkpoint's "
                                       "formats from its quantization config (gpt-oss's "
                                       "quant_method mxfp4, compressed-tensors' ignore list): "
                                       "serve such a checkpoint; no --quantization is written",
            servingWeightFormatText(sc), engineName));
        return true;
    }
    if (weights == WeightFormat::Auto || weights == WeightFormat::Fp8 || weights == WeightFormat::Bf16)
        return false;
    warnings.push_back(fmt::format("serving.weight_format = \"{}\": {} reads it from the "
                                   "checkpoint's quantization config: serve such a checkpoint; no "
                                   "--quantization is written",
        weightFormatId(weights), engineName));
    return true;
}

int servingEngines(const Plan& plan)
{
    return std::max(1, plan.cluster.gpus / servingParallel(plan.serving).gpus());
}

long long globalBatch(const Plan& plan)
{
    return static_cast<long long>(plan.training.microBatch) * plan.training.gradAccum
        * dataParallel(plan);
}

long long trainSteps(const Plan& plan)
{
    const double tokensPerStep = static_cast<double>(globalBatch(plan)) * plan.training.seqLen;
    return tokensPerStep > 0
        ? static_cast<long long>(std::ceil(plan.training.trainTokens / tokensPerStep))
        : 0;
}

std::vector<std::string> trainingFigures(const Plan& plan, const Estimate& e)
{
    const TrainingCompute& c = e.compute;
    return {
        fmt::format("plan: {}", plan.name),
        fmt::format("model: {} ({} params), {} x {}", plan.model.arch.name, formatCount(e.params),
            plan.cluster.gpus, plan.gpu.gpu.name),
        fmt::format("Envelope: training memory per GPU {} of {} ({})",
            formatBytes(e.training.perGpu.total(), ByteUnits::GB),
            formatBytes(e.training.gpuMemoryBytes, ByteUnits::GB),
            e.training.fits ? "fits" : "does not fit"),
        fmt::format("Envelope: step {:.3g} s, {} tokens/s, {} to train {} tokens, {} GPU-hours, "
                    "USD {}",
            c.stepTimeS, formatCount(c.tokensPerS), formatDuration(c.trainTimeS),
            formatCount(plan.training.trainTokens), formatCount(c.gpuHours), formatCount(c.cost)),
    };
}

std::vector<std::string> rlFigures(const Plan& plan, const Estimate& e)
{
    const RlEstimate& rl = e.rl;
    std::vector<std::string> lines {
        fmt::format("plan: {}", plan.name),
        fmt::format("model: {} ({} params), {} on {} x {}", plan.model.arch.name,
            formatCount(e.params), rlAlgorithmId(plan.rl.algorithm), rl.totalGpus,
            plan.gpu.gpu.name),
        fmt::format("Envelope: {} prompts x {} completions of {} + {} tokens per step; {}",
            plan.rl.prompts, plan.rl.groupSize, plan.rl.promptLen, plan.rl.responseLen,
            rl.fits ? std::string("every role fits") : "does not fit: " + rlMiss(e)),
    };
    // A plan that does not fit shows no real-looking step time.
    if (rl.fits)
        lines.push_back(fmt::format("Envelope: step {} (rollout {}, training {}), {:.3g} steps "
                                    "per hour, bottleneck {}",
            formatDuration(rl.stepS), formatDuration(rl.rolloutS), formatDuration(rl.trainS),
            rl.stepsPerHour, rl.bottleneck));
    return lines;
}

std::string rlMiss(const Estimate& e)
{
    if (!e.rl.problem.empty())
        return e.rl.problem;
    for (const RoleEstimate& role : e.rl.perRole)
        if (!role.fits)
            return role.problem.empty()
                ? fmt::format("the {} needs {} per GPU of {}", role.role,
                      formatBytes(role.perGpu.total(), ByteUnits::GB),
                      formatBytes(e.training.gpuMemoryBytes, ByteUnits::GB))
                : role.problem;
    if (e.rl.colocatedPeakBytes > 0)
        return fmt::format("the colocated peak needs {} per GPU of {}",
            formatBytes(e.rl.colocatedPeakBytes, ByteUnits::GB),
            formatBytes(e.training.gpuMemoryBytes, ByteUnits::GB));
    return "a role is over its GPUs' memory";
}

std::vector<std::string> servingFigures(const Plan& plan, const Estimate& e)
{
    const ServingEstimate& s = e.serving;
    std::vector<std::string> lines {
        fmt::format("plan: {}", plan.name),
        fmt::format("model: {} ({} params), tensor parallel {} on {}", plan.model.arch.name,
            formatCount(e.params), plan.serving.tp, plan.gpu.gpu.name),
        fmt::format("Envelope: weights {} per GPU, KV budget {} per GPU, {} KV bytes per token",
            formatBytes(s.weightsBytesPerGpu, ByteUnits::GB),
            formatBytes(s.kvBudgetBytes, ByteUnits::GB), formatCount(s.kvBytesPerToken)),
    };
    if (s.speculative)
        lines.push_back(fmt::format("Envelope: speculative decoding ({}, {} draft tokens at "
                                    "acceptance {:.2f}): {:.2f} tokens per step, draft weights {} "
                                    "per GPU",
            s.speculative->kind, s.speculative->tokens, s.speculative->acceptance,
            s.speculative->meanTokensPerStep,
            formatBytes(s.speculative->draftWeightsBytesPerGpu, ByteUnits::GB)));
    if (s.load && plan.serving.workload && s.load->requests > 0) {
        // Under a workload (issue 27): what the simulation says of it, not a static batch.
        const ServingLoad& l = *s.load;
        lines.push_back(fmt::format("Envelope: under the plan's workload ({:.3g} requests/s served "
                                    "of {:.3g} offered, capacity {:.3g}): TTFT p90 {}, TPOT p90 {}{}",
            l.requestRateRps, l.offeredRateRps, l.capacityRps,
            l.saturated ? std::string("unbounded") : formatDuration(l.ttftP90S),
            formatDuration(l.tpotP90S),
            l.meetsSlo ? (*l.meetsSlo ? "; meets the SLO" : "; misses the SLO: " + l.sloMiss) : ""));
        return lines;
    }
    lines.push_back(fmt::format("Envelope: {} sequences of {} tokens fit; {} requested ({}); "
                                "decode {} tokens/s",
        formatCount(std::floor(s.maxSequences)), plan.serving.context, plan.serving.concurrency,
        s.fits ? "fits" : "does not fit", formatCount(s.decodeTokensPerS)));
    return lines;
}

std::string commentBlock(std::string_view header, const std::vector<std::string>& lines)
{
    // A comment is one line: a newline in a plan name would otherwise start a line of its own,
    // an argument Megatron reads or a TOML key (issue 25, item 7). Control characters are escaped.
    std::string out = fmt::format("# {}\n", printable(header));
    for (const std::string& line : lines)
        out += "# " + printable(line) + "\n";
    return out;
}

std::string joinCommand(const std::vector<std::string>& words, std::string_view prefix)
{
    std::string s;
    for (std::size_t i = 0; i < words.size(); ++i)
        s += std::string(prefix) + (i == 0 ? "" : "  ") + words[i]
            + (i + 1 < words.size() ? " \\\n" : "\n");
    return s;
}

namespace {

// The model as an engine loads it: its Hugging Face repository, else the preset id (or "MODEL")
// with a warning to replace it.
std::string engineModel(
    const Plan& plan, const std::string& modelRepo, std::vector<std::string>& warnings)
{
    std::string model = modelRepo.empty() ? plan.model.presetId : modelRepo;
    if (model.empty())
        model = "MODEL";
    if (modelRepo.empty())
        warnings.push_back(fmt::format("model: no Hugging Face repository known for {}; "
                                       "replace \"{}\" with the model's path",
            plan.model.arch.name, model));
    return model;
}

} // namespace

EngineConfig startServingExport(const Plan& plan, const Estimate& estimate, Engine engine,
    std::string fileName, ServingEngine accounting, std::string_view engineName,
    const std::string& modelRepo, std::string& model)
{
    EngineConfig out;
    out.engine = engine;
    out.fileName = std::move(fileName);
    out.figures = servingFigures(plan, estimate);
    model = engineModel(plan, modelRepo, out.warnings);
    warnServingEngine(plan, accounting, engineName, out.warnings);
    return out;
}

EngineConfig startRlExport(const Plan& plan, const Estimate& estimate, Engine engine,
    std::string fileName, const RlEngineTerms& terms, const std::string& modelRepo,
    std::string& model)
{
    EngineConfig out;
    out.engine = engine;
    out.fileName = std::move(fileName);
    out.figures = rlFigures(plan, estimate);
    model = engineModel(plan, modelRepo, out.warnings);
    warnCommon(plan, out.warnings, terms.engineName);
    const TrainingConfig& t = plan.training;
    if (t.recompute == Recompute::Selective || t.recompute == Recompute::EveryK)
        out.warnings.push_back(fmt::format("training.recompute = \"{}\": {} checkpoints every "
                                           "layer ({})",
            recomputeId(t.recompute), terms.trainer, terms.checkpointKey));
    if (plan.rl.responseLenMean)
        out.warnings.push_back(fmt::format(
            "rl.response_len_mean = {}: the mean of the responses is the data's and the policy's, "
            "not a setting; {} is the cap {}",
            numberText(*plan.rl.responseLenMean), terms.responseCapKey, plan.rl.responseLen));
    if (!plan.rl.oldLogProbForward && !terms.oldLogProbs.empty())
        out.warnings.push_back(fmt::format("rl.old_log_prob_forward = false: {} recomputes the old "
                                           "log-probs on the actor every step",
            terms.oldLogProbs));
    return out;
}

std::string speculativeDraftName(const ServingSpeculative& spec)
{
    if (spec.kind == SpeculativeKind::Eagle)
        return "EAGLE_HEAD";
    return spec.draftModel && !spec.draftModel->presetId.empty() ? spec.draftModel->presetId
                                                                  : std::string("DRAFT_MODEL");
}

std::string speculativeDraftWarning(const ServingSpeculative& spec, const std::string& draft)
{
    return spec.kind == SpeculativeKind::Eagle
        ? std::string("serving.speculative: replace EAGLE_HEAD with the EAGLE head trained for "
                      "this model (a Hugging Face repository or path)")
        : fmt::format("serving.speculative.draft_model: replace \"{}\" with the draft model's "
                      "Hugging Face repository or path",
            draft);
}

void warnServingEngine(const Plan& plan, ServingEngine exported, std::string_view engineName,
    std::vector<std::string>& warnings)
{
    if (plan.serving.engine == exported)
        return;
    warnings.push_back(fmt::format(
        "serving.engine = \"{}\": Envelope sized the KV pool as {} accounts memory, not as {} "
        "does; set serving.engine = \"{}\" to see {}'s own pool",
        servingEngineId(plan.serving.engine), servingEngineId(plan.serving.engine), engineName,
        servingEngineId(exported), engineName));
}

std::string numberText(double v)
{
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
        return fmt::format("{}", static_cast<long long>(v));
    return fmt::format("{}", v);
}

EngineConfig startTrainingExport(const Plan& plan, const Estimate& estimate, Engine engine,
    std::string fileName, std::string_view engineName)
{
    EngineConfig out;
    out.engine = engine;
    out.fileName = std::move(fileName);
    out.figures = trainingFigures(plan, estimate);
    warnCommon(plan, out.warnings, engineName);
    // Only Megatron builds the MTP modules (--mtp-num-layers); elsewhere the job trains without
    // them and is lighter on its last stage than the estimate.
    if (plan.training.mtpLayers > 0 && engine != Engine::Megatron)
        out.warnings.push_back(fmt::format(
            "training.mtp_layers = {}: {} has no multi-token-prediction modules; the job trains "
            "the model without them (Envelope's figures include them: export --to megatron "
            "writes --mtp-num-layers)",
            plan.training.mtpLayers, engineName));
    return out;
}

std::string yamlString(const std::string& text)
{
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string c10dRendezvous(std::string_view idVariable)
{
    return fmt::format("--rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" "
                       "--rdzv-id \"${}\"",
        idVariable);
}

std::vector<long long> chunkLayers(const std::vector<int>& stages, int virtualStages, bool vShape)
{
    const std::size_t v = static_cast<std::size_t>(std::max(1, virtualStages));
    const std::size_t pp = stages.size();
    std::vector<long long> chunks(pp * v);
    for (std::size_t j = 0; j < chunks.size(); ++j) {
        const long long rank = chunkRank(
            static_cast<long long>(j), static_cast<long long>(pp), vShape && v == 2);
        const long long rankLayers = stages[static_cast<std::size_t>(rank)];
        const long long part = static_cast<long long>(j / pp);
        const long long parts = static_cast<long long>(v);
        chunks[j] = rankLayers / parts + (part < rankLayers % parts ? 1 : 0);
    }
    return chunks;
}

long long chunkRank(long long j, long long pp, bool vShape)
{
    return vShape && j >= pp ? 2 * pp - 1 - j : j % std::max(1LL, pp);
}

NodeLayout wholeNodes(int gpus, int gpusPerNode)
{
    const int perNode = std::max(1, gpusPerNode);
    if (gpus <= perNode)
        return { 1, std::max(1, gpus) };
    return { (gpus + perNode - 1) / perNode, perNode };
}

NodeLayout nodeLayout(const Plan& plan)
{
    return wholeNodes(plan.cluster.gpus, plan.cluster.gpusPerNode);
}

void warnCommon(const Plan& plan, std::vector<std::string>& warnings, std::string_view engine)
{
    const TrainingConfig& t = plan.training;
    const Precision p = precisionOf(t.recipe);
    // Only the hf export carries adapters (PEFT's adapter_config.json); the others train the
    // whole model from their config.
    if (t.lora.enabled && engine != "the Hugging Face Trainer" && engine != "verl"
        && engine != "OpenRLHF" && engine != "TRL")
        warnings.push_back(fmt::format("training.lora: {} cannot express LoRA adapters from its "
                                       "config; export --to hf for a PEFT adapter config",
            engine));
    // The engines' FP8 training (torchtitan's Float8 converter, Megatron's --fp8-format through
    // Transformer Engine) keeps bf16 weights and an fp32 master copy and Adam: fp8-te. DeepSeek's
    // FP8 weights with a compressed optimizer is not a switch of theirs.
    if (t.recipe.presetId == "fp8-deepseek" && (engine == "torchtitan" || engine == "Megatron-LM"))
        warnings.push_back(fmt::format("training.recipe = fp8-deepseek: {} trains FP8 with bf16 "
                                       "weights and fp32 master weights and Adam (the fp8-te "
                                       "recipe); DeepSeek's FP8 weights and compressed optimizer "
                                       "cannot be expressed",
            engine));
    if (!p.exact)
        warnings.push_back(fmt::format("training.recipe: a custom recipe; {} gets the closest "
                                       "precision setting (read from its bytes per parameter)",
            engine));
    const bool bnbForHf = engine == "the Hugging Face Trainer"
        && optimizerSetsMomentWidth(t.optimizer); // the Trainer's optim names them
    if (t.optimizer != OptimizerKind::AdamW && t.optimizer != OptimizerKind::Adam && !bnbForHf)
        warnings.push_back(fmt::format("training.optimizer = \"{}\": choose it in the training "
                                       "script; {} is configured for Adam(W) here",
            optimizerId(t.optimizer), engine));
    if (t.optimizerInBackward)
        warnings.push_back(fmt::format("training.optimizer_in_backward: {} has no switch to step "
                                       "the optimizer inside the backward (torchtune's "
                                       "optimizer_in_bwd); it keeps every gradient until the step",
            engine));
    if (t.activationOffload && engine != "Megatron-LM")
        warnings.push_back(fmt::format("training.activation_offload: {} has no activation offload "
                                       "switch in this export (torchtune "
                                       "enable_activation_offloading, Megatron --cpu-offloading)",
            engine));
    if (!t.flashAttention)
        warnings.push_back(fmt::format("training.flash_attention = false: the attention kernel is "
                                       "chosen by the model code, not by the {} config",
            engine));
}

} // namespace exportdetail
} // namespace envelope
