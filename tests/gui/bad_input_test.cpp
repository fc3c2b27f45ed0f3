// The window refuses what cannot work and says why: a model too large for the machine's memory
// (before anything is allocated), hidden states that stop being finite numbers, and a run folder
// that cannot be written (a full disk).
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>

#include <QFile>
#include <QFileInfo>

#include "gui/main_window.h"
#include "gui/training_controller.h"
#include "gui_fixture.h"
#include "util/memory.h"
#include "widgets/config_form.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;

TEST(BadInput, AModelTooLargeForTheMachineIsRefusedBeforeAllocation) {
    RunSpec spec = tinySpec();
    spec.model.nLayer = 48;
    spec.model.nEmbd = 4096;
    spec.model.nHead = 32;
    const auto available = availableMemory();
    ASSERT_TRUE(available.has_value());
    ASSERT_GT(trainingMemory(spec.model, spec.train.batchSize, trainingTokens(spec), false).total(),
              *available);
    MainWindow window;
    window.form()->setSpec(spec);
    // the form says it beside the dim field at once, and Initialize and Train refuse
    EXPECT_FALSE(window.form()->isValid());
    ASSERT_FALSE(window.form()->errors().isEmpty());
    EXPECT_NE(window.form()->errors().front().indexOf("the model needs about"), -1)
        << window.form()->errors().front().toStdString();
    window.initializeModel();
    EXPECT_NE(window.problem().indexOf("the model needs about"), -1)
        << window.problem().toStdString();
    EXPECT_NE(window.problem().indexOf("available"), -1);
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Empty);
    window.startTraining();
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Empty);
}

TEST(BadInput, NonFiniteHiddenStatesAreNamedInTheBanner) {
    RunSpec spec = tinySpec();
    spec.model.init.scheme = InitScheme::Normal;
    spec.model.init.std = 1e30;
    MainWindow window;
    window.form()->setSpec(spec);
    window.initializeModel();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty(); }));
    EXPECT_NE(window.problem().indexOf("the hidden states are"), -1)
        << window.problem().toStdString();
    EXPECT_NE(window.problem().indexOf(" layer 1 on"), -1) << window.problem().toStdString();
}

// The file-size limit stands in for a full disk (the same failed write, EFBIG instead of ENOSPC;
// the tests run as root, for whom a read-only folder is writable). The run stops with a message
// that names the file, and the window goes on: the next run trains.
TEST(BadInput, ARunFolderThatCannotBeWrittenStopsTheRunAndTheWindowGoesOn) {
    MainWindow window;
    window.form()->setSpec(tinySpec(200));

    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 200 * 1024;  // the snapshots fit, the checkpoint does not
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    window.startTraining();
    const bool stopped = waitFor([&] {
        return window.controller()->state() != TrainingController::State::Training &&
               window.controller()->state() != TrainingController::State::Busy &&
               !window.history().empty();
    });
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    ASSERT_TRUE(stopped);

    const QString folder = window.runFolder();
    EXPECT_NE(window.problem().indexOf("cannot write " + folder), -1)
        << window.problem().toStdString();
    EXPECT_NE(window.problem().indexOf("training stopped at step"), -1);
    EXPECT_EQ(window.problem().indexOf("Exception raised from"), -1);
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Ready);
    EXPECT_TRUE(QFileInfo::exists(folder + "/snapshots/step_000000.json"));  // kept

    window.form()->setSpec(tinySpec(10));
    window.initializeModel();
    ASSERT_TRUE(
        waitFor([&] { return window.controller()->state() == TrainingController::State::Ready; }));
    window.startTraining();
    ASSERT_TRUE(waitFor([&] {
        return window.controller()->state() == TrainingController::State::Ready &&
               window.runFolder() != folder && window.history().back().step == 10;
    }));
    EXPECT_TRUE(QFileInfo::exists(window.runFolder() + "/checkpoint.pt"));
}

// A run folder with a damaged snapshot among good ones: the damaged file is named, the rest load.
TEST(BadInput, ADamagedSnapshotIsNamedAndTheOthersLoad) {
    MainWindow window;
    window.form()->setSpec(tinySpec());  // 20 steps, a snapshot every 5
    window.startTraining();
    ASSERT_TRUE(waitFor([&] {
        return window.controller()->state() == TrainingController::State::Ready &&
               !window.history().empty() && window.history().back().step == 20;
    }));
    const QString folder = window.runFolder();
    const QString damaged = folder + "/snapshots/step_000010.json";
    QFile file(damaged);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write("{\"step\": 10, \"metr");  // cut short
    file.close();

    MainWindow reopened;
    reopened.openRunFolder(folder);
    EXPECT_EQ(reopened.history().size(), 4u);  // steps 0, 5, 15 and 20
    EXPECT_NE(reopened.problem().indexOf(damaged + ": damaged snapshot"), -1)
        << reopened.problem().toStdString();
    EXPECT_NE(reopened.problem().indexOf("the other 4 are shown"), -1);
}

}  // namespace
}  // namespace nope::gui
