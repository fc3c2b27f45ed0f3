// The window's study tabs with the real CLI underneath: the Sweep tab runs a tiny sweep through
// `nopescope-cli sweep` and shows its results, Stop leaves a folder that Run resumes, and a
// folder that holds another sweep is refused; the Compare tab lists the run the window trained.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

#include <filesystem>

#include "gui/ablation_job.h"
#include "gui/main_window.h"
#include "gui/sweep_runner.h"
#include "gui_fixture.h"
#include "study/manifest.h"
#include "widgets/ablation_panel.h"
#include "widgets/compare_curves.h"
#include "widgets/compare_tab.h"
#include "widgets/config_form.h"
#include "widgets/heatmap_grid.h"
#include "widgets/mechanism_tab.h"
#include "widgets/qcp.h"
#include "widgets/run_browser.h"
#include "widgets/sweep_tab.h"

namespace nope {
namespace {

using gui::MainWindow;
using gui::SweepRunner;
using gui_test::tinySpec;
using gui_test::waitFor;

TEST(Sweep, ArgumentsOfARequest) {
    ui::SweepRequest r;
    r.grid = "layers=1,2";
    r.seeds = 3;
    r.preset = "quick";
    r.fixed = {"--task", "reversal"};
    r.jobs = 2;
    EXPECT_EQ(SweepRunner::arguments(r, "/tmp/nowhere-sweep"),
              QStringList({"sweep", "--grid", "layers=1,2", "--seeds", "3", "--trained", "quick",
                           "--jobs", "2", "--task", "reversal", "--out", "/tmp/nowhere-sweep"}));
}

// The window finds nopescope-cli beside itself, else on PATH: here the build's.
void putTheCliOnThePath() {
    const QString cli = QFileInfo(NOPESCOPE_CLI).absolutePath();
    const QString path = qEnvironmentVariable("PATH");
    if (!path.startsWith(cli + ":")) {
        qputenv("PATH", (cli + ":" + path).toUtf8());
    }
}

// A sweep of tiny reversal models at init into `folder`.
ui::SweepRequest tinySweep(const QString& grid, int seeds, const QString& folder) {
    putTheCliOnThePath();
    ui::SweepRequest request;
    request.grid = grid;
    request.seeds = seeds;
    request.fixed = {"--task", "reversal", "--dim", "32", "--heads", "2", "--samples", "8"};
    request.out = folder;
    return request;
}

TEST(Sweep, TheTabRunsASweepAndShowsItsResults) {
    QTemporaryDir dir;
    MainWindow window;
    ui::SweepTab* tab = window.sweep();
    tab->setRequest(tinySweep("layers=1,2", 2, dir.filePath("sweep")));
    QSignalSpy finished(window.sweepRunner(), &SweepRunner::finished);
    Q_EMIT tab->runRequested(tab->request());
    ASSERT_TRUE(waitFor([&] { return !finished.isEmpty(); }, 120000));
    EXPECT_TRUE(finished.front().front().toString().startsWith("sweep finished"));
    EXPECT_EQ(tab->results().runs.size(), 4u);  // 2 layers x 2 seeds
    EXPECT_TRUE(tab->figureProblem().isEmpty()) << tab->figureProblem().toStdString();
    EXPECT_GT(tab->linesPlot()->graphCount(), 0);
    EXPECT_FALSE(tab->tableData().rows.isEmpty());
    // Running it again resumes the folder: nothing left to run, the same results.
    Q_EMIT tab->runRequested(tab->request());
    ASSERT_TRUE(waitFor([&] { return finished.size() == 2; }, 60000));
    EXPECT_EQ(tab->results().runs.size(), 4u);
    EXPECT_TRUE(window.problem().isEmpty()) << window.problem().toStdString();
}

TEST(Sweep, StopLeavesAFolderThatRunResumesAndAnotherGridIsRefused) {
    QTemporaryDir dir;
    MainWindow window;
    ui::SweepTab* tab = window.sweep();
    ui::SweepRequest request = tinySweep("layers=1,2,3", 4, dir.filePath("sweep"));
    request.jobs = 1;
    tab->setRequest(request);
    QSignalSpy finished(window.sweepRunner(), &SweepRunner::finished);
    Q_EMIT tab->runRequested(tab->request());
    const std::filesystem::path manifest = (dir.filePath("sweep") + "/sweep.json").toStdString();
    ASSERT_TRUE(waitFor([&] {  // stop once a run is done, with runs still to go
        if (!study::holdsSweep(manifest.parent_path())) {
            return false;
        }
        try {
            for (const auto& run : study::readManifest(manifest.parent_path()).runs) {
                if (run.status == study::RunStatus::Done) {
                    return true;
                }
            }
        } catch (const std::exception&) {
            // written atomically, but it may be renamed between the check and the read
        }
        return false;
    }));
    Q_EMIT tab->stopRequested();
    ASSERT_TRUE(waitFor([&] { return !finished.isEmpty(); }));
    EXPECT_TRUE(finished.front().front().toString().contains("stopped"))
        << finished.front().front().toString().toStdString();
    EXPECT_LT(tab->results().runs.size(), 12u);
    Q_EMIT tab->runRequested(tab->request());  // resumes: only what is not done runs
    ASSERT_TRUE(waitFor([&] { return finished.size() == 2; }, 120000));
    EXPECT_EQ(tab->results().runs.size(), 12u);
    // The same folder with another grid: refused with the reason, nothing runs.
    request.grid = "layers=4";
    tab->setRequest(request);
    Q_EMIT tab->runRequested(tab->request());
    EXPECT_TRUE(window.problem().contains("holds another sweep")) << window.problem().toStdString();
    EXPECT_FALSE(window.sweepRunner()->running());
}

TEST(Sweep, AFolderWithoutASweepIsAProblemNotACrash) {
    QTemporaryDir dir;
    MainWindow window;
    window.sweepRunner()->open(dir.path());
    EXPECT_TRUE(window.problem().contains("holds no sweep")) << window.problem().toStdString();
}

TEST(Mechanism, TheTabSimulatesWhenFirstShown) {
    MainWindow window;
    window.show();
    window.showView(window.mechanism());
    ASSERT_TRUE(waitFor([&] { return !window.mechanism()->heatmaps()->heatmaps().empty(); }));
    EXPECT_EQ(window.mechanism()->heatmaps()->heatmaps().size(), 2u);  // with sqrt(k/m)
    EXPECT_TRUE(window.mechanism()->scoreText().startsWith("Adjacency score 0.9"))
        << window.mechanism()->scoreText().toStdString();
    // the form's model at init: its first-layer weights on its embeddings of addition prompts
    window.form()->setSpec(tinySpec());
    AveragingConfig c = window.mechanism()->config();
    c.weights = AveragingWeights::Model;
    c.inputs = AveragingInputs::Tokens;
    window.mechanism()->setConfig(c);
    ASSERT_TRUE(waitFor([&] { return window.mechanism()->heatmaps()->heatmaps().size() == 1u; }));
    EXPECT_EQ(window.mechanism()->heatmaps()->heatmaps()[0].size, 9);  // the prompts' tokens
    EXPECT_TRUE(window.mechanism()->scoreText().contains("x 32 dimensions"))
        << window.mechanism()->scoreText().toStdString();
    EXPECT_TRUE(window.mechanism()->scoreText().contains("From the form's model at init"));
    EXPECT_TRUE(window.problem().isEmpty()) << window.problem().toStdString();
}

// The ablations of the form's model at init, in the background: the table and a row's heatmaps.
TEST(Mechanism, AblationsRunOnTheFormsModelAtInit) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    window.show();
    window.showView(window.mechanism());
    window.mechanism()->showAblations(true);
    ui::AblationPanel* panel = window.mechanism()->ablations();
    panel->runButton()->click();
    EXPECT_TRUE(window.ablationJob()->running());
    EXPECT_FALSE(panel->runButton()->isEnabled());
    ASSERT_TRUE(waitFor([&] { return !panel->shownTable().results.empty(); }));
    EXPECT_TRUE(panel->runButton()->isEnabled());
    EXPECT_EQ(panel->table()->rowCount(), 16);
    EXPECT_EQ(panel->table()->columnCount(), 4);  // ablation, embedding, layers 1 and 2
    const AblationResult* uniform = panel->shownTable().find(Ablation::Uniform);
    ASSERT_NE(uniform, nullptr);
    EXPECT_GT(uniform->analysis.find(CapturePoint::Attn, 1)->adjacencyMean, 0.8);
    panel->select(Ablation::Eqx);
    EXPECT_EQ(panel->heatmaps()->heatmaps().size(), 3u);
    EXPECT_TRUE(window.problem().isEmpty()) << window.problem().toStdString();
}

TEST(Compare, TheBrowserListsTheRunTheWindowTrained) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    window.show();
    window.startTraining();
    QSignalSpy done(window.controller(), &gui::TrainingController::finished);
    ASSERT_TRUE(waitFor([&] { return !done.isEmpty(); }));
    window.showView(window.compare());  // lists the runs folder
    ui::RunBrowser* browser = window.compare()->browser();
    EXPECT_EQ(browser->root(), qEnvironmentVariable("NOPESCOPE_RUNS"));
    int row = -1;
    for (size_t i = 0; i < browser->runs().size(); ++i) {
        if (QString::fromStdString(browser->runs()[i].dir.string()) == window.runFolder()) {
            row = static_cast<int>(i);
        }
    }
    ASSERT_GE(row, 0) << window.runFolder().toStdString();
    EXPECT_EQ(browser->runs()[static_cast<size_t>(row)].lastStep, 20);
    browser->setChecked(row, true);
    EXPECT_EQ(window.compare()->curves()->adjacencyPlot()->graphCount(), 1);
    EXPECT_EQ(window.compare()->curves()->tableData().rows.size(), 2);  // init and trained
}

}  // namespace
}  // namespace nope
