#include "training/train_config.h"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace nope {

std::string toString(Objective objective) {
    return objective == Objective::Lm ? "lm" : "answer";
}
std::string toString(Precision precision) {
    return precision == Precision::Fp32 ? "fp32" : "bf16";
}
std::string toString(DeviceKind device) {
    return device == DeviceKind::Cpu ? "cpu" : "cuda";
}

std::optional<Objective> parseObjective(std::string_view s) {
    if (s == "lm")
        return Objective::Lm;
    if (s == "answer")
        return Objective::Answer;
    return std::nullopt;
}
std::optional<Precision> parsePrecision(std::string_view s) {
    if (s == "fp32")
        return Precision::Fp32;
    if (s == "bf16")
        return Precision::Bf16;
    return std::nullopt;
}
std::optional<DeviceKind> parseDevice(std::string_view s) {
    if (s == "cpu")
        return DeviceKind::Cpu;
    if (s == "cuda")
        return DeviceKind::Cuda;
    return std::nullopt;
}

FieldErrors validate(const TrainConfig& c, int contextLength) {
    FieldErrors errors;
    auto range = [&](bool ok, const char* field, const std::string& value,
                     const std::string& allowed) {
        if (!ok) {
            errors.push_back({field, value + " is outside the allowed " + allowed});
        }
    };
    auto str = [](double v) {
        std::string s = std::to_string(v);
        s.erase(s.find_last_not_of('0') + 1);
        return s.back() == '.' ? s.substr(0, s.size() - 1) : s;
    };
    range(c.steps >= 1 && c.steps <= 10000000, "steps", std::to_string(c.steps), "1 to 10000000");
    range(c.batchSize >= 1 && c.batchSize <= 65536, "batch", std::to_string(c.batchSize),
          "1 to 65536");
    range(c.objective != Objective::Lm || (c.windowLength >= 2 && c.windowLength <= contextLength),
          "window", std::to_string(c.windowLength),
          "2 to the context length (" + std::to_string(contextLength) + ")");
    range(std::isfinite(c.learningRate) && c.learningRate > 0 && c.learningRate <= 1, "lr",
          str(c.learningRate), "(0, 1]");
    range(std::isfinite(c.minLrRatio) && c.minLrRatio >= 0 && c.minLrRatio <= 1, "min-lr-ratio",
          str(c.minLrRatio), "0 to 1");
    range(c.warmupSteps >= 0, "warmup", std::to_string(c.warmupSteps), "0 or more");
    range(c.decaySteps >= 1, "decay-steps", std::to_string(c.decaySteps), "1 or more");
    range(std::isfinite(c.weightDecay) && c.weightDecay >= 0 && c.weightDecay <= 10, "weight-decay",
          str(c.weightDecay), "0 to 10");
    range(c.beta1 >= 0 && c.beta1 < 1, "beta1", str(c.beta1), "[0, 1)");
    range(c.beta2 >= 0 && c.beta2 < 1, "beta2", str(c.beta2), "[0, 1)");
    range(std::isfinite(c.gradClip) && c.gradClip >= 0, "grad-clip", str(c.gradClip),
          "0 (off) or more");
    range(c.evalEvery >= 1, "eval-every", std::to_string(c.evalEvery), "1 or more");
    range(c.evalSamples >= 0 && c.evalSamples <= c.data.testSize, "eval-samples",
          std::to_string(c.evalSamples),
          "0 (the whole test set) to the test size (" + std::to_string(c.data.testSize) + ")");
    range(c.stopAccuracy >= 0 && c.stopAccuracy <= 100, "stop-accuracy", str(c.stopAccuracy),
          "0 to 100 (100 never stops early)");
    range(std::isfinite(c.timeLimitMinutes) && c.timeLimitMinutes >= 0, "time-limit",
          str(c.timeLimitMinutes), "0 (none) or more minutes");
    range(c.snapshotEvery >= 1, "snapshot-every", std::to_string(c.snapshotEvery), "1 or more");
    range(c.analysisSamples >= 1 && c.analysisSamples <= c.data.testSize, "analysis-samples",
          std::to_string(c.analysisSamples),
          "1 to the test size (" + std::to_string(c.data.testSize) + ")");
    range(c.probeEvery >= 0 && c.probeEvery <= 100000, "probe-every", std::to_string(c.probeEvery),
          "0 (no probes in training) to 100000 snapshots");
    if (c.probeEvery > 0) {
        for (const auto& e : validate(c.probe, contextLength)) {
            errors.push_back(e);
        }
    }
    range(c.finalSamples >= 1 && c.finalSamples <= kMaxExamples, "final-samples",
          std::to_string(c.finalSamples), "1 to " + std::to_string(kMaxExamples));
    range(c.keepPrompts >= 0 && c.keepPrompts <= c.analysisSamples, "keep-prompts",
          std::to_string(c.keepPrompts), "0 to --analysis-samples");
    range(c.threads >= 0 && c.threads <= 256, "threads", std::to_string(c.threads),
          "0 (all cores) to 256");
    range(c.data.trainSize >= 1 && c.data.trainSize <= kMaxExamples / 2, "train-size",
          std::to_string(c.data.trainSize), "1 to " + std::to_string(kMaxExamples / 2));
    range(c.data.testSize >= 1 && c.data.testSize <= kMaxExamples / 2, "test-size",
          std::to_string(c.data.testSize), "1 to " + std::to_string(kMaxExamples / 2));
    return errors;
}

