// The planner's answer as text: the "envelope.solution" version 1 JSON (design.md, "Solution
// JSON"), CSV of the feasible candidates, and a text or Markdown summary; the message for a
// search that found nothing. All figures come from SearchResult and estimate().
#pragma once

#include <string>

#include "base/units.h"
#include "search/search.h"

namespace envelope {

// best.plan is writePlan(applyLayout(input, best)); best.summary its estimate() figures.
std::string writeSolutionJson(const Plan& input, const SearchResult& result);

// One row per feasible candidate (SearchResult::feasibleList, or the top candidates when the
// search did not keep them all), header first.
std::string writeSolutionCsv(const SearchResult& result);

// The best layout, the counts and a table of the top candidates; Markdown when `markdown`.
std::string writeSolutionText(
    const Plan& input, const SearchResult& result, ByteUnits units, bool markdown);

// "no layout fits: nearest miss tp 8 + ... needs 93.1 GB per GPU, 16.1 GB over the usable
// 77.0 GB (90% of 85.5 GB)", or a sentence saying why nothing was evaluated.
std::string noSolutionMessage(const Plan& input, const SearchResult& result, ByteUnits units);

// The serving and RL searches' answers in the same shapes (solutionkinds.cpp). best.plan is
// applyServingLayout / applyRlLayout of the input; best.summary its estimate() figures.
std::string writeSolutionJson(const Plan& input, const ServingSearchResult& result);
std::string writeSolutionJson(const Plan& input, const RlSearchResult& result);
std::string writeSolutionCsv(const ServingSearchResult& result);
std::string writeSolutionCsv(const RlSearchResult& result);
std::string writeSolutionText(
    const Plan& input, const ServingSearchResult& result, ByteUnits units, bool markdown);
std::string writeSolutionText(
    const Plan& input, const RlSearchResult& result, ByteUnits units, bool markdown);
std::string noSolutionMessage(
    const Plan& input, const ServingSearchResult& result, ByteUnits units);
std::string noSolutionMessage(const Plan& input, const RlSearchResult& result, ByteUnits units);

} // namespace envelope
