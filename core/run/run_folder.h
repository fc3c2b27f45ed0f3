// The run folder: the one persistent format of a training run, written by the CLI and the window
// alike and read back by the window.
//   config.json                    {"task", "model", "train", "preset"}
//   metrics.csv                    one row per snapshot (see kMetricsCsvHeader)
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
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/snapshot.h"

namespace nope {

inline constexpr const char* kMetricsCsvHeader =
    "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s,eval_step";
inline constexpr const char* kAdjacencyCsvHeader = "step,point,layer,mean,std";
// probes.csv of a run: the columns of `nopescope-cli probe`'s probes.csv after a step column.
std::string runProbesCsvHeader();
inline constexpr const char* kFinalScoresCsvHeader =
    "stage,point,layer,adjacency_mean,adjacency_std,norm_score,variance_score,samples";

class RunWriter {
public:
    // Creates the folder. With `continuing` (a resumed run), keeps what the folder recorded up to
    // `fromStep` and drops what came after, instead of starting the tables afresh.
    explicit RunWriter(std::filesystem::path dir, bool continuing = false, int fromStep = 0);

    void writeConfig(const nlohmann::json& config) const;
    void add(const Snapshot& snapshot);
    // Rows of `init` are left out when it has none (a run continued from a checkpoint of
    // unknown origin).
    void writeFinalScores(const Analysis& init, const Analysis& trained) const;

    const std::filesystem::path& dir() const { return m_dir; }
    std::filesystem::path checkpointPath() const { return m_dir / "checkpoint.pt"; }
    std::filesystem::path bestPath() const { return m_dir / "best.pt"; }
    std::filesystem::path weightsPath() const { return m_dir / "weights.pt"; }

private:
    void rewriteTables() const;

    std::filesystem::path m_dir;
    std::vector<std::string> m_metricsRows;
    std::vector<std::string> m_adjacencyRows;
    std::vector<std::string> m_probeRows;
};

std::string snapshotFileName(int step);  // "step_000250.json"

struct RunFolder {
    nlohmann::json config;
    std::vector<Snapshot> snapshots;  // by step
};

// Reads config.json and every snapshot. Throws std::runtime_error naming the file at fault.
RunFolder readRunFolder(const std::filesystem::path& dir);

}  // namespace nope
