// Records a training run into its run folder, for the CLI and the window alike: every snapshot
// (tables and snapshot files), a checkpoint at every evaluation (and best.pt when it is the best
// so far), and at the end the final checkpoint, the final scores (init against the best
// checkpoint) and the Python weights.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "run/run_folder.h"
#include "training/trainer.h"

namespace nope {

class RunRecorder {
public:
    // Writes config.json. With `continuing` (a resumed run), keeps what the folder recorded up to
    // the trainer's step and reads the step-0 analysis back from it.
    RunRecorder(Trainer& trainer, const std::filesystem::path& dir, const nlohmann::json& config,
                bool continuing);

    // Callbacks that record, then call `inner`'s.
    TrainerCallbacks wrap(TrainerCallbacks inner);

    struct Final {
        Analysis init;     // the model at initialization (step 0)
        Analysis trained;  // the best checkpoint's weights
    };
    // After run(): the final checkpoint, final_scores.csv and weights.pt.
    Final finish();

    const std::filesystem::path& dir() const { return m_writer.dir(); }

private:
    Trainer& m_trainer;
    RunWriter m_writer;
    Analysis m_init;
};

}  // namespace nope
