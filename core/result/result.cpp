// The result types' few functions (result/result.h).
#include "result/result.h"

namespace envelope {

std::string_view verdictId(Verdict v)
{
    switch (v) {
    case Verdict::Fits:
        return "fits";
    case Verdict::Tight:
        return "tight";
    case Verdict::Over:
        return "over";
    }
    return "over";
}

Verdict memoryVerdict(double totalBytes, double hbmBytes, double usableFraction)
{
    if (!(hbmBytes > 0) || !(totalBytes <= hbmBytes))
        return Verdict::Over;
    return totalBytes <= hbmBytes * usableFraction ? Verdict::Fits : Verdict::Tight;
}

}  // namespace envelope
