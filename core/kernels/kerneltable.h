// Measured kernel times of one GPU: the data behind the op timing (presets/kernels/<gpu>.json,
// converted from ai-dynamo/aiconfigurator's per-op tables by tools/kernels/convert.mjs; the
// conventions are in docs/kernel-tables.md). Plain data: the lookups are in kernels/timing.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"

namespace envelope {

// The number format a GEMM runs in (tensor-core inputs; outputs are bf16 or fp32).
enum class GemmDtype { Bf16, Fp8, Fp8Block, Mxfp8, Nvfp4, Int4WeightOnly, Int8WeightOnly };
std::string_view gemmDtypeId(GemmDtype dtype); // "bf16" "fp8" "fp8_block" "mxfp8" "nvfp4" ...
bool parseGemmDtype(std::string_view id, GemmDtype& out);

enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, AllToAll };
std::string_view collectiveId(CollectiveKind kind); // "all_reduce" "all_gather" ...

// Achieved FLOP/s of C[m x n] = A[m x k] B[k x n] on a full grid (m tokens, n output and k
// input features), flat index (i x |n| + j) x |k| + l.
struct GemmTable {
    GemmDtype dtype = GemmDtype::Bf16;
    std::string source;
    std::vector<double> m, n, k;
    std::vector<double> flopsPerS;
    // log2 of the axes and of the values, computed once when read: a lookup then costs three
    // log2 and one exp2 (docs/performance.md).
    std::vector<double> log2M, log2N, log2K, log2FlopsPerS;
    // The GPU's maximum achievable matmul rate in this format (the table's "matmul_ceiling"
    // block: the fastest shape of a search, each the mean of 100 calls, MAMF), or 0 where none
    // is published. No lookup runs faster: the tables' largest shapes read up to 96% of the
    // peak, above any GEMM a card was measured at (docs/kernel-tables.md).
    double ceilingFlopsPerS = 0;
    std::string ceilingSource;
};

// Causal attention forward (prefill / training forward): achieved FLOP/s counting
// 2 x batch x heads x seq^2 x head_dim (QK^T and AV over the causal half), on a grid of the
// sequence length and batch x heads, flat index i x |batchHeads| + j.
struct PrefillAttentionTable {
    std::string dtype;
    int headDim = 128;
    double kvRatio = 1; // heads / kv heads of the measured kernels
    std::string source;
    std::vector<double> seq, batchHeads;
    std::vector<double> flopsPerS;
    std::vector<double> log2Seq, log2BatchHeads, log2FlopsPerS;
};

// One decode step's attention on one GPU for `batch` sequences of `kvLen` cached tokens with
// `heads` query and `kvHeads` key/value heads of headDim: seconds, flat index i x |kvLen| + j.
struct DecodeAttentionTable {
    std::string dtype, kvDtype;
    int headDim = 128, heads = 0, kvHeads = 0;
    std::string source;
    std::vector<double> batch, kvLen;
    std::vector<double> seconds;
};

// A collective inside one NVLink domain: seconds by buffer size (nccl-tests' `size`: the
// all-gather's output, the reduce-scatter's input, the all-to-all's send buffer per rank).
struct CollectiveTable {
    CollectiveKind op = CollectiveKind::AllReduce;
    int gpus = 8;
    bool custom = false; // an inference engine's own all-reduce rather than NCCL
    std::string source;
    std::vector<double> bytes, seconds;
};

struct KernelTable {
    std::string gpu;    // the GPU preset id it was measured on ("h100-sxm")
    std::string source; // repository, commit and folder it was converted from
    std::vector<GemmTable> gemm;
    std::vector<PrefillAttentionTable> prefill;
    std::vector<DecodeAttentionTable> decode;
    std::vector<CollectiveTable> collectives;
    std::vector<std::string> notes;
    // How far step times timed from this table have been from published runs (the table's
    // "validation" block, written by hand from docs/validation-timing.md and carried over by
    // the converter): the median |error| of the training runs on this GPU, rounded up, as the
    // uncertainty a training time states. 0: no block (the default of its timing source).
    double trainingUncertainty = 0;
    int trainingPoints = 0;
    std::string validationSource;
    // Grouped expert GEMMs measured on this card (the table's optional "grouped_gemm" block):
    // one grouped launch takes `groupedTimeFactor` x the time of one GEMM of all the groups'
    // rows stacked, and reads the experts' weights at no more than
    // `groupedWeightStreamFraction` of the HBM bandwidth. 1 and 0: not measured (stacked time,
    // and the weights at the elementwise HBM efficiency).
    double groupedTimeFactor = 1;
    double groupedWeightStreamFraction = 0;
    std::string groupedSource;
    // The fixed time of a memory-bound kernel on this card (the optional "launch_floor"
    // block): a pointwise kernel (residual add, activation, RoPE) and a row reduction (norm,
    // softmax) of a few bytes, replayed in a CUDA graph. 0: not measured (SpecDefaults').
    double launchFloorPointwiseS = 0;
    double launchFloorReductionS = 0;
    std::string launchFloorSource;

    const GemmTable* findGemm(GemmDtype dtype) const;
    const CollectiveTable* findCollective(CollectiveKind op, int gpus, bool custom) const;
};

// Reads one presets/kernels/*.json document. Errors name the JSON path; `origin` names the
// file. Every grid must match its axes, axes must ascend strictly, values be finite and > 0.
Expected<KernelTable> parseKernelTable(std::string_view jsonText, std::string_view origin);

} // namespace envelope
