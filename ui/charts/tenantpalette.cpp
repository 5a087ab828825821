#include "charts/tenantpalette.h"

namespace envelope::ui {

QColor tenantColor(Tenant tenant)
{
    // Okabe & Ito (2008), "Color Universal Design": distinguishable under the common forms of
    // colour-vision deficiency.
    switch (tenant) {
    case Tenant::Weights:
        return QColor(0x00, 0x72, 0xB2); // blue
    case Tenant::Gradients:
        return QColor(0xE6, 0x9F, 0x00); // orange
    case Tenant::Optimizer:
        return QColor(0x00, 0x9E, 0x73); // bluish green
    case Tenant::Activations:
        return QColor(0xCC, 0x79, 0xA7); // reddish purple
    case Tenant::Overhead:
        return QColor(0x99, 0x99, 0x99); // grey
    case Tenant::KvCache:
        return QColor(0xE8, 0xD4, 0x3A); // yellow, a touch darker to read on white
    }
    return Qt::gray;
}

QString tenantName(Tenant tenant)
{
    switch (tenant) {
    case Tenant::Weights:
        return QStringLiteral("Weights");
    case Tenant::Gradients:
        return QStringLiteral("Gradients");
    case Tenant::Optimizer:
        return QStringLiteral("Optimizer");
    case Tenant::Activations:
        return QStringLiteral("Activations");
    case Tenant::Overhead:
        return QStringLiteral("Overhead");
    case Tenant::KvCache:
        return QStringLiteral("KV cache");
    }
    return {};
}

QString tenantFigure(Tenant tenant)
{
    if (tenant == Tenant::KvCache)
        return QStringLiteral("serving.per_gpu_bytes.kv_cache");
    return QStringLiteral("training.per_gpu_bytes.") + tenantName(tenant).toLower();
}

QColor capacityLineColor()
{
    return QColor(0xD5, 0x5E, 0x00);
} // vermillion
QColor usableLineColor()
{
    return QColor(0x56, 0xB4, 0xE9);
} // sky blue
QColor fitsColor()
{
    return QColor(0x1B, 0x8A, 0x3A);
}
QColor tightColor()
{
    return QColor(0xB2, 0x6A, 0x00);
} // dark amber: readable as text and under white badge text
QColor overflowColor()
{
    return QColor(0xC6, 0x28, 0x28);
}

} // namespace envelope::ui
