// The compute figures of the plan as a compact two-column grid (caption, value): step time,
// tokens/s, FLOPs per token, utilisation, time, GPU-hours and cost to train the token budget,
// and the observed MFU/HFU when the plan has a measurement. Hovering a row shows its formula.
#pragma once

#include <QString>
#include <QWidget>

#include <map>

class QGridLayout;
class QLabel;

namespace envelope {
struct Plan;
struct TrainingCompute;
} // namespace envelope

namespace envelope::ui {

class FormulaToolTips;

class ThroughputFigures : public QWidget {
    Q_OBJECT
public:
    explicit ThroughputFigures(FormulaToolTips* toolTips, QWidget* parent = nullptr);

    // `runs` false (the training verdict is "over"): the rates, utilisation, time and cost are
    // greyed and read "does not fit" instead of real-looking figures.
    void setCompute(const TrainingCompute& compute, const Plan& plan, bool runs = true);

    // The shown value of a row by its figure key ("training.tokens_per_s"); empty when the row
    // is absent or hidden.
    QString valueText(const QString& figure) const;
    QLabel* valueLabel(const QString& figure) const;

private:
    QLabel* addSection(const QString& title);
    QLabel* addRow(const QString& caption, const QString& figure, const QString& help = {});
    void setRowVisible(const QString& figure, bool visible);

    FormulaToolTips* m_toolTips;
    QGridLayout* m_grid;
    QLabel* m_trainSection = nullptr; // "To train 2.00T tokens"
    struct Row {
        QLabel* caption;
        QLabel* value;
    };
    std::map<QString, Row> m_rows;
};

} // namespace envelope::ui
