// One fixed colour per memory tenant, used by every chart, legend and tooltip.
//
// The hues are the Okabe-Ito colour-blind-safe set at mid lightness, so they read on both light
// and dark window backgrounds; reference lines take their colour from the current QPalette.
#pragma once

#include <QColor>
#include <QString>

#include "result/tenants.h"

namespace envelope::ui {

// The core's tenant table (result/tenants.h) names the tenants; this file only colours them.
using envelope::Tenant;

// The training tenants (a training step holds no KV cache), in stacking order.
inline constexpr std::array kTenants = kTrainingTenants;
// Every tenant, in stacking order, for serving and RL roles (the rollout engine's KV cache).
inline constexpr std::array kAllTenants = kStackedTenants;

QColor tenantColor(Tenant tenant);
QColor tenantColor(TenantColorRole role);
QString tenantName(Tenant tenant); // "Weights", "Gradients", ...
// The explanation key of the tenant's figure ("training.per_gpu_bytes.weights").
QString tenantFigure(Tenant tenant);

// Colours for the reference lines and the fit badge.
QColor capacityLineColor(); // HBM capacity
QColor usableLineColor(); // usable fraction of HBM
QColor fitsColor();
QColor tightColor(); // above the usable fraction, within HBM
QColor overflowColor();

} // namespace envelope::ui
