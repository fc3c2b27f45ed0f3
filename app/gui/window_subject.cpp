// The window's subject (gui/subject.h): another model or run replaces the one shown, and every
// view starts over for it; the one shown changes step or phase, and the line above the views and
// the title follow. Part of MainWindow, in a file of its own.
#include <QFileInfo>
#include <QLabel>
#include <QStatusBar>

#include <nlohmann/json.hpp>

#include "gui/main_window.h"
#include "gui/run_cost_estimate.h"
#include "run/run_folder.h"
#include "training/run_cost.h"
#include "util/error_text.h"
#include "util/files.h"
#include "widgets/attention_tab.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/explore_tab.h"
#include "widgets/heatmap_grid.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/run_controls.h"
#include "widgets/sweep_tab.h"

namespace nope::gui {

namespace {

constexpr const char* kFirstRunHint =
    "This is the model at initialization: each heatmap is one layer's self-cosine similarity. "
    "Press Train to watch it change as the model learns, or pick another task or preset on the "
    "left.";

// What the loss plot says while it has nothing to draw.
QString trainingEmptyText(const Subject& s) {
    switch (s.origin) {
        case SubjectOrigin::Trained:
            return "The training loss appears after the first step.";
        case SubjectOrigin::OpenedRun:
            return "This run folder records no loss or evaluation yet.";
        case SubjectOrigin::ModelFile:
            return "A model file has no training curves:\nits scores are in the table below.";
        case SubjectOrigin::Checkpoint:
            return "Press Continue to train on from the checkpoint's step.";
        default:
            return {};  // the plot's own
    }
}

// Why the Explore tab cannot ask the model of this subject now.
QString exploreWhyNot(const Subject& s) {
    if (s.origin == SubjectOrigin::OpenedRun) {
        return "A run folder is browsed from its files, without its model: File > Open model on "
               "the folder loads its best checkpoint to ask it.";
    }
    if (s.phase == SubjectPhase::Building) {
        return "The model is being built or loaded: the prompt is analysed once it is ready.";
    }
    return {};  // the tab's own: there is no model yet
}

}  // namespace

QString MainWindow::subjectText() const {
    return m_subjectLine->text();
}

bool MainWindow::formDiffers() const {
    if (m_subject.empty() || !m_form->isEnabled()) {
        return false;  // nothing shown, or a form that shows the subject's own settings
    }
    return specKey(m_form->spec()) != specKey(m_subject.spec);
}

void MainWindow::beginSubject(Subject subject) {
    m_reinitTimer.stop();
    m_subject = std::move(subject);
    m_controls->clearProgress();
    m_probes->showMessage(QString());
    m_probes->showProgress(0, 0);
    applyEmptyTexts();
    resetHistory({});
    m_explore->forgetResult();
    updateExploreModel();
    updateControls();
    showSubject();
}

void MainWindow::showSubject() {
    const int shown = shownStep();
    const QString line = subjectLine(m_subject, shown, formDiffers());
    if (m_subjectLine->text() != line) {
        m_subjectLine->setText(line);
        m_subjectLine->setToolTip(line);
    }
    setWindowTitle(subjectTitle(m_subject, shown));
}

void MainWindow::applyEmptyTexts() {
    const QString why = emptyReason(m_subject);
    m_heatmaps->setEmptyText(why);
    m_attention->setEmptyText(why);
    m_attention->heatmaps()->setEmptyText(why);
    m_projector->setEmptyText(why);
    const bool stepUnknown = m_subject.origin == SubjectOrigin::ModelFile && m_subject.step < 0;
    m_curves->setEmptyTexts(stepUnknown ? QString("This model file does not say its step:\nit has "
                                                  "no place on a curve over steps;\nits scores "
                                                  "are in the table below.")
                                        : why,
                            trainingEmptyText(m_subject));
}

void MainWindow::updateExploreModel() {
    using State = TrainingController::State;
    const State state = m_controller->state();
    const bool available = m_controller->hasModel() && state != State::Busy &&
                           state != State::Empty && m_subject.origin != SubjectOrigin::OpenedRun;
    m_explore->setModelAvailable(available, exploreWhyNot(m_subject));
}

void MainWindow::onModelReady(const ModelReady& model) {
    if (model.origin != ModelOrigin::Initialized) {
        m_form->setSpec(model.spec);  // a saved model brings its own settings
    }
    m_subject.spec = model.origin == ModelOrigin::Initialized ? m_subject.spec : m_form->spec();
    m_subject.phase = SubjectPhase::Idle;
    if (model.origin != ModelOrigin::Initialized) {
        m_subject.path = model.path;
        m_subject.step = model.step;
    }
    if (model.origin == ModelOrigin::Checkpoint) {
        for (const Snapshot& s : snapshotsBefore(model.path, model.step)) {
            m_history.add(s);  // its run's history up to the checkpoint, in step order
        }
        resetHistory(std::vector<Snapshot>(m_history.all()));
    }
    applyEmptyTexts();
    statusBar()->showMessage(m_firstRun ? kFirstRunHint : model.message);
    m_firstRun = false;
    updateControls();
    updateExploreModel();
    showSubject();
    scheduleRedraw();
}

std::vector<Snapshot> MainWindow::snapshotsBefore(const QString& checkpoint, int step) {
    const std::filesystem::path folder =
        std::filesystem::path(checkpoint.toStdString()).parent_path();
    if (!std::filesystem::exists(folder / RunFiles::kConfig)) {
        return {};  // a checkpoint outside a run folder: its own snapshot only
    }
    std::vector<Snapshot> before;
    try {
        std::vector<std::string> damaged;
        for (Snapshot& s : SnapshotFollower(folder).poll(damaged)) {
            if (s.step < step) {
                before.push_back(std::move(s));
            }
        }
    } catch (const std::exception&) {
        return {};  // its folder cannot be read: the checkpoint's snapshot alone
    }
    return before;
}

void MainWindow::onRunFinished(const QString& message, bool ok, bool stopped) {
    statusBar()->showMessage(message);
    if (!ok) {
        showProblem(message);
    }
    m_subject.liveStep = -1;  // the run's last step is its newest snapshot's (Stop takes one)
    if (m_subject.origin == SubjectOrigin::Trained) {
        m_subject.phase = !ok       ? SubjectPhase::Failed
                          : stopped ? SubjectPhase::Stopped
                                    : SubjectPhase::Finished;
        if (!QFileInfo::exists(m_subject.path)) {  // stopped before it wrote anything
            m_subject.path.clear();
            m_runFolder.clear();
        }
        applyEmptyTexts();
    }
    updateControls();
    showSubject();
    scheduleRedraw();
}

void MainWindow::onStateChanged(TrainingController::State state) {
    using State = TrainingController::State;
    if (m_subject.origin == SubjectOrigin::Trained &&
        (state == State::Training || state == State::Paused)) {
        m_subject.phase = state == State::Training ? SubjectPhase::Training : SubjectPhase::Paused;
    }
    if (state == State::Training) {
        m_costEstimate->cancel();  // the estimate shown stays; one waiting would time a busy CPU
    }
    updateControls();
    updateExploreModel();
    showSubject();
}

void MainWindow::onFormChanged() {
    showSubject();
    estimateCost();
    const QString task = QString::fromStdString(taskName(m_form->spec().task));
    if (task != m_sweepTask) {  // a sweep starts from the form's task, until it changes again
        m_sweepTask = task;
        m_sweep->setTask(task);
    }
    // a new task makes the model at init another one: it is built again, not left on screen
    if (m_subject.origin == SubjectOrigin::Initialized && !runGoing() && m_form->isValid() &&
        m_form->spec().task != m_subject.spec.task) {
        m_reinitTimer.start();
    }
}

void MainWindow::estimateCost() {
    m_form->setEstimate({});
    if (!m_form->isValid() || runGoing()) {
        m_costEstimate->cancel();  // a run keeps the machine busy: a timing now would lie
        return;
    }
    const RunSpec spec = m_form->spec();
    if (runProductFlops(spec) < kSlowestFlops * 3600.0) {
        m_costEstimate->cancel();  // under an hour even on a slow machine: not timed
        return;
    }
    m_form->setEstimate("Estimating this run's time on this machine...");
    m_costEstimate->request(spec);
}

void MainWindow::onCostEstimated(const QString& key, double seconds, const QString& text) {
    if (!m_form->isValid() || key != QString::fromStdString(specKey(m_form->spec()))) {
        return;  // the form changed since: its own estimate follows
    }
    if (seconds < 0.0) {
        m_form->setEstimate("This run's time could not be estimated: " + text);
    } else if (seconds >= 3600.0) {
        m_form->setEstimate("This run: " + text);
    } else {
        m_form->setEstimate({});
    }
}

void MainWindow::onTick(const Snapshot& progress) {
    m_controls->showProgress(progress);
    if (m_subject.origin == SubjectOrigin::Trained) {
        m_subject.liveStep = progress.step;
    }
    m_history.addLiveLoss({progress.step, progress.trainLoss});
    scheduleRedraw();
}

QString MainWindow::loadSession(const QString& path) {
    if (refusedDuringRun("Loading a session")) {
        return problem();
    }
    QString error;
    try {
        const std::string text = readFile(path.toStdString());
        error = m_form->loadSessionJson(QByteArray::fromStdString(text));
        if (error.isEmpty()) {
            error = loadTriedPrompts(nlohmann::json::parse(text));
        }
    } catch (const std::exception& e) {
        error = QString::fromStdString(nope::errorText(e));
    }
    if (!error.isEmpty()) {
        showProblem(QString("%1: %2").arg(path, error));
        return problem();
    }
    statusBar()->showMessage("loaded " + path);
    initializeModel();  // the session's model at init is what the window now shows
    return {};
}

}  // namespace nope::gui
