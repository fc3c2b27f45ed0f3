// Records a training run into its run folder, for the CLI and the window alike: every evaluation
// (evaluations.csv), every snapshot (tables and snapshot files), a checkpoint at the end of every
// evaluated step (and best.pt when it is the best so far), and at the end the final checkpoint,
// the final scores (init against the best checkpoint, both on finalSamples prompts) and the
// Python weights.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "run/run_folder.h"
#include "training/trainer.h"

namespace nope {

class RunRecorder {
public:
    // Writes config.json. A fresh run (trainer at step 0) analyses the model at init for the
    // final scores now and keeps it in init_analysis.json. A continuing run keeps what the folder
    // recorded up to the trainer's step and reads init_analysis.json back from the folder, or from
    // `initSource` (the folder of the checkpoint it started from).
    RunRecorder(Trainer& trainer, const std::filesystem::path& dir, const nlohmann::json& config,
                bool continuing, const std::filesystem::path& initSource = {});

    // Callbacks that record, then call `inner`'s.
    TrainerCallbacks wrap(TrainerCallbacks inner);

    struct Final {
        Analysis init;     // the model at initialization; empty when the run never had it
        Analysis trained;  // the best checkpoint's weights
    };
    // After run(): the final checkpoint (not after a non-finite loss: the last good one stays),
    // final_scores.csv and weights.pt.
    // Throws std::runtime_error naming the file when a write failed during the run (which
    // stopped it).
    Final finish(const TrainOutcome& outcome);

    const std::filesystem::path& dir() const { return m_writer.dir(); }

private:
    void saveDueCheckpoints();
    template <class Write>
    void guarded(Write&& write);

    Trainer& m_trainer;
    RunWriter m_writer;
    Analysis m_init;
    int m_lastEndedStep;           // the last step whose records are complete
    bool m_checkpointDue = false;  // an evaluation since the last checkpoint
    bool m_bestDue = false;        // ... that set a new best
    std::string m_writeError;      // the write that failed and stopped the run
    int m_writeErrorStep = 0;
};

}  // namespace nope
