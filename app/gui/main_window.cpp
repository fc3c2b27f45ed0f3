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

QString heatmapTitle(const LayerScores& row) {
    const QString name = row.layer == 0 ? QString("embedding") : QString("layer %1").arg(row.layer);
    return QString("%1  %2 ± %3")
        .arg(name)
        .arg(row.adjacencyMean, 0, 'f', 3)
        .arg(row.adjacencyStd, 0, 'f', 3);
}

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

// The snapshot of the best checkpoint: the trainer snapshots every new best and flags it.
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
      m_banner(new QLabel),
      m_slider(new QSlider(Qt::Horizontal)),
      m_sliderText(new QLabel("no snapshots yet")),
      m_view(new QComboBox),
      m_fixedRange(new QCheckBox("colour range [-1, 1]")) {
    setWindowTitle("NoPEScope");
    resize(1500, 900);
    ui::rememberSystemTheme();

    buildLayout();
    m_redrawTimer.setSingleShot(true);  // at most 10 redraws a second, whatever the snapshot rate
    m_followTimer.setInterval(kFollowIntervalMs);
    connect(&m_followTimer, &QTimer::timeout, this, &MainWindow::followRun);
    buildMenus();
    connectParts();
    updateControls();
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
    resetHistory({});
    return true;
}

void MainWindow::startUp() {
    m_firstRun = true;
    initializeModel();
}

void MainWindow::initializeModel() {
    if (startFresh()) {
        m_controller->initialize(m_form->spec());
    }
}

void MainWindow::startTraining() {
    const bool continuing = m_controller->hasModel() && m_controller->modelStep() > 0;
    if (!continuing && !m_form->isValid()) {
        showProblem("The form has problems: " + m_form->errors().join("; "));
        return;
    }
    m_banner->hide();
    if (!continuing || m_runFolder.isEmpty()) {
        const RunSpec spec = m_form->spec();
        m_runFolder = QString::fromStdString(
            std::filesystem::absolute(newRunFolder("window", taskName(spec.task), spec.preset))
                .string());
    }
    m_followLatest = true;
    stopFollowing();
    m_controller->train(m_form->spec(), m_runFolder);
}

void MainWindow::runProbes() {
    const ProbeConfig config = m_probes->config(m_form->spec().train.probe);
    m_probes->showProgress(0, config.epochs * static_cast<int>(config.features.size()));
    m_probes->showMessage("probing...");
    m_views->setCurrentWidget(m_probes);
    m_controller->runProbes(config);
}

void MainWindow::addProbes(const ProbeReport& report, int step) {
    m_history.addProbes(report, step);
    m_probes->showMessage(QString("step %1: %2 probes in %3 s")
                              .arg(step)
                              .arg(report.results.size())
                              .arg(report.seconds, 0, 'f', 1));
    scheduleRedraw();
}

void MainWindow::resetHistory(std::vector<Snapshot> history) {
    m_history.reset(std::move(history));
    m_followLatest = true;
    m_slider->blockSignals(true);
    m_slider->setRange(0, std::max(0, static_cast<int>(m_history.size()) - 1));
    m_slider->setValue(m_slider->maximum());
    m_slider->blockSignals(false);
    updateViewChoices();
    scheduleRedraw();
}

void MainWindow::addSnapshot(const Snapshot& snapshot) {
    m_history.add(snapshot);  // e.g. Train's step-0 snapshot replaces Initialize's
    const bool follow = m_followLatest;
    m_slider->blockSignals(true);
    m_slider->setRange(0, static_cast<int>(m_history.size()) - 1);
    if (follow) {
        m_slider->setValue(m_slider->maximum());
    }
    m_slider->blockSignals(false);
    if (snapshot.step > 0 || snapshot.eval.total > 0) {
        m_controls->showProgress(snapshot);
    }
    if (snapshot.analysis.nonFinite) {  // the heatmaps of those layers mean nothing: say why
        showProblem(QString("Step %1: %2.")
                        .arg(snapshot.step)
                        .arg(QString::fromStdString(snapshot.analysis.nonFiniteMessage())));
    }
    updateViewChoices();
    scheduleRedraw();
}

void MainWindow::addEvaluation(const Snapshot& progress) {
    if (progress.eval.total > 0 && !progress.eval.cancelled) {
        m_history.addEvaluation(
            {progress.eval.step, progress.eval.testLoss, progress.eval.accuracy});
        scheduleRedraw();
    }
}

void MainWindow::scheduleRedraw() {
    if (m_redrawTimer.isActive()) {
        return;  // snapshots that come faster are folded into the redraw already due
    }
    // at most one redraw per 100 ms, counted from the previous one: a snapshot after a quiet
    // spell is drawn at once (still queued, so that a burst of snapshots is drawn once)
    const qint64 since = m_sinceRedraw.isValid() ? m_sinceRedraw.elapsed() : kRedrawIntervalMs;
    m_redrawTimer.start(static_cast<int>(std::max<qint64>(0, kRedrawIntervalMs - since)));
}

