// The summary strip over the charts: total per GPU, headroom or overflow, a fits badge, the
// smallest GPU count that fits, the largest tenant and what makes it fit (suggestFits: the best single change, or the planner's combined one),
// which wraps rather than clips in a narrow window and which one click applies.
#pragma once

#include <QFrame>

#include "base/units.h"

class QLabel;
class QToolButton;

namespace envelope::ui {
class FlowLayout;
class ValueLabel;
} // namespace envelope::ui

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
    QString badgeStyleSheet() const; // the verdict's colour, for tests
    QString minGpusText() const;
    QString largestText() const;
    QString suggestionText() const;
    // The change against the latest pinned plan ("37.3 GB (+4.1 GB, +12%) vs Llama ZeRO-1");
    // an empty text hides the card.
    void setPinComparison(const QString& caption, const QString& text);
    QString pinComparisonText() const;
    ValueLabel* largestLabel() const { return m_largest; }
    ValueLabel* suggestionLabel() const { return m_suggestion; }
    FlowLayout* flowLayout() const { return m_layout; }
    // Shown while there is a suggestion to apply: the core's plan with that one change.
    QToolButton* applyButton() const { return m_apply; }

signals:
    // The user asked for the best single change (results.suggestions.front().plan).
    void applySuggestionRequested();

private:
    // A caption over a bold value, optionally with a widget (the Apply button) after the value.
    ValueLabel* addCard(
        const QString& title, QLabel** captionOut = nullptr, QWidget* trailing = nullptr);

    ValueLabel* m_total;
    ValueLabel* m_headroom;
    QLabel* m_headroomCaption = nullptr;
    QLabel* m_badge;
    ValueLabel* m_minGpus;
    ValueLabel* m_largest;
    ValueLabel* m_suggestion;
    ValueLabel* m_vsPinned;
    QLabel* m_vsPinnedCaption = nullptr;
    QToolButton* m_apply;
    FlowLayout* m_layout;
    QString m_fitsBadgeStyle; // resources/styles/fit-badge.qss in the fits colour
    QString m_tightBadgeStyle; // ... in the tight colour
    QString m_overflowBadgeStyle; // ... in the overflow colour
    QString m_overflowStyle; // resources/styles/overflow-text.qss
};

} // namespace envelope::ui
