// The run folder: the one persistent format of a training run, written by the CLI and the window
// alike and read back by the window.
//   config.json                    {"task", "model", "train", "preset"}
//   metrics.csv                    one row per snapshot (see kMetricsCsvHeader)
//   evaluations.csv                one row per test evaluation (see kEvaluationsCsvHeader)
//   adjacency.csv                  step,point,layer,mean,std
//   probes.csv                     step, then probe's columns: every snapshot that ran probes
//   snapshots/step_<000250>.json   each snapshot in full: metrics, evaluation, scores, matrices
//   init_analysis.json             the model at initialization, analysed for the final scores
//   final_scores.csv               the scores of the model at init and trained (best checkpoint)
//   checkpoint.pt, best.pt         resumable checkpoints (latest, best test accuracy)
//   weights.pt                     the best weights as a dict for Python's torch.load
// Every file is written atomically.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/snapshot.h"

namespace nope {

inline constexpr const char* kMetricsCsvHeader =
    "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s,eval_step";
// The loss, test loss and accuracy of every evaluation: the accuracy curve in full.
// train_loss and tokens_per_s are over the steps since the previous evaluation.
inline constexpr const char* kEvaluationsCsvHeader =
    "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s";
inline constexpr const char* kAdjacencyCsvHeader = "step,point,layer,mean,std";
// probes.csv of a run: the columns of `nopescope-cli probe`'s probes.csv after a step column.
std::string runProbesCsvHeader();
inline constexpr const char* kFinalScoresCsvHeader =
    "stage,point,layer,adjacency_mean,adjacency_std,norm_score,variance_score,samples";

// The names of the files in a run folder: spelled here only.
struct RunFiles {
    static constexpr const char* kConfig = "config.json";
    static constexpr const char* kCheckpoint = "checkpoint.pt";
    static constexpr const char* kBest = "best.pt";
    static constexpr const char* kWeights = "weights.pt";
    static constexpr const char* kMetrics = "metrics.csv";
    static constexpr const char* kEvaluations = "evaluations.csv";
    static constexpr const char* kAdjacency = "adjacency.csv";
    static constexpr const char* kProbes = "probes.csv";
    static constexpr const char* kFinalScores = "final_scores.csv";
    static constexpr const char* kInitAnalysis = "init_analysis.json";
    static constexpr const char* kSnapshots = "snapshots";
};

// Where new runs go: $NOPESCOPE_RUNS when set, else ./runs.
std::filesystem::path runsRoot();
// A new run folder under runsRoot(): "<origin>-<task>-<preset>-<yyyymmdd-hhmmss>" (origin "cli" or
// "window"), made unique with a suffix when that name exists. Not created.
std::filesystem::path newRunFolder(const std::string& origin, const std::string& task,
                                   const std::string& preset);
// Whether `dir` holds a run (its config.json).
bool holdsRun(const std::filesystem::path& dir);
// The checkpoint to continue a run from, and the best one, when the folder has them.
std::optional<std::filesystem::path> resumableCheckpoint(const std::filesystem::path& dir);
std::optional<std::filesystem::path> bestCheckpoint(const std::filesystem::path& dir);
// The file a folder stands for when a saved model is opened: best.pt, else checkpoint.pt.
std::optional<std::filesystem::path> modelFileOfRun(const std::filesystem::path& dir);
// A folder's config.json as JSON; throws std::runtime_error naming the file.
nlohmann::json readRunConfig(const std::filesystem::path& dir);

class RunWriter {
public:
    // Creates the folder. With `continuing` (a resumed run), keeps what the folder recorded up to
    // `fromStep` and drops what came after, instead of starting the tables afresh: the tables are
    // rebuilt from the snapshot files up to `fromStep`, the evaluations kept from evaluations.csv
    // up to `fromStep`.
    explicit RunWriter(std::filesystem::path dir, bool continuing = false, int fromStep = 0);

    void writeConfig(const nlohmann::json& config) const;
    void add(const Snapshot& snapshot);
    // One evaluation (TrainerCallbacks::evaluated's progress): a row of evaluations.csv. An
    // evaluation of a step recorded before replaces its row and the rows after it.
    void addEvaluation(const Snapshot& progress);
    // Rows of `init` are left out when it has none (a run continued from a checkpoint of
    // unknown origin).
    void writeFinalScores(const Analysis& init, const Analysis& trained) const;

    const std::filesystem::path& dir() const { return m_dir; }
    std::filesystem::path checkpointPath() const { return m_dir / RunFiles::kCheckpoint; }
    std::filesystem::path bestPath() const { return m_dir / RunFiles::kBest; }
    std::filesystem::path weightsPath() const { return m_dir / RunFiles::kWeights; }

private:
    void continueAt(int fromStep);
    void appendRows(const Snapshot& snapshot);
    void rewriteTables() const;
    void keepEvaluations(int fromStep);
    void writeEvaluations() const;

    std::filesystem::path m_dir;
    std::vector<std::string> m_metricsRows;
    std::vector<std::string> m_adjacencyRows;
    std::vector<std::string> m_probeRows;
    std::vector<std::string> m_evaluationRows;
};

std::string snapshotFileName(int step);  // "step_000250.json"

struct RunFolder {
    nlohmann::json config;
    std::vector<Snapshot> snapshots;  // by step
    // A snapshot file that cannot be read is left out and named here ("<file>: damaged
    // snapshot: <why>"), so that one damaged file does not hide the rest of the run.
    std::vector<std::string> damaged;
};

// Reads config.json and every snapshot that can be read. Throws std::runtime_error naming the
// file when the folder is not a run or its config.json is not JSON.
RunFolder readRunFolder(const std::filesystem::path& dir);

// The snapshots of a run folder that another process is still writing (a training run, rank 0
// of a distributed one): each poll reads the snapshot files that appeared since the last one.
// Snapshot files are written whole and renamed into place, so a file that is there is complete.
class SnapshotFollower {
public:
    explicit SnapshotFollower(std::filesystem::path dir) : m_dir(std::move(dir)) {}

    // The snapshots of the files not read before (all of them the first time), by step; a file
    // that cannot be read is named in `damaged` ("<file>: damaged snapshot: <why>") and not
    // tried again.
    std::vector<Snapshot> poll(std::vector<std::string>& damaged);
    size_t filesSeen() const { return m_seen.size(); }

private:
    std::filesystem::path m_dir;
    std::set<std::string> m_seen;
};

}  // namespace nope
