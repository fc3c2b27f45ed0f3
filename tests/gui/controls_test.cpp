// The window's controls around the model it shows: the progress line between evaluations, the
// probes at initialization that give way to Train and can be cancelled, what is kept between
// sessions, and the Sweep tab starting from the form's task.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>

#include <algorithm>
#include <iterator>

#include "gui/ablation_job.h"
#include "gui/main_window.h"
#include "gui/training_controller.h"
#include "gui_fixture.h"
#include "widgets/ablation_panel.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/mechanism_tab.h"
#include "widgets/probe_tab.h"
#include "widgets/qcp.h"
#include "widgets/run_controls.h"
#include "widgets/sweep_tab.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;
using State = TrainingController::State;

// The step the progress line names ("step 12/100000 · ..."), or -1.
int progressStep(const MainWindow& window) {
    const QString text = window.controls()->progressText();
    if (!text.startsWith("step ")) {
        return -1;
    }
    return text.mid(5).section('/', 0, 0).toInt();
}

// Between evaluations (none after step 0 here) the progress line and the loss curve follow the
// run: the step goes on, with the speed and the time left.
TEST(Controls, ProgressMovesBetweenEvaluations) {
    RunSpec spec = tinySpec(100000);
    spec.train.evalEvery = spec.train.snapshotEvery = 100000;
    MainWindow window;
    window.form()->setSpec(spec);
    window.startTraining();
    ASSERT_TRUE(waitFor([&] { return progressStep(window) >= 1; }));
    const int first = progressStep(window);
    EXPECT_TRUE(window.controls()->progressText().contains("tok/s"))
        << window.controls()->progressText().toStdString();
    EXPECT_TRUE(window.controls()->progressText().contains("left"));
    ASSERT_TRUE(waitFor([&] { return progressStep(window) > first; }));  // about a second on
    ASSERT_TRUE(waitFor([&] { return !window.redrawPending(); }));
    // the loss is drawn from the first step on, though no snapshot has come since step 0
    EXPECT_GE(window.curves()->trainingPlot()->graph(0)->dataCount(), 1);
    EXPECT_TRUE(window.subjectText().contains("training at step"))
        << window.subjectText().toStdString();
    window.stopTraining();
    ASSERT_TRUE(waitFor([&] { return window.controller()->state() == State::Ready; }));
}

// The probes of the model at init run after its heatmaps and lock nothing: Train is pressable
// while they run (and ends them), and Cancel ends them with nothing kept.
TEST(Controls, ProbesAtInitGiveWayAndCanBeCancelled) {
    RunSpec spec = tinySpec();
    spec.train.probeEvery = 1;
    spec.train.probe.epochs = 200;  // long enough to be caught running
    MainWindow window;
    window.form()->setSpec(spec);
    QSignalSpy ready(window.controller(), &TrainingController::ready);
    QSignalSpy progress(window.controller(), &TrainingController::probeProgress);
    window.initializeModel();
    ASSERT_TRUE(waitFor([&] { return ready.count() == 1 && progress.count() > 0; }));
    EXPECT_EQ(window.controller()->state(), State::Ready);
    EXPECT_TRUE(window.controls()->trainButton()->isEnabled());
    EXPECT_TRUE(window.probes()->cancelButton()->isEnabled());
    window.probes()->cancelButton()->click();
    ASSERT_TRUE(waitFor([&] { return !window.probes()->cancelButton()->isEnabled(); }));
    QTest::qWait(50);
    EXPECT_TRUE(window.history().front().probes.empty());  // nothing kept

    // again, and Train while they run: they end and the run begins (its step 0 evaluated)
    window.initializeModel();
    ASSERT_TRUE(waitFor(
        [&] { return ready.count() == 2 && window.probes()->cancelButton()->isEnabled(); }));
    window.startTraining();
    ASSERT_TRUE(waitFor([&] { return window.subject().liveStep >= 0; }));  // step 0 evaluated
    EXPECT_EQ(window.subject().origin, SubjectOrigin::Trained);
    // the probes at init were cut short: the bar went back to empty (0 of 0) before their end
    const auto emptied = std::find_if(progress.begin(), progress.end(), [](const auto& args) {
        return args.at(0).toInt() == 0 && args.at(1).toInt() == 0;
    });
    ASSERT_NE(emptied, progress.end());
    ASSERT_NE(emptied, progress.begin());
    const QList<QVariant>& before = *std::prev(emptied);
    EXPECT_LT(before.at(0).toInt(), before.at(1).toInt());
    window.stopTraining();  // during the run's own probes of step 0: they end too
    ASSERT_TRUE(waitFor([&] { return window.controller()->state() == State::Ready; }));
    EXPECT_EQ(window.subject().phase, SubjectPhase::Stopped);
}

// Size, splitters, task, preset and theme come back in the next session; tests and scripted runs
// that do not ask for them leave them alone.
TEST(Controls, TheWindowIsKeptBetweenSessions) {
    QTemporaryDir dir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.path());
    QCoreApplication::setOrganizationName("NoPEScopeTest");
    QCoreApplication::setApplicationName("settings");
    // a size that fits this screen (a remembered size larger than the screen is cut to it)
    const QSize kKept = QSize(1111, 777).boundedTo(
        QGuiApplication::primaryScreen()->availableGeometry().size() - QSize(60, 90));
    {
        MainWindow window;
        window.restoreSettings();
        window.resize(kKept);
        window.form()->taskChoice()->setCurrentText("reversal");
        window.form()->presetChoice()->setCurrentText("paper");
        window.close();
    }
    {
        MainWindow window;
        window.restoreSettings();
        EXPECT_EQ(window.size(), kKept);
        EXPECT_EQ(window.form()->taskChoice()->currentText(), "reversal");
        EXPECT_EQ(window.form()->presetChoice()->currentText(), "paper");
    }
    MainWindow untouched;  // no restoreSettings(): the defaults
    EXPECT_EQ(untouched.form()->taskChoice()->currentText(), "addition");
    QCoreApplication::setOrganizationName(QString());
    QCoreApplication::setApplicationName(QString());
}

// The ablation table is of the form's model at init: when the form changes, the table of the
// model it no longer describes goes, with a word why.
TEST(Controls, AblationsOfAnotherModelGo) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    ui::AblationPanel* panel = window.mechanism()->ablations();
    QSignalSpy done(window.ablationJob(), &AblationJob::finished);
    panel->runButton()->click();
    ASSERT_TRUE(waitFor([&] { return done.count() == 1; }));
    QCoreApplication::processEvents();
    ASSERT_FALSE(panel->shownTable().results.empty());
    window.form()->taskChoice()->setCurrentText("reversal");
    EXPECT_TRUE(panel->shownTable().results.empty());
    EXPECT_EQ(panel->table()->rowCount(), 0);
}

TEST(Controls, TheSweepStartsFromTheFormsTask) {
    MainWindow window;
    EXPECT_TRUE(window.sweep()->request().fixed.join(' ').contains("--task addition"));
    window.form()->taskChoice()->setCurrentText("ordering");
    EXPECT_EQ(window.sweep()->request().fixed.join(' ').count("--task"), 1);
    EXPECT_TRUE(window.sweep()->request().fixed.join(' ').contains("--task ordering"));
}

}  // namespace
}  // namespace nope::gui
