#include "gui/main_window.h"

#include <algorithm>

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "gui/ablation_job.h"
#include "gui/export_menu.h"
#include "gui/mechanism_model.h"
#include "gui/run_cost_estimate.h"
#include "gui/sweep_runner.h"
#include "run/run_folder.h"
#include "util/error_text.h"
#include "widgets/attention_tab.h"
#include "widgets/compare_curves.h"
#include "widgets/compare_tab.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/explore_tab.h"
#include "widgets/heatmap_grid.h"
#include "widgets/mechanism_tab.h"
#include "widgets/plot_style.h"
#include "widgets/probe_panel.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/qcp.h"
#include "widgets/run_browser.h"
#include "widgets/run_controls.h"
#include "widgets/score_table.h"
#include "widgets/side_by_side.h"
#include "widgets/sweep_tab.h"
#include "widgets/theme.h"
#include "widgets/theme_colors.h"

namespace nope::gui {

namespace {

ui::RunControls::State controlState(TrainingController::State s) {
    using C = TrainingController::State;
    using R = ui::RunControls::State;
    switch (s) {
        case C::Empty:
            return R::Empty;
        case C::Busy:
            return R::Busy;
        case C::Ready:
            return R::Ready;
        case C::Training:
            return R::Training;
        case C::Paused:
            return R::Paused;
    }
    return R::Empty;
}

constexpr const char* kModelFileIsNotTrained =
    "An opened model file is for analysis and probes, not for training: press Reset and Train "
    "for a new model, or use File > Resume from checkpoint to continue a run.";

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_form(new ui::ConfigForm),
      m_heatmaps(new ui::HeatmapGrid),
      m_attention(new ui::AttentionTab),
      m_projector(new ui::ProjectorTab),
      m_explore(new ui::ExploreTab),
      m_curves(new ui::CurvePanel),
      m_scores(new ui::ScoreTable),
      m_probes(new ui::ProbeTab),
      m_compare(new ui::CompareTab),
      m_sweep(new ui::SweepTab),
      m_mechanism(new ui::MechanismTab),
      m_sweepRunner(new SweepRunner(m_sweep, this)),
      m_ablationJob(new AblationJob(this)),
      m_mechanismModel(std::make_unique<MechanismModel>()),
      m_views(new QTabWidget),
      m_controls(new ui::RunControls),
      m_controller(new TrainingController(this)),
      m_subjectLine(new QLabel),
      m_banner(new QLabel),
      m_slider(new QSlider(Qt::Horizontal)),
      m_sliderText(new QLabel("no snapshots yet")),
      m_view(new QComboBox),
      m_fixedRange(new QCheckBox("colour range [-1, 1]")),
      m_costEstimate(new RunCostEstimate(this)) {
    setWindowTitle("NoPEScope");
    ui::rememberSystemTheme();

    buildLayout();
    connect(m_costEstimate, &RunCostEstimate::estimated, this, &MainWindow::onCostEstimated);
    resize(defaultSize());
    m_redrawTimer.setSingleShot(true);  // at most 10 redraws a second, whatever the snapshot rate
    m_reinitTimer.setSingleShot(true);  // a task chosen with the keyboard passes others on its way
    m_reinitTimer.setInterval(300);
    connect(&m_reinitTimer, &QTimer::timeout, this, &MainWindow::initializeModel);
    m_followTimer.setInterval(kFollowIntervalMs);
    connect(&m_followTimer, &QTimer::timeout, this, &MainWindow::followRun);
    buildMenus();
    connectParts();
    beginSubject({});
    onFormChanged();  // the Sweep tab starts from the form's task
}

MainWindow::~MainWindow() {
    // The children are deleted after this class's part of the window is gone (by ~QObject): what
    // they signal while they shut down (the controller's last change of state) must not reach
    // the slots of a window that is no longer one.
    for (QObject* child : findChildren<QObject*>()) {
        QObject::disconnect(child, nullptr, this, nullptr);
    }
}

void MainWindow::report(const QString& error, const QString& done) {
    error.isEmpty() ? statusBar()->showMessage(done) : showProblem(error);
}

bool MainWindow::startFresh() {
    if (!m_form->isValid()) {
        showProblem("The form has problems: " + m_form->errors().join("; "));
        return false;
    }
    m_banner->hide();
    m_runFolder.clear();
    stopFollowing();
    return true;
}

bool MainWindow::refusedDuringRun(const QString& action) {
    if (!runGoing()) {
        return false;
    }
    showProblem(QString("%1 is not possible while a run is going on: press Stop first (the run "
                        "folder keeps everything so far).")
                    .arg(action));
    return true;
}

void MainWindow::startUp() {
    m_firstRun = true;
    initializeModel();
}

void MainWindow::initializeModel() {
    m_reinitTimer.stop();
    if (refusedDuringRun("Initialize") || !startFresh()) {
        return;
    }
    Subject next;
    next.origin = SubjectOrigin::Initialized;
    next.spec = m_form->spec();
    next.phase = SubjectPhase::Building;
    beginSubject(next);
    m_controller->initialize(next.spec);
}

// Longer than 60 lines for a reason: the three ways Train starts (a new model, a checkpoint
// continued into a new folder, this window's run continued) each set what the window shows.
void MainWindow::startTraining() {
    using State = TrainingController::State;
    const State state = m_controller->state();
    if (state == State::Busy || state == State::Training || state == State::Paused) {
        return;  // the button is disabled then; a shortcut pressed meanwhile does nothing
    }
    if (m_subject.origin == SubjectOrigin::ModelFile) {
        showProblem(kModelFileIsNotTrained);
        return;
    }
    const bool continuing = m_controller->hasModel() && m_controller->modelStep() > 0;
    if (!continuing && !m_form->isValid()) {
        showProblem("The form has problems: " + m_form->errors().join("; "));
        return;
    }
    m_reinitTimer.stop();
    m_banner->hide();
    stopFollowing();
    const RunSpec spec = m_form->spec();
    const auto newFolder = [&spec] {
        return QString::fromStdString(
            std::filesystem::absolute(newRunFolder("window", taskName(spec.task), spec.preset))
                .string());
    };
    if (!continuing) {
        m_runFolder = newFolder();
        Subject next;
        next.origin = SubjectOrigin::Trained;
        next.spec = spec;
        next.path = m_runFolder;
        next.phase = SubjectPhase::Training;
        beginSubject(next);  // the run's own step 0 comes first
    } else if (m_runFolder.isEmpty()) {
        // a checkpoint continued: its history stays, the run goes on into a new folder
        m_runFolder = newFolder();
        m_subject.source = m_subject.path;
        m_subject.origin = SubjectOrigin::Trained;
        m_subject.path = m_runFolder;
        m_subject.phase = SubjectPhase::Training;
        showSubject();
    } else {
        m_subject.phase = SubjectPhase::Training;
        showSubject();
    }
    m_followLatest = true;
    m_controller->train(spec, m_runFolder);
}

void MainWindow::stopTraining() {
    m_controller->stop();
}

void MainWindow::resetModel() {
    m_controller->reset();
    m_runFolder.clear();
    m_banner->hide();
    stopFollowing();
    beginSubject({});
    statusBar()->showMessage("reset: no model; run folders on disk keep what was written");
}

void MainWindow::runProbes() {
    const ProbeConfig config = m_probes->config(m_form->spec().train.probe);
    m_probes->showProgress(0, config.epochs * static_cast<int>(config.features.size()));
    m_probes->showMessage("probing...");
    showView(m_probes);
    m_controller->runProbes(config);
}

void MainWindow::updateControls() {
    const bool modelFile = m_subject.origin == SubjectOrigin::ModelFile;
    const bool trained = m_controller->hasModel() && m_controller->modelStep() > 0 && !modelFile;
    const auto state = m_controller->state();
    m_controls->setState(controlState(state), m_form->isValid(), trained,
                         modelFile ? QString(kModelFileIsNotTrained) : QString());
    const bool running =
        state == TrainingController::State::Training || state == TrainingController::State::Paused;
    // a trained or loaded model keeps its settings until Reset
    m_form->setEnabled(!running && !trained && !modelFile &&
                       m_subject.origin != SubjectOrigin::Checkpoint);
    m_probes->setRunnable(m_controller->hasModel() &&
                          (state == TrainingController::State::Ready || running));
}

QString MainWindow::problem() const {
    return m_banner->isHidden() ? QString() : m_banner->text();
}

void MainWindow::showProblem(const QString& message) {
    m_banner->setText(message);
    m_banner->show();
    statusBar()->showMessage(message.section('\n', 0, 0));
}

void MainWindow::styleBanner() {
    const bool dark = ui::isDark(palette());
    m_banner->setStyleSheet(QString("background: %1; color: %2; padding: 6px; border-radius: 3px")
                                .arg(ui::themeColor(ui::ThemeColor::BannerBackground, dark).name(),
                                     ui::themeColor(ui::ThemeColor::BannerText, dark).name()));
}

QStringList MainWindow::exportAll(const QString& dir, double scale) {
    return m_exportMenu->exportAll(dir, scale);
}

void MainWindow::openModel(const QString& path) {
    if (refusedDuringRun("Opening a model") || !startFresh()) {
        return;
    }
    Subject next;
    next.origin = SubjectOrigin::ModelFile;
    next.spec = m_form->spec();
    next.path = path;
    next.phase = SubjectPhase::Building;
    beginSubject(next);
    m_controller->openModel(path, m_form->spec());
}

void MainWindow::resumeFromCheckpoint(const QString& path) {
    if (refusedDuringRun("Resuming from a checkpoint")) {
        return;
    }
    m_banner->hide();
    m_runFolder.clear();
    stopFollowing();
    Subject next;
    next.origin = SubjectOrigin::Checkpoint;
    next.spec = m_form->spec();  // until the checkpoint's own arrive
    next.path = path;
    next.phase = SubjectPhase::Building;
    beginSubject(next);
    m_controller->loadCheckpoint(path);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    m_sweepRunner->shutDown();  // a running sweep stops its runs; its folder stays resumable
    using State = TrainingController::State;
    const State state = m_controller->state();
    if (state == State::Training || state == State::Paused || state == State::Busy) {
        statusBar()->showMessage("stopping the run...");
        if (!m_controller->shutdown(1500) && m_forcedExitAllowed) {
            // A step is still computing. Every file of the run is written atomically, so what is
            // on disk is complete: leave now rather than keep the user waiting.
            std::fflush(nullptr);
            std::_Exit(0);
        }
    }
    event->accept();
}

void MainWindow::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        styleBanner();
    }
    QMainWindow::changeEvent(event);
}

}  // namespace nope::gui
