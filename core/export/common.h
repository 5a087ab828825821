// Helpers shared by the exporters and importers (internal to core/export).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "export/export.h"
#include "plan/plan.h"
#include "result/result.h"

namespace envelope::exportdetail {

// The engine release each export is written for (named in its header comment) and checked
// against: the upstream tag whose sources the exporters follow.
inline constexpr const char* kTorchTitanVersion = "v0.2.2";
inline constexpr const char* kMegatronVersion = "core_v0.19.0";
inline constexpr const char* kDeepSpeedVersion = "v0.19.5";
inline constexpr const char* kVerlVersion = "v0.7.0";
inline constexpr const char* kOpenRlhfVersion = "v0.11.0";
inline constexpr const char* kTrlVersion = "v1.9.0";

// How a plan's precision recipe reads in the engines' vocabulary.
struct Precision {
    enum class Kind { Bf16, Fp16, Fp32, Fp8 };
    Kind kind = Kind::Bf16;
    bool fp32Gradients = false; // bf16-mixed-18: gradients reduced and accumulated in fp32
    bool masterWeights = true; // fp32 master copy kept by the optimizer
    bool eightBitOptimizer = false;
    bool exact = true; // false: a custom recipe read by its byte counts
};
Precision precisionOf(const RecipeChoice& recipe);

// The plan's preset recipe id for an engine's precision setting (the inverse of precisionOf).
std::string recipeIdFor(Precision::Kind kind, bool fp32Gradients);

int dataParallel(const Plan& plan); // gpus / (tp x pp x cp)
// serving.weight_format of a quantized checkpoint (fp8-block, int8, nvfp4, mxfp4, int4), or a
// mixed one (serving.attention_weight_format, expert_weight_format): an engine that quantizes
// only to FP8 in flight (vLLM, SGLang) reads it from the checkpoint's config.
// True, with the warning added, when the command writes no --quantization for it.
bool weightsFromCheckpoint(const ServingConfig& sc, const char* engineName, std::vector<std::string>& warnings);
// One pool of a disaggregated serving export (serving.disaggregation): its role, its workers,
// one worker's engine and layout, and the nodes of cluster.gpus_per_node one worker spans.
struct ExportPool {
    bool prefill = true;
    const char* role = "prefill"; // "prefill" or "decode"
    int workers = 1;
    ServingConfig engine;
    ServingParallel parallel;
    int nodes = 1;
};
// The prefill pool, then the decode pool.
std::vector<ExportPool> exportPools(const Plan& plan);
// "#\n# prefill pool: 5 workers of 1 GPU (tp 1, dp 1, ep 1), 1 node each\n# decode pool: ..."
std::string poolComments(const std::vector<ExportPool>& pools);

// `warning` unless `warnings` has it: both pools of a disaggregated plan share the engine's
// settings, and each thing is said once.
void addWarning(std::vector<std::string>& warnings, std::string warning);
int servingEngines(const Plan& plan); // the engines of serving.tp GPUs the cluster holds (>= 1)
long long globalBatch(const Plan& plan); // micro x accum x dp (sequences per step)
long long trainSteps(const Plan& plan); // ceil(train_tokens / (global batch x seq_len))

// One line each: plan, model, cluster, memory per GPU and fit, step time, tokens/s, time and cost.
std::vector<std::string> trainingFigures(const Plan& plan, const Estimate& estimate);
std::vector<std::string> servingFigures(const Plan& plan, const Estimate& estimate);
// Why an RL plan does not fit, naming the role: its layout problem, or "the trainer needs 92.1 GB
// per GPU of 85.5 GB".
std::string rlMiss(const Estimate& estimate);
// The RL job's lines: plan, model and GPUs, the step's prompts and fit, and (when it fits) the
// step time with its phases.
std::vector<std::string> rlFigures(const Plan& plan, const Estimate& estimate);

// `lines` as "# line\n" comments.
std::string commentBlock(std::string_view header, const std::vector<std::string>& lines);

// A shell command of `words` (the program, then one flag and its value per word) with a
// backslash continuation after each but the last; every line starts with `prefix` ("# " for a
// commented-out command).
std::string joinCommand(const std::vector<std::string>& words, std::string_view prefix);

// How an RL engine names what every RL export warns about: who checkpoints every layer and the
// setting that does it, the setting that caps a response, who recomputes the old log-probs.
struct RlEngineTerms {
    std::string_view engineName;     // "verl", "OpenRLHF" (warnCommon's name)
    std::string_view trainer;        // "verl's FSDP actor"
    std::string_view checkpointKey;  // "enable_gradient_checkpointing"
    std::string_view responseCapKey; // "data.max_response_length"
    std::string_view oldLogProbs;    // "verl's main_ppo (compute_log_prob)"; "" when the
                                     // engine can skip that forward (TRL)
};

// An RL export's opening (verl, OpenRLHF, TRL): engine, file name, the RL figures, the model in
// `model` (as startServingExport names it), warnCommon's warnings and what none of them
// expresses: recompute finer than every layer, a response-length mean, and skipping the old
// log-prob forward (where terms.oldLogProbs names who recomputes it).
EngineConfig startRlExport(const Plan& plan, const Estimate& estimate, Engine engine,
    std::string fileName, const RlEngineTerms& terms, const std::string& modelRepo,
    std::string& model);

// A serving export's opening (vLLM, SGLang, TensorRT-LLM): engine, file name, the figures
// block, the model to serve in `model` (`modelRepo`, else the preset id with a warning, "MODEL"
// when there is neither) and warnServingEngine's warning.
EngineConfig startServingExport(const Plan& plan, const Estimate& estimate, Engine engine,
    std::string fileName, ServingEngine accounting, std::string_view engineName,
    const std::string& modelRepo, std::string& model);

// The draft a speculative plan of kind eagle or draft names: "EAGLE_HEAD" for an EAGLE head,
// the draft model's preset id, else "DRAFT_MODEL"; a placeholder the user replaces.
std::string speculativeDraftName(const ServingSpeculative& spec);
// The warning that says which placeholder to replace (vLLM's and SGLang's command lines).
std::string speculativeDraftWarning(const ServingSpeculative& spec, const std::string& draft);

// The serving exporters' shared checks (vLLM, SGLang, TensorRT-LLM): the plan's engine
// accounting against the exported engine's, so the file says when Envelope sized the KV pool
// another way.
void warnServingEngine(const Plan& plan, ServingEngine exported, std::string_view engineName,
    std::vector<std::string>& warnings);

// Shortest round-trippable text of a number (0.9, 8, 2e+12 -> "2000000000000").
std::string numberText(double v);

// A word as a shell reads it back: single-quoted unless it is plain.
std::string shellWord(const std::string& word);

// A YAML double-quoted scalar: JSON's string syntax is YAML's (control characters escaped,
// bytes that are not UTF-8 replaced).
std::string yamlString(const std::string& text);

// torchrun's c10d rendezvous at the first node ($MASTER_ADDR:$MASTER_PORT), under the job id the
// shell expansion `${idVariable}` gives ("JOB_ID", "{JOB_ID:-envelope}").
std::string c10dRendezvous(std::string_view idVariable);

// Warnings shared by the training exporters.
void warnCommon(const Plan& plan, std::vector<std::string>& warnings, std::string_view engine);

// A training export's opening: engine, file name, the figures block and the shared warnings
// (`engineName` is how the warnings name the engine).
EngineConfig startTrainingExport(const Plan& plan, const Estimate& estimate, Engine engine,
    std::string fileName, std::string_view engineName);

// The launcher's node count and processes per node: ceil(gpus / gpus_per_node) nodes (at least
// one), min(gpus, gpus_per_node) per node.
struct NodeLayout {
    int nodes = 1;
    int perNode = 1;
    int gpus() const { return nodes * perNode; }
};
NodeLayout nodeLayout(const Plan& plan);
// The same for a pool of `gpus` (an RL role): one node of `gpus`, or whole nodes of
// gpus_per_node (the last one filled up when `gpus` is not whole nodes).
NodeLayout wholeNodes(int gpus, int gpusPerNode);

// The transformer layers of each of the pp x v model chunks, in model order, for a split of
// `stages` (pipelineStageLayers) over pp ranks of `virtualStages` chunks: chunk j sits on rank
// j mod pp (interleaved 1F1B's round robin; Megatron's layout, torchtitan's loop-style stage
// ids), and rank k's layers are cut into v consecutive parts, the first ones a layer larger.
// vShape (torchtitan's ZBVZeroBubble and DualPipeV, two chunks a rank): chunk j sits on rank j
// for j < pp and on rank 2 pp - 1 - j after (torchtitan stage_ids_this_rank, style "v").
std::vector<long long> chunkLayers(
    const std::vector<int>& stages, int virtualStages, bool vShape = false);
// The rank of pp that holds model chunk j: j mod pp, or in a V (two chunks a rank) j, then
// 2 pp - 1 - j. The exports place chunks and the importers read them back with it.
long long chunkRank(long long j, long long pp, bool vShape);

// The Hugging Face module names (PEFT target_modules) of `training.lora.targets`: the Llama
// family's q_proj ... down_proj, with a warning when the model's FFN has no gate matrix.
std::vector<std::string> peftTargetModules(const Plan& plan, std::vector<std::string>& warnings);

EngineConfig exportDeepSpeed(const Plan& plan, const Estimate& estimate);
EngineConfig exportTorchTitan(const Plan& plan, const Estimate& estimate);
EngineConfig exportMegatron(const Plan& plan, const Estimate& estimate);
EngineConfig exportHf(const Plan& plan, const Estimate& estimate, const std::string& modelRepo);
EngineConfig exportVerl(const Plan& plan, const Estimate& estimate, const std::string& modelRepo);
EngineConfig exportOpenRlhf(const Plan& plan, const Estimate& estimate, const std::string& modelRepo);
EngineConfig exportTrl(const Plan& plan, const Estimate& estimate, const std::string& modelRepo);
EngineConfig exportVllm(const Plan& plan, const Estimate& estimate, const std::string& modelRepo);
EngineConfig exportSglang(const Plan& plan, const Estimate& estimate, const std::string& modelRepo);
EngineConfig exportTrtllm(const Plan& plan, const Estimate& estimate, const std::string& modelRepo);

} // namespace envelope::exportdetail
