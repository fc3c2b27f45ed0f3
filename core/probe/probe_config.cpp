#include "probe/probe_config.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "tasks/vocab.h"
#include "util/enum_names.h"

namespace nope {

namespace {

constexpr EnumName<ProbeFeature> kFeatures[] = {{ProbeFeature::Vector, "vector"},
                                                {ProbeFeature::Variance, "variance"},
                                                {ProbeFeature::Norm, "norm"},
                                                {ProbeFeature::Cosine, "cosine"},
                                                {ProbeFeature::CosineRow, "cosine_row"}};
constexpr EnumName<ProbeData> kData[] = {{ProbeData::Random, "random"}, {ProbeData::Task, "task"}};
constexpr EnumName<ProbeActivation> kActivations[] = {{ProbeActivation::Selu, "selu"},
                                                      {ProbeActivation::Exp, "exp"},
                                                      {ProbeActivation::Relu, "relu"},
                                                      {ProbeActivation::Gelu, "gelu"},
                                                      {ProbeActivation::Identity, "identity"}};
constexpr EnumName<ProbePrecision> kPrecisions[] = {{ProbePrecision::Fp32, "fp32"},
                                                    {ProbePrecision::Bf16, "bf16"}};

// Empty when every character is in the vocabulary and appears once.
std::string charSetProblem(const std::string& chars) {
    if (chars.empty()) {
        return "is empty (allowed: one or more distinct characters of the vocabulary)";
    }
    for (size_t i = 0; i < chars.size(); ++i) {
        if (!vocab::contains(chars[i])) {
            return "'" + vocab::display(chars[i]) +
                   "' is not in the vocabulary (allowed: printable ASCII and newline)";
        }
        if (chars.find(chars[i], i + 1) != std::string::npos) {
            return "'" + std::string(1, chars[i]) +
                   "' appears twice (allowed: distinct characters)";
        }
    }
    return {};
}

}  // namespace

const std::vector<ProbeFeature>& allProbeFeatures() {
    static const std::vector<ProbeFeature> kAll = {ProbeFeature::Vector, ProbeFeature::Variance,
                                                   ProbeFeature::Norm, ProbeFeature::Cosine,
                                                   ProbeFeature::CosineRow};
    return kAll;
}

std::string toString(ProbeFeature feature) {
    return nameOf(kFeatures, feature);
}
std::optional<ProbeFeature> parseProbeFeature(std::string_view s) {
    return parseName(kFeatures, s);
}
std::string toString(ProbeData data) {
    return nameOf(kData, data);
}
std::optional<ProbeData> parseProbeData(std::string_view s) {
    return parseName(kData, s);
}
std::string toString(ProbeActivation a) {
    return nameOf(kActivations, a);
}
std::optional<ProbeActivation> parseProbeActivation(std::string_view s) {
    return parseName(kActivations, s);
}
std::string toString(ProbePrecision p) {
    return nameOf(kPrecisions, p);
}
std::optional<ProbePrecision> parseProbePrecision(std::string_view s) {
    return parseName(kPrecisions, s);
}

std::string probeTarget(ProbeFeature feature) {
    return feature == ProbeFeature::Cosine ? "distance_to_last" : "position";
}

ProbeConfig fullProbeConfig() {
    return ProbeConfig{};
}

// Chosen from measured runs on the default model (README, "Probes"): half the strings in
// batches of half the size keep the number of optimizer steps (160) of the full probe, whose
// count mattered more than the width; about 6 times faster than the full probe.
ProbeConfig fastProbeConfig() {
    ProbeConfig config;
    config.hidden = {256, 128, 64};
    config.trainStrings = 500;
    config.testStrings = 250;
    config.batchStrings = 64;
    config.keepPredictions = 32;
    return config;
}

std::optional<ProbeConfig> probePreset(std::string_view name) {
    if (name == "full") {
        return fullProbeConfig();
    }
    if (name == "fast") {
        return fastProbeConfig();
    }
    return std::nullopt;
}

std::string probePresetName(const ProbeConfig& config) {
    for (const char* name : {"fast", "full"}) {
        const ProbeConfig preset = *probePreset(name);
        if (config.hidden == preset.hidden && config.activations == preset.activations &&
            config.epochs == preset.epochs && config.trainStrings == preset.trainStrings &&
            config.testStrings == preset.testStrings &&
            config.batchStrings == preset.batchStrings) {
            return name;
        }
    }
    return "custom";
}

int probeSequenceLength(const ProbeConfig& config, int taskLength) {
    return config.data == ProbeData::Random ? config.length : taskLength;
}

FieldErrors validate(const ProbeConfig& config, int blockSize) {
    FieldErrors errors;
    auto add = [&](const std::string& field, const std::string& message) {
        errors.push_back({field, message});
    };
    if (config.points.empty()) {
        add("point", "no capture point (allowed: " + capturePointNamesJoined() + ")");
    }
    if (config.features.empty()) {
        add("features", "no feature (allowed: " + namesJoined(kFeatures) + ")");
    }
    if (config.data == ProbeData::Random) {
        if (config.length < 2 || config.length > blockSize) {
            add("length", std::to_string(config.length) + " is out of range (allowed: 2 to " +
                              std::to_string(blockSize) + ", the model's context)");
        }
        if (auto p = charSetProblem(config.trainChars); !p.empty()) {
            add("train-chars", p);
        }
        if (auto p = charSetProblem(config.testChars); !p.empty()) {
            add("test-chars", p);
        }
        for (char c : config.testChars) {
            if (config.trainChars.find(c) != std::string::npos) {
                add("test-chars", "'" + std::string(1, c) +
                                      "' is also a training character (allowed: characters "
                                      "not in --train-chars, so that token identity cannot "
                                      "give position away)");
                break;
            }
        }
    }
    if (config.trainStrings < 2 || config.trainStrings > 100000) {
        add("train-strings", std::to_string(config.trainStrings) + " (allowed: 2 to 100000)");
    }
    if (config.testStrings < 2 || config.testStrings > 100000) {
        add("test-strings", std::to_string(config.testStrings) + " (allowed: 2 to 100000)");
    }
    if (config.hidden.size() > 8) {
        add("probe-layers", std::to_string(config.hidden.size() + 1) + " (allowed: 1 to 9)");
    }
    for (int width : config.hidden) {
        if (width < 1 || width > 8192) {
            add("probe-widths", std::to_string(width) + " (allowed: widths of 1 to 8192)");
            break;
        }
    }
    if (config.activations.size() != config.hidden.size()) {
        add("activations", std::to_string(config.activations.size()) + " given, the probe has " +
                               std::to_string(config.hidden.size()) +
                               " hidden layers (allowed: one activation per hidden layer, from " +
                               namesJoined(kActivations) + ")");
    }
    if (config.epochs < 1 || config.epochs > 10000) {
        add("epochs", std::to_string(config.epochs) + " (allowed: 1 to 10000)");
    }
    if (config.batchStrings < 1 || config.batchStrings > 100000) {
        add("probe-batch", std::to_string(config.batchStrings) + " (allowed: 1 to 100000)");
    }
    if (!(config.learningRate > 0 && config.learningRate <= 1)) {
        add("probe-lr", "must be in (0, 1]");
    }
    if (!(config.weightDecay >= 0 && config.weightDecay <= 1)) {
        add("probe-weight-decay", "must be in [0, 1]");
    }
    if (config.keepPredictions < 0) {
        add("keep-predictions", "must be 0 or more");
    }
    return errors;
}

void to_json(nlohmann::json& j, const ProbeConfig& c) {
    std::vector<std::string> points, features, activations;
    for (auto p : c.points) {
        points.push_back(toString(p));
    }
    for (auto f : c.features) {
        features.push_back(toString(f));
    }
    for (auto a : c.activations) {
        activations.push_back(toString(a));
    }
    j = {{"points", points},
         {"features", features},
         {"data", toString(c.data)},
         {"length", c.length},
         {"train_chars", c.trainChars},
         {"test_chars", c.testChars},
         {"train_strings", c.trainStrings},
         {"test_strings", c.testStrings},
         {"hidden", c.hidden},
         {"activations", activations},
         {"epochs", c.epochs},
         {"batch_strings", c.batchStrings},
         {"learning_rate", c.learningRate},
         {"weight_decay", c.weightDecay},
         {"precision", toString(c.precision)},
         {"controls", c.controls},
         {"standardize", c.standardize},
         {"seed", c.seed},
         {"keep_predictions", c.keepPredictions}};
}

namespace {

template <typename E, typename Parse>
std::vector<E> readNames(const nlohmann::json& j, const char* key, Parse parse) {
    std::vector<E> out;
    for (const auto& item : j.at(key)) {
        const auto value = parse(item.get<std::string>());
        if (!value) {
            throw std::invalid_argument(std::string(key) + ": unknown name '" +
                                        item.get<std::string>() + "'");
        }
        out.push_back(*value);
    }
    return out;
}

}  // namespace

void from_json(const nlohmann::json& j, ProbeConfig& c) {
    try {
        if (j.contains("points")) {
            c.points = readNames<CapturePoint>(j, "points", parseCapturePoint);
        }
        if (j.contains("features")) {
            c.features = readNames<ProbeFeature>(j, "features", parseProbeFeature);
        }
        if (j.contains("activations")) {
            c.activations = readNames<ProbeActivation>(j, "activations", parseProbeActivation);
        }
        if (j.contains("data")) {
            const auto d = parseProbeData(j.at("data").get<std::string>());
            if (!d) {
                throw std::invalid_argument("data: allowed " + namesJoined(kData));
            }
            c.data = *d;
        }
        if (j.contains("precision")) {
            const auto p = parseProbePrecision(j.at("precision").get<std::string>());
            if (!p) {
                throw std::invalid_argument("precision: allowed " + namesJoined(kPrecisions));
            }
            c.precision = *p;
        }
        c.length = j.value("length", c.length);
        c.trainChars = j.value("train_chars", c.trainChars);
        c.testChars = j.value("test_chars", c.testChars);
        c.trainStrings = j.value("train_strings", c.trainStrings);
        c.testStrings = j.value("test_strings", c.testStrings);
        c.hidden = j.value("hidden", c.hidden);
        c.epochs = j.value("epochs", c.epochs);
        c.batchStrings = j.value("batch_strings", c.batchStrings);
        c.learningRate = j.value("learning_rate", c.learningRate);
        c.weightDecay = j.value("weight_decay", c.weightDecay);
        c.controls = j.value("controls", c.controls);
        c.standardize = j.value("standardize", c.standardize);
        c.seed = j.value("seed", c.seed);
        c.keepPredictions = j.value("keep_predictions", c.keepPredictions);
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("probe config: ") + e.what());
    }
}

}  // namespace nope
