#include "window/mainwindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QUndoStack>

#include "document/plandocument.h"
#include "document/settings.h"
#include "panels/planpanel.h"
#include "panels/rlpanel.h"
#include "panels/servingpanel.h"
#include "panels/throughputpanel.h"
#include "panels/trainingpanel.h"
#include "plan/planio.h"
#include "widgets/appresources.h"
#include "widgets/pagetabs.h"
#include "window/calibratedialog.h"

namespace envelope::ui {

MainWindow::MainWindow(PresetLibrary presets, Settings* settings, QWidget* parent)
    : QMainWindow(parent)
    , m_settings(settings)
    , m_document(new PlanDocument(std::move(presets), settings, this))
    , m_tabs(new PageTabs(this))
{
    setWindowIcon(applicationIcon());
    m_training = new TrainingPanel(m_document);
    m_training->setSideWidget(new ThroughputPanel(m_document));
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);
    addPanel(QStringLiteral("training"), tr("Training"), m_training);
    addPanel(QStringLiteral("serving"), tr("Serving"), new ServingPanel(m_document));
    addPanel(QStringLiteral("rl"), tr("RL post-training"), new RlPanel(m_document));
    auto* planner = new PlanPanel(m_document);
    addPanel(QStringLiteral("planner"), tr("Find a plan"), planner);
    m_planner = planner;
    // Find a plan searches what the user was looking at (set before the tab shows, since its
    // first show starts a search): the tab bar reports a click before the switch.
    connect(m_tabs->tabBar(), &QTabBar::tabBarClicked, this, &MainWindow::prepareSwitch);
    setAcceptDrops(true);
    createMenus();

    connect(settings, &Settings::recentFilesChanged, this, &MainWindow::updateRecentMenu);
    connect(m_document, &PlanDocument::planChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::filePathChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::modifiedChanged, this, &MainWindow::setWindowModified);
    connect(m_document, &PlanDocument::validationChanged, this, [this](const QString& message) {
        if (!message.isEmpty())
            statusBar()->showMessage(message);
        else
            statusBar()->clearMessage();
    });
    connect(m_training, &TrainingPanel::importRequested, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Import Hugging Face config.json"), QString(), tr("config.json (*.json)"));
        if (path.isEmpty())
            return;
        QString error;
        if (!importHfConfigFile(path, &error))
            showError(tr("Could not import %1").arg(QFileInfo(path).fileName()), error);
    });

    if (!restoreGeometry(settings->windowGeometry()))
        resize(1400, 900);
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::addPanel(const QString& id, const QString& title, QWidget* panel)
{
    m_tabs->addTab(panel, title);
    m_panelIds.push_back(id);
}

bool MainWindow::selectPanel(const QString& id)
{
    const int index = int(m_panelIds.indexOf(id));
    if (index < 0)
        return false;
    prepareSwitch(index);
    m_tabs->setCurrentIndex(index);
    return true;
}

void MainWindow::prepareSwitch(int index)
{
    if (m_tabs->widget(index) != m_planner || m_tabs->currentIndex() == index)
        return;
    const QString from = m_panelIds.value(m_tabs->currentIndex());
    if (from == QLatin1String("serving"))
        m_planner->setPreferredKind(SearchKind::Serving);
    else if (from == QLatin1String("rl"))
        m_planner->setPreferredKind(SearchKind::Rl);
    else if (from == QLatin1String("training"))
        m_planner->setPreferredKind(SearchKind::Training);
}

QStringList MainWindow::panelIds() const
{
    return m_panelIds;
}

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), QKeySequence::New, this, [this] {
        if (maybeSave())
            newPlan();
    });
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
    file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, &MainWindow::saveAs);
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    exportMenu->addAction(tr("Memory chart as &PNG…"), this, &MainWindow::exportChartPng);
    exportMenu->addAction(tr("Memory chart as &SVG…"), this, &MainWindow::exportChartSvg);
    exportMenu->addAction(tr("&Window as PNG…"), this, &MainWindow::exportWindowPng);
    exportMenu->addAction(tr("Summary as &Markdown to clipboard"), QKeySequence(tr("Ctrl+Shift+C")),
        this, &MainWindow::copySummaryMarkdown);
    exportMenu->addAction(tr("&Engine config…"), this, &MainWindow::exportEngineConfig);
    file->addAction(tr("&Import engine config…"), this, &MainWindow::importEngineConfig);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    m_undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    m_undo->setShortcut(QKeySequence::Undo);
    m_redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    m_redo->setShortcut(QKeySequence::Redo);
    edit->addAction(m_undo);
    edit->addAction(m_redo);
    edit->addSeparator();
    edit->addAction(tr("&Pin this plan"), QKeySequence(tr("Ctrl+Shift+P")), this, &MainWindow::pinPlan);
    edit->addAction(tr("C&lear pins"), this, &MainWindow::clearPins);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QMenu* units = view->addMenu(tr("&Units"));
    m_unitsGroup = new QActionGroup(this);
    for (auto [label, value] : { std::pair { tr("&GB (10^9 bytes)"), ByteUnits::GB },
             std::pair { tr("G&iB (2^30 bytes)"), ByteUnits::GiB } }) {
        QAction* action = units->addAction(label);
        action->setCheckable(true);
        action->setChecked(m_settings->units() == value);
        action->setData(int(value));
        m_unitsGroup->addAction(action);
        connect(action, &QAction::triggered, this,
            [this, value = value] { m_settings->setUnits(value); });
    }
    connect(m_settings, &Settings::unitsChanged, this, [this](ByteUnits value) {
        for (QAction* action : m_unitsGroup->actions())
            action->setChecked(action->data().toInt() == int(value));
    });

    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    tools->addAction(tr("&Calibrate from a measured run…"), this, &MainWindow::calibrateFromRun);
    updateRecentMenu();
}

void MainWindow::calibrateFromRun()
{
    CalibrateDialog dialog(m_document, this); // OK applies the fit as one undo step
    dialog.exec();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = m_settings->recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        const QString path = files[i];
        m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()),
            this, [this, path] {
                if (!maybeSave())
                    return;
                QString error;
                if (!openFile(path, &error))
                    showError(tr("Could not open %1").arg(path), error);
            });
    }
    m_recentMenu->addSeparator();
    QAction* clear
        = m_recentMenu->addAction(tr("&Clear list"), m_settings, &Settings::clearRecentFiles);
    clear->setEnabled(!files.isEmpty());
}

void MainWindow::updateTitle()
{
    const QString name = QString::fromStdString(m_document->plan().name);
    setWindowTitle(tr("%1[*] — Envelope").arg(name.isEmpty() ? tr("Untitled plan") : name));
    setWindowModified(m_document->isModified());
}

void MainWindow::showError(const QString& title, const QString& message)
{
    statusBar()->showMessage(message, 10000);
    // Window-modal but not blocking: the event loop (and tests) keep running.
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("errorBox"));
    box->open();
}

bool MainWindow::maybeSave()
{
    if (!m_document->isModified())
        return true;
    const int answer = m_savePrompt
        ? m_savePrompt()
        : QMessageBox::warning(this, tr("Unsaved changes"),
            tr("The plan has unsaved changes. Save them?"),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    m_settings->setLastSessionPlan(QString::fromStdString(writePlan(m_document->plan())));
    m_settings->setWindowGeometry(saveGeometry());
    event->accept();
}

} // namespace envelope::ui
