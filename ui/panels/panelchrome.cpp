#include "panels/panelchrome.h"

#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

#include "charts/tenantpalette.h"
#include "document/plandocument.h"
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

} // namespace envelope::ui
