// The app's persistent settings in one place (hotspot's Settings pattern): setters emit only on
// a real change. Backed by a QSettings the caller owns, or by memory alone (tests, screenshots).
#pragma once

#include <QByteArray>
#include <QObject>
#include <QStringList>
#include <QVariantMap>

#include "base/units.h"

class QSettings;

namespace envelope::ui {

class Settings : public QObject {
    Q_OBJECT
public:
    // `backing` may be null: values then live in memory only. Not owned.
    explicit Settings(QSettings* backing = nullptr, QObject* parent = nullptr);

    ByteUnits units() const;
    void setUnits(ByteUnits units);

    QStringList recentFiles() const;
    void addRecentFile(const QString& path); // most recent first, at most kMaxRecentFiles
    void clearRecentFiles();

    // The plan the last session ended with (plan JSON text), restored on the next start.
    QString lastSessionPlan() const;
    void setLastSessionPlan(const QString& planJson);

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);

    static constexpr int kMaxRecentFiles = 8;

signals:
    void unitsChanged(envelope::ByteUnits units);
    void recentFilesChanged(const QStringList& files);

private:
    QVariant value(const QString& key, const QVariant& fallback = {}) const;
    bool setValue(const QString& key, const QVariant& value); // true when it changed

    QSettings* m_backing;
    QVariantMap m_memory;
};

} // namespace envelope::ui
