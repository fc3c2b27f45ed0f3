// The window's side of a run folder written by another process: opened, then followed.
#include <QLabel>
#include <QStatusBar>

#include "gui/main_window.h"
#include "run/run_catalog.h"
#include "run/run_folder.h"
#include "run/run_spec.h"
#include "util/error_text.h"
#include "widgets/config_form.h"
#include "widgets/run_controls.h"

namespace nope::gui {

void MainWindow::openRunFolder(const QString& dir) {
    if (refusedDuringRun("Opening a run folder")) {
        return;
    }
    try {
        const RunSpec spec = runSpecFromJson(readRunConfig(dir.toStdString()));
        auto follower = std::make_unique<SnapshotFollower>(dir.toStdString());
        std::vector<std::string> damaged;
        std::vector<Snapshot> snapshots = follower->poll(damaged);
        m_controller->reset();
        m_form->setSpec(spec);
        m_runFolder.clear();
        m_banner->hide();
        stopFollowing();
        Subject next;
        next.origin = SubjectOrigin::OpenedRun;
        next.spec = m_form->spec();
        next.path = dir;
        next.step = snapshots.empty() ? 0 : snapshots.back().step;
        beginSubject(next);
        resetHistory(std::move(snapshots));
        if (!m_history.empty()) {
            m_controls->showProgress(m_history.back());
        }
        m_follower = std::move(follower);
        m_followed = dir;
        readFollowedEvaluations();
        m_followTimer.start();
        statusBar()->showMessage(
            QString("browsing %1: %2 snapshots (new ones appear as the run writes them)")
                .arg(dir)
                .arg(m_history.size()));
        showDamagedSnapshots(damaged);
    } catch (const std::exception& e) {
        showProblem(QString("Cannot open the run folder: %1")
                        .arg(QString::fromStdString(nope::errorText(e))));
    }
}

void MainWindow::followRun() {
    if (!m_follower) {
        return;
    }
    std::vector<std::string> damaged;
    const std::vector<Snapshot> added = m_follower->poll(damaged);
    for (const Snapshot& snapshot : added) {
        addSnapshot(snapshot);  // the subject's newest step follows
    }
    if (readFollowedEvaluations()) {
        scheduleRedraw();
    }
    if (!added.empty()) {
        statusBar()->showMessage(QString("following %1: %2 snapshots, the newest at step %3")
                                     .arg(m_followed)
                                     .arg(m_history.size())
                                     .arg(m_history.back().step));
    }
    showDamagedSnapshots(damaged);
}

bool MainWindow::readFollowedEvaluations() {
    RunCurves curves;
    try {
        curves = readTrainingCurves(m_followed.toStdString());
    } catch (const std::exception&) {
        return false;  // a table being written, or damaged: the snapshots' evaluations stay
    }
    std::vector<EvalPoint> points;
    for (size_t i = 0; i < curves.evalSteps.size(); ++i) {
        points.push_back({curves.evalSteps[i], curves.evalTestLoss[i], curves.evalAccuracy[i]});
    }
    const size_t before = m_history.evaluations().size();
    m_history.setEvaluations(std::move(points));
    return m_history.evaluations().size() != before;
}

void MainWindow::stopFollowing() {
    m_followTimer.stop();
    m_follower.reset();
    m_followed.clear();
}

void MainWindow::showDamagedSnapshots(const std::vector<std::string>& damaged) {
    if (damaged.empty()) {
        return;
    }
    QStringList files;
    for (const auto& d : damaged) {
        files << QString::fromStdString(nope::withoutBacktrace(d));
    }
    showProblem(QString("%1 of the run's snapshot files cannot be read and are left out "
                        "(the other %2 are shown):\n%3")
                    .arg(damaged.size())
                    .arg(m_history.size())
                    .arg(files.join('\n')));
}

}  // namespace nope::gui
