// The training flags of `train` (and the form's equivalents): bound to a TrainConfig whose
// defaults come from the chosen preset, so that explicit flags override the preset.
#pragma once

#include <optional>
#include <string>

#include "cli/flags.h"
#include "training/train_config.h"

namespace nope::cli {

class TrainFlags {
public:
    explicit TrainFlags(const TrainConfig& defaults);
    void addTo(FlagSet& flags);
    // The config the flags describe, or the first problem as one line naming the flag.
    std::optional<std::string> build(const FlagSet& flags, int contextLength,
                                     TrainConfig& out) const;

private:
    TrainConfig m_config;
    std::string m_objective;
    std::string m_precision;
    std::string m_device;
    std::string m_probePreset = "fast";
};

// The value of `--name` in raw arguments ("--name v" or "--name=v"), before full parsing.
std::optional<std::string> peekFlag(const std::vector<std::string>& args, const std::string& name);

}  // namespace nope::cli
