// Explanations: every figure the core produces can say how it was computed.
//
// Computations take an `Explainer*`; when it is null (the fast path used by live redraws and
// the benchmark) nothing is formatted. When present, each figure records its formula with the
// values substituted, the value, its unit and its source, next to the code that computes it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace envelope {

struct Explanation {
    std::string figure;   // result key, e.g. "training.per_gpu_bytes.weights"
    std::string formula;  // "P x weight_bytes / (tp x pp_share) = 6.74e9 x 2 / 1 = 13.48 GB"
    double value = 0;
    std::string unit;     // "bytes", "s", "FLOPs", "tokens/s", "USD", "" for counts
    std::string source;   // "ZeRO paper (Rajbhandari et al. 2019) sec. 3; seed 002"
};

class Explainer {
public:
    void add(std::string figure, std::string formula, double value, std::string unit,
             std::string source)
    {
        m_items.push_back({std::move(figure), std::move(formula), value, std::move(unit),
                           std::move(source)});
    }
    const std::vector<Explanation>& items() const { return m_items; }
    std::vector<Explanation> take() { return std::move(m_items); }
    // The explanation recorded for `figure`, or nullptr.
    const Explanation* find(std::string_view figure) const;

private:
    std::vector<Explanation> m_items;
};

}  // namespace envelope
