// A serving engine's own memory accounting, per engine and version (plan keys `serving.engine`
// and `serving.engine_version`; presets/engines.json, issue 27). The estimate sizes the KV pool
// the way the named engine does at startup: docs/formulas-serving.md, "Engines' accounting".
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace envelope {

// SGLang's default mem_fraction_static by device class (server_args.py, the rule newer versions
// follow): on a device of less than `belowGib` GiB, reserve base + per_parallel x (tp x pp) GiB
// for activations and CUDA graphs, and the fraction is (memory - reserved) / memory.
struct EngineReserveRule {
    double belowGib = 0;
    double baseGib = 0;
    double perParallelGib = 0;
    bool operator==(const EngineReserveRule&) const = default;
};

struct EngineProfile {
    std::string id;      // "vllm", "sglang", "trtllm", "generic"
    std::string name;    // "SGLang"
    std::string version; // the modelled version this profile describes ("0.4")
    std::string changes; // a version row: what changed against the engine's base
    std::string source;
    // Memory the process holds before the weights load (CUDA context, distributed init): SGLang
    // sizes from the free memory it sees after it ("Load weight begin. avail mem").
    double startupBytes = 0;
    // Memory outside torch's allocator during vLLM's profile (CUDA context growth, NCCL and custom
    // all-reduce buffers), at TP 1 and at TP >= 2.
    double nonTorchBytes = 0;
    double nonTorchTpBytes = 0;
    // SGLang's default mem_fraction_static: by TP size ({min tp, fraction}, the largest min tp
    // not above the plan's tp applies) or by device class (`reservedByMemory`, first rule whose
    // belowGib the device is under); `reservedSpeculativeBytes` more with speculative decoding.
    std::vector<std::pair<int, double>> memFractionByTp;
    std::vector<EngineReserveRule> reservedByMemory;
    double reservedSpeculativeBytes = 0;
    // TensorRT-LLM's KvCacheConfig.free_gpu_memory_fraction default: the KV pool's share of the
    // memory free after the weights and the profiling forward.
    double freeMemoryFraction = 0;
    // The scheduler's defaults (docs/formulas-serving.md, "The engine's step"): whether a step
    // carries decodes and prompt tokens together ("always": vLLM V1, TensorRT-LLM's in-flight
    // batching; "when-chunked": vLLM V0, which mixes only under chunked prefill; "never":
    // SGLang, whose --enable-mixed-chunk is off by default), whether a prompt may split over
    // steps (on, or off but on above `chunkedPrefillAboveContext` tokens of max_model_len),
    // and whether --num-scheduler-steps exists (vLLM V0's multi-step scheduling).
    enum class Mixing { Always, WhenChunked, Never };
    Mixing mixedBatches = Mixing::Always;
    bool chunkedPrefill = true;
    int chunkedPrefillAboveContext = 0;
    bool multiStepScheduling = false;
    // An overlap scheduler (SGLang >= 0.4, TensorRT-LLM's PyTorch backend): the next step is
    // formed while one runs, so a request that arrives during a step joins the one after next.
    bool overlapScheduler = false;
    std::string schedulerSource;
    // Linear-attention layers' recurrent state in the cache: false = the model's stated dtype
    // (the config's mamba_ssm_dtype, else the weights'), true = float32 whatever the model says
    // (SGLang's --mamba-ssm-dtype default). `stateSource` names where each was read.
    bool float32RecurrentState = false;
    std::string stateSource;
    // Host time per layer of a step that runs outside CUDA graphs (a prompt step launched
    // eagerly from Python: SGLang's extend, vLLM V0's prefill, TensorRT-LLM's context phase),
    // seconds: the GPU idles between launches when its work per layer is shorter, so such a step
    // takes at least layers x this. 0: the engine replays graphs for prompts too (vLLM V1's
    // compiled piecewise graphs), or the engine is not modelled. `hostSource`: where it is read.
    double eagerHostSPerLayer = 0;
    std::string hostSource;
    // A request's time outside the engine's steps, seconds: the API server, chat template and
    // tokenizer, the hand-off to the scheduler, and its first token's way back (detokenizer,
    // stream). Added to its TTFT and end-to-end latency once, where it enters. 0: not measured
    // for the engine. `requestSource`: where it is read.
    double requestOverheadS = 0;
    std::string requestSource;
    std::string defaultVersion; // the version row used when the plan names none
    std::vector<EngineProfile> versions;

    bool operator==(const EngineProfile&) const = default;
};

} // namespace envelope
