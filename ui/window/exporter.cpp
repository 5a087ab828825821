#include "window/exporter.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QGraphicsLayout>
#include <QLegend>
#include <QPainter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSvgGenerator>

#include "report/textreport.h"
#include "plan/plan.h"
#include "document/trainingresults.h"

namespace envelope::ui {
namespace {

// Lays the chart out at `size`, lets `paint` draw the scene, and restores the on-screen layout.
// On screen a wrapping ChartLegend widget stands in for the chart's own legend; an exported
// image has no widgets around it, so the chart's legend is drawn for the export.
template <class Paint> void withChartAt(QChartView* view, const QSize& size, Paint paint)
{
    QChart* chart = view->chart();
    const QRectF old = chart->geometry();
    const bool legendShown = chart->legend()->isVisible();
    chart->legend()->setVisible(true);
    chart->setGeometry(QRectF(QPointF(0, 0), QSizeF(size)));
    if (chart->layout())
        chart->layout()->activate();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    paint(view->scene(), QRectF(QPointF(0, 0), QSizeF(size)));
    chart->legend()->setVisible(legendShown);
    chart->setGeometry(old);
    if (chart->layout())
        chart->layout()->activate();
}

// QSvgGenerator states the size in millimetres, which readers turn back into pixels at their own
// dpi (QSvgRenderer and Inkscape use 90): state it in pixels so the image is exactly `size`.
bool setSvgPixelSize(const QString& path, const QSize& size)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    QString text = QString::fromUtf8(file.readAll());
    file.close();
    static const QRegularExpression header(
        QStringLiteral(R"(<svg([^>]*?) width="[^"]*" height="[^"]*")"));
    text.replace(header,
        QStringLiteral(R"(<svg\1 width="%1" height="%2")").arg(size.width()).arg(size.height()));
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return false;
    out.write(text.toUtf8());
    return out.commit();
}

} // namespace

QImage renderChart(QChartView* view, const QSize& size)
{
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(view->chart()->backgroundBrush().color());
    withChartAt(view, size, [&](QGraphicsScene* scene, const QRectF& rect) {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        scene->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), rect);
    });
    return image;
}

bool savePng(const QImage& image, const QString& path)
{
    // Like plan saves: written beside the target and renamed on commit, so a full disk or a
    // crash never leaves a truncated PNG where a good one was.
    if (image.isNull())
        return false;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    if (!image.save(&file, "PNG")) {
        file.cancelWriting();
        return false;
    }
    return file.commit();
}

bool exportChartPng(QChartView* view, const QSize& size, const QString& path)
{
    return savePng(renderChart(view, size), path);
}

bool exportChartSvg(QChartView* view, const QSize& size, const QString& path, const QString& title)
{
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setResolution(96);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(title.isEmpty() ? view->chart()->title() : title);
    svg.setDescription(QStringLiteral("Envelope chart"));
    bool ok = false;
    withChartAt(view, size, [&](QGraphicsScene* scene, const QRectF& rect) {
        QPainter painter;
        if (!painter.begin(&svg))
            return;
        painter.fillRect(rect, view->chart()->backgroundBrush());
        scene->render(&painter, rect, rect);
        ok = painter.end();
    });
    return ok && setSvgPixelSize(path, size);
}

QImage grabWidget(QWidget* widget, const QSize& size)
{
    QImage image = widget->grab().toImage();
    if (image.size() != size)
        image = image.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    image.setDevicePixelRatio(1.0);
    return image;
}

QString summaryMarkdown(const Plan& plan, const TrainingResults& results, ByteUnits units)
{
    // The core's report writer, so the copied summary and envelope-cli read the same.
    return QString::fromStdString(report::formatSummaryMarkdown(plan, results.estimate, units,
        results.suggestions.empty() ? std::string() : results.suggestions.front().description));
}

} // namespace envelope::ui
