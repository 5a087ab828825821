// Plans for the export/import tests: presets/default-plan.json with --set style edits, read
// through readPlan exactly as the CLI reads them.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "estimate/estimate.h"
#include "export/args.h"
#include "export/export.h"
#include "plan/planio.h"
#include "plan/presets.h"
#include "plan/setpath.h"

namespace envelope::testing {

inline std::string readTestFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline const PresetLibrary& exportPresets()
{
    static const PresetLibrary presets = builtinPresets().value();
    return presets;
}

// The default plan with `sets` applied ("training.tp=2", ...), validated.
inline Plan defaultPlanWith(const std::vector<std::string>& sets)
{
    Expected<std::string> text = applySetsToText(exportPresets().defaultPlanJson, sets);
    EXPECT_TRUE(text.ok()) << text.error().toString();
    Expected<Plan> plan = readPlan(text.value(), exportPresets());
    EXPECT_TRUE(plan.ok()) << plan.error().toString();
    return plan.ok() ? plan.value() : Plan {};
}

// A file of Megatron-style arguments as flag -> value ("" for a switch), each flag once.
inline std::map<std::string, std::string> argumentMap(const std::string& text)
{
    Expected<std::vector<exportdetail::Argument>> args = exportdetail::parseArguments(text);
    EXPECT_TRUE(args.ok()) << (args.ok() ? "" : args.error().toString());
    std::map<std::string, std::string> out;
    if (!args.ok())
        return out;
    for (const auto& a : args.value()) {
        EXPECT_EQ(out.count(a.flag), 0u) << a.flag << " twice";
        out[a.flag] = a.value.value_or("");
    }
    return out;
}

inline EngineConfig exportOf(const Plan& plan, Engine engine)
{
    return exportPlan(plan, estimate(plan), engine, modelRepository(plan, exportPresets()));
}

inline bool anyWarningMentions(const EngineConfig& c, const std::string& text)
{
    for (const std::string& w : c.warnings)
        if (w.find(text) != std::string::npos)
            return true;
    return false;
}

} // namespace envelope::testing
