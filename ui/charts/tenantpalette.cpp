#include "charts/tenantpalette.h"

namespace envelope::ui {

QColor tenantColor(TenantColorRole role)
{
    // Okabe & Ito (2008), "Color Universal Design": distinguishable under the common forms of
    // colour-vision deficiency.
    switch (role) {
    case TenantColorRole::Blue:
        return QColor(0x00, 0x72, 0xB2);
    case TenantColorRole::Orange:
        return QColor(0xE6, 0x9F, 0x00);
    case TenantColorRole::BluishGreen:
        return QColor(0x00, 0x9E, 0x73);
    case TenantColorRole::ReddishPurple:
        return QColor(0xCC, 0x79, 0xA7);
    case TenantColorRole::Yellow:
        return QColor(0xE8, 0xD4, 0x3A); // a touch darker than F0E442 to read on white
    case TenantColorRole::Grey:
        return QColor(0x99, 0x99, 0x99);
    case TenantColorRole::Black:
        return QColor(0x33, 0x33, 0x33); // Okabe & Ito's black, lifted to show on dark themes
    case TenantColorRole::SkyBlue:
        return QColor(0x56, 0xB4, 0xE9);
    case TenantColorRole::Vermillion:
        return QColor(0xD5, 0x5E, 0x00);
    }
    return Qt::gray;
}

QColor tenantColor(Tenant tenant)
{
    return tenantColor(tenantInfo(tenant).color);
}

QString tenantName(Tenant tenant)
{
    return QString::fromUtf8(
        tenantInfo(tenant).name.data(), qsizetype(tenantInfo(tenant).name.size()));
}

QString tenantFigure(Tenant tenant)
{
    // The training explanation covers the training tenants; the KV cache is explained by serving.
    const TenantInfo& info = tenantInfo(tenant);
    const QString section = info.training ? QStringLiteral("training") : QStringLiteral("serving");
    return section + QStringLiteral(".per_gpu_bytes.")
        + QString::fromUtf8(info.key.data(), qsizetype(info.key.size()));
}

QColor capacityLineColor()
{
    return tenantColor(TenantColorRole::Vermillion);
}
QColor usableLineColor()
{
    return tenantColor(TenantColorRole::SkyBlue);
}
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
