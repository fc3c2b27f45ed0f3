// Checkpoints: everything a run needs to continue exactly where it stopped (weights by nanoGPT
// name, AdamW moments, step, configs, the batch order's generator), in LibTorch's archive format;
// and the weights alone as a Python-readable dict for torch.load.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "model/gpt.h"
#include "training/adamw.h"

namespace nope {

// Version 2 carries a CRC-32 of the whole file (util/zip_seal.h): a changed byte is reported, never
// loaded. Version 1 files, written before the checksum, still load unchecked.
inline constexpr const char* kCheckpointFormat = "nopescope-checkpoint-2";
inline constexpr const char* kUncheckedCheckpointFormat = "nopescope-checkpoint-1";

struct CheckpointState {
    nlohmann::json config;     // {"task", "model", "train"}
    int step = 0;              // optimizer steps done
    double bestAccuracy = -1;  // best test accuracy so far (percent), -1 before any evaluation
    double bestLoss = 1e300;   // the test loss at that evaluation (breaks accuracy ties)
    int bestStep = -1;
    std::string batchRng;  // the batch source's RNG state (dropout seeds follow the step)
    // The last evaluation (snapshot_io's JSON of an EvalResult), so that the snapshots of a
    // resumed run report it until the next one; null in checkpoints written before it was kept.
    nlohmann::json lastEvaluation;
    // The training losses since the last snapshot (their sum and count), so that the first
    // snapshot of a resumed run averages the same steps as an uninterrupted run's.
    double snapshotLossSum = 0.0;
    int snapshotLossSteps = 0;
    // The same since the last evaluation: a run stopped between evaluations resumes with the
    // first evaluation's training loss over the same steps (evaluations.csv).
    double evalLossSum = 0.0;
    int evalLossSteps = 0;
    // The run's wall time up to the checkpoint, in seconds (0 in checkpoints written before it
    // was kept: the resumed run's elapsed_s then starts again from 0, which readers of the run
    // folder join up, run/run_catalog.h).
    double elapsedSeconds = 0.0;
};

// Writes atomically and durably (util/files.h), sealed with a checksum. Throws std::runtime_error
// naming the file.
void saveCheckpoint(const std::filesystem::path& path, const GptImpl& model, const AdamW& optimizer,
                    const CheckpointState& state);

// Reads only the header (configs, step, RNG states) without building a model.
// Throws std::runtime_error that names the file and says what is wrong with it.
CheckpointState readCheckpointState(const std::filesystem::path& path);

// Loads weights and optimizer state into objects built from the checkpoint's own config.
// Throws std::runtime_error naming the file when a tensor is missing or has the wrong shape.
void loadCheckpoint(const std::filesystem::path& path, GptImpl& model, AdamW& optimizer);

// Loads only the weights (for analysis of a trained model). Same errors.
void loadWeights(const std::filesystem::path& path, GptImpl& model);

// The weights as a dict {nanoGPT name: tensor} (with lm_head.weight, tied to the token
// embedding), in the format torch.load reads. Written atomically.
void saveWeightsForPython(const std::filesystem::path& path, const GptImpl& model);

}  // namespace nope
