// One RL step on a time axis: rollout, the frozen forwards (reference, reward, critic values)
// and the policy (+ critic) update, one after another, or with the rollout of the next step
// overlapping the training of this one when the pipeline is one-step off-policy. The bars'
// durations and the time axis read in one unit, the step's (s, min or h).
#pragma once

#include <QWidget>

#include <vector>

#include "charts/drawntext.h"

namespace envelope {
struct RlEstimate;
}

namespace envelope::ui {

class RlTimeline : public QWidget {
    Q_OBJECT
public:
    struct Segment {
        QString name;
        int row = 0;
        double startS = 0;
        double endS = 0;
        QColor color;
    };

    explicit RlTimeline(QWidget* parent = nullptr);

    void setStep(const RlEstimate& rl, bool overlapped);

    const std::vector<Segment>& segments() const { return m_segments; }
    double stepS() const { return m_stepS; }
    bool overlapped() const { return m_overlapped; }
    bool runs() const { return m_runs; } // false: the job does not fit, drawn greyed
    std::vector<DrawnText> texts() const; // what paintEvent draws, where

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    struct LaidText {
        QRectF rect;
        QString text;
        bool bold = false;
        bool onBar = false; // drawn inside its bar, in black
    };
    // Where everything goes at `width`: paintEvent draws it and texts() reports it.
    struct Layout {
        int left = 0, right = 0, top = 0, rowHeight = 0, axisY = 0;
        double scale = 0; // px per second
        std::vector<QRectF> boxes; // one per drawn segment
        std::vector<double> ticks; // x of each axis tick
        std::vector<LaidText> texts;
    };
    Layout layoutFor(int width) const;
    bool isBottleneckRow(int row) const; // the bottleneck's row label is bold

    std::vector<Segment> m_segments;
    QStringList m_rows;
    double m_stepS = 0;
    bool m_overlapped = false;
    double m_staleness = 0;
    int m_updatesPerSync = 1;
    bool m_partial = false;
    bool m_runs = true;
    QString m_bottleneck;
};

} // namespace envelope::ui
