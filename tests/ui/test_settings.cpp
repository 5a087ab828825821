// Settings: setters emit only on a real change, recent files stay ordered and bounded, and a
// QSettings file backs them across instances (the injection the app and tests rely on).
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "document/settings.h"
#include "uitestutil.h"

using namespace envelope;
using namespace envelope::ui;

class TestSettings : public QObject {
    Q_OBJECT
private slots:
    void unitsEmitOnlyOnChange()
    {
        Settings settings;
        QCOMPARE(settings.units(), ByteUnits::GB); // decimal by default, as vendors label HBM
        QSignalSpy spy(&settings, &Settings::unitsChanged);
        settings.setUnits(ByteUnits::GB);
        QCOMPARE(spy.count(), 0);
        settings.setUnits(ByteUnits::GiB);
        settings.setUnits(ByteUnits::GiB);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(settings.units(), ByteUnits::GiB);
    }

    void recentFilesAreMostRecentFirstAndBounded()
    {
        Settings settings;
        for (int i = 0; i < Settings::kMaxRecentFiles + 3; ++i)
            settings.addRecentFile(QStringLiteral("/plans/%1.json").arg(i));
        settings.addRecentFile(QStringLiteral("/plans/5.json")); // reopened: moves to the top
        const QStringList files = settings.recentFiles();
        QCOMPARE(files.size(), Settings::kMaxRecentFiles);
        QCOMPARE(files.front(), QStringLiteral("/plans/5.json"));
        QCOMPARE(files.count(QStringLiteral("/plans/5.json")), 1);
        QCOMPARE(files[1], QStringLiteral("/plans/%1.json").arg(Settings::kMaxRecentFiles + 2));
        settings.clearRecentFiles();
        QVERIFY(settings.recentFiles().isEmpty());
    }

    void valuesPersistThroughTheBackingStore()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("envelope.ini"));
        {
            QSettings store(file, QSettings::IniFormat);
            Settings settings(&store);
            settings.setUnits(ByteUnits::GiB);
            settings.addRecentFile(QStringLiteral("/plans/a.json"));
            settings.setLastSessionPlan(QStringLiteral("{\"format\":\"envelope.plan\"}"));
        }
        QSettings store(file, QSettings::IniFormat);
        Settings reopened(&store);
        QCOMPARE(reopened.units(), ByteUnits::GiB);
        QCOMPARE(reopened.recentFiles(), QStringList { QStringLiteral("/plans/a.json") });
        QCOMPARE(reopened.lastSessionPlan(), QStringLiteral("{\"format\":\"envelope.plan\"}"));
    }
};

ENVELOPE_UI_TEST_MAIN(TestSettings)
#include "test_settings.moc"
