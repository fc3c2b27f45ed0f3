// validate() and JSON reading and writing of the configs and the run spec, through the table of
// settings: each setting's own rule comes from its row; the rules between settings are here.
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "settings/settings.h"
#include "tasks/dataset.h"

namespace nope {

namespace {

using S = SettingSection;

void append(FieldErrors& to, FieldErrors more) {
    for (auto& e : more) {
        to.push_back(std::move(e));
    }
}

// A spec holding `model`, so that the model's rows can read it.
RunSpec withModel(const ModelConfig& model) {
    RunSpec spec;
    spec.model = model;
    return spec;
}

RunSpec withTrain(const TrainConfig& train) {
    RunSpec spec;
    spec.train = train;
    return spec;
}

RunSpec withProbe(const ProbeConfig& probe) {
    RunSpec spec;
    spec.train.probe = probe;
    return spec;
}

}  // namespace

FieldErrors validate(const ModelConfig& c) {
    FieldErrors errors = checkSettings(withModel(c), {S::Model, S::Init});
    if (c.nHead >= 1 && c.nEmbd >= 1 && c.nEmbd % c.nHead != 0) {
        errors.push_back({"dim", std::to_string(c.nEmbd) + " is not divisible by {heads} (" +
                                     std::to_string(c.nHead) +
                                     "); allowed: multiples of the head count"});
    }
    return errors;
}

FieldErrors validate(const ProbeConfig& c, int blockSize) {
    FieldErrors errors = checkSettings(withProbe(c), {S::Probe});
    if (c.data == ProbeData::Random) {
        if (c.length > blockSize) {
            errors.push_back({"probe-length", std::to_string(c.length) +
                                                  " is longer than the model's {context} of " +
                                                  std::to_string(blockSize) + " (allowed: 2 to " +
                                                  std::to_string(blockSize) + ")"});
        }
        for (char ch : c.testChars) {
            if (c.trainChars.find(ch) != std::string::npos) {
                errors.push_back({"probe-test-chars",
                                  "'" + std::string(1, ch) +
                                      "' is also a training character (allowed: characters not "
                                      "in {probe-train-chars}, so that token identity cannot "
                                      "give position away)"});
                break;
            }
        }
    }
    if (c.activations.size() != c.hidden.size()) {
        errors.push_back(
            {"probe-activations", std::to_string(c.activations.size()) + " given, the probe has " +
                                      std::to_string(c.hidden.size()) +
                                      " hidden layers (allowed: one activation per width of "
                                      "{probe-widths})"});
    }
    return errors;
}

FieldErrors validate(const TrainConfig& c, int contextLength) {
    FieldErrors errors = checkSettings(withTrain(c), {S::Init, S::Training, S::Data, S::Analysis});
    auto atMost = [&](bool ok, const char* field, int value, const std::string& limit) {
        if (!ok) {
            errors.push_back(
                {field, std::to_string(value) + " is more than " + limit + " (allowed: up to it)"});
        }
    };
    if (c.objective == Objective::Lm) {
        atMost(c.windowLength <= contextLength, "window", c.windowLength,
               "the {context} of " + std::to_string(contextLength));
        if (c.curriculumSteps > 0) {
            errors.push_back({"curriculum-steps",
                              std::to_string(c.curriculumSteps) +
                                  " with the lm objective, whose windows cut across examples "
                                  "(allowed: 0, or the answer, masked or next {objective})"});
        }
    }
    atMost(c.microBatches <= c.batchSize, "micro-batches", c.microBatches,
           "the {batch} of " + std::to_string(c.batchSize));
    atMost(c.evalSamples <= c.data.testSize, "eval-samples", c.evalSamples,
           "the {test-size} of " + std::to_string(c.data.testSize));
    atMost(c.analysisSamples <= c.data.testSize, "analysis-samples", c.analysisSamples,
           "the {test-size} of " + std::to_string(c.data.testSize));
    atMost(c.keepPrompts <= c.analysisSamples, "keep-prompts", c.keepPrompts,
           "the {analysis-samples} of " + std::to_string(c.analysisSamples));
    if (c.probeEvery > 0) {
        append(errors, validate(c.probe, contextLength));
    }
    return errors;
}

FieldErrors validate(const RunSpec& spec) {
    FieldErrors errors = validate(spec.model);
    append(errors, validate(spec.train, spec.model.blockSize));
    // answer: the padded sequence less its last token; lm: "\n" + prompt, then the answer budget
    const int needed = spec.train.objective != Objective::Lm
                           ? longestPrompt(spec.task) + answerBudget(spec.task) - 1
                           : 1 + longestPrompt(spec.task) + answerBudget(spec.task);
    if (spec.model.blockSize < needed) {
        errors.push_back({"context", std::to_string(spec.model.blockSize) +
                                         " is shorter than the " + taskName(spec.task) +
                                         " sequences (allowed: " + std::to_string(needed) +
                                         " to 4096)"});
    }
    const DataConfig& data = spec.train.data;
    const int64_t wanted = int64_t{data.trainSize} + data.testSize;
    const int64_t most = maxExamples(spec.task, data.addition);
    if (data.trainSize > maxTrainExamples(spec.task, data.addition)) {
        errors.push_back(
            {"train-size", std::to_string(data.trainSize) + " is more than the " +
                               taskName(spec.task) + " set can hold (allowed: 1 to " +
                               std::to_string(maxTrainExamples(spec.task, data.addition)) +
                               (spec.task == TaskKind::Addition
                                    ? " with {addition-data} " + toString(data.addition)
                                    : std::string()) +
                               ")"});
    } else if (wanted > most) {
        errors.push_back({"train-size", "{train-size} and {test-size} together (" +
                                            std::to_string(wanted) + ") exceed the " +
                                            std::to_string(most) + " distinct " +
                                            taskName(spec.task) + " examples"});
    }
    return errors;
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
    nlohmann::json root;
    writeSettings(root, withModel(c), {S::Model, S::Init});
    j = root.at("model");
}

void from_json(const nlohmann::json& j, ModelConfig& c) {
    RunSpec spec = withModel(c);
    readSettings({{"model", j}}, spec, {S::Model, S::Init});
    c = spec.model;
}

void to_json(nlohmann::json& j, const TrainConfig& c) {
    nlohmann::json root;
    writeSettings(root, withTrain(c), {S::Init, S::Training, S::Data, S::Analysis, S::Probe});
    j = root.at("train");
}

void from_json(const nlohmann::json& j, TrainConfig& c) {
    RunSpec spec = withTrain(c);
    readSettings({{"train", j}}, spec, {S::Init, S::Training, S::Data, S::Analysis, S::Probe});
    c = spec.train;
}

void to_json(nlohmann::json& j, const ProbeConfig& c) {
    nlohmann::json root;
    writeSettings(root, withProbe(c), {S::Probe});
    j = root.at("train").at("probe");
}

void from_json(const nlohmann::json& j, ProbeConfig& c) {
    RunSpec spec = withProbe(c);
    readSettings({{"train", {{"probe", j}}}}, spec, {S::Probe});
    c = spec.train.probe;
}

nlohmann::json toJson(const RunSpec& spec) {
    nlohmann::json j = {{"task", taskName(spec.task)}};
    writeSettings(j, spec, {S::Model, S::Init, S::Training, S::Data, S::Analysis, S::Probe});
    j["preset"] = spec.preset;
    return j;
}

RunSpec runSpecFromJson(const nlohmann::json& j) {
    RunSpec spec;
    if (!j.is_object() || !j.contains("task") || !j.at("task").is_string()) {
        throw std::invalid_argument("task: missing (allowed: " + taskNamesJoined() + ")");
    }
    const std::string task = j.at("task").get<std::string>();
    const auto kind = parseTask(task);
    if (!kind) {
        throw std::invalid_argument("task: '" + task + "' is not one of " + taskNamesJoined());
    }
    spec.task = *kind;
    if (j.contains("model") && !j.at("model").is_object()) {
        throw std::invalid_argument("model: not an object");
    }
    if (j.contains("train") && !j.at("train").is_object()) {
        throw std::invalid_argument("train: not an object");
    }
    readSettings(j, spec, {S::Model, S::Init, S::Training, S::Data, S::Analysis, S::Probe});
    const auto preset = j.find("preset");
    spec.preset = preset != j.end() && preset->is_string() ? preset->get<std::string>() : "custom";
    return spec;
}

}  // namespace nope
