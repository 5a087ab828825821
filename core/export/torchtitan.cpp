// torchtitan: a job TOML.
//
// Sections and fields as torchtitan's JobConfig declares them (torchtitan/config/job_config.py:
// [job], [model], [training], [parallelism], [activation_checkpoint], [compile], [float8]).
// torchtitan shards with FSDP2: data_parallel_shard_degree is ZeRO-3 (reshard after forward) or
// ZeRO-2 (fsdp_reshard_after_forward = "never"); data_parallel_replicate_degree is plain DP.
// With pipeline parallelism local_batch_size is split into microbatches of
// pipeline_parallel_microbatch_size, which is Envelope's micro_batch x grad_accum.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/checked.h"
#include "export/common.h"

namespace envelope::exportdetail {
namespace {

// A TOML basic string. Control characters are escaped: a newline in a plan name would end the
// string and break the file (issue 25, item 7).
std::string quoted(std::string_view s)
{
    std::string out = "\"";
    for (char c : s) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\')
            out += std::string("\\") + c;
        else if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\r')
            out += "\\r";
        else if (u < 0x20 || u == 0x7F)
            out += fmt::format("\\u{:04X}", u);
        else
            out += c;
    }
    return out + "\"";
}

// torchtitan's model registry names a few of Envelope's presets (torchtitan/models/*/__init__.py).
struct TitanModel {
    const char* presetId;
    const char* name;
    const char* flavor;
};
constexpr TitanModel kTitanModels[] = {
    { "llama-3-8b", "llama3", "8B" },
    { "llama-3-70b", "llama3", "70B" },
    { "llama-3.1-405b", "llama3", "405B" },
    { "deepseek-v3", "deepseek_v3", "671B" },
};

} // namespace

