// From plan to launch (issue 15): a plan as the configuration of the engine that runs it, and an
// engine's configuration back as a plan.
//
//   EngineConfig c = exportPlan(plan, estimate(plan), Engine::DeepSpeed,
//   "meta-llama/Llama-2-7b-hf"); c.text      the file (DeepSpeed JSON, torchtitan TOML, Megatron
//   arguments, HF
//               TrainingArguments JSON, a `vllm serve` command)
//   c.launch    the command line that starts the job with it
//   c.warnings  what the engine cannot express from the plan: never a silent drop
//
// Option names follow the engines' own sources; docs/export.md cites them and maps every plan
// field to its engine key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "plan/plan.h"
#include "plan/presets.h"
#include "result/result.h"

namespace envelope {

enum class Engine { DeepSpeed, TorchTitan, Megatron, Hf, Vllm, Sglang, Trtllm, Verl, OpenRlhf, Trl };
inline constexpr Engine kAllEngines[] = { Engine::DeepSpeed, Engine::TorchTitan, Engine::Megatron,
    Engine::Hf, Engine::Vllm, Engine::Sglang, Engine::Trtllm, Engine::Verl, Engine::OpenRlhf,
    Engine::Trl };

// "deepspeed" "torchtitan" "megatron" "hf" "vllm" "sglang" "trtllm" "verl" "openrlhf" "trl"
std::string_view engineId(Engine engine);
bool parseEngine(std::string_view id, Engine& out);
inline constexpr const char* kEngineIdList
    = "deepspeed, torchtitan, megatron, hf, vllm, sglang, trtllm, verl, openrlhf or trl";
// The serving engines' exports (a launch command); verl's, OpenRLHF's and TRL's are the RL job
// (engineRl), the others' training jobs.
bool engineServes(Engine engine);
bool engineRl(Engine engine);
// The export that runs the plan's serving section as sized: the engine whose accounting sized
// its KV pool (vLLM for generic). And its RL job: OpenRLHF keeps disjoint pools as they are,
// verl's main_ppo colocates (the GUI's export dialog opens on these from the tab in view).
Engine servingExportEngine(const Plan& plan);
Engine rlExportEngine(const Plan& plan);
// The engines whose files can be read back into a plan.
bool engineImports(Engine engine);
inline constexpr const char* kImportEngineIdList = "deepspeed, torchtitan or megatron";

// The engine release an export is written for and checked against (tests/data/engines): the
// current release Envelope pins ("v0.19.5", "v0.2.2", "core_v0.19.0", verl "v0.7.0", OpenRLHF
// "v0.11.0", TRL "v1.9.0"), or "" where no release is pinned (hf, vllm). `--engine-version`
// accepts exactly this one.
std::string_view engineVersion(Engine engine);

struct EngineConfig {
    Engine engine = Engine::DeepSpeed;
    std::string text; // the configuration file itself
    std::string launch; // the command that starts the job with `fileName`
    std::string fileName; // suggested name: ds_config.json, job.toml, megatron.args, ...
    // Training engines: what torchrun runs on each node (after its own options), and a file of
    // arguments piped through xargs into it first (Megatron's), or "". Empty for serving, and
    // for RL jobs a launcher cannot start (verl's and OpenRLHF's Ray, TRL's vLLM server beside
    // its trainer).
    std::string program;
    std::string programArgsFile;
    std::vector<std::string> warnings; // plan choices the engine cannot express
    std::vector<std::string> figures; // Envelope's figures; also comments in `text` when the
                                      // format has comments (TOML, arguments, shell)
    // Files the job needs beside `text` (the hf export's PEFT adapter_config.json and
    // bitsandbytes quantization config when the plan has LoRA / QLoRA).
    struct Companion {
        std::string fileName;
        std::string text;
    };
    std::vector<Companion> companions;
};

// `modelRepo` is the Hugging Face repository of the model ("" when unknown: the export then
// names the preset id and warns). See modelRepository().
EngineConfig exportPlan(
    const Plan& plan, const Estimate& estimate, Engine engine, const std::string& modelRepo);

// The model's Hugging Face repository as its preset's source names it ("meta-llama/Llama-2-7b-hf
// config.json; ..." -> "meta-llama/Llama-2-7b-hf"), or "" for a model without one.
std::string modelRepository(const Plan& plan, const PresetLibrary& presets);

struct ImportOptions {
    // The plan's "model" value as JSON text: a preset id ("\"llama-3-8b\"") or a model object
    // ({"hf_config": "/abs/config.json"} or a full architecture).
    std::string modelJson;
    std::optional<int> gpus; // the cluster size; otherwise derived from the file or the default
    std::string sourceName; // the file's name, for the plan's name and messages
};

struct ImportedPlan {
    std::string planJson; // an envelope.plan document: read it with readPlan() to validate
    std::vector<std::string> warnings; // settings the file has that the plan cannot hold
};

// Reads a DeepSpeed config JSON, a torchtitan job TOML or Megatron-LM arguments (one per line or
// a command line) into a plan. Fields the file does not set keep presets/default-plan.json's
// values. Errors name the engine's key ("zero_optimization.stage: must be 0..3, got 5").
Expected<ImportedPlan> importEngineConfig(Engine engine, std::string_view text,
    const PresetLibrary& presets, const ImportOptions& options);

} // namespace envelope
