// The run folder: what the CLI writes is what the window reads back.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "run/run_folder.h"
#include "run/snapshot_io.h"
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
    writeFileAtomic(dir / "snapshots" / "step_000001.json", "{\"step\": 1");
    try {
        readRunFolder(dir);
        ADD_FAILURE() << "damaged snapshot accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("step_000001.json"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace nope
