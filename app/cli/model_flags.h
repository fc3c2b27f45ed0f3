// The model and init flags shared by info, analyze and train: bound to a ModelConfig through
// string fields, then converted and validated together.
#pragma once

#include <optional>
#include <string>

#include "cli/flags.h"
#include "model/model_config.h"

namespace nope::cli {

class ModelFlags {
public:
    explicit ModelFlags(const ModelConfig& defaults = {});
    void addTo(FlagSet& flags);
    // The config the flags describe, or the first problem as one line naming the flag.
    // `flags` is the parsed set, consulted for flags that only make sense together.
    std::optional<std::string> build(const FlagSet& flags, ModelConfig& out) const;

private:
    ModelConfig m_config;
    std::string m_positional;
    std::string m_attention;
    std::string m_init;
};

}  // namespace nope::cli
