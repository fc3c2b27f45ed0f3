// Everything that defines a run before it starts: the task, the model and the training settings,
// and the preset they came from. Stored as config.json in run folders and checkpoints, and as the
// window's saved session.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/model_config.h"
#include "tasks/task.h"
#include "training/train_config.h"
#include "util/field_error.h"

namespace nope {

struct RunSpec {
    TaskKind task = TaskKind::Addition;
    ModelConfig model;
    TrainConfig train;
    std::string preset = "quick";  // where the settings started from ("quick", "paper", "custom")
};

// Problems with any part, each naming its setting (settings/settings.h; defined there, as is the
// JSON).
FieldErrors validate(const RunSpec& spec);

// {"task", "model", "train", "preset"}
nlohmann::json toJson(const RunSpec& spec);
// Throws std::invalid_argument naming the bad key.
RunSpec runSpecFromJson(const nlohmann::json& j);

}  // namespace nope
