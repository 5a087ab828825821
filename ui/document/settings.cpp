#include "document/settings.h"

#include <QSettings>

namespace envelope::ui {
namespace {
const QString kUnitsKey = QStringLiteral("view/units");
const QString kRecentKey = QStringLiteral("files/recent");
const QString kLastPlanKey = QStringLiteral("session/plan");
const QString kGeometryKey = QStringLiteral("window/geometry");
} // namespace

Settings::Settings(QSettings* backing, QObject* parent)
    : QObject(parent)
    , m_backing(backing)
{ }

QVariant Settings::value(const QString& key, const QVariant& fallback) const
{
    if (m_backing)
        return m_backing->value(key, fallback);
    return m_memory.value(key, fallback);
}

bool Settings::setValue(const QString& key, const QVariant& value)
{
    if (this->value(key) == value)
        return false;
    if (m_backing)
        m_backing->setValue(key, value);
    else
        m_memory.insert(key, value);
    return true;
}

ByteUnits Settings::units() const
{
    ByteUnits units = ByteUnits::GB;
    parseByteUnits(value(kUnitsKey, QStringLiteral("gb")).toString().toStdString(), units);
    return units;
}

void Settings::setUnits(ByteUnits units)
{
    if (units == this->units())
        return; // also when unset and asked for the default
    if (setValue(kUnitsKey, units == ByteUnits::GB ? QStringLiteral("gb") : QStringLiteral("gib")))
        emit unitsChanged(units);
}

QStringList Settings::recentFiles() const
{
    return value(kRecentKey).toStringList();
}

void Settings::addRecentFile(const QString& path)
{
    QStringList files = recentFiles();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    if (setValue(kRecentKey, files))
        emit recentFilesChanged(files);
}

void Settings::clearRecentFiles()
{
    if (setValue(kRecentKey, QStringList {}))
        emit recentFilesChanged({});
}

QString Settings::lastSessionPlan() const
{
    return value(kLastPlanKey).toString();
}

void Settings::setLastSessionPlan(const QString& planJson)
{
    setValue(kLastPlanKey, planJson);
}

QByteArray Settings::windowGeometry() const
{
    return value(kGeometryKey).toByteArray();
}

void Settings::setWindowGeometry(const QByteArray& geometry)
{
    setValue(kGeometryKey, geometry);
}

} // namespace envelope::ui
