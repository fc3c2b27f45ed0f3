#include "probe/probe_config.h"

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

// Chosen from measured runs on the default model (docs/performance.md, "Probes"): half the strings
// in batches of half the size keep the number of optimizer steps (160) of the full probe, whose
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

}  // namespace nope
