// The plan as the engine's configuration. The file goes to stdout (or -o FILE, written with its
// companions as one set by io::saveFiles); the launch line, Envelope's figures when the format has
// no comments, and every setting the engine cannot express go to stderr, so `> ds_config.json`
// stays a valid file.
#include "cmd_export.h"

#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "export/export.h"
#include "export/launcher.h"
#include "io/savefile.h"
#include "planload.h"

namespace envelope::cli {

void registerExport(CLI::App& app, ExportCommand& c)
{
    c.command = app.add_subcommand("export",
        "Write the plan as an engine's configuration (DeepSpeed JSON, torchtitan TOML, "
        "Megatron arguments, HF TrainingArguments, vllm serve, sglang.launch_server or "
        "trtllm-serve flags, or the RL job as verl main_ppo or fully_async overrides, OpenRLHF "
        "train_ppo_ray arguments or a TRL GRPOTrainer config)");
    c.command->add_option("PLAN", c.planPath, "plan JSON file")->required();
    std::vector<std::string> engines;
    for (Engine e : kAllEngines)
        engines.emplace_back(engineId(e));
    c.command->add_option("--to", c.engine, kEngineIdList)->required()->check(CLI::IsMember(engines));
    c.command->add_option("-o,--output", c.output, "write the configuration to FILE (- or none: standard output)");
    c.command->add_option("--engine-version", c.engineVersion,
        "the engine release to write for (default and only one: the pinned current release, "
        "deepspeed v0.19.5, torchtitan v0.2.2, megatron core_v0.19.0, verl v0.7.0, openrlhf v0.11.0, "
        "trl v1.9.0)");
    c.command->add_option("--report", c.report,
        "the report on stderr (launch line, figures, warnings): text lines or one JSON document "
        "(format envelope.export-report, version 1)")
        ->check(CLI::IsMember({ "text", "json" }));
    std::vector<std::string> launchers;
    for (Launcher l : kAllLaunchers)
        launchers.emplace_back(launcherId(l));
    c.command->add_option("--launcher", c.launcher,
        "wrap the export in a launchable job beside it: torchrun (launch.sh), slurm (job.sbatch) "
        "or k8s (job.yaml: a PyTorchJob, or a Deployment and Service for serving); -o then names "
        "the folder (DIR/) the set is written to")
        ->check(CLI::IsMember(launchers));
    addSetOption(c.command, c.sets);
}

int runExport(const ExportCommand& c)
{
    int status = kExitOk;
    std::optional<PlanFile> loaded = readPlanFile(c.planPath, c.sets, status);
    if (!loaded)
        return status;
    Engine engine = Engine::DeepSpeed;
    if (!parseEngine(c.engine, engine)) {
        std::cerr << "envelope-cli: --to: must be " << kEngineIdList << ", got \"" << c.engine
                  << "\"\n";
        return kExitFailure;
    }
    if (!c.engineVersion.empty() && c.engineVersion != engineVersion(engine)) {
        std::cerr << "envelope-cli: --engine-version: " << c.engine << " exports are written for "
                  << (engineVersion(engine).empty() ? std::string("no pinned release")
                                                    : std::string(engineVersion(engine)))
                  << ", the release they are checked against; got \"" << c.engineVersion << "\"\n";
        return kExitBadPlan;
    }
    // "-o -" is standard output, as no -o is.
    std::string output = c.output == "-" ? std::string() : c.output;
    const Estimate e = estimatePlan(loaded->plan, false);
    EngineConfig config
        = exportPlan(loaded->plan, e, engine, modelRepository(loaded->plan, loaded->presets));
    Launcher launcher = Launcher::Torchrun;
    if (!c.launcher.empty()) {
        if (!parseLauncher(c.launcher, launcher)) {
            std::cerr << "envelope-cli: --launcher: must be " << kLauncherIdList << ", got \""
                      << c.launcher << "\"\n";
            return kExitBadPlan;
        }
        Expected<EngineConfig> launched = withLauncher(std::move(config), loaded->plan, launcher);
        if (!launched) {
            std::cerr << "envelope-cli: " << launched.error().toString() << "\n";
            return kExitBadPlan;
        }
        config = *launched;
        // The job runs the export under its own name: -o names a folder for the set, or a file
        // of that name.
        std::error_code ec;
        if (!output.empty()
            && (output.back() == '/' || std::filesystem::is_directory(output, ec))) {
            output = (std::filesystem::path(output) / config.fileName).string();
        } else if (!output.empty()
            && std::filesystem::path(output).filename().string() != config.fileName) {
            std::cerr << "envelope-cli: --launcher: the job file runs " << config.fileName
                      << ": write the export as -o DIR/ (a folder) or -o DIR/" << config.fileName
                      << ", not \"" << printable(output, 200) << "\"\n";
            return kExitBadPlan;
        }
    }
    // Companion files (PEFT adapter config, bitsandbytes config) go beside FILE, or to stderr.
    // FILE and its companions are one set: all are written or none is.
    std::vector<io::OutputFile> files { { output, config.text } };
    for (const EngineConfig::Companion& companion : config.companions) {
        if (output.empty())
            continue;
        files.push_back(
            { (std::filesystem::path(output).parent_path() / companion.fileName).string(),
                companion.text });
    }
    const bool jsonReport = c.report == "json";
    std::vector<std::string> written;
    if (output.empty()) {
        std::cout << config.text;
        if (!jsonReport)
            for (const EngineConfig::Companion& companion : config.companions)
                std::cerr << "# " << companion.fileName << ":\n" << companion.text;
    } else if (std::optional<Error> error = io::saveFiles(files)) {
        std::cerr << "envelope-cli: " << error->toString() << "\n";
        return kExitFailure;
    } else {
        for (std::size_t i = 0; i < files.size(); ++i)
            written.push_back(files[i].path);
        if (!jsonReport)
            for (std::size_t i = 1; i < files.size(); ++i)
                std::cerr << "wrote " << files[i].path << "\n";
    }
    if (jsonReport) {
        // One document a script can read: what was written, how to launch it, what it says.
        nlohmann::ordered_json report;
        report["format"] = "envelope.export-report";
        report["version"] = 1;
        report["engine"] = engineId(engine);
        report["engine_version"] = std::string(engineVersion(engine));
        report["output"] = output.empty() ? std::string("-") : output;
        report["files"] = written;
        nlohmann::ordered_json companions = nlohmann::ordered_json::array();
        if (output.empty())
            for (const EngineConfig::Companion& companion : config.companions)
                companions.push_back({ { "file_name", companion.fileName }, { "text", companion.text } });
        report["companions"] = companions;
        report["launch"] = config.launch;
        report["figures"] = config.figures;
        report["warnings"] = config.warnings;
        std::cerr << report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    const bool commented = config.text.find("# Envelope export") != std::string::npos;
    if (!commented)
        for (const std::string& f : config.figures)
            std::cerr << "# " << f << "\n";
    std::cerr << "launch: " << config.launch << "\n";
    for (const std::string& w : config.warnings)
        std::cerr << "warning: " << w << "\n";
    return kExitOk;
}

} // namespace envelope::cli
