// One RL step on a time axis: rollout, the frozen forwards (reference, reward, critic values)
// and the policy (+ critic) update, one after another, or with the rollout of the next step
// overlapping the training of this one when the pipeline is one-step off-policy.
#pragma once

#include <QWidget>

#include <vector>

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

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<Segment> m_segments;
    QStringList m_rows;
    double m_stepS = 0;
    bool m_overlapped = false;
    QString m_bottleneck;
};

} // namespace envelope::ui
