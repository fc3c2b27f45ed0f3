// A run folder that another process is still writing (a training run, rank 0 of a distributed
// one): the window opens it and shows the snapshots that appear afterwards.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "gui/main_window.h"
#include "gui/training_controller.h"
#include "gui_fixture.h"
#include "widgets/config_form.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;

TEST(Follow, SnapshotsWrittenAfterOpeningAppear) {
    MainWindow writer;
    writer.form()->setSpec(tinySpec());  // 20 steps, a snapshot every 5
    writer.startTraining();
    ASSERT_TRUE(waitFor([&] {
        return writer.controller()->state() == TrainingController::State::Ready &&
               !writer.history().empty() && writer.history().back().step == 20;
    }));
    // the last two snapshots held back, as if the run had not reached them yet
    const QDir snapshots(writer.runFolder() + "/snapshots");
    QTemporaryDir later;
    for (const QString& name : {QString("step_000015.json"), QString("step_000020.json")}) {
        ASSERT_TRUE(QFile::rename(snapshots.filePath(name), QDir(later.path()).filePath(name)));
    }

    MainWindow window;
    window.openRunFolder(writer.runFolder());
    ASSERT_EQ(window.history().size(), 3u);
    EXPECT_TRUE(window.following());

    // the writer renames each finished file into place, as here
    ASSERT_TRUE(QFile::rename(QDir(later.path()).filePath("step_000015.json"),
                              snapshots.filePath("step_000015.json")));
    ASSERT_TRUE(waitFor([&] { return window.history().size() == 4u; }));
    EXPECT_EQ(window.history().back().step, 15);
    ASSERT_TRUE(QFile::rename(QDir(later.path()).filePath("step_000020.json"),
                              snapshots.filePath("step_000020.json")));
    ASSERT_TRUE(waitFor([&] { return window.history().size() == 5u; }));
    EXPECT_EQ(window.history().back().step, 20);
    EXPECT_TRUE(window.problem().isEmpty()) << window.problem().toStdString();

    // a new model ends the following
    window.initializeModel();
    EXPECT_FALSE(window.following());
}

}  // namespace
}  // namespace nope::gui
