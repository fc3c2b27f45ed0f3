// Named starting points for a run: `paper` is the authors' setup unchanged; `quick` is, per task,
// a small model measured to learn the task on a 2-core CPU within minutes; `cpu` is the paper's
// six-layer model with a batch and schedule for 2 cores (docs/presets.md; how they were found:
// docs/results.md).
// Explicit flags or form fields override what a preset sets. A preset is a list of settings by
// name, applied through the table of settings (settings/settings.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "tasks/task.h"
#include "training/train_config.h"

namespace nope {

struct Preset {
    std::string name;
    ModelConfig model;
    TrainConfig train;
};

const std::vector<std::string>& presetNames();  // "quick", "cpu", "paper"
std::optional<Preset> makePreset(const std::string& name, TaskKind task);

}  // namespace nope
