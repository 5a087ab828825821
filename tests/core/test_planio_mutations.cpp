// Every field of the shipped default plan replaced by every kind of wrong value: the plan is
// either accepted or refused with an error at that field's own path — never a crash, never an
// error blaming another field — and an accepted plan estimates without throwing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "plan/planio.h"

namespace envelope {
namespace {

// JSON pointers of every leaf ("/training/overhead/fixed_bytes") and its dotted path.
void leaves(const nlohmann::json& j, const std::string& pointer, std::vector<std::string>& out)
{
    if (j.is_object() && !j.empty()) {
        for (const auto& [key, value] : j.items())
            leaves(value, pointer + "/" + key, out);
        return;
    }
    out.push_back(pointer);
}

std::string dotted(std::string pointer)
{
    pointer.erase(0, 1);
    for (char& c : pointer)
        if (c == '/')
            c = '.';
    return pointer;
}

TEST(PlanMutations, EveryWrongValueIsAcceptedOrBlamedOnItsOwnField)
{
    const Expected<PresetLibrary> presets = builtinPresets();
    ASSERT_TRUE(presets.ok()) << presets.error().toString();
    const nlohmann::json base = nlohmann::json::parse(presets->defaultPlanJson);
    std::vector<std::string> pointers;
    leaves(base, "", pointers);
    ASSERT_GT(pointers.size(), 60u); // every key of every section is in the shipped plan

    const nlohmann::json wrongValues[] = { nullptr, "x", nlohmann::json::array(),
        nlohmann::json::object(), -1, 0, 1, 1.5, 1e300, true, "", 2147483648.0 };
    int refused = 0;
    for (const std::string& pointer : pointers)
        for (const nlohmann::json& wrong : wrongValues) {
            nlohmann::json plan = base;
            plan[nlohmann::json::json_pointer(pointer)] = wrong;
            const Expected<Plan> read = readPlan(plan.dump(), *presets);
            const std::string path = dotted(pointer);
            SCOPED_TRACE(path + " = " + wrong.dump());
            if (read.ok()) {
                EXPECT_NO_THROW(estimate(read.value(), { .explain = true }));
                continue;
            }
            ++refused;
            EXPECT_EQ(read.error().path.rfind(path, 0), 0u) << read.error().toString();
            EXPECT_FALSE(read.error().message.empty());
        }
    EXPECT_GT(refused, 0);
}

} // namespace
} // namespace envelope
