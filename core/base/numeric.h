// Numeric guards shared by every estimator.
#pragma once

#include <cmath>

namespace envelope {

// x when it is a finite positive number, else 0: the estimators treat a missing, negative or
// non-finite input figure as "absent" rather than letting it poison a sum.
inline double positiveOrZero(double x)
{
    return std::isfinite(x) && x > 0 ? x : 0.0;
}

} // namespace envelope
