// Where a command's model comes from: built fresh from the model flags and --seed (at
// initialization), or loaded with --checkpoint from a saved model (run/saved_model.h). Shared by
// the commands that analyse a model (analyze, probe).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/flags.h"
#include "cli/model_flags.h"
#include "model/gpt.h"
#include "run/saved_model.h"

namespace nope::cli {

class ModelSource {
public:
    // Adds the model and init flags (with --seed) and --checkpoint. `seedAlsoSeedsOthers`: the
    // command draws other things from --seed too, so it is allowed with --checkpoint.
    void addTo(FlagSet& flags, bool seedAlsoSeedsOthers = false);
    // --seed's value (the model's init seed unless a checkpoint is loaded).
    uint64_t seed() const { return m_modelFlags.seed(); }
    // The model as the flags set it, before check() (a checkpoint's config comes after).
    const ModelConfig& requested() const { return m_modelFlags.requested(); }

    // After parsing: the first flag problem as one line naming the flag (a model-shape flag or
    // --seed with --checkpoint, a path that does not exist). With --checkpoint it then loads the
    // file, so that config() is known: a file that cannot be loaded throws std::runtime_error
    // naming it (a failure while running, not a usage error).
    std::optional<std::string> check(const FlagSet& flags);

    bool fromCheckpoint() const { return m_saved.has_value(); }
    // The model's config, known after check().
    const ModelConfig& config() const { return m_config; }
    // The fresh model, seeded and initialized, or the loaded one (in eval mode).
    Gpt build();
    // For the output's metadata: {"seed"} or {"checkpoint": {"file", "format"}}.
    nlohmann::json describe() const;
    // For a header line: "init default, seed 1337" or "checkpoint runs/x/best.pt (format)".
    std::string summary() const;

private:
    ModelFlags m_modelFlags;
    std::string m_checkpoint;
    ModelConfig m_config;
    std::optional<SavedModel> m_saved;
    bool m_seedAlsoSeedsOthers = false;
};

}  // namespace nope::cli
