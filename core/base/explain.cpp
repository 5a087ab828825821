#include "base/explain.h"

namespace envelope {

const Explanation* Explainer::find(std::string_view figure) const
{
    for (const Explanation& e : m_items)
        if (e.figure == figure)
            return &e;
    return nullptr;
}

}  // namespace envelope
