#include "panels/plantable.h"

#include <QHeaderView>
#include <QTableWidget>

#include "charts/memoryview.h"

namespace envelope::ui {
namespace {

// Sorts by the number in Qt::UserRole, whatever the text shows.
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(const QString& text, double value)
        : QTableWidgetItem(text)
    {
        setData(Qt::UserRole, value);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override
    {
        return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
    }
};

// Writes one cell, reusing the item already there when it is of the same kind: a search
// streams its best candidates every 100 ms, and building 750 new items for each batch was most
// of the table's refill (`BM_PlanTableStreamedBatch`).
void setNumberCell(QTableWidget* table, int row, int column, const QString& text, double value)
{
    if (auto* item = dynamic_cast<NumberItem*>(table->item(row, column))) {
        if (item->text() != text)
            item->setText(text);
        if (item->data(Qt::UserRole).toDouble() != value)
            item->setData(Qt::UserRole, value);
        return;
    }
    table->setItem(row, column, new NumberItem(text, value));
}

void setTextCell(QTableWidget* table, int row, int column, const QString& text)
{
    QTableWidgetItem* item = table->item(row, column);
    if (item && !dynamic_cast<NumberItem*>(item)) {
        if (item->text() != text)
            item->setText(text);
        return;
    }
    table->setItem(row, column, new QTableWidgetItem(text));
}

// Fills `table` with one row per candidate: `cells(row, candidate, put)` writes a row's cells;
// the rank and its tooltip are written here.
template <class C, class Cells>
void fill(QTableWidget* table, const QStringList& header, const std::vector<C>& rows,
    const Plan& searched, ByteUnits units, Cells cells)
{
    table->setUpdatesEnabled(false);
    table->setSortingEnabled(false);
    if (table->columnCount() != header.size() || table->horizontalHeaderItem(2) == nullptr
        || table->horizontalHeaderItem(2)->text() != header[2]) {
        table->clearContents(); // another kind of search: other columns
        table->setColumnCount(int(header.size()));
        table->setHorizontalHeaderLabels(header);
    }
    table->setRowCount(int(rows.size()));
    int row = 0;
    for (const C& c : rows) {
        const auto put = [&](int column, const QString& text, double value) {
            setNumberCell(table, row, column, text, value);
        };
        put(0, QString::number(row + 1), row + 1);
        cells(row, c, put);
        const QString tip = describeCandidate(searched, c, units);
        if (table->item(row, 0)->toolTip() != tip)
            table->item(row, 0)->setToolTip(tip);
        ++row;
    }
    table->setSortingEnabled(true);
    table->sortByColumn(0, Qt::AscendingOrder);
    table->setUpdatesEnabled(true);
}

QString text(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString duration(double s)
{
    return QString::fromStdString(formatDuration(s));
}

} // namespace

void fillPlanTable(
    QTableWidget* table, const Plan& searched, const std::vector<Candidate>& rows, ByteUnits units)
{
    const QStringList header = { QObject::tr("#"), QObject::tr("GPUs"), QObject::tr("TP"),
        QObject::tr("PP"), QObject::tr("CP"), QObject::tr("EP"), QObject::tr("DP"),
        QObject::tr("ZeRO"), QObject::tr("Recompute"), QObject::tr("Offload"), QObject::tr("Batch"),
        QObject::tr("Per GPU"), QObject::tr("Tokens/s"), QObject::tr("Step"), QObject::tr("Cost") };
    fill(table, header, rows, searched, units, [&](int row, const Candidate& c, auto put) {
        const Layout& l = c.layout;
        const auto integer
            = [&](int column, int value) { put(column, QString::number(value), value); };
        integer(1, l.gpus);
        integer(2, l.tp);
        put(3,
            l.virtualStages > 1 ? QStringLiteral("%1×%2").arg(l.pp).arg(l.virtualStages)
                                : QString::number(l.pp),
            l.pp);
        integer(4, l.cp);
        integer(5, l.ep);
        integer(6, l.gpus / std::max(1, l.tp * l.pp * l.cp));
        integer(7, l.zeroStage);
        const QString recompute = l.recompute == envelope::Recompute::EveryK
            ? QObject::tr("every %1").arg(l.recomputeEvery)
            : text(recomputeId(l.recompute));
        setTextCell(table, row, 8,
            recompute + (l.sequenceParallel ? QObject::tr(" + SP") : QString()));
        setTextCell(table, row, 9,
            l.offloadParams          ? QObject::tr("optimizer + params")
                : l.offloadOptimizer ? QObject::tr("optimizer")
                                     : QObject::tr("none"));
        put(10, QStringLiteral("%1 × %2").arg(l.microBatch).arg(l.gradAccum), l.microBatch);
        put(11, bytesText(c.perGpuBytes, units), c.perGpuBytes);
        put(12, QString::number(c.tokensPerS, 'f', 0), c.tokensPerS);
        put(13, duration(c.stepTimeS), c.stepTimeS);
        put(14, QStringLiteral("$%1").arg(c.cost, 0, 'f', 0), c.cost);
    });
}

void fillPlanTable(QTableWidget* table, const Plan& searched,
    const std::vector<ServingCandidate>& rows, ByteUnits units)
{
    // serving-max-goodput: the goodput ranks, beside the capacity that bounds it.
    const bool goodput = !rows.empty() && rows.front().goodputRps.has_value();
    QStringList header = { QObject::tr("#"), QObject::tr("GPUs"), QObject::tr("TP"),
        QObject::tr("Replicas"), QObject::tr("Weight bits"), QObject::tr("KV bits"),
        QObject::tr("Sequences each"), QObject::tr("Per GPU"), QObject::tr("TTFT"),
        QObject::tr("ITL"), QObject::tr("Tokens/s") };
    if (goodput) {
        header.back() = QObject::tr("Output tokens/s at goodput");
        header << QObject::tr("Goodput req/s") << QObject::tr("Capacity req/s");
    }
    fill(table, header, rows, searched, units, [&](int, const ServingCandidate& c, auto put) {
        const ServingLayout& l = c.layout;
        const auto integer
            = [&](int column, int value) { put(column, QString::number(value), value); };
        integer(1, c.gpus);
        // A data-parallel-attention engine shows its EP beside its attention TP; an xPyD
        // layout both pools' engines and worker counts (sorted by the decode pool's).
        put(2, QString::fromStdString(servingEngineCell(l)), l.tp);
        put(3, QString::fromStdString(servingReplicasCell(l)), l.replicas);
        integer(4, l.weightBits);
        integer(5, l.kvBits);
        integer(6, l.concurrency);
        put(7, bytesText(c.perGpuBytes, units), c.perGpuBytes);
        put(8, duration(c.ttftS), c.ttftS);
        put(9, duration(c.itlS), c.itlS);
        put(10, QString::number(c.tokensPerS, 'f', 0), c.tokensPerS);
        if (goodput) {
            const double g = c.goodputRps.value_or(0);
            put(11, QString::number(g, 'g', 3), g);
            put(12, QString::number(c.capacityRps, 'g', 3), c.capacityRps);
        }
    });
}

void fillPlanTable(QTableWidget* table, const Plan& searched, const std::vector<RlCandidate>& rows,
    ByteUnits units)
{
    const QStringList header = { QObject::tr("#"), QObject::tr("GPUs"), QObject::tr("Placement"),
        QObject::tr("Trainer"), QObject::tr("Reference"), QObject::tr("Rollout"),
        QObject::tr("Rollout TP"), QObject::tr("Engine share"), QObject::tr("Peak per GPU"),
        QObject::tr("Step"), QObject::tr("Steps/h"), QObject::tr("Bottleneck") };
    fill(table, header, rows, searched, units, [&](int row, const RlCandidate& c, auto put) {
        const RlLayout& l = c.layout;
        const bool colocated = l.placement == RlPlacement::Colocated;
        const auto pool = [&](int column, int value) {
            put(column, colocated ? QStringLiteral("–") : QString::number(value), value);
        };
        put(1, QString::number(c.gpus), c.gpus);
        setTextCell(table, row, 2, text(rlPlacementId(l.placement)));
        pool(3, l.trainerGpus);
        pool(4, l.referenceGpus);
        pool(5, l.rolloutGpus);
        put(6, QString::number(l.rolloutTp), l.rolloutTp);
        // serving.gpu_memory_utilization: the engine's share of each GPU.
        put(7, QString::number(l.gpuMemoryUtilization, 'g', 2), l.gpuMemoryUtilization);
        put(8, bytesText(c.peakBytesPerGpu, units), c.peakBytesPerGpu);
        put(9, duration(c.stepS), c.stepS);
        put(10, QString::number(c.stepsPerHour, 'f', 1), c.stepsPerHour);
        setTextCell(
            table, row, 11, c.rolloutBound ? QObject::tr("rollout") : QObject::tr("training"));
    });
}

QString describeCandidate(const Plan& searched, const Candidate& c, ByteUnits units)
{
    return QStringLiteral("%1: %2 per GPU, %3 tokens/s")
        .arg(QString::fromStdString(describeChanges(searched, c.layout)),
            bytesText(c.perGpuBytes, units), QString::number(c.tokensPerS, 'f', 0));
}

QString describeCandidate(const Plan& searched, const ServingCandidate& c, ByteUnits units)
{
    if (c.goodputRps)
        return QObject::tr("%1 on %2 GPUs: goodput %3 requests/s within the SLO (capacity %4), "
                           "%5 output tokens/s at that rate")
            .arg(QString::fromStdString(describeChanges(searched, c.layout)),
                QString::number(c.gpus), QString::number(*c.goodputRps, 'g', 3),
                QString::number(c.capacityRps, 'g', 3), QString::number(c.tokensPerS, 'f', 0));
    return QObject::tr("%1: %2 per GPU, TTFT %3, ITL %4, %5 tokens/s on %6 GPUs")
        .arg(QString::fromStdString(describeChanges(searched, c.layout)),
            bytesText(c.perGpuBytes, units), duration(c.ttftS), duration(c.itlS),
            QString::number(c.tokensPerS, 'f', 0), QString::number(c.gpus));
}

QString describeCandidate(const Plan& searched, const RlCandidate& c, ByteUnits units)
{
    return QObject::tr("%1: %2 on the fullest GPU, %3 steps/h (%4-bound)")
        .arg(QString::fromStdString(describeChanges(searched, c.layout)),
            bytesText(c.peakBytesPerGpu, units), QString::number(c.stepsPerHour, 'f', 1),
            c.rolloutBound ? QObject::tr("rollout") : QObject::tr("training"));
}

} // namespace envelope::ui