const Snapshot* MainWindow::current() const {
    const int index = m_slider->value();
    if (m_history.empty() || index < 0 || index >= static_cast<int>(m_history.size())) {
        return nullptr;
    }
    return &m_history[static_cast<size_t>(index)];
}

void MainWindow::updateViewChoices() {
    const Snapshot* s = current();
    const int prompts = s ? static_cast<int>(s->analysis.keptPrompts.size()) : 0;
    const int keep = m_view->currentIndex();
    m_view->blockSignals(true);
    m_view->clear();
    m_view->addItem("mean over prompts");
    for (int k = 0; k < prompts; ++k) {
        QString text = QString::fromStdString(s->analysis.keptPrompts[static_cast<size_t>(k)]);
        m_view->addItem(QString("prompt %1: %2").arg(k + 1).arg(text.remove('\n')));
    }
    m_view->setCurrentIndex(keep >= 0 && keep < m_view->count() ? keep : 0);
    m_view->blockSignals(false);
}

void MainWindow::redraw() {
    ++m_redraws;
    m_sinceRedraw.start();
    const CapturePoint point = m_form->capturePoint();
    const Snapshot* s = current();
    if (!s) {
        m_heatmaps->setHeatmaps({});
        m_attention->setHistory({}, -1);
        m_projector->setHistory({}, -1);
        m_curves->setHistory({}, {}, point, -1);
        m_scores->setScores({}, point);
        m_probes->panel()->setReports(nullptr, nullptr, {});
        m_sliderText->setText("no snapshots yet");
        return;
    }
    const int prompt = m_view->currentIndex() - 1;  // -1: mean over prompts
    std::vector<ui::Heatmap> maps;
    for (const LayerScores& row : s->analysis.rows) {
        if (row.point != CapturePoint::Embedding && row.point != point) {
            continue;
        }
        ui::Heatmap h;
        h.title = heatmapTitle(row);
        h.size = s->analysis.seqLen;
        const bool kept = prompt >= 0 && prompt < static_cast<int>(row.promptMatrices.size());
        h.values = kept ? row.promptMatrices[static_cast<size_t>(prompt)] : row.meanMatrix;
        if (kept) {
            h.tokens = ui::promptTokens(s->analysis.keptPrompts[static_cast<size_t>(prompt)]);
        }
        maps.push_back(std::move(h));
    }
    m_heatmaps->setHeatmaps(std::move(maps));
    m_attention->setHistory(m_history.all(), m_slider->value());
    m_projector->setHistory(m_history.all(), m_slider->value());
    m_curves->setHistory(m_history.all(), m_history.evaluations(), point, s->step);

    const Snapshot* init = m_history.front().step == 0 ? &m_history.front() : nullptr;
    const Snapshot* best = m_history.best();
    int probeStep = -1;
    const ProbeReport* shownProbes =
        m_history.probesAt(static_cast<size_t>(m_slider->value()), &probeStep);
    const ProbeReport* startProbes = m_history.initProbes();
    m_probes->panel()->setPoint(point);
    m_probes->panel()->setReports(
        startProbes, probeStep > 0 ? shownProbes : nullptr,
        probeStep > 0 ? QString("step %L1").arg(probeStep) : QString("current"));
    std::vector<ui::ScoreRow> rows{{"init", init ? &init->analysis : nullptr, startProbes}};
    if (s != init) {
        rows.push_back({QString("step %1").arg(s->step), &s->analysis,
                        probeStep == s->step ? shownProbes : nullptr});
    }
    if (best && best != s) {
        rows.push_back(
            {QString("best (step %1, %2%)").arg(best->step).arg(best->eval.accuracy, 0, 'f', 1),
             &best->analysis, best->probes.empty() ? nullptr : &best->probes});
    }
    m_scores->setScores(rows, point);
    m_sliderText->setText(QString("step %1 (%2 of %3)")
                              .arg(s->step)
                              .arg(m_slider->value() + 1)
                              .arg(m_history.size()));
}

void MainWindow::updateControls() {
    const bool trained = m_controller->hasModel() && m_controller->modelStep() > 0;
    const auto state = m_controller->state();
    m_controls->setState(controlState(state), m_form->isValid(), trained);
    const bool running =
        state == TrainingController::State::Training || state == TrainingController::State::Paused;
    m_form->setEnabled(!running && !trained);  // a trained model keeps its settings until Reset
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
    if (startFresh()) {
        m_controller->openModel(path, m_form->spec());
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
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
