// A preset library for plan tests: the built-in GPUs and recipes plus a hand-built Llama-2-7B
// shaped model "test-7b" (32 layers, hidden 4096, 32 heads, SwiGLU 11008, vocab 32000, per the
// Llama 2 paper, Touvron et al. 2023, table 1 and the released config.json), so that the plan
// tests do not depend on presets/models.json.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope::testing {

inline ModelArch llama2_7bShape()
{
    ModelArch a;
    a.name = "Test 7B";
    a.layers = 32;
    a.hidden = 4096;
    a.ffnHidden = 11008;
    a.ffn = FfnKind::Gated;
    a.heads = 32;
    a.kvHeads = 32;
    a.headDim = 128;
    a.vocab = 32000;
    a.norm = NormKind::RmsNorm;
    a.maxPositions = 4096;
    return a;
}

inline PresetLibrary testPresets()
{
    Expected<PresetLibrary> lib = builtinPresets();
    EXPECT_TRUE(lib.ok()) << lib.error().toString();
    PresetLibrary library = lib.ok() ? lib.value() : PresetLibrary {};
    ModelPreset model;
    model.id = "test-7b";
    model.source = "hand-built for tests";
    model.arch = llama2_7bShape();
    library.models.push_back(model);
    return library;
}

inline constexpr const char* kMinimalPlan = R"({"model": "test-7b", "gpu": "h100-sxm"})";

} // namespace envelope::testing
