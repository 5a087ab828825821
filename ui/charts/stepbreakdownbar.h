// The step time as one horizontal stacked bar: compute, the exposed part of each kind of
// communication (DP, TP, PP, CP, EP) and the pipeline bubble, with the step time and the
// bottleneck the core names above it and a legend with each part's seconds below; texts wrap
// (the widget grows taller) rather than elide.
// Custom-painted: a Qt Charts bar in a ~340 px column spends most of its height on axes.
#pragma once

#include <QColor>
#include <QRect>
#include <QString>
#include <QWidget>

#include "charts/drawntext.h"
#include <functional>
#include <vector>

namespace envelope {
struct TrainingCompute;
}

namespace envelope::ui {

class StepBreakdownBar : public QWidget {
    Q_OBJECT
public:
    struct Segment {
        QString name; // "Compute", "DP comm", ..., "Pipeline bubble"
        QString figure; // explanation key of the part ("training.compute_time_s")
        double seconds = 0; // drawn width: compute, exposed share of a comm kind, or bubble
        double reportedS = 0; // the core's figure for the tooltip (a comm kind's full time)
        QColor color;
    };

    explicit StepBreakdownBar(QWidget* parent = nullptr);

    // `runs` false: the plan does not fit, so the step is marked so and drawn greyed (what it
    // would take if the memory allowed, not a real step).
    void setCompute(const TrainingCompute& compute, bool runs = true);
    // Tooltip text (formula) of a figure key; see FormulaToolTips.
    void setFormulaProvider(std::function<QString(const QString&)> provider);

    const std::vector<Segment>& segments() const { return m_segments; }
    QString stepText() const { return m_stepText; }
    QString bottleneckText() const { return m_bottleneckText; }
    std::vector<DrawnText> texts() const; // what paintEvent draws, where

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Layout {
        QRect header; // the step time and the bottleneck, one or more lines
        QRect step;
        QRect bottleneck; // beside the step time, or wrapped under it
        QRect bar;
        std::vector<QRect> segments; // one per m_segments entry, in the bar
        std::vector<QRect> legend; // one per m_segments entry, below the bar
        std::vector<QRect> legendText; // the entry's text, wrapped in its column
        int height = 0;
    };
    Layout layoutFor(int width) const;
    QString legendText(std::size_t segment) const; // "DP comm 16.6 ms"
    QColor segmentColor(std::size_t segment) const; // greyed when the plan does not fit
    void refreshHeight(); // the height the texts need at the current width

    int m_height = 0;
    Layout m_layout; // at m_layoutWidth, for the figures shown
    int m_layoutWidth = -1;
    QString segmentToolTip(const Segment& segment) const;

    std::vector<Segment> m_segments;
    QString m_stepText;
    bool m_runs = true;
    QString m_bottleneckText;
    std::function<QString(const QString&)> m_formula;
};

// "compute" -> "compute", "dp-comm" -> "DP comm", "pp-bubble" -> "pipeline bubble".
QString bottleneckName(const QString& coreName);

} // namespace envelope::ui
