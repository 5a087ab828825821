// An engine's configuration as a plan, then its estimate: "will my existing config fit on the
// new cluster?". Prints which format it read, the plan (envelope.plan JSON) and the estimate.
#include "cmd_import.h"

#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "export/export.h"
#include "io/files.h"
#include "plan/planio.h"
#include "planload.h"
#include "report/textreport.h"

namespace envelope::cli {
namespace {

const char* formatName(Engine engine)
{
    switch (engine) {
    case Engine::DeepSpeed:
        return "a DeepSpeed config (JSON)";
    case Engine::TorchTitan:
        return "a torchtitan job (TOML)";
    case Engine::Megatron:
        return "Megatron-LM arguments";
    case Engine::Hf:
        return "Hugging Face TrainingArguments";
    case Engine::Vllm:
        return "vllm serve flags";
    case Engine::Sglang:
        return "sglang.launch_server flags";
    case Engine::Trtllm:
        return "trtllm-serve flags";
    case Engine::Verl:
        return "verl main_ppo overrides";
    case Engine::OpenRlhf:
        return "OpenRLHF train_ppo_ray arguments";
    case Engine::Trl:
        return "TRL GRPOConfig YAML";
    }
    return "";
}

} // namespace

void registerImport(CLI::App& app, ImportCommand& c)
{
    c.command = app.add_subcommand("import",
        "Read a DeepSpeed JSON, torchtitan TOML or Megatron argument file as a plan and "
        "estimate it");
    c.command->add_option("ENGINE", c.engine, "deepspeed, torchtitan or megatron")
        ->required()
        ->check(CLI::IsMember({ "deepspeed", "torchtitan", "megatron" }));
    c.command->add_option("FILE", c.file, "the engine's configuration file")->required();
    c.command->add_option("--model", c.model, "model preset id or a Hugging Face config.json")
        ->required();
    c.command->add_option("--gpus", c.gpus, "GPUs of the cluster to estimate on");
    c.command->add_option("--format", c.format, "text, markdown, json (plan and result) or plan")
        ->check(CLI::IsMember({ "text", "markdown", "json", "plan" }));
    c.command->add_option("--units", c.units, "byte units of text output: gb or gib");
}

int runImport(const ImportCommand& c)
{
    Engine engine = Engine::DeepSpeed;
    if (!parseEngine(c.engine, engine) || !engineImports(engine)) {
        std::cerr << "envelope-cli: ENGINE: must be " << kImportEngineIdList << ", got \""
                  << c.engine << "\"\n";
        return kExitFailure;
    }
    ByteUnits units = ByteUnits::GB;
    if (!parseByteUnits(c.units, units)) {
        std::cerr << "envelope-cli: --units: must be gb or gib, got \"" << c.units << "\"\n";
        return kExitFailure;
    }
    if (c.gpus && *c.gpus < 1) {
        std::cerr << "envelope-cli: --gpus: must be >= 1, got " << *c.gpus << "\n";
        return kExitBadPlan;
    }
    Expected<PresetLibrary> presets = io::loadPresets();
    if (!presets) {
        std::cerr << "envelope-cli: " << presets.error().toString() << "\n";
        return kExitFailure;
    }
    Expected<std::string> text = io::readTextInput(c.file);
    if (!text) {
        std::cerr << "envelope-cli: " << text.error().toString() << "\n";
        return kExitFailure;
    }
    ImportOptions options;
    options.gpus = c.gpus;
    options.sourceName = std::filesystem::path(c.file).filename().string();
    // A path to a config.json (or any existing file) is a Hugging Face config; else a preset id.
    const bool isFile = c.model.ends_with(".json") || std::filesystem::is_regular_file(c.model);
    options.modelJson = isFile
        ? nlohmann::json { { "hf_config", std::filesystem::absolute(c.model).string() } }.dump()
        : nlohmann::json(c.model).dump();

    Expected<ImportedPlan> imported = importEngineConfig(engine, *text, *presets, options);
    if (!imported) {
        std::cerr << c.file << " (" << formatName(engine) << "): " << imported.error().toString()
                  << "\n";
        return kExitBadPlan;
    }
    ReadOptions readOptions;
    readOptions.readFile = io::readTextFile;
    Expected<Plan> plan = readPlan(imported->planJson, *presets, readOptions);
    if (!plan) {
        std::cerr << c.file << " (" << formatName(engine)
                  << ", as a plan): " << plan.error().toString() << "\n";
        return kExitBadPlan;
    }
    for (const std::string& w : imported->warnings)
        std::cerr << "warning: " << w << "\n";
    if (c.format == "plan") {
        std::cout << writePlan(*plan);
        return kExitOk;
    }
    const Estimate e = estimatePlan(*plan, c.format == "json");
    if (c.format == "json") {
        nlohmann::ordered_json out;
        out["format"] = "envelope.import";
        out["version"] = 1;
        out["source"] = { { "file", c.file }, { "engine", engineId(engine) },
            { "format", formatName(engine) } };
        out["plan"] = nlohmann::ordered_json::parse(writePlan(*plan));
        out["result"] = nlohmann::ordered_json::parse(writeResult(*plan, e));
        out["warnings"] = imported->warnings;
        std::cout << out.dump(2) << "\n";
        return kExitOk;
    }
    const bool markdown = c.format == "markdown";
    // DeepSpeed, torchtitan and Megatron configs describe a training job: its report is the
    // training sections (the plan's serving and RL keys are the default plan's).
    const report::ReportSections trainingJob { true, true, false, false };
    std::cout << (markdown ? "## " : "") << "Read " << c.file << " as " << formatName(engine)
              << "\n\n"
              << (markdown ? "```json\n" : "") << writePlan(*plan) << (markdown ? "```\n" : "")
              << "\n"
              << report::formatReport(*plan, e, units,
                     markdown ? report::ReportFormat::Markdown : report::ReportFormat::Text,
                     trainingJob);
    return kExitOk;
}

} // namespace envelope::cli
