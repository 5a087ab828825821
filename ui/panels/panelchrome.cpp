#include "panels/panelchrome.h"

#include <QLabel>
#include <QObject>
#include <QScrollArea>
#include <QSizePolicy>
#include <QString>
#include <QStringList>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "charts/tenantpalette.h"
#include "document/plandocument.h"
#include "report/textreport.h"
#include "widgets/appresources.h"

namespace envelope::ui {

QScrollArea* controlsColumn(QWidget* controls, const QString& note)
{
    auto* column = new QWidget;
    auto* layout = new QVBoxLayout(column);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(controls);
    auto* noteLabel = new QLabel(note);
    noteLabel->setWordWrap(true);
    layout->addWidget(noteLabel);
    layout->addStretch(1);
    auto* scroll = new QScrollArea;
    scroll->setWidget(column);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(std::max(column->sizeHint().width() + 18, 340));
    return scroll;
}

void styleHeader(QLabel* header)
{
    QFont font = header->font();
    font.setPointSizeF(font.pointSizeF() * 1.15);
    font.setBold(true);
    header->setFont(font);
    header->setWordWrap(true);
}

void bindValidationStatus(QLabel* status, PlanDocument* document)
{
    status->setWordWrap(true);
    status->setStyleSheet(loadStyleSheet(QStringLiteral("status-line"), overflowColor()));
    const auto show = [status](const QString& message) {
        status->setText(message.isEmpty()
                ? QString()
                : QObject::tr("⚠ %1 — showing the last valid estimate").arg(message));
        status->setVisible(!message.isEmpty());
    };
    show(document->validationMessage());
    QObject::connect(document, &PlanDocument::validationChanged, status, show);
}

QLabel* warningsLine(PlanDocument* document, const QString& section, QWidget* parent)
{
    auto* line = new QLabel(parent);
    line->setObjectName(QStringLiteral("warnings"));
    line->setWordWrap(true);
    line->setTextFormat(Qt::PlainText);
    line->setStyleSheet(QStringLiteral("QLabel { color: #B26A00; }"));
    // The tab's warnings as the reports pick them (report::warningShown): the RL pools' warning
    // on the RL tab, the model's pipeline split on the Training tab, the cluster's on every tab.
    const bool training = section == QLatin1String("training");
    const report::ReportSections tab { training, training, section == QLatin1String("serving"),
        section == QLatin1String("rl") };
    const auto update = [line, document, tab] {
        QStringList warnings;
        for (const std::string& w : document->results().estimate.warnings)
            if (report::warningShown(w, tab))
                warnings << QString::fromStdString(w);
        const QString text = warnings.isEmpty()
            ? QString()
            : QStringLiteral("⚠ ") + warnings.join(QStringLiteral("; "));
        if (line->text() != text)
            line->setText(text);
        // setVisible re-lays out the panel: only on a flip. Once a warning has shown, its line
        // keeps its height when the warning goes: a slider dragged across a limit (a context
        // past the model's positions) would otherwise move every chart below up and down.
        if (line->isHidden() != warnings.isEmpty()) {
            if (!warnings.isEmpty()) {
                QSizePolicy policy = line->sizePolicy();
                policy.setRetainSizeWhenHidden(true);
                line->setSizePolicy(policy);
            }
            line->setVisible(!warnings.isEmpty());
        }
    };
    QObject::connect(document, &PlanDocument::resultsChanged, line, update);
    line->setVisible(false);
    update();
    return line;
}

QString engineLineLabel(ServingEngine engine, double fraction)
{
    const QString f = QString::number(fraction, 'f', fraction * 100 == std::round(fraction * 100) ? 2 : 3);
    switch (engine) {
    case ServingEngine::Sglang:
        return QObject::tr("static %1").arg(f);
    case ServingEngine::Trtllm:
        return QObject::tr("KV %1 of free").arg(f);
    case ServingEngine::Vllm:
    case ServingEngine::Generic:
        break;
    }
    return QObject::tr("util. %1").arg(f);
}

} // namespace envelope::ui
