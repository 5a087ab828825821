#include "search/fit.h"

#include <algorithm>

namespace envelope {
namespace {

SearchOptions fitOptions(const Plan& plan, FitScope scope, SearchGoal goal)
{
    SearchOptions o;
    o.goal = goal;
    o.top = 1;
    if (scope == FitScope::MemorySettings) {
        const TrainingConfig& t = plan.training;
        const auto fix = [&o](const char* path, int value) {
            FixedField f;
            f.path = path;
            f.number = value;
            o.fixed.push_back(f);
        };
        fix("training.tp", t.tp);
        fix("training.pp", t.pp);
        fix("training.cp", t.cp);
        fix("training.ep", t.ep);
        fix("training.virtual_stages", t.virtualStages);
        fix("training.micro_batch", t.microBatch);
        fix("training.sequence_parallel", t.sequenceParallel ? 1 : 0);
    }
    return o;
}

} // namespace

std::optional<Candidate> whatMakesItFit(const Plan& plan, FitScope scope, int maxGpus)
{
    // The GPUs the user has, first.
    SearchOptions here = fitOptions(plan, scope, SearchGoal::MaxThroughput);
    here.maxGpus = plan.cluster.gpus;
    SearchResult r = search(plan, here);
    if (!r.candidates.empty())
        return r.candidates.front();
    // Then the fewest GPUs that fit; counts at or below the plan's were just found wanting
    // (for this layout space) or are smaller than what the user has.
    SearchOptions more = fitOptions(plan, scope, SearchGoal::MinGpus);
    more.maxGpus = maxGpus > 0 ? maxGpus : 65536;
    r = search(plan, more);
    if (r.candidates.empty())
        return std::nullopt;
    return r.candidates.front();
}

} // namespace envelope
