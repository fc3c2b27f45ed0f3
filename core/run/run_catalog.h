// The runs under a folder, read for comparison: what each run is (task, preset, steps, best
// accuracy, date), its curves over training (metrics.csv, evaluations.csv, adjacency.csv), its init
// and trained scores (final_scores.csv) and its snapshots one at a time. Plain C++ over the run
// folder's files (run/run_folder.h), so that the window's compare view can read them without a
// model.
#pragma once

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "model/capture_point.h"
#include "run/snapshot.h"

namespace nope {

struct RunSummary {
    std::filesystem::path dir;
    std::string name;    // the folder's name
    std::string task;    // from config.json
    std::string preset;  // "quick", "paper", or "" when none
    int layers = 0;
    int dim = 0;
    std::string positional;   // "none", "learned", ...
    std::string attention;    // "causal", "bidirectional"
    int lastStep = 0;         // the last step metrics.csv records
    int totalSteps = 0;       // the steps the run was set to train
    int analysisSamples = 0;  // the prompts each snapshot's scores are over (config.json)
    double bestAccuracy = std::numeric_limits<double>::quiet_NaN();  // percent
    std::string date;   // when config.json was written, "2026-11-30 18:22"
    std::string error;  // what made the folder unreadable, empty when fine
};

// Every folder directly under `root` that holds a run (its config.json), newest first. A folder
// whose files cannot be read is listed with its error. A missing root gives an empty list.
std::vector<RunSummary> listRuns(const std::filesystem::path& root);
RunSummary summarizeRun(const std::filesystem::path& dir);

struct ScoreSeries {
    CapturePoint point = CapturePoint::Attn;
    int layer = 0;
    std::vector<int> steps;
    std::vector<double> mean;
    std::vector<double> std;
};

struct StageScore {
    std::string stage;  // "init" or "trained"
    CapturePoint point = CapturePoint::Attn;
    int layer = 0;
    double mean = 0.0;
    double std = 0.0;
    int samples = 0;  // the prompts the score is over (0: a file written before it was kept)
};

struct RunCurves {
    std::vector<int> steps;  // one per metrics.csv row
    std::vector<double> trainLoss;
    std::vector<double> testLoss;
    // The run's wall time at each row, in seconds (elapsed_s; NaN where a row has none). A run
    // resumed from a checkpoint older than the run's time in checkpoints wrote elapsed_s again
    // from 0; such a fall is joined up: the rows after it go on from the row before it.
    std::vector<double> seconds;
    // Every evaluation from evaluations.csv, or (a run without that file) the steps whose
    // metrics.csv row holds a fresh evaluation.
    std::vector<int> evalSteps;
    std::vector<double> evalAccuracy;    // its accuracy, percent
    std::vector<double> evalTestLoss;    // its test loss (NaN where the row has none)
    std::vector<double> evalSeconds;     // the run's wall time then, joined up as `seconds`
    std::vector<ScoreSeries> adjacency;  // per capture point and layer, from adjacency.csv
    std::vector<StageScore> final;       // final_scores.csv, empty until the run has ended
    // Rows left out: a table's last line cut short ("<file>: line 7 is cut short ...").
    std::vector<std::string> problems;

    // The series of a point and layer, or nullptr.
    const ScoreSeries* series(CapturePoint point, int layer) const;
    // The run's wall time at `step`: interpolated between the rows of both tables around it,
    // NaN outside them or where they have no time.
    double secondsAt(int step) const;
    int layers(CapturePoint point) const;  // the highest layer with a series at `point`
};

// Reads metrics.csv, evaluations.csv, adjacency.csv and final_scores.csv (each may be missing).
// Throws std::runtime_error naming the file when one is malformed.
RunCurves readRunCurves(const std::filesystem::path& dir);
// metrics.csv and evaluations.csv only: the loss and accuracy curves of a run being followed.
RunCurves readTrainingCurves(const std::filesystem::path& dir);

// The steps of the snapshots saved in the folder, ascending.
std::vector<int> snapshotSteps(const std::filesystem::path& dir);
// One snapshot; throws std::runtime_error naming the file.
Snapshot readSnapshot(const std::filesystem::path& dir, int step);

}  // namespace nope
