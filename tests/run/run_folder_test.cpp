// The run folder: what the CLI writes is what the window reads back.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "common/test_folder.h"
#include "run/run_catalog.h"
#include "run/run_folder.h"
#include "run/snapshot_history.h"
#include "run/snapshot_io.h"
#include "util/csv_table.h"
#include "util/files.h"

namespace nope {
namespace {

namespace fs = std::filesystem;

Snapshot sample(int step) {
    Snapshot s;
    s.step = step;
    s.totalSteps = 100;
    s.trainLoss = step == 0 ? std::nan("") : 1.5 / step;
    s.learningRate = 1e-3;
    s.tokensPerSecond = 1234.0;
    s.elapsedSeconds = step;
    s.etaSeconds = 100 - step;
    s.limitStep = step == 0 ? 0 : 50;  // a time limit near step 50
    s.eval.step = step;
    s.eval.testLoss = 2.0;
    s.eval.accuracy = step;
    s.eval.correct = step;
    s.eval.total = 100;
    s.eval.byLength = {{1, 3, 10}, {2, 5, 90}};
    s.eval.predictions = {{"$1+2=", "3$", "3", true}};
    s.analysis.samples = 4;
    s.analysis.seqLen = 3;
    s.analysis.keptPrompts = {"\n$1"};
    LayerScores row;
    row.point = CapturePoint::Attn;
    row.layer = 1;
    row.adjacencyMean = 0.9 + step * 1e-3;
    row.adjacencyStd = 0.01;
    row.meanMatrix = {1.0f, 0.5f, 0.25f, 0.5f, 1.0f, 0.5f, 0.25f, 0.5f, 1.0f};
    row.promptMatrices = {row.meanMatrix};
    s.analysis.rows = {row};
    return s;
}

TEST(RunFolder, WritesTablesAndReadsSnapshotsBack) {
    const fs::path dir =
        fs::temp_directory_path() / ("nopescope-run-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    {
        RunWriter writer(dir);
        writer.writeConfig({{"task", "addition"}});
        writer.add(sample(0));
        writer.add(sample(10));
        writer.writeFinalScores(sample(0).analysis, sample(10).analysis);
    }
    std::istringstream metrics(readFile(dir / "metrics.csv"));
    std::string line;
    std::getline(metrics, line);
    EXPECT_EQ(line, kMetricsCsvHeader);
    std::getline(metrics, line);
    EXPECT_EQ(line.substr(0, 3), "0,,");  // no train loss before the first step
    EXPECT_EQ(
        readFile(dir / "adjacency.csv"),
        "step,point,layer,mean,std\n0,attn,1,0.900000,0.010000\n10,attn,1,0.910000,0.010000\n");
    EXPECT_NE(readFile(dir / "final_scores.csv").find("trained,attn,1,0.910000"),
              std::string::npos);

    const RunFolder run = readRunFolder(dir);
    EXPECT_EQ(run.config.at("task"), "addition");
    ASSERT_EQ(run.snapshots.size(), 2u);
    const Snapshot& s = run.snapshots[1];
    EXPECT_EQ(s.step, 10);
    EXPECT_DOUBLE_EQ(s.etaSeconds, 90.0);
    EXPECT_EQ(s.limitStep, 50);
    EXPECT_EQ(run.snapshots[0].limitStep, 0);
    EXPECT_DOUBLE_EQ(s.eval.accuracy, 10.0);
    EXPECT_EQ(s.eval.byLength[1].total, 90);
    EXPECT_EQ(s.eval.predictions[0].produced, "3");
    EXPECT_EQ(s.analysis.keptPrompts[0], "\n$1");
    EXPECT_FLOAT_EQ(s.analysis.rows[0].meanMatrix[2], 0.25f);
    EXPECT_TRUE(std::isnan(run.snapshots[0].trainLoss));

    // a resumed run keeps what came up to its checkpoint and drops the rest
    {
        RunWriter resumed(dir, /*continuing=*/true, /*fromStep=*/0);
        resumed.add(sample(5));
    }
    const RunFolder again = readRunFolder(dir);
    ASSERT_EQ(again.snapshots.size(), 2u);
    EXPECT_EQ(again.snapshots[1].step, 5);
    fs::remove_all(dir);
}

TEST(RunFolder, DamagedFilesAreNamed) {
    const fs::path dir =
        fs::temp_directory_path() / ("nopescope-bad-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    EXPECT_THROW(readRunFolder(dir), std::runtime_error);
    RunWriter writer(dir);
    writer.writeConfig({{"task", "addition"}});
    writer.add(sample(0));
    writer.add(sample(10));
    writeFileAtomic(dir / "snapshots" / "step_000001.json", "{\"step\": 1");          // torn
    writeFileAtomic(dir / "snapshots" / "step_000005.json", "{\"step\": \"five\"}");  // wrong
    // the damaged ones are named, the good ones load
    const RunFolder run = readRunFolder(dir);
    ASSERT_EQ(run.snapshots.size(), 2u);
    EXPECT_EQ(run.snapshots[1].step, 10);
    ASSERT_EQ(run.damaged.size(), 2u);
    EXPECT_NE(run.damaged[0].find("step_000001.json: damaged snapshot"), std::string::npos)
        << run.damaged[0];
    EXPECT_NE(run.damaged[1].find("step_000005.json: damaged snapshot"), std::string::npos)
        << run.damaged[1];
    writeFileAtomic(dir / "config.json", "{");
    EXPECT_THROW(readRunFolder(dir), std::runtime_error);
    fs::remove_all(dir);
}

ProbeReport probesNamed(double seconds) {
    ProbeReport r;
    r.seconds = seconds;
    r.results.push_back(ProbeResult{});
    return r;
}

// A table whose last line was cut short by a stopped writer (another program's, or an older
// version's that appended) is read without that line, which is named; a short line anywhere else,
// or a short last line that has its newline, is damage.
TEST(RunFolder, ATornLastLineIsLeftOutAndNamed) {
    test::TestFolder folder("nopescope-torn");
    const fs::path dir = folder.path() / "run";
    {
        RunWriter writer(dir);
        writer.writeConfig({{"task", "addition"}});
        for (int step : {0, 10, 20}) {
            writer.add(sample(step));
        }
    }
    const std::string metrics = readFile(dir / "metrics.csv");
    ASSERT_EQ(readRunCurves(dir).steps.size(), 3u);
    EXPECT_TRUE(readRunCurves(dir).problems.empty());

    // the last row cut after its third cell, without a newline
    const size_t lastRow = metrics.rfind('\n', metrics.size() - 2) + 1;
    const size_t cut = metrics.find(',', metrics.find(',', metrics.find(',', lastRow) + 1) + 1);
    writeFileAtomic(dir / "metrics.csv", metrics.substr(0, cut));
    const RunCurves curves = readRunCurves(dir);
    EXPECT_EQ(curves.steps, (std::vector<int>{0, 10}));
    ASSERT_EQ(curves.problems.size(), 1u);
    EXPECT_NE(curves.problems[0].find("metrics.csv: line 4 is cut short (3 of "), std::string::npos)
        << curves.problems[0];
    EXPECT_EQ(CsvTable(dir / "metrics.csv").rows(), 2u);

    // the same short row with its newline, or in the middle: the table is damaged, named
    writeFileAtomic(dir / "metrics.csv", metrics.substr(0, cut) + "\n");
    try {
        readRunCurves(dir);
        ADD_FAILURE() << "a short last line with its newline was read";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("metrics.csv: line 4 has 3 cells"), std::string::npos)
            << e.what();
    }
    const size_t secondRow = metrics.find('\n') + 1;
    writeFileAtomic(dir / "metrics.csv",
                    metrics.substr(0, secondRow) + "0,1\n" + metrics.substr(secondRow));
    EXPECT_THROW(readRunCurves(dir), std::runtime_error);
    // a cut-short adjacency.csv too
    writeFileAtomic(dir / "metrics.csv", metrics);
    const std::string adjacency = readFile(dir / "adjacency.csv");
    writeFileAtomic(dir / "adjacency.csv", adjacency.substr(0, adjacency.size() - 10));
    const RunCurves shorter = readRunCurves(dir);
    ASSERT_EQ(shorter.adjacency.size(), 1u);
    EXPECT_EQ(shorter.adjacency[0].steps, (std::vector<int>{0, 10}));
    ASSERT_EQ(shorter.problems.size(), 1u);
    EXPECT_NE(shorter.problems[0].find("adjacency.csv: line 4 is cut short"), std::string::npos);
}

// A run resumed from a checkpoint written before checkpoints kept the run's wall time wrote
// elapsed_s again from 0: the reader joins the sessions up, and places any step on that time.
TEST(RunFolder, TheWallTimeOfAResumedRunIsJoinedUp) {
    test::TestFolder folder("nopescope-elapsed");
    const fs::path dir = folder.path() / "run";
    fs::create_directories(dir);
    writeFileAtomic(dir / "config.json", R"({"task": "ordering"})");
    writeFileAtomic(dir / "metrics.csv",
                    "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s,"
                    "eval_step\n"
                    "0,,4.7,0.00,0,0,1.0,0\n"
                    "100,0.8,0.8,1.00,5e-04,3000,101.0,100\n"
                    "200,0.7,0.7,2.00,5e-04,3000,201.0,200\n"  // the first session ends
                    "300,0.5,0.5,40.00,5e-04,3000,50.0,300\n"  // resumed at step 200
                    "400,0.2,0.2,90.00,5e-04,3000,,400\n");    // no time recorded
    writeFileAtomic(dir / "evaluations.csv",
                    "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s\n"
                    "0,,4.7,0.00,0,0,1.0\n"
                    "100,0.8,0.8,1.00,5e-04,3000,101.0\n"
                    "150,0.8,0.75,1.50,5e-04,3000,151.0\n"
                    "200,0.7,0.7,2.00,5e-04,3000,201.0\n"
                    "250,0.6,0.6,20.00,5e-04,3000,25.0\n"  // resumed at step 200
                    "300,0.5,0.5,40.00,5e-04,3000,50.0\n");
    const RunCurves curves = readRunCurves(dir);
    ASSERT_EQ(curves.seconds.size(), 5u);
    EXPECT_DOUBLE_EQ(curves.seconds[2], 201.0);
    EXPECT_DOUBLE_EQ(curves.seconds[3], 251.0);
    EXPECT_TRUE(std::isnan(curves.seconds[4]));
    EXPECT_EQ(curves.evalSteps, (std::vector<int>{0, 100, 150, 200, 250, 300, 400}));
    const std::vector<double> joined = {1.0, 101.0, 151.0, 201.0, 226.0, 251.0};
    ASSERT_EQ(curves.evalSeconds.size(), 7u);
    for (size_t i = 0; i < joined.size(); ++i) {
        EXPECT_DOUBLE_EQ(curves.evalSeconds[i], joined[i]) << "step " << curves.evalSteps[i];
    }
    EXPECT_TRUE(std::isnan(curves.evalSeconds[6]));  // metrics.csv's row 400, without a time
    EXPECT_DOUBLE_EQ(curves.secondsAt(250), 226.0);
    EXPECT_DOUBLE_EQ(curves.secondsAt(50), 51.0);    // between two rows
    EXPECT_TRUE(std::isnan(curves.secondsAt(350)));  // after the last timed row
    EXPECT_TRUE(std::isnan(curves.secondsAt(-1)));

    // A run whose checkpoints kept its time wrote no fall: nothing to join.
    fs::remove(dir / "metrics.csv");
    writeFileAtomic(dir / "evaluations.csv",
                    "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s\n"
                    "0,,4.7,0.00,0,0,1.0\n"
                    "300,0.5,0.5,40.00,5e-04,3000,300.0\n");
    EXPECT_DOUBLE_EQ(readRunCurves(dir).secondsAt(300), 300.0);
}

TEST(SnapshotHistory, KeepsStepOrderAndReplacesAStepsSnapshot) {
    SnapshotHistory h;
    EXPECT_EQ(h.add(sample(10)), 0u);
    EXPECT_EQ(h.add(sample(0)), 0u);
    EXPECT_EQ(h.add(sample(20)), 2u);
    Snapshot again = sample(0);
    again.trainLoss = 7.0;
    EXPECT_EQ(h.add(again), 0u);  // Train's step 0 replaces Initialize's
    ASSERT_EQ(h.size(), 3u);
    EXPECT_EQ(h.front().trainLoss, 7.0);
    EXPECT_EQ(h.back().step, 20);
    EXPECT_EQ(h.best(), nullptr);
    Snapshot better = sample(30);
    better.best = true;
    h.add(better);
    Snapshot later = sample(40);
    later.best = true;
    h.add(later);
    h.add(sample(50));
    ASSERT_NE(h.best(), nullptr);
    EXPECT_EQ(h.best()->step, 40);
    h.reset();
    EXPECT_TRUE(h.empty());
}

// Every evaluation, by step: the snapshots' own and those between them; a later one of a step
// replaces the earlier, a run folder's list replaces the added ones, and a reset drops them.
TEST(SnapshotHistory, HoldsEveryEvaluationAlsoBetweenSnapshots) {
    SnapshotHistory h;
    for (int step : {0, 10}) {
        Snapshot s;
        s.step = s.eval.step = step;
        s.eval.testLoss = 4.0 - step * 0.1;
        s.eval.accuracy = step;
        h.add(s);
    }
    h.addEvaluation({15, 2.5, 15.0});
    h.addEvaluation({5, 3.5, 4.0});
    h.addEvaluation({5, 3.5, 5.0});  // the same step again: replaced
    const auto stepsOf = [](const std::vector<EvalPoint>& points) {
        std::vector<int> steps;
        for (const EvalPoint& p : points) {
            steps.push_back(p.step);
        }
        return steps;
    };
    std::vector<EvalPoint> all = h.evaluations();
    EXPECT_EQ(stepsOf(all), (std::vector<int>{0, 5, 10, 15}));
    EXPECT_DOUBLE_EQ(all[1].accuracy, 5.0);
    EXPECT_DOUBLE_EQ(all[2].testLoss, 3.0);  // the snapshot's

    Snapshot stale;  // a snapshot whose latest evaluation is an earlier step's adds nothing new
    stale.step = 20;
    stale.eval.step = 15;
    stale.eval.testLoss = 2.5;
    stale.eval.accuracy = 15.0;
    h.add(stale);
    EXPECT_EQ(stepsOf(h.evaluations()), (std::vector<int>{0, 5, 10, 15}));

    h.setEvaluations({{25, 2.0, 20.0}, {5, 3.5, 5.0}});
    EXPECT_EQ(stepsOf(h.evaluations()), (std::vector<int>{0, 5, 10, 15, 25}));
    h.reset();
    EXPECT_TRUE(h.evaluations().empty());
}

TEST(SnapshotHistory, ProbesBelongToTheStepTheyRanAt) {
    SnapshotHistory h;
    h.add(sample(0));
    h.add(sample(10));
    h.add(sample(20));
    int step = 0;
    EXPECT_EQ(h.probesAt(2, &step), nullptr);
    EXPECT_EQ(step, -1);
    h.addProbes(probesNamed(1.0), 0);   // at init, with its snapshot
    h.addProbes(probesNamed(2.0), 15);  // on demand between snapshots
    ASSERT_NE(h.initProbes(), nullptr);
    EXPECT_EQ(h.initProbes()->seconds, 1.0);
    EXPECT_EQ(h.probesAt(1, &step)->seconds, 1.0);  // step 10 shows init's
    EXPECT_EQ(step, 0);
    EXPECT_EQ(h.probesAt(2, &step)->seconds, 2.0);  // the latest shows the newest, step 15
    EXPECT_EQ(step, 15);
    h.addProbes(probesNamed(3.0), 20);  // with the snapshot of step 20
    EXPECT_EQ(h.probesAt(2, &step)->seconds, 3.0);
    EXPECT_EQ(step, 20);
    h.reset({sample(0)});
    EXPECT_EQ(h.initProbes(), nullptr);  // a reset forgets on-demand probes too
}

TEST(RunFolderApi, NamesFindsAndReadsRuns) {
    const fs::path root = fs::temp_directory_path() / "nopescope-runs-api";
    fs::remove_all(root);
    setenv("NOPESCOPE_RUNS", root.c_str(), 1);
    EXPECT_EQ(runsRoot(), root);
    const fs::path first = newRunFolder("cli", "reversal", "quick");
    EXPECT_EQ(first.parent_path(), root);
    EXPECT_EQ(first.filename().string().rfind("cli-reversal-quick-", 0), 0u);
    fs::create_directories(first);
    EXPECT_NE(newRunFolder("cli", "reversal", "quick"), first);  // never an existing folder
    EXPECT_FALSE(holdsRun(first));
    EXPECT_FALSE(resumableCheckpoint(first));
    EXPECT_FALSE(modelFileOfRun(first));
    RunWriter writer(first);
    writer.writeConfig({{"task", "reversal"}});
    EXPECT_TRUE(holdsRun(first));
    EXPECT_EQ(readRunConfig(first).at("task"), "reversal");
    writeFileAtomic(first / RunFiles::kCheckpoint, "x");
    EXPECT_EQ(*modelFileOfRun(first), first / RunFiles::kCheckpoint);
    writeFileAtomic(first / RunFiles::kBest, "x");
    EXPECT_EQ(*modelFileOfRun(first), first / RunFiles::kBest);  // the best, when there is one
    writeFileAtomic(first / RunFiles::kConfig, "{");
    EXPECT_THROW(readRunConfig(first), std::runtime_error);
    unsetenv("NOPESCOPE_RUNS");
    EXPECT_EQ(runsRoot(), fs::path("runs"));
    fs::remove_all(root);
}

}  // namespace
}  // namespace nope
