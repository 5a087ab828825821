// Details pane: every figure of the training estimate with its formula (values substituted),
// value and source, as the core explains it (Estimate::explain). Filled only while visible.
#pragma once

#include <QTreeWidget>

#include <vector>

#include "base/explain.h"
#include "base/units.h"

namespace envelope::ui {

class DetailsPane : public QTreeWidget {
    Q_OBJECT
public:
    explicit DetailsPane(QWidget* parent = nullptr);

    void setExplanations(const std::vector<Explanation>& explanations, ByteUnits units);

    // The row of a figure ("training.per_gpu_bytes.weights"), or nullptr.
    QTreeWidgetItem* itemFor(const QString& figure) const;

    QSize sizeHint() const override { return { 600, 170 }; }

    static QString valueText(const Explanation& e, ByteUnits units);
};

} // namespace envelope::ui
