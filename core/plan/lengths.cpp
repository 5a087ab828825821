#include "plan/lengths.h"

#include <algorithm>

namespace envelope {

double longestTokens(const LengthDistribution& d)
{
    switch (d.form) {
    case LengthDistribution::Form::Fixed:
        return d.fixed;
    case LengthDistribution::Form::MeanP90:
        return d.mean;
    case LengthDistribution::Form::Histogram: {
        double most = 0;
        for (const auto& [tokens, weight] : d.histogram)
            if (weight > 0)
                most = std::max(most, tokens);
        return most;
    }
    }
    return 0;
}

double meanTokens(const LengthDistribution& d)
{
    switch (d.form) {
    case LengthDistribution::Form::Fixed:
        return d.fixed;
    case LengthDistribution::Form::MeanP90:
        return d.mean;
    case LengthDistribution::Form::Histogram: {
        double w = 0, s = 0;
        for (const auto& [tokens, weight] : d.histogram) {
            w += std::max(0.0, weight);
            s += tokens * std::max(0.0, weight);
        }
        return w > 0 ? s / w : 0;
    }
    }
    return 0;
}

} // namespace envelope
