#include "widgets/appresources.h"

#include <QFile>

// envelope_ui is a static library: the linker keeps its compiled resources only when something
// refers to them, which Q_INIT_RESOURCE does (it must be called outside any namespace, even an
// anonymous one: it declares the function rcc generated).
static void initResources()
{
    static const bool done = [] {
        Q_INIT_RESOURCE(envelope);
        return true;
    }();
    Q_UNUSED(done);
}

namespace envelope::ui {

QString loadStyleSheet(const QString& name, const QColor& accent)
{
    initResources();
    QFile file(QStringLiteral(":/styles/%1.qss").arg(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QString text = QString::fromUtf8(file.readAll());
    if (accent.isValid())
        text.replace(QStringLiteral("@accent"), accent.name());
    return text;
}

QIcon applicationIcon()
{
    initResources();
    return QIcon(QStringLiteral(":/io.envelope.Envelope.svg"));
}

} // namespace envelope::ui
