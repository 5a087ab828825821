// envelope [PLAN.json] [--screenshot FILE.png] [--size WxH] [--panel training|rl|serving|planner]
#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QThreadPool>

#include <cstdio>
#include <cstring>

#include "window/application.h"
#include "window/mainwindow.h"
#include "document/settings.h"

int main(int argc, char** argv)
{
    // A screenshot needs no display: default to the offscreen platform before Qt starts.
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0
            && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Envelope"));
    QApplication::setApplicationName(QStringLiteral("Envelope"));
    QApplication::setDesktopFileName(QStringLiteral("io.envelope.Envelope"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Memory, time and cost of large-model jobs"));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("plan"), QStringLiteral("Plan JSON to open"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
        QStringLiteral("Render offscreen, write PNG, exit."), QStringLiteral("FILE.png"));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size WxH."),
        QStringLiteral("WxH"), QStringLiteral("1600x1000"));
    const QCommandLineOption panel(QStringLiteral("panel"), QStringLiteral("Panel to show."),
        QStringLiteral("training|rl|serving|planner"));
    parser.addOptions({ screenshot, size, panel });
    parser.process(app);

    const bool shot = parser.isSet(screenshot);
    QString sizeError;
    const QSize windowSize = envelope::ui::parseSize(parser.value(size), &sizeError);
    if (!windowSize.isValid()) {
        std::fprintf(stderr, "--size: %s\n", qPrintable(sizeError));
        return 2;
    }

    QStringList warnings;
    QSettings store;
    // A screenshot reads nothing from and writes nothing to the user's settings.
    envelope::ui::Settings settings(shot ? nullptr : &store);
    envelope::ui::MainWindow window(envelope::ui::loadPresetLibrary(&warnings), &settings);
    for (const QString& warning : warnings)
        std::fprintf(stderr, "presets: %s\n", qPrintable(warning));

    if (!parser.positionalArguments().isEmpty()) {
        QString error;
        if (!window.openFile(parser.positionalArguments().front(), &error)) {
            std::fprintf(stderr, "%s\n", qPrintable(error));
            if (shot)
                return 2;
            window.restoreSession();
        }
    } else {
        window.restoreSession();
    }
    if (parser.isSet(panel) && !window.selectPanel(parser.value(panel)))
        std::fprintf(stderr, "--panel: no panel '%s' (have: %s)\n", qPrintable(parser.value(panel)),
            qPrintable(window.panelIds().join(QStringLiteral(", "))));

    if (shot)
        return envelope::ui::writeScreenshot(&window, windowSize, parser.value(screenshot)) ? 0 : 1;
    window.show();
    const int status = app.exec();
    // Join the worker threads (Hub fetches, searches) before the statics and atexit handlers
    // run: OpenSSL's exit cleanup would otherwise strand an idle thread's state. A fetch still
    // running is given its own timeouts' worth, then left.
    QThreadPool::globalInstance()->waitForDone(30'000);
    return status;
}
