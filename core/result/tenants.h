// The memory tenants of one GPU, and the one table that names them.
//
// Every consumer reads this table: the result JSON (report/result_json.cpp: key and order), the
// text/Markdown reports (report/textreport.cpp: label), and every chart, legend and tooltip in
// the app (ui/charts/tenantpalette.* maps the colour role to a QColor, ui/charts/memoryview.*
// reads the bytes). Adding a tenant is one enum value, one MemoryBreakdown member (where its
// formula writes) and one row below; docs/architecture.md has the recipe.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

namespace envelope {

// Bytes of each tenant on one GPU. `kvCache` is used by serving and the RL rollout engine.
struct MemoryBreakdown {
    double weights = 0;
    double gradients = 0;
    double optimizer = 0; // master copy + moments
    double activations = 0;
    double kvCache = 0;
    double overhead = 0; // CUDA context, communication buffers, fragmentation allowance
    double lora = 0; // LoRA adapters: their weights, gradients and optimizer state
    double total() const;
};

enum class Tenant { Weights, Gradients, Optimizer, Activations, KvCache, Overhead, Lora };

// A colour role, not a colour: the UI picks the shade (ui/charts/tenantpalette.cpp). The roles
// are the Okabe & Ito (2008) colour-blind-safe hues; Vermillion and SkyBlue are taken by the
// HBM capacity and usable-fraction reference lines, so a new tenant should not use them.
enum class TenantColorRole {
    Blue, Orange, BluishGreen, ReddishPurple, Yellow, Grey, Black, SkyBlue, Vermillion
};

struct TenantInfo {
    Tenant id;
    std::string_view key; // result JSON: <section>.per_gpu_bytes.<key>; explain figures alike
    std::string_view name; // legends, tooltips, the app's summary: "KV cache"
    std::string_view label; // text/Markdown report rows: "optimizer state"
    TenantColorRole color;
    double MemoryBreakdown::*bytes;
    bool training; // held during a training step (training JSON, report, charts)
    int stack; // position in a stacked bar, from the bottom (charts stack by this, not by row)
    bool optional = false; // reports and summaries list it only when non-zero (LoRA adapters)
};

// In result-JSON order (design.md, docs/cli.md); total() also sums in this order.
inline constexpr std::array kTenantTable {
    TenantInfo { Tenant::Weights, "weights", "Weights", "weights", TenantColorRole::Blue,
        &MemoryBreakdown::weights, true, 0 },
    TenantInfo { Tenant::Gradients, "gradients", "Gradients", "gradients", TenantColorRole::Orange,
        &MemoryBreakdown::gradients, true, 1 },
    TenantInfo { Tenant::Optimizer, "optimizer", "Optimizer", "optimizer state",
        TenantColorRole::BluishGreen, &MemoryBreakdown::optimizer, true, 2 },
    TenantInfo { Tenant::Activations, "activations", "Activations", "activations",
        TenantColorRole::ReddishPurple, &MemoryBreakdown::activations, true, 5 },
    // The KV cache sits on the model's states, under the per-step activations.
    TenantInfo { Tenant::KvCache, "kv_cache", "KV cache", "KV cache", TenantColorRole::Yellow,
        &MemoryBreakdown::kvCache, false, 4 },
    TenantInfo { Tenant::Overhead, "overhead", "Overhead", "overhead", TenantColorRole::Grey,
        &MemoryBreakdown::overhead, true, 6 },
    // LoRA adapters (training.lora): small trained states stacked on the frozen base's states.
    TenantInfo { Tenant::Lora, "lora", "LoRA adapters", "LoRA adapters", TenantColorRole::Black,
        &MemoryBreakdown::lora, true, 3, true },
};

inline double MemoryBreakdown::total() const
{
    double sum = 0;
    for (const TenantInfo& tenant : kTenantTable)
        sum += this->*tenant.bytes;
    return sum;
}

// Whether a report row for `tenant` holding `bytes` is worth printing: every tenant always, but an
// optional one (LoRA adapters) only when the plan has it.
inline bool tenantShown(Tenant tenant, double bytes);

constexpr const TenantInfo& tenantInfo(Tenant tenant)
{
    for (const TenantInfo& row : kTenantTable)
        if (row.id == tenant)
            return row;
    return kTenantTable.front(); // unreachable: every Tenant has a row (tests/core/test_tenants)
}

inline bool tenantShown(Tenant tenant, double bytes)
{
    return !tenantInfo(tenant).optional || bytes != 0;
}

inline constexpr std::size_t kTrainingTenantCount
    = std::size_t(std::ranges::count_if(kTenantTable, &TenantInfo::training));

// The tenants in stacking order (bottom first): all of them, or those of a training step.
template <std::size_t N>
constexpr std::array<Tenant, N> stackedTenants(bool trainingOnly)
{
    std::array rows = kTenantTable;
    std::ranges::sort(rows, {}, &TenantInfo::stack);
    std::array<Tenant, N> out {};
    std::size_t n = 0;
    for (const TenantInfo& row : rows)
        if (!trainingOnly || row.training)
            out[n++] = row.id;
    return out;
}

inline constexpr std::array kTrainingTenants = stackedTenants<kTrainingTenantCount>(true);
inline constexpr std::array kStackedTenants = stackedTenants<kTenantTable.size()>(false);

} // namespace envelope