void to_json(nlohmann::json& j, const TrainConfig& c) {
    j = nlohmann::json{{"objective", toString(c.objective)},
                       {"precision", toString(c.precision)},
                       {"device", toString(c.device)},
                       {"steps", c.steps},
                       {"batch_size", c.batchSize},
                       {"window_length", c.windowLength},
                       {"learning_rate", c.learningRate},
                       {"min_lr_ratio", c.minLrRatio},
                       {"warmup_steps", c.warmupSteps},
                       {"decay_steps", c.decaySteps},
                       {"weight_decay", c.weightDecay},
                       {"beta1", c.beta1},
                       {"beta2", c.beta2},
                       {"grad_clip", c.gradClip},
                       {"eval_every", c.evalEvery},
                       {"eval_samples", c.evalSamples},
                       {"stop_accuracy", c.stopAccuracy},
                       {"time_limit_minutes", c.timeLimitMinutes},
                       {"snapshot_every", c.snapshotEvery},
                       {"analysis_samples", c.analysisSamples},
                       {"keep_prompts", c.keepPrompts},
                       {"probe_every", c.probeEvery},
                       {"probe", c.probe},
                       {"final_samples", c.finalSamples},
                       {"seed", c.seed},
                       {"threads", c.threads},
                       {"data",
                        {{"train_size", c.data.trainSize},
                         {"test_size", c.data.testSize},
                         {"seed", c.data.seed}}}};
}

void from_json(const nlohmann::json& j, TrainConfig& c) {
    auto named = [&](const char* key, auto parse, auto& target, const char* allowed) {
        if (!j.contains(key)) {
            return;
        }
        const std::string s = j.at(key).get<std::string>();
        const auto v = parse(s);
        if (!v) {
            throw std::invalid_argument(std::string("train config: ") + key + ": '" + s +
                                        "' is not one of " + allowed);
        }
        target = *v;
    };
    try {
        named("objective", parseObjective, c.objective, "lm, answer");
        named("precision", parsePrecision, c.precision, "fp32, bf16");
        named("device", parseDevice, c.device, "cpu, cuda");
        c.steps = j.value("steps", c.steps);
        c.batchSize = j.value("batch_size", c.batchSize);
        c.windowLength = j.value("window_length", c.windowLength);
        c.learningRate = j.value("learning_rate", c.learningRate);
        c.minLrRatio = j.value("min_lr_ratio", c.minLrRatio);
        c.warmupSteps = j.value("warmup_steps", c.warmupSteps);
        c.decaySteps = j.value("decay_steps", c.decaySteps);
        c.weightDecay = j.value("weight_decay", c.weightDecay);
        c.beta1 = j.value("beta1", c.beta1);
        c.beta2 = j.value("beta2", c.beta2);
        c.gradClip = j.value("grad_clip", c.gradClip);
        c.evalEvery = j.value("eval_every", c.evalEvery);
        c.evalSamples = j.value("eval_samples", c.evalSamples);
        c.stopAccuracy = j.value("stop_accuracy", c.stopAccuracy);
        c.timeLimitMinutes = j.value("time_limit_minutes", c.timeLimitMinutes);
        c.snapshotEvery = j.value("snapshot_every", c.snapshotEvery);
        c.analysisSamples = j.value("analysis_samples", c.analysisSamples);
        c.keepPrompts = j.value("keep_prompts", c.keepPrompts);
        c.probeEvery = j.value("probe_every", c.probeEvery);
        if (j.contains("probe")) {
            from_json(j.at("probe"), c.probe);
        }
        c.finalSamples = j.value("final_samples", c.finalSamples);
        c.seed = j.value("seed", c.seed);
        c.threads = j.value("threads", c.threads);
        if (j.contains("data")) {
            const auto& d = j.at("data");
            c.data.trainSize = d.value("train_size", c.data.trainSize);
            c.data.testSize = d.value("test_size", c.data.testSize);
            c.data.seed = d.value("seed", c.data.seed);
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("train config: ") + e.what());
    }
}

}  // namespace nope
