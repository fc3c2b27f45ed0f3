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
    const int needed = spec.train.objective == Objective::Answer
                           ? answerSequenceLength(spec.task) - 1
                           : longestPrompt(spec.task);
    if (spec.model.blockSize < needed) {
        errors.push_back({"context", std::to_string(spec.model.blockSize) +
                                         " is shorter than the " + taskName(spec.task) +
                                         " sequences (allowed: " + std::to_string(needed) +
                                         " to 4096)"});
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
