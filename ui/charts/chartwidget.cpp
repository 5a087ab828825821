#include "charts/chartwidget.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QHBoxLayout>
#include <QLegend>
#include <QVBoxLayout>

#include "charts/chartlegend.h"
#include "charts/chartstyle.h"

namespace envelope::ui {

ChartWidget::ChartWidget(QWidget* parent)
    : QWidget(parent)
    , m_chart(new QChart)
    , m_view(new QChartView(m_chart, this))
    , m_legend(new ChartLegend(this))
    , m_header(new QHBoxLayout)
{
    m_view->setFrameShape(QFrame::NoFrame);
    m_legend->setBackgroundRole(QPalette::Base);
    m_legend->setAutoFillBackground(true);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(m_header); // an empty row adds no spacing (QBoxLayout skips it)
    layout->addWidget(m_view, 1);
    layout->addWidget(m_legend);
}

void ChartWidget::finishChart(bool antialiased)
{
    styleChart(m_chart, palette());
    m_chart->legend()->setVisible(false); // the wrapping legend below the plot replaces it
    m_view->setRenderHint(QPainter::Antialiasing, antialiased);
    connect(m_chart, &QChart::plotAreaChanged, this, [this] { placeOverlays(); });
}

void ChartWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        styleChart(m_chart, palette());
        placeOverlays();
    }
    QWidget::changeEvent(event);
}

} // namespace envelope::ui
