// Export: a chart as PNG or SVG at a chosen size, a widget as PNG, the summary as Markdown.
#pragma once

#include <QImage>
#include <QSize>
#include <QString>

#include "base/units.h"

QT_BEGIN_NAMESPACE
class QChartView;
class QWidget;
QT_END_NAMESPACE

namespace envelope {
struct Plan;
}

namespace envelope::ui {

struct TrainingResults;

// The chart laid out afresh at `size` (not a scaled bitmap of the view), on the view's background.
QImage renderChart(QChartView* view, const QSize& size);
// Writes `image` as PNG through a temporary file renamed on success (QSaveFile); false, leaving
// any existing file untouched, when it cannot be written.
bool savePng(const QImage& image, const QString& path);
bool exportChartPng(QChartView* view, const QSize& size, const QString& path);
bool exportChartSvg(
    QChartView* view, const QSize& size, const QString& path, const QString& title = {});

// The widget (e.g. the whole window) as shown, at exactly `size` pixels.
QImage grabWidget(QWidget* widget, const QSize& size);

// The summary as a Markdown table: plan, model, GPU, every tenant, total, fit, best change.
QString summaryMarkdown(const Plan& plan, const TrainingResults& results, ByteUnits units);

} // namespace envelope::ui
