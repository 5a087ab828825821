// The model group's Hub id box (issue 23) driven like a user against the local stand-in for the
// Hub (tests/hub/hub_server.py on 127.0.0.1; HF_ENDPOINT points at it, never the internet):
// typing an id and Enter fetches on a worker thread while the window keeps handling events,
// imports the model as a config.json file is imported (one undo step), and a refusal shows its
// message under the box and leaves the plan alone.
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QUndoStack>

#include <fstream>
#include <memory>
#include <sstream>

#include "controls/hubimportbox.h"
#include "controls/modelcontrols.h"
#include "document/modelimport.h"
#include "hubtestserver.h"
#include "model/model.h"
#include "panels/trainingpanel.h"
#include "plan/planio.h"
#include "uitestutil.h"

using namespace envelope;
using namespace envelope::ui;

namespace {

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

class TestHubImport : public uitest::PanelTest<TrainingPanel> {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_server = std::make_unique<hubtest::HubTestServer>(
            ENVELOPE_HUB_SERVER, ENVELOPE_TEST_DATA_DIR "/hf");
        if (m_server->port() == 0)
            QSKIP("python3 could not start tests/hub/hub_server.py");
        QVERIFY(m_cache.isValid());
        qputenv("HF_ENDPOINT", m_server->endpoint().c_str());
        qputenv("XDG_CACHE_HOME", m_cache.path().toUtf8());
        qunsetenv("HF_TOKEN");
        qunsetenv("HF_HUB_OFFLINE");
        qunsetenv("HF_HUB_DOWNLOAD_TIMEOUT");
    }
    void cleanupTestCase()
    {
        // Join the worker threads that fetched (the app does the same at exit): OpenSSL, which
        // libcurl starts, frees a thread's state when the thread ends, but its atexit cleanup
        // drops the key that keeps a still-idle pool thread's state reachable, and LeakSanitizer
        // then reported that state (904 bytes from CRYPTO_zalloc) in a CI run on 2026-11-27.
        QThreadPool::globalInstance()->waitForDone();
        m_server.reset();
    }

    void init()
    {
        QVERIFY(openPanel());
        m_box = m_panel->modelControls()->hubImportBox();
        QVERIFY(m_box);
    }
    void cleanup()
    {
        qunsetenv("HF_TOKEN");
        qunsetenv("HF_HUB_OFFLINE");
        qunsetenv("HF_HUB_DOWNLOAD_TIMEOUT");
        closePanel();
    }

    void fetchByIdImportsAsTheFileDoes()
    {
        const Plan before = m_doc->plan();
        QVERIFY(typeAndWait(QStringLiteral("test-org/mixtral-8x7b")));
        const Plan& plan = m_doc->plan();
        // Named by its id in the plan ({"hf_id": ...}), the config kept in the cache.
        QCOMPARE(plan.model.form, ModelChoice::Form::HubId);
        QCOMPARE(QString::fromStdString(plan.model.hubId), QStringLiteral("test-org/mixtral-8x7b"));
        const QString cached
            = m_cache.path() + "/envelope/hf/test-org/mixtral-8x7b/main/config.json";
        QVERIFY(QFileInfo::exists(cached));
        QVERIFY(writePlan(plan).find(R"("hf_id": "test-org/mixtral-8x7b")") != std::string::npos);
        // The saved plan reads back from the cache alone, as the app opens it.
        ReadOptions options;
        options.readHub = hubCacheReader();
        const Expected<Plan> reread = readPlan(writePlan(plan), m_doc->presets(), options);
        QVERIFY2(reread.ok(), reread.ok() ? "" : reread.error().toString().c_str());
        QVERIFY(reread->model == plan.model);
        // An id never fetched is not there: the message says how to fetch it.
        Plan other = plan;
        other.model.hubId = "test-org/never-fetched";
        const Expected<Plan> missing = readPlan(writePlan(other), m_doc->presets(), options);
        QVERIFY(!missing.ok());
        QCOMPARE(QString::fromStdString(missing.error().path), QStringLiteral("model.hf_id"));
        QVERIFY2(missing.error().message.find("Hub id box") != std::string::npos,
            missing.error().message.c_str());
        // The same architecture as importing the local file, named by its id.
        Expected<ModelArch> local
            = importHfConfig(readFile(ENVELOPE_TEST_DATA_DIR "/hf/mixtral-8x7b.json"));
        QVERIFY(local);
        ModelArch expected = *local;
        expected.name = "test-org/mixtral-8x7b";
        QVERIFY(plan.model.arch == expected);
        QCOMPARE(m_box->statusLabel()->text(), QStringLiteral("Imported test-org/mixtral-8x7b"));
        QVERIFY(m_panel->modelControls()->shapeNote()->text().startsWith(QStringLiteral(
            "Imported from the Hugging Face Hub, test-org/mixtral-8x7b: 32 layers")));
        // One undo step brings the previous model back.
        QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Import test-org/mixtral-8x7b"));
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().model == before.model);

