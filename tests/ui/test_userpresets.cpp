// The app finds the user's presets where the CLI does: $XDG_CONFIG_HOME/envelope/presets
// (issue 10's bug: the app read QStandardPaths' ~/.config/Envelope/Envelope instead).
#include <QFile>
#include <QTemporaryDir>

#include "uitestutil.h"
#include "window/application.h"

using namespace envelope;
using namespace envelope::ui;

class TestUserPresets : public QObject {
    Q_OBJECT
private slots:
    void gpuPresetInXdgConfigHomeIsLoaded()
    {
        QTemporaryDir config;
        QVERIFY(config.isValid());
        QVERIFY(QDir(config.path()).mkpath(QStringLiteral("envelope/presets")));
        QFile file(config.filePath(QStringLiteral("envelope/presets/mine.json")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"gpus": [{"id": "my-gpu", "name": "My GPU", "memory_bytes": 1e10,
            "bf16_tflops": 100, "hbm_gbps": 500, "intra_node_gbps": 32, "inter_node_gbps": 12.5}]})");
        file.close();
        const QByteArray saved = qgetenv("XDG_CONFIG_HOME");
        qputenv("XDG_CONFIG_HOME", config.path().toLocal8Bit());

        QStringList warnings;
        const PresetLibrary library = loadPresetLibrary(&warnings);
        qputenv("XDG_CONFIG_HOME", saved);

        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
        const GpuPreset* mine = library.findGpu("my-gpu");
        QVERIFY(mine != nullptr);
        QCOMPARE(mine->gpu.name, std::string("My GPU"));
        QCOMPARE(mine->gpu.memoryBytes, 1e10);
        QVERIFY(library.findGpu("h100-sxm") != nullptr); // merged over the built-ins, not instead
    }
};

ENVELOPE_UI_TEST_MAIN(TestUserPresets)
#include "test_userpresets.moc"
