// The model and init flags shared by info, analyze, probe and train: one flag per setting of the
// Model and Initialization sections (settings/settings.h), bound to a RunSpec.
#pragma once

#include <optional>
#include <string>

#include "cli/flags.h"
#include "model/model_config.h"
#include "run/run_spec.h"

namespace nope::cli {

class ModelFlags {
public:
    // Binds to `spec` (whose values are the defaults the help shows); without one, to its own.
    explicit ModelFlags(RunSpec* spec = nullptr);
    void addTo(FlagSet& flags);
    // The model the flags describe, or the first problem as one line naming the flag.
    // `flags` is the parsed set, consulted for flags that only make sense together.
    std::optional<std::string> build(const FlagSet& flags, ModelConfig& out) const;
    uint64_t seed() const { return m_spec->train.seed; }
    // The model as the flags set it (before any check).
    const ModelConfig& requested() const { return m_spec->model; }

private:
    RunSpec m_own;
    RunSpec* m_spec;
};

}  // namespace nope::cli
