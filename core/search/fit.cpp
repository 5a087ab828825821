#include "search/fit.h"

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

FitAnswer whatMakesItFit(const Plan& plan, FitScope scope, int maxGpus, long long maxEstimates)
{
    FitAnswer answer;
    // The GPUs the user has, first.
    SearchOptions here = fitOptions(plan, scope, SearchGoal::MaxThroughput);
    here.maxGpus = plan.cluster.gpus;
    here.maxEstimates = maxEstimates;
    SearchResult r = search(plan, here);
    answer.estimates = r.estimates;
    if (!r.candidates.empty()) {
        answer.fit = r.candidates.front();
        return answer;
    }
    // Then the fewest GPUs that fit, with what is left of the budget. (Counts at or below the
    // plan's were just found wanting for this layout space, or are fewer than the user has.)
    if (maxEstimates > 0 && r.estimates >= maxEstimates) {
        answer.capped = true;
        return answer;
    }
    SearchOptions more = fitOptions(plan, scope, SearchGoal::MinGpus);
    more.maxGpus = maxGpus > 0 ? maxGpus : 65536;
    more.maxEstimates = maxEstimates > 0 ? maxEstimates - r.estimates : 0;
    r = search(plan, more);
    answer.estimates += r.estimates;
    answer.capped = r.capped;
    if (!r.candidates.empty())
        answer.fit = r.candidates.front();
    return answer;
}

} // namespace envelope
