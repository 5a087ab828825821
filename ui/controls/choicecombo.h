// The combo box of the controls columns: a long choice ("bf16 mixed, fp32 master (16 B/param)",
// "3 — + weights sharded (FSDP)") is cut to the column's width when closed, so hovering shows
// it whole and the open list is as wide as its longest choice. Typing in the open list keeps
// the choices that contain what was typed, anywhere in their text ("qwen3" finds "Qwen3 32B"
// and "Qwen3 235B-A22B"; "h200" finds "H200 SXM 141GB"), and Enter picks the first of them.
#pragma once

#include <QComboBox>

namespace envelope::ui {

class ChoiceCombo : public QComboBox {
    Q_OBJECT
public:
    using QComboBox::QComboBox;

    void showPopup() override;

    void hidePopup() override;

    // A group's name as a row of its own (bold, not selectable, no data): the choices added
    // after it belong to it; a heading hides while the list's filter leaves none of them.
    void addHeading(const QString& text);

    // What has been typed into the open list (empty when closed or nothing typed).
    QString filterText() const { return m_filter; }

    // Choices grouped under headings, groups in order of first appearance, each group's
    // choices in the order given: (group, text, data) triples.
    struct GroupedChoice {
        QString group, text, data;
    };
    void addGrouped(const QList<GroupedChoice>& choices);

protected:
    // Without a tooltip of its own, the combo's tooltip is its current choice in full.
    bool event(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void applyFilter();

    QString m_filter;
};

} // namespace envelope::ui
