// What the Training, Serving and RL tabs share around their charts: the scrolling controls column
// with a note under the controls, the bold header line, and the status line that shows
// validatePlan's message while the last valid estimate stays drawn.
#pragma once

class QLabel;
class QScrollArea;
class QString;
class QWidget;

namespace envelope::ui {

class PlanDocument;

// A scroll area (no frame, no horizontal bar, at least 340 px) holding `controls` and `note`.
QScrollArea* controlsColumn(QWidget* controls, const QString& note);

// The tab's one-line verdict, bold and a little larger, wrapping.
void styleHeader(QLabel* header);

// `status` shows the document's validation message in red, hidden while the plan is valid;
// every tab's status line is this one.
void bindValidationStatus(QLabel* status, PlanDocument* document);

} // namespace envelope::ui
