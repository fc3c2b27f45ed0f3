#include "cli/train_flags.h"

namespace nope::cli {

TrainFlags::TrainFlags(RunSpec* spec, const std::vector<std::string>& args) : m_spec(spec) {
    if (const auto name = peekFlag(args, "probe-preset")) {
        if (const auto preset = probePreset(*name)) {
            const uint64_t seed = m_spec->train.probe.seed;
            m_spec->train.probe = *preset;
            m_spec->train.probe.seed = seed;
            m_probePreset = *name;
        }
    }
}

void TrainFlags::addTo(FlagSet& flags) {
    flags.addSettings(m_spec, {SettingSection::Training, SettingSection::Data,
                               SettingSection::Analysis, SettingSection::Probe});
    flags.addChoice("probe-preset", &m_probePreset,
                    "probes in training: fast (small MLP, the live view's) or full (the authors'); "
                    "sets the defaults of the probe flags",
                    {"fast", "full"});
}

std::optional<std::string> TrainFlags::build(const FlagSet& flags) const {
    TrainConfig& train = m_spec->train;
    if (flags.given("steps") && !flags.given("decay-steps")) {
        train.decaySteps = train.steps;
    }
    fitProbeActivations(flags, train.probe);
    const FieldErrors errors = validate(train, m_spec->model.blockSize);
    if (!errors.empty()) {
        return describe(errors.front());
    }
    return std::nullopt;
}

void fitProbeActivations(const FlagSet& flags, ProbeConfig& probe) {
    if (!flags.given("probe-activations")) {
        probe.activations.resize(probe.hidden.size(), ProbeActivation::Selu);
    }
}

std::optional<std::string> peekFlag(const std::vector<std::string>& args, const std::string& name) {
    const std::string flag = "--" + name;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == flag && i + 1 < args.size()) {
            return args[i + 1];
        }
        if (args[i].rfind(flag + "=", 0) == 0) {
            return args[i].substr(flag.size() + 1);
        }
    }
    return std::nullopt;
}

}  // namespace nope::cli
