#include "charts/memoryview.h"

#include "estimate/estimate.h"

namespace envelope::ui {

double tenantBytes(const MemoryBreakdown& breakdown, Tenant tenant)
{
    return breakdown.*tenantInfo(tenant).bytes;
}

QString bytesText(double bytes, ByteUnits units)
{
    return QString::fromStdString(formatBytes(bytes, units));
}

} // namespace envelope::ui
