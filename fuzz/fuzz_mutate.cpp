// Structure-aware: the input is a list of edits to a valid plan (the default plan, every key
// written), so almost every run reaches the estimator instead of stopping at the parser. Each
// edit is 4 bytes: an operation, a field (index into the plan's leaves), and a choice of value.
// Operations: numbers to extremes, a type flipped, a key dropped, a key added, an enum swapped
// to another valid id, a small integer. The edited plan must be refused with a path, or pass
// every check of checks.h (finite figures, suggestions that validate and are what they claim,
// the write/read round trip) and, on a quarter of the inputs, the planner's (every training,
// serving and RL candidate validates and re-estimates to its figures).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checks.h"

namespace {

using nlohmann::json;
using namespace envelope;

const json& basePlan()
{
    static const json plan = [] {
        const Expected<Plan> p = readPlan(fuzz::presets().defaultPlanJson, fuzz::presets());
        if (!p)
            fuzz::fail("default plan: " + p.error().toString());
        return json::parse(writePlan(*p));
    }();
    return plan;
}

// Every JSON pointer to a leaf or container below the root.
void pointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out)
{
    if (!at.empty())
        out.push_back(at);
    if (j.is_object())
        for (const auto& [key, value] : j.items())
            pointers(value, at / key, out);
    else if (j.is_array())
        for (std::size_t i = 0; i < j.size(); ++i)
            pointers(j[i], at / i, out);
}

const double kExtremes[] = { 0, -1, -0.0, 1e-300, 1e-9, 0.001, 0.5, 1, 2, 3, 7, 64, 1000, 46341,
    1e6, 1e8, 2147483647, 2147483648.0, 4294967328.0, 9.3e18, 1e300, 1.7e308 };
const int kSmall[] = { 1, 2, 3, 4, 5, 8, 16, 32, 64, 128, 256, 4096 };
const char* const kKeys[] = { "zero_stage", "tp", "pp", "cp", "ep", "vpp", "micro_batch",
    "grad_accum", "seq_len", "mfu", "gpus", "gpus_per_node", "heads", "hidden", "layers",
    "hf_config", "preset", "params", "moe", "mla", "x" };

std::vector<std::string> enumValues()
{
    std::vector<std::string> v = { "none", "selective", "full", "grpo", "ppo", "dpo", "colocated",
        "disjoint", "tensors", "adamw", "sgd", "bf16", "fp8", "tf32", "" };
    const PresetLibrary& p = fuzz::presets();
    for (const auto& m : p.models)
        v.push_back(m.id);
    for (const auto& g : p.gpus)
        v.push_back(g.id);
    for (const auto& r : p.recipes)
        v.push_back(r.id);
    return v;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const std::vector<std::string> enums = enumValues();
    json plan = basePlan();
    for (std::size_t i = 0; i + 4 <= size && i < 64; i += 4) {
        std::vector<json::json_pointer> at;
        pointers(plan, json::json_pointer(), at);
        if (at.empty())
            break;
        const json::json_pointer& p = at[(data[i + 1] | data[i + 2] << 8) % at.size()];
        const std::uint8_t choice = data[i + 3];
        json& target = plan[p];
        switch (data[i] % 6) {
        case 0:
            target = kExtremes[choice % std::size(kExtremes)];
            break;
        case 1: {
            const json flips[] = { "x", true, nullptr, json::array(), json::object(), 1 };
            target = flips[choice % std::size(flips)];
            break;
        }
        case 2:
            plan.at(p.parent_pointer()).is_object()
                ? (void)plan.at(p.parent_pointer()).erase(p.back())
                : (void)(target = nullptr);
            break;
        case 3:
            if (target.is_object())
                target[kKeys[choice % std::size(kKeys)]]
                    = kExtremes[(choice >> 4) % std::size(kExtremes)];
            else if (plan.at(p.parent_pointer()).is_object())
                plan.at(p.parent_pointer())[kKeys[choice % std::size(kKeys)]]
                    = kSmall[choice % std::size(kSmall)];
            break;
        case 4:
            target = enums[choice % enums.size()];
            break;
        default:
            target = kSmall[choice % std::size(kSmall)];
            break;
        }
    }
    // To turn a crash into a test: ENVELOPE_FUZZ_PRINT=1 fuzz/fuzz_mutate crash-... prints the plan.
    static const bool print = std::getenv("ENVELOPE_FUZZ_PRINT") != nullptr;
    if (print)
        std::fprintf(stderr, "%s\n", plan.dump(2).c_str());
    const Expected<Plan> read = readPlan(plan.dump(), fuzz::presets());
    if (!read)
        fuzz::checkRefusal(read.error(), true);
    else {
        fuzz::checkAccepted(*read);
        // The planner's three searches cost about twice the rest together in this build, so
        // they run on a quarter of the inputs, picked by the bytes (reproducible from a crash).
        std::uint32_t hash = 2166136261u; // FNV-1a
        for (std::size_t i = 0; i < size; ++i)
            hash = (hash ^ data[i]) * 16777619u;
        if (hash % 4 == 0)
            fuzz::checkPlanner(*read);
    }
    return 0;
}