EngineConfig exportTorchTitan(const Plan& plan, const Estimate& estimate)
{
    const TrainingConfig& t = plan.training;
    EngineConfig out
        = startTrainingExport(plan, estimate, Engine::TorchTitan, "job.toml", "torchtitan");
    const int dp = dataParallel(plan);
    const Precision p = precisionOf(t.recipe);

    // torchtitan v0.2.x reads this TOML; its main branch replaced TOML job files with Python
    // config objects (config system refactor, 2026-02), so the version is part of the header.
    std::string s = commentBlock(
        fmt::format("Envelope export for torchtitan {} (job TOML: torchtitan v0.2.x; torchtitan "
                    "main reads Python configs instead)",
            kTorchTitanVersion),
        out.figures);
    s += fmt::format("\n[job]\ndescription = {}\n", quoted(plan.name));

    s += "\n[model]\n";
    const TitanModel* titan = nullptr;
    for (const TitanModel& m : kTitanModels)
        if (plan.model.form == ModelChoice::Form::Preset && plan.model.presetId == m.presetId)
            titan = &m;
    if (titan) {
        s += fmt::format("name = \"{}\"\nflavor = \"{}\"\n", titan->name, titan->flavor);
    } else {
        s += fmt::format("# {} has no torchtitan flavour: register its shape (layers {}, hidden "
                         "{}, heads {}, kv heads {}) as a flavour and name it here\n",
            plan.model.arch.name, plan.model.arch.layers, plan.model.arch.hidden,
            plan.model.arch.heads, plan.model.arch.kvHeads);
        out.warnings.push_back(fmt::format("model: torchtitan has no flavour for {}; [model] "
                                           "name/flavor are left for you to fill in",
            plan.model.arch.name));
    }
    // Since v0.2.0 the Float8 converter is registered as "quantize.linear.float8" with its own
    // [quantize.linear.float8] section; "float8" raises KeyError (issue 25, item 1).
    if (p.kind == Precision::Kind::Fp8)
        s += "converters = [\"quantize.linear.float8\"]\n";

    const bool pipelined = t.pp > 1;
    s += "\n[training]\n";
    s += fmt::format("local_batch_size = {}\n",
        pipelined ? wideProduct(t.microBatch, t.gradAccum) : t.microBatch);
    s += fmt::format("global_batch_size = {}\n", globalBatch(plan));
    s += fmt::format("seq_len = {}\n", t.seqLen);
    s += fmt::format("steps = {}\n", trainSteps(plan));
    s += fmt::format("mixed_precision_param = \"{}\"\n",
        p.kind == Precision::Kind::Fp32 ? "float32" : "bfloat16");
    s += fmt::format("mixed_precision_reduce = \"float32\"\n");
    if (t.offloadOptimizer || t.offloadParams)
        s += "enable_cpu_offload = true\n";
    if (t.offloadOptimizer != t.offloadParams)
        out.warnings.push_back("training.offload_optimizer/offload_params: torchtitan's "
                               "enable_cpu_offload moves parameters, gradients and optimizer "
                               "state together; exported as both offloaded");
    if (p.kind == Precision::Kind::Fp16)
        out.warnings.push_back("training.recipe = fp16-mixed: torchtitan trains in bf16 or fp32 "
                               "only; exported as bfloat16");
    if (!p.fp32Gradients && p.kind == Precision::Kind::Bf16 && t.zeroStage >= 2)
        out.warnings.push_back("training.recipe: FSDP2 reduces gradients in float32 "
                               "(mixed_precision_reduce); Envelope counts 2-byte gradients");
    if (!p.masterWeights && p.kind != Precision::Kind::Fp32)
        out.warnings.push_back("training.recipe: torchtitan keeps fp32 parameters under FSDP2 "
                               "mixed precision; a pure-bf16 recipe cannot be expressed");
    if (p.eightBitOptimizer)
        out.warnings.push_back("training.recipe: torchtitan's [optimizer] has no 8-bit Adam");

    s += "\n[parallelism]\n";
    const bool sharded = t.zeroStage >= 1 && dp > 1;
    s += fmt::format("data_parallel_replicate_degree = {}\n", sharded ? 1 : dp);
    s += fmt::format("data_parallel_shard_degree = {}\n", sharded ? dp : 1);
    if (sharded)
        s += fmt::format(
            "fsdp_reshard_after_forward = \"{}\"\n", t.zeroStage == 3 ? "always" : "never");
    if (t.zeroStage == 1)
        out.warnings.push_back("training.zero_stage = 1: FSDP2 shards gradients too; exported as "
                               "ZeRO-2 (shard, fsdp_reshard_after_forward = \"never\")");
    s += fmt::format("tensor_parallel_degree = {}\n", t.tp);
    s += fmt::format("pipeline_parallel_degree = {}\n", t.pp);
    if (pipelined) {
        // The schedule the estimate's bubble assumes: zero bubble is ZBVZeroBubble with two
        // chunks a rank (placed in a V), InterleavedZeroBubble with more; torchtitan has no
        // single-chunk zero-bubble schedule and no DualPipe with two parameter copies.
        const int v = std::max(1, t.virtualStages);
        const bool zeroBubble = t.ppSchedule == PpSchedule::ZeroBubble && v >= 2;
        const char* schedule = zeroBubble ? (v == 2 ? "ZBVZeroBubble" : "InterleavedZeroBubble")
            : v > 1                       ? "Interleaved1F1B"
                                          : "1F1B";
        if (t.ppSchedule == PpSchedule::ZeroBubble && v < 2)
            out.warnings.push_back(
                "training.pp_schedule = \"zb1p\" with one chunk a rank: torchtitan's zero-bubble "
                "schedules need two or more (ZBVZeroBubble, InterleavedZeroBubble); written as "
                "1F1B, whose bubble is larger than the estimate's");
        if (t.ppSchedule == PpSchedule::DualPipe)
            out.warnings.push_back(fmt::format(
                "training.pp_schedule = \"dualpipe\": torchtitan's DualPipeV runs one parameter "
                "copy where DualPipe keeps two; written as {}, not DualPipe",
                schedule));
        s += fmt::format("pipeline_parallel_schedule = \"{}\"\n", schedule);
        s += fmt::format("pipeline_parallel_microbatch_size = {}\n", t.microBatch);
        // The split the estimate used (pipelineStageLayers: the plan's training.stage_layers,
        // else ceil(L / pp) each and the rest last), written as the modules of each model part:
        // torchtitan's own default weighs the embedding and the head as a layer each (80 layers
        // on PP 4 run as 20, 21, 20, 19), so a job left to it runs another split than the one
        // sized. pp x v parts in model order (parallelism.module_fqns_per_model_part;
        // pipeline_llm uses it instead of its own split), part j on rank j mod pp, or in a V
        // under ZBVZeroBubble (chunkRank), rank k's layers cut into v consecutive parts.
        const std::vector<long long> chunks = chunkLayers(
            pipelineStageLayers(t, plan.model.arch.layers), t.virtualStages, zeroBubble && v == 2);
        std::string list;
        long long layer = 0;
        for (std::size_t j = 0; j < chunks.size(); ++j) {
            std::vector<std::string> names;
            if (j == 0)
                names.push_back("\"tok_embeddings\"");
            for (long long k = 0; k < chunks[j]; ++k)
                names.push_back(fmt::format("\"layers.{}\"", layer++));
            if (j + 1 == chunks.size()) {
                names.push_back("\"norm\"");
                names.push_back("\"output\"");
            }
            list += fmt::format("    [{}],\n", fmt::join(names, ", "));
        }
        // One model part a line, in model order.
        s += fmt::format("module_fqns_per_model_part = [\n{}]\n", list);
    }
    s += fmt::format("context_parallel_degree = {}\n", t.cp);
    s += fmt::format("expert_parallel_degree = {}\n", t.ep);
    if (t.tp > 1 && !t.sequenceParallel)
        out.warnings.push_back("training.sequence_parallel = false: torchtitan's tensor "
                               "parallelism always shards the norms' activations along the "
                               "sequence (sequence parallel)");

    s += "\n[activation_checkpoint]\n";
    switch (t.recompute) {
    case Recompute::None:
        s += "mode = \"none\"\n";
        break;
    case Recompute::Full:
        s += "mode = \"full\"\n";
        break;
    case Recompute::Selective:
        s += "mode = \"selective\"\nselective_ac_option = \"op\"\n";
        break;
    case Recompute::EveryK:
        s += fmt::format("mode = \"selective\"\nselective_ac_option = \"{}\"\n", t.recomputeEvery);
        break;
    }
    if (t.recompute == Recompute::Selective)
        out.warnings.push_back("training.recompute = \"selective\": torchtitan's per-op selective "
                               "checkpointing saves matmul outputs and recomputes the rest, close "
                               "to but not the same as Korthikanti's attention-core recompute");

    s += "\n[compile]\n# Envelope's activation profile assumes fused kernels\nenable = true\n";
    if (p.kind == Precision::Kind::Fp8) {
        // Float8Linear's settings (v0.2.2 job_config.py); the FSDP all-gather in float8 and
        // precomputed scales are what torchtitan recommends for tensorwise scaling under FSDP.
        const char* onOff = sharded ? "true" : "false";
        s += fmt::format("\n[quantize.linear.float8]\nenable_fsdp_float8_all_gather = {}\n"
                         "precompute_float8_dynamic_scale_for_fsdp = {}\n",
            onOff, onOff);
    }
    out.text = s;

    out.program = "-m torchtitan.train --job.config_file " + out.fileName;
    const auto [nodes, perNode] = nodeLayout(plan);
    out.launch = fmt::format("torchrun --nnodes {} --nproc_per_node {} -m torchtitan.train "
                             "--job.config_file {}",
        nodes, perNode, out.fileName);
    return out;
}

} // namespace envelope::exportdetail
