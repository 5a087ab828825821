// The combo box of the controls columns: a long choice ("bf16 mixed, fp32 master (16 B/param)",
// "3 — + weights sharded (FSDP)") is cut to the column's width when closed, so hovering shows
// it whole and the open list is as wide as its longest choice.
#pragma once

#include <QComboBox>

namespace envelope::ui {

class ChoiceCombo : public QComboBox {
    Q_OBJECT
public:
    using QComboBox::QComboBox;

    void showPopup() override;

    // A group's name as a row of its own (bold, not selectable, no data): the choices added
    // after it belong to it. Typing in the open list jumps to a choice by its first letters.
    void addHeading(const QString& text);

    // Choices grouped under headings, groups in order of first appearance, each group's
    // choices in the order given: (group, text, data) triples.
    struct GroupedChoice {
        QString group, text, data;
    };
    void addGrouped(const QList<GroupedChoice>& choices);

protected:
    // Without a tooltip of its own, the combo's tooltip is its current choice in full.
    bool event(QEvent* event) override;
};

} // namespace envelope::ui
