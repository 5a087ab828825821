// Small bridges between the core's figures and what the panels draw (no formulas here).
#pragma once

#include <QString>

#include "base/units.h"
#include "charts/tenantpalette.h"

namespace envelope {
struct MemoryBreakdown;
}

namespace envelope::ui {

// The bytes of one tenant in a core breakdown (its accessor in the core's tenant table).
double tenantBytes(const MemoryBreakdown& breakdown, Tenant tenant);

// A byte figure as every panel and chart writes it: the core's formatBytes in the display
// units ("37.3 GB", "34.7 GiB").
QString bytesText(double bytes, ByteUnits units);

} // namespace envelope::ui
