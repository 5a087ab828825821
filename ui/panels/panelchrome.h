// What the Training, Serving and RL tabs share around their charts: the scrolling controls column
// with a note under the controls, the bold header line, and the status line that shows
// validatePlan's message while the last valid estimate stays drawn.
#pragma once

#include "plan/plan.h"

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

// A line (object name "warnings") showing the core's warnings for the document's last estimate
// ("⚠ seq_len 32768 exceeds the model's 8192 positions; ..."), hidden when there are none.
// Shows the warnings a report of `section` ("training", "serving", "rl") shows
// (report::warningShown: those naming a field of it, and those about the cluster).
// Created as a child of `parent` so that showing it never makes a top-level window.
QLabel* warningsLine(PlanDocument* document, const QString& section, QWidget* parent);

// The memory chart's engine line: "util. 0.90" (vLLM, generic: gpu_memory_utilization), "static
// 0.85" (SGLang: mem_fraction_static), "KV 0.90 of free" (TensorRT-LLM: free_gpu_memory_fraction).
QString engineLineLabel(ServingEngine engine, double fraction);

} // namespace envelope::ui
