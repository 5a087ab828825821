// The app under hostile files and sizes (issue 13): a fifo or /dev/zero opened as a plan or a
// config.json, a session whose model is an imported config.json, --size 99999x99999, a PNG export
// that cannot be written. Each hung, ran out of memory, segfaulted or failed silently before.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QMessageBox>
#include <QProcess>
#include <QStatusBar>
#include <QTemporaryDir>

#include <sys/stat.h>

#include "document/plandocument.h"
#include "document/settings.h"
#include "uitestutil.h"
#include "window/application.h"
#include "window/exporter.h"
#include "window/mainwindow.h"

using namespace envelope;
using namespace envelope::ui;

class TestReliabilityUi : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }
    void writeText(const QString& name, const QByteArray& text)
    {
        QFile file(path(name));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text);
    }

private slots:
    void fifoAndDevZeroAreRefusedNamingTheFile()
    {
        Settings settings;
        MainWindow window(uitest::presets(), &settings);
        const QString fifo = path(QStringLiteral("pipe.json"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        QElapsedTimer timer;
        timer.start();
        QString error;
        QVERIFY(!window.openFile(fifo, &error));
        QVERIFY2(
            error.contains(QStringLiteral("pipe.json: is not a regular file")), qPrintable(error));
        QVERIFY(!window.importHfConfigFile(fifo, &error));
        QVERIFY2(error.contains(QStringLiteral("is not a regular file")), qPrintable(error));
        QVERIFY(!window.openFile(QStringLiteral("/dev/zero"), &error));
        QVERIFY2(error.startsWith(QStringLiteral("/dev/zero: is not a regular file")),
            qPrintable(error));
        QVERIFY(timer.elapsed() < 5000);
    }

    void importErrorsNameTheFile()
    {
        Settings settings;
        MainWindow window(uitest::presets(), &settings);
        writeText(QStringLiteral("config.json"),
            R"({"model_type": "llama", "num_hidden_layers": 4294967328})");
        QString error;
        QVERIFY(!window.importHfConfigFile(path(QStringLiteral("config.json")), &error));
        QVERIFY2(error.contains(QStringLiteral(
                     "config.json: num_hidden_layers: must be an integer in 1..1000")),
            qPrintable(error));
    }

    void sessionWithAnImportedModelIsRestored()
    {
        writeText(QStringLiteral("config.json"), R"({"model_type": "llama", "hidden_size": 2048,
            "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
            "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048})");
        Settings settings;
        ModelArch imported;
        {
            MainWindow window(uitest::presets(), &settings);
            window.restoreSession();
            window.show();
            QString error;
            QVERIFY2(window.importHfConfigFile(path(QStringLiteral("config.json")), &error),
                qPrintable(error));
            imported = window.document()->plan().model.arch;
            window.setSavePrompt([] { return int(QMessageBox::Discard); });
            QVERIFY(window.close());
        }
        MainWindow next(uitest::presets(), &settings);
        next.restoreSession();
        QCOMPARE(int(next.document()->plan().model.form), int(ModelChoice::Form::HfConfig));
        QVERIFY(next.document()->plan().model.arch == imported);
        QVERIFY(next.statusBar()->currentMessage().isEmpty());
    }

    void sessionThatCannotBeRestoredSaysWhy()
    {
        Settings settings;
        settings.setLastSessionPlan(QStringLiteral(
            R"({"model": {"hf_config": "/nonexistent/config.json"}, "gpu": "h100-sxm"})"));
        MainWindow window(uitest::presets(), &settings);
        window.restoreSession();
        const QString message = window.statusBar()->currentMessage();
        QVERIFY2(message.startsWith(QStringLiteral("Could not restore the last session")),
            qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("/nonexistent/config.json")), qPrintable(message));
    }

    void sizesBeyondWhatCanBePaintedAreRefused()
    {
        QString error;
        QVERIFY(!parseSize(QStringLiteral("99999x99999"), &error).isValid());
        QVERIFY2(error.contains(QStringLiteral("64..8192")), qPrintable(error));
        QCOMPARE(parseSize(QStringLiteral("8192x100")), QSize(8192, 100));
        QVERIFY(!parseSize(QStringLiteral("8193x100")).isValid());

        QProcess app;
        app.start(QStringLiteral(ENVELOPE_APP_PATH),
            { QStringLiteral("--screenshot"), path(QStringLiteral("huge.png")),
                QStringLiteral("--size"), QStringLiteral("99999x99999") });
        QVERIFY(app.waitForFinished(30000));
        QCOMPARE(app.exitCode(), 2);
        QVERIFY(
            QString::fromLocal8Bit(app.readAllStandardError()).contains(QStringLiteral("--size")));
        QVERIFY(!QFile::exists(path(QStringLiteral("huge.png"))));
    }

    void pngExportsGoThroughATemporaryFile()
    {
        QImage image(64, 64, QImage::Format_ARGB32);
        image.fill(Qt::red);
        QVERIFY(!savePng(image, path(QStringLiteral("missing-folder/x.png"))));
        // A failed export leaves an existing file as it was.
        writeText(QStringLiteral("old.png"), "previous export");
        QVERIFY(!savePng(QImage(), path(QStringLiteral("old.png"))));
        QFile old(path(QStringLiteral("old.png")));
        QVERIFY(old.open(QIODevice::ReadOnly));
        QCOMPARE(old.readAll(), QByteArray("previous export"));
        QVERIFY(savePng(image, path(QStringLiteral("new.png"))));
        QCOMPARE(QImage(path(QStringLiteral("new.png"))).size(), QSize(64, 64));
        // No temporary file left behind beside the two PNGs.
        const QStringList left
            = QDir(m_dir.path()).entryList({ QStringLiteral("*png*") }, QDir::Files);
        QCOMPARE(left, QStringList({ QStringLiteral("new.png"), QStringLiteral("old.png") }));
    }
};

ENVELOPE_UI_TEST_MAIN(TestReliabilityUi)
#include "test_reliability_ui.moc"
