// Activation memory kept for the backward pass (internal to the core; used by
// training_memory.cpp). Sources and conventions: docs/formulas-training.md.
//
// Two models, chosen by ActivationModel::Kind:
//  - Tensors: the tensors a block actually saves, counted per token after Korthikanti et al.
//    2022 ("Reducing Activation Recomputation in Large Transformer Models", sec. 4-5, Table 2),
//    generalised to the real block (gated FFN, GQA, MLA, MoE, no dropout masks at dropout 0,
//    flash attention), plus what the embedding and the output layer keep.
//  - SimpleSbh: the seeds' k x L x B x S x h x bytes (seed 003; seed 002 `training_memory_budget`;
//    seed 001 with its recompute-every-k rule), so their worked examples reproduce exactly.
//
// All byte figures are for one GPU: divided by tensor parallelism (tp), sequence parallelism
// (the replicated parts, when on) and context parallelism (cp) as the text of each says.
#pragma once

#include "model/model.h"
#include "plan/plan.h"

namespace envelope {

// Bytes one transformer layer keeps for one micro-batch on one GPU, by recompute policy.
struct LayerActivation {
    double full = 0; // every tensor the backward pass reads (no recompute)
    double selective = 0; // attention core (s^2 scores, its dropout) recomputed
    double checkpoint = 0; // only the layer's input (full / every-k recompute)
    // torchtitan's per-op selective AC: the layer input, the outputs of every other matmul
    // (q, v, gate, down) and the attention output with its log-sum-exp.
    double perOpSac = 0;
};

// Bytes per token of one layer, before the tp / sp division, by what the tensors are. The
// replicated group is split by tp only under sequence parallelism; the split group always is.
struct LayerTerms {
    // Replicated across the tensor-parallel group (Korthikanti's "10" in eq. for TP).
    double normInputs = 0; // the two block norms' inputs
    double normOutputs = 0; // the two norm outputs: the QKV input and the FFN input
    double dropoutMasks = 0; // attention-output and FFN-output dropout masks, 1 byte each
    double latents = 0; // MLA: q / kv latent norm inputs and outputs
    double moeTokens = 0; // MoE: dispatched expert inputs, expert outputs, router probs
    double eagerNorms = 0; // eager RMSNorm: fp32 upcast + fp32 normalised copy, both norms
    // Split across the tensor-parallel group.
    double attention = 0; // Q, K, V and the output-projection input
    double scores = 0; // softmax output (+ dropout mask and output): a x s per token
    double flashStats = 0; // flash attention's fp32 log-sum-exp per head and query
    double ffn = 0; // FFN intermediates (2 tensors plain, 3 gated; x top-k for MoE)

    double replicated() const
    {
        return normInputs + normOutputs + dropoutMasks + latents + moeTokens + eagerNorms;
    }
    double split() const { return attention + scores + flashStats + ffn + eagerSplit + lora; }
    double lora = 0; // LoRA: each adapted linear's A output (rank wide), read by B's backward
    double eagerSplit = 0; // eager RoPE fp32 copies of q and k, a gated FFN's act(gate)
};

// FP8 training under Transformer Engine (the framework's fp8_saves_linear_inputs, an FP8
// recipe): every linear keeps the FP8 copy of its input for the weight gradient, 1 B where the
// recipe's activations are wider.
bool fp8KeepsLinearInputs(const TrainingConfig& config, double activationBytes);

// Per-token terms of a dense-FFN layer (moeLayer false) or a MoE layer (true), with
// `activationBytes` per element (recipe) and 1-byte dropout masks.
LayerTerms layerTerms(
    const ModelArch& arch, const TrainingConfig& config, double activationBytes, bool moeLayer);

struct ActivationCosts {
    bool simple = false; // ActivationModel::Kind::SimpleSbh
    double tokens = 0; // tokens of one micro-batch on one GPU: micro_batch x seq_len / cp
    LayerActivation dense; // a layer with a dense FFN
    LayerActivation moe; // a layer with a MoE FFN (equal to `dense` for dense models)
    double embeddingBytes = 0; // first stage, per micro-batch in flight
    double outputBytes = 0; // last stage, one micro-batch: final norm, head input, logits
    double lossBytesPerLogit = 0; // lossBytesPerLogit(training.loss or the framework's)
};

// Per-layer, embedding and output-layer bytes for one micro-batch.
ActivationCosts activationCosts(
    const ModelArch& arch, const TrainingConfig& config, double activationBytes);

// Micro-batches (in units of one micro-batch through all the stage's layers) that 1F1B keeps
// in flight on pipeline stage `stage` of `stages` (Narayanan et al. 2021 sec. 2.2; interleaved:
// Korthikanti et al. 2022 sec. 4.3, (1 + (p-1)/(p v)) on the first stage).
double microBatchesInFlight(int stage, int stages, int virtualStages, int microBatches);

struct StageActivation {
    double layers = 0; // in-flight micro-batches' kept layer activations
    double workingSet = 0; // the layer (or every-k segment) being rebuilt by recompute
    double embedding = 0; // first stage only
    double output = 0; // last stage only
    double perLayer = 0; // kept by one layer for one micro-batch (the larger layer kind)
    double inFlight = 0; // microBatchesInFlight() for this stage
    double calibration = 1;
    // training.activation_offload: the kept layer activations moved to the host (taken out of
    // `layers`), and the offloaded layers' share on the GPU while they move.
    double offloaded = 0;
    double offloadBuffer = 0;
    double offloadedLayers = 0; // layers of the stage whose activations go to the host
    double total() const
    {
        return (layers + workingSet + embedding + output + offloadBuffer) * calibration;
    }
};

// Activation bytes of one pipeline stage holding `denseLayers` + `moeLayers` layers.
StageActivation stageActivation(const ActivationCosts& costs, const TrainingConfig& config,
    int stage, int stages, int denseLayers, int moeLayers);

} // namespace envelope
