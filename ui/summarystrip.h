// The summary strip over the charts: total per GPU, headroom or overflow, a fits badge, the
// smallest GPU count that fits, the largest tenant and the best single change (suggestFits).
#pragma once

#include <QFrame>

#include "units.h"

class QLabel;

namespace envelope::ui {
class ValueLabel;
}

namespace envelope::ui {

struct TrainingResults;

class SummaryStrip : public QFrame {
    Q_OBJECT
public:
    explicit SummaryStrip(QWidget* parent = nullptr);

    void setResults(const TrainingResults& results, int gpus, ByteUnits units);

    QString totalText() const;
    QString headroomText() const;
    QString badgeText() const;
    QString minGpusText() const;
    QString largestText() const;
    QString suggestionText() const;
    ValueLabel* largestLabel() const { return m_largest; }

private:
    ValueLabel* addCard(const QString& title, int stretch = 0, QLabel** captionOut = nullptr);

    ValueLabel* m_total;
    ValueLabel* m_headroom;
    QLabel* m_headroomCaption = nullptr;
    QLabel* m_badge;
    ValueLabel* m_minGpus;
    ValueLabel* m_largest;
    ValueLabel* m_suggestion;
};

} // namespace envelope::ui
