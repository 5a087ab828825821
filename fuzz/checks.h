// What every harness asserts about an input the core accepted or refused (docs/reliability.md):
// a refusal names a JSON path or says what is wrong; an accepted plan estimates to finite
// figures, its what-if suggestions validate and re-estimate to what they claim, and it survives
// a write/read round trip unchanged. A failed check aborts, which libFuzzer reports as a crash.
#pragma once

#include <string>

#include "base/expected.h"
#include "plan/planio.h"
#include "plan/presets.h"

namespace envelope::fuzz {

// The built-in presets, read once.
const PresetLibrary& presets();

// Read options whose file reader returns one small GPT-2 config.json for any hf_config path,
// so the importer runs inside plans too and a written plan reads back the same way.
const ReadOptions& readOptions();

// Aborts with `what` on stderr.
[[noreturn]] void fail(const std::string& what);

// A refusal must say where: a JSON path, or for whole-document problems a message.
void checkRefusal(const Error& error, bool needsPath);

// The checks on an accepted plan listed above.
void checkAccepted(const Plan& plan, const PresetLibrary& library = presets());

// The planner's training, serving and RL searches (capped at a few dozen estimates each): every
// candidate validates and re-estimates to the figures it claims.
void checkPlanner(const Plan& plan);

} // namespace envelope::fuzz
