#include "charts/paretochart.h"

#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QEvent>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "charts/chartstyle.h"

namespace envelope::ui {

ParetoChart::ParetoChart(QWidget* parent)
    : QWidget(parent)
    , m_chart(new QChart)
    , m_front(new QScatterSeries)
    , m_candidates(new QScatterSeries)
    , m_xAxis(new QValueAxis)
    , m_yAxis(new QValueAxis)
{
    m_candidates->setName(tr("Top candidates"));
    m_candidates->setMarkerSize(7);
    m_front->setName(tr("Pareto front"));
    m_front->setMarkerSize(11);
    m_chart->addSeries(m_candidates);
    m_chart->addSeries(m_front);
    m_chart->addAxis(m_xAxis, Qt::AlignBottom);
    m_chart->addAxis(m_yAxis, Qt::AlignLeft);
    for (QScatterSeries* s : { m_candidates, m_front }) {
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    m_yAxis->setTitleText(tr("tokens/s"));
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_xAxis->setLabelFormat(QStringLiteral("%.4g"));
    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(280, 220);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    styleChart(m_chart, palette());
    styleAxis(m_xAxis, palette());
    styleAxis(m_yAxis, palette());
    m_front->setColor(palette().color(QPalette::Highlight));
    m_candidates->setColor(palette().color(QPalette::Mid));

    connect(m_front, &QScatterSeries::clicked, this, [this](const QPointF& point) {
        if (const Candidate* c = nearest(m_frontItems, point))
            emit candidateClicked(*c);
    });
    connect(m_candidates, &QScatterSeries::clicked, this, [this](const QPointF& point) {
        if (const Candidate* c = nearest(m_candidateItems, point))
            emit candidateClicked(*c);
    });
    const auto hover = [this](const std::vector<Candidate>* list) {
        return [this, list](const QPointF& point, bool state) {
            if (!state)
                return;
            if (const Candidate* c = nearest(*list, point))
                emit candidateHovered(*c, QCursor::pos());
        };
    };
    connect(m_front, &QScatterSeries::hovered, this, hover(&m_frontItems));
    connect(m_candidates, &QScatterSeries::hovered, this, hover(&m_candidateItems));
}

double ParetoChart::xOf(const Candidate& c) const
{
    if (m_paretoX == "cost")
        return c.cost / m_costScale;
    return toDisplayUnits(c.perGpuBytes, m_units);
}

void ParetoChart::setResult(const SearchResult& result, ByteUnits units)
{
    m_units = units;
    m_paretoX = result.paretoX;
    m_frontItems = result.pareto;
    m_candidateItems = result.candidates;
    // Costs in thousands or millions of USD past 10^4 / 10^6: "%.4g" would print "2e+07".
    double maxCost = 0;
    for (const auto* list : { &m_frontItems, &m_candidateItems })
        for (const Candidate& c : *list)
            maxCost = std::max(maxCost, c.cost);
    m_costScale = maxCost >= 1e6 ? 1e6 : (maxCost >= 1e4 ? 1e3 : 1.0);
    m_xAxis->setTitleText(m_paretoX == "cost"
            ? (m_costScale == 1e6 ? tr("cost of the run (million USD)")
                    : m_costScale == 1e3 ? tr("cost of the run (thousand USD)")
                                         : tr("cost of the run (USD)"))
            : tr("per-GPU memory (%1)").arg(QString::fromUtf8(unitLabel(units).data())));
    QList<QPointF> front, candidates;
    double maxX = 0, maxY = 0;
    for (const Candidate& c : m_frontItems) {
        front.append({ xOf(c), c.tokensPerS });
        maxX = std::max(maxX, xOf(c));
        maxY = std::max(maxY, c.tokensPerS);
    }
    for (const Candidate& c : m_candidateItems) {
        candidates.append({ xOf(c), c.tokensPerS });
        maxX = std::max(maxX, xOf(c));
        maxY = std::max(maxY, c.tokensPerS);
    }
    replaceIfChanged(m_front, front);
    replaceIfChanged(m_candidates, candidates);
    setNiceRange(m_xAxis, maxX > 0 ? maxX * 1.05 : 1);
    setNiceRange(m_yAxis, maxY > 0 ? maxY * 1.05 : 1);
    // Whole tokens/s for real ranges; an empty chart's 0..1 needs decimals to tell ticks apart.
    m_yAxis->setLabelFormat(maxY >= 100 ? QStringLiteral("%.0f") : QStringLiteral("%.2g"));
}

void ParetoChart::clear()
{
    setResult(SearchResult {}, m_units);
}

const Candidate* ParetoChart::nearest(
    const std::vector<Candidate>& list, const QPointF& point) const
{
    const Candidate* best = nullptr;
    double bestDistance = INFINITY;
    const QPointF scale(std::max(m_xAxis->max(), 1e-9), std::max(m_yAxis->max(), 1e-9));
    for (const Candidate& c : list) {
        const double dx = (xOf(c) - point.x()) / scale.x();
        const double dy = (c.tokensPerS - point.y()) / scale.y();
        const double d = dx * dx + dy * dy;
        if (d < bestDistance) {
            bestDistance = d;
            best = &c;
        }
    }
    return best;
}

const Candidate* ParetoChart::frontCandidateAt(const QPointF& point) const
{
    return nearest(m_frontItems, point);
}

void ParetoChart::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        styleChart(m_chart, palette());
        styleAxis(m_xAxis, palette());
        styleAxis(m_yAxis, palette());
        m_front->setColor(palette().color(QPalette::Highlight));
        m_candidates->setColor(palette().color(QPalette::Mid));
    }
    QWidget::changeEvent(event);
}

} // namespace envelope::ui
