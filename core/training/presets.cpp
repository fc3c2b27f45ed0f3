#include "training/presets.h"

namespace nope {

namespace {

// The authors' settings: the default model and the default TrainConfig, with bf16 mixed
// precision as they trained on their GPU.
Preset paper() {
    Preset p{"paper", ModelConfig{}, TrainConfig{}};
    p.train.precision = Precision::Bf16;
    p.train.probeEvery = 4;  // fast probes every 4 snapshots, at init and at the end
    return p;
}

// Small NoPE models trained on the answer tokens in bf16, chosen from measured runs on the 2-core
// machine (README, "Presets"): 2 layers of width 256 learned addition and reversal fastest of
// the shapes tried. Every quick run stops after 15 minutes at the latest.
Preset quick(TaskKind task) {
    Preset p{"quick", ModelConfig{}, TrainConfig{}};
    p.model.nLayer = 2;
    p.model.nHead = 4;
    p.model.nEmbd = 256;
    p.model.dropout = 0.0;
    p.train.objective = Objective::Answer;
    p.train.precision = Precision::Bf16;
    p.train.batchSize = 256;
    p.train.learningRate = 2e-3;
    p.train.warmupSteps = 100;
    p.train.evalEvery = 250;
    p.train.evalSamples = 1000;
    p.train.snapshotEvery = 250;
    p.train.probeEvery = 4;
    p.train.stopAccuracy = 99.0;
    p.train.timeLimitMinutes = 15.0;
    switch (task) {
        case TaskKind::Addition:
            p.train.steps = 4000;
            p.train.data.trainSize = 50000;  // 10,000 examples overfit this model at about 90%
            break;
        case TaskKind::Reversal:
            p.train.steps = 2000;
            break;
        case TaskKind::Indexing:
        case TaskKind::Ordering:
            p.train.steps = 5000;
            p.train.data.trainSize = 100000;
            break;
    }
    p.train.decaySteps = p.train.steps;
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
