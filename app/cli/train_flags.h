// The training flags of `train`: one flag per setting of the Training, Data, Analysis and Probes
// sections (settings/settings.h), bound to the RunSpec whose defaults come from the chosen
// preset, so that explicit flags override the preset.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "run/run_spec.h"

namespace nope::cli {

class TrainFlags {
public:
    // `args` are read for --probe-preset first, so that the probe flags' defaults are the
    // chosen probe preset's and explicit probe flags override it.
    TrainFlags(RunSpec* spec, const std::vector<std::string>& args);
    void addTo(FlagSet& flags);
    // After parsing: the settings' rules against the model's context, the first problem as one
    // line naming the flag.
    std::optional<std::string> build(const FlagSet& flags) const;

private:
    RunSpec* m_spec;
    std::string m_probePreset = "fast";
};

// The value of `--name` in raw arguments ("--name v" or "--name=v"), before full parsing.
std::optional<std::string> peekFlag(const std::vector<std::string>& args, const std::string& name);

// After the probe flags are parsed: without --probe-activations, one activation per hidden width
// (the given ones, then selu).
void fitProbeActivations(const FlagSet& flags, ProbeConfig& probe);

}  // namespace nope::cli
