#include "run/run_spec.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "training/batches.h"

namespace nope {

FieldErrors validate(const RunSpec& spec) {
    FieldErrors errors = validate(spec.model);
    for (auto& e : validate(spec.train, spec.model.blockSize)) {
        errors.push_back(std::move(e));
    }
    // answer: the padded sequence; lm: decoding "\n" + prompt, then the answer budget
    const int needed = spec.train.objective == Objective::Answer
                           ? answerSequenceLength(spec.task) - 1
                           : 1 + longestPrompt(spec.task) + answerBudget(spec.task);
    if (spec.model.blockSize < needed) {
        errors.push_back({"context", std::to_string(spec.model.blockSize) +
                                         " is shorter than the " + taskName(spec.task) +
                                         " sequences (allowed: " + std::to_string(needed) +
                                         " to 4096)"});
    }
    const int64_t wanted = int64_t{spec.train.data.trainSize} + spec.train.data.testSize;
    if (wanted > maxExamples(spec.task)) {
        errors.push_back({"train-size", "train and test sizes together (" + std::to_string(wanted) +
                                            ") exceed the " +
                                            std::to_string(maxExamples(spec.task)) + " distinct " +
                                            taskName(spec.task) + " examples"});
    }
    return errors;
}

nlohmann::json toJson(const RunSpec& spec) {
    return {{"task", taskName(spec.task)},
            {"model", spec.model},
            {"train", spec.train},
            {"preset", spec.preset}};
}

RunSpec runSpecFromJson(const nlohmann::json& j) {
    RunSpec spec;
    try {
        const std::string task = j.at("task").get<std::string>();
        const auto kind = parseTask(task);
        if (!kind) {
            throw std::invalid_argument("task: '" + task + "' is not one of " + taskNamesJoined());
        }
        spec.task = *kind;
        if (j.contains("model")) {
            spec.model = j.at("model").get<ModelConfig>();
        }
        if (j.contains("train")) {
            spec.train = j.at("train").get<TrainConfig>();
        }
        spec.preset = j.value("preset", std::string("custom"));
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(e.what());
    }
    return spec;
}

}  // namespace nope