        // The cache now serves it offline.
        qputenv("HF_HUB_OFFLINE", "1");
        QVERIFY(typeAndWait(QStringLiteral("test-org/mixtral-8x7b")));
        QCOMPARE(m_doc->plan().model.form, ModelChoice::Form::HubId);
    }

    // openai/gpt-oss-20b's config.json (tests/data/hf/gpt-oss-20b.json, as published) says
    // quant_method mxfp4: transformers quantizes its MoE experts only. The import sets the
    // serving formats with the model, in the same undo step, and says so under the box.
    void aQuantizedCheckpointBringsItsServingFormats()
    {
        const Plan before = m_doc->plan();
        QCOMPARE(before.serving.weightFormat, WeightFormat::Auto);
        QVERIFY(typeAndWait(QStringLiteral("test-org/gpt-oss-20b")));
        const Plan& plan = m_doc->plan();
        QCOMPARE(plan.serving.weightFormat, WeightFormat::Bf16);
        QCOMPARE(plan.serving.weightBits, 16);
        QCOMPARE(plan.serving.expertWeightFormat, std::optional(WeightFormat::Mxfp4));
        QVERIFY(!plan.serving.attentionWeightFormat.has_value());
        QCOMPARE(m_box->statusLabel()->text(),
            QStringLiteral("Imported test-org/gpt-oss-20b\nServing: bf16 weights with experts in "
                           "mxfp4 (its quantization_config)"));
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().serving == before.serving);
        QVERIFY(m_doc->plan().model == before.model);
    }

    void theWindowKeepsRunningWhileItFetches()
    {
        // slow-org answers after 5 s; the box gives up after 1 s, and the event loop runs all
        // along.
        qputenv("HF_HUB_DOWNLOAD_TIMEOUT", "1");
        const Plan before = m_doc->plan();
        QSignalSpy finished(m_box, &HubImportBox::finished);
        QLineEdit* edit = m_box->idEdit();
        edit->setFocus();
        QTest::keyClicks(edit, QStringLiteral("slow-org/x"));
        QElapsedTimer clock;
        clock.start();
        QTest::keyClick(edit, Qt::Key_Return);
        // Enter returned long before the 1 s the fetch takes: it is not on this thread.
        QVERIFY(clock.elapsed() < 500);
        QVERIFY(m_box->isBusy());
        QVERIFY(!m_box->idEdit()->isEnabled());
        QVERIFY(m_box->statusLabel()->text().startsWith(
            QStringLiteral("Fetching slow-org/x from http://127.0.0.1:")));
        QVERIFY(finished.wait(10'000));
        QCOMPARE(finished.front().front().toBool(), false);
        QVERIFY(m_box->idEdit()->isEnabled());
        QVERIFY(m_box->statusLabel()->text().contains(QStringLiteral("cannot reach the Hub")));
        QVERIFY(m_doc->plan() == before);
    }

    void refusalsShowTheirMessage()
    {
        const Plan before = m_doc->plan();
        QVERIFY(!typeAndWait(QStringLiteral("gated-org/llama-2-7b")));
        const QString gated = m_box->statusLabel()->text();
        QVERIFY2(gated.contains(QStringLiteral("accept the licence on the model page")),
            qPrintable(gated));
        QVERIFY(gated.contains(QStringLiteral("set HF_TOKEN")));
        QVERIFY(m_box->statusLabel()->isVisible());
        // The whole message shows: the row grows to the wrapped text's height, nothing is cut.
        QLabel* status = m_box->statusLabel();
        QTRY_VERIFY(status->height() >= status->heightForWidth(status->width()));
        uitest::keepScreenshot(m_panel.get(), QStringLiteral("hub-import-refused.png"));

        QVERIFY(!typeAndWait(QStringLiteral("nobody/nothing")));
        QVERIFY(m_box->statusLabel()->text().contains(QStringLiteral("no such repository")));

        // A malformed id is refused at once, naming the allowed form; nothing is fetched.
        const int requests = m_server->configRequests();
        QVERIFY(!typeAndWait(QStringLiteral("not-an-id")));
        QVERIFY(m_box->statusLabel()->text().contains(
            QStringLiteral("OWNER/NAME or OWNER/NAME@REVISION")));
        QCOMPARE(m_server->configRequests(), requests);
        QVERIFY(m_doc->plan() == before);

        // With the token the gated repo imports.
        qputenv("HF_TOKEN", hubtest::kToken);
        QVERIFY(typeAndWait(QStringLiteral("gated-org/llama-2-7b")));
        QCOMPARE(m_doc->plan().model.arch.layers, 32);
        QLabel* note = m_panel->modelControls()->shapeNote();
        QTRY_VERIFY(note->height() >= note->heightForWidth(note->width()));
        QTRY_VERIFY(status->height() >= status->heightForWidth(status->width()));
        uitest::keepScreenshot(m_panel.get(), QStringLiteral("hub-import.png"));
    }

private:
    void type(const QString& id)
    {
        QLineEdit* edit = m_box->idEdit();
        edit->setFocus();
        edit->selectAll();
        QTest::keyClicks(edit, id);
        QTest::keyClick(edit, Qt::Key_Return);
    }

    // Types `id`, presses Enter and waits for the fetch to end; true when it imported.
    bool typeAndWait(const QString& id)
    {
        QSignalSpy finished(m_box, &HubImportBox::finished);
        type(id);
        if (finished.isEmpty() && !finished.wait(15'000))
            return false;
        return finished.front().front().toBool();
    }

    std::unique_ptr<hubtest::HubTestServer> m_server;
    QTemporaryDir m_cache;
    HubImportBox* m_box = nullptr;
};

ENVELOPE_UI_TEST_MAIN(TestHubImport)
#include "test_hubimport.moc"
