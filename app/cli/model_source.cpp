#include "cli/model_source.h"

#include <algorithm>
#include <filesystem>

#include "model/init.h"
#include "run/run_folder.h"
#include "util/memory.h"

namespace nope::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kAllowed =
    "allowed: checkpoint.pt, best.pt, weights.pt, a run folder, or a nanoGPT ckpt.pt";

// The flags of ModelFlags that a saved model's file decides: all but --heads, which is used only
// when the file cannot tell.
constexpr const char* kSetByTheFile[] = {"layers",    "dim",        "context",   "dropout",
                                         "bias",      "positional", "attention", "init",
                                         "init-mean", "init-std"};

}  // namespace

void ModelSource::addTo(FlagSet& flags, bool seedAlsoSeedsOthers) {
    m_seedAlsoSeedsOthers = seedAlsoSeedsOthers;
    m_modelFlags.addTo(flags);  // with --seed, the seed of the model's initialization
    flags.addString("checkpoint", &m_checkpoint,
                    "a saved model instead of a fresh one: checkpoint.pt, best.pt, weights.pt, a "
                    "run folder, or a nanoGPT ckpt.pt or state dict (a file without a config "
                    "needs --heads)",
                    "PATH");
}

std::optional<std::string> ModelSource::check(const FlagSet& flags) {
    ModelConfig flagConfig;
    const std::optional<std::string> flagError = m_modelFlags.build(flags, flagConfig);
    if (!flags.given("checkpoint")) {
        m_config = flagConfig;
        if (!flagError) {  // refused before the weights are allocated
            if (std::string problem =
                    analysisMemoryProblem(flagConfig, std::min(flagConfig.blockSize, 64));
                !problem.empty()) {
                return problem;
            }
        }
        return flagError;
    }
    for (const char* name : kSetByTheFile) {
        if (flags.given(name)) {
            return std::string("--") + name +
                   ": not used with --checkpoint (the file sets the model)";
        }
    }
    if (flags.given("seed") && !m_seedAlsoSeedsOthers) {
        return std::string("--seed: not used with --checkpoint (the file holds the weights)");
    }
    const fs::path path = m_checkpoint;
    if (!fs::exists(path)) {
        return "--checkpoint: '" + m_checkpoint + "' does not exist (" + kAllowed + ")";
    }
    if (fs::is_directory(path) && !modelFileOfRun(path)) {
        return "--checkpoint: '" + m_checkpoint +
               "' is a folder without best.pt or checkpoint.pt (" + kAllowed + ")";
    }
    SavedModelOptions options;
    if (flags.given("heads")) {
        options.heads = flagConfig.nHead;  // build() fills the config before it validates
    }
    m_saved = loadSavedModel(path, options);
    m_config = m_saved->config;
    return std::nullopt;
}

Gpt ModelSource::build() {
    if (m_saved) {
        return m_saved->model;
    }
    return seededModel(m_config, m_modelFlags.seed());
}

nlohmann::json ModelSource::describe() const {
    if (m_saved) {
        nlohmann::json checkpoint = {{"file", m_saved->file.string()}, {"format", m_saved->format}};
        if (m_saved->step >= 0) {
            checkpoint["step"] =
                m_saved->step;  // the weights' optimizer steps, where the file says
        }
        return {{"checkpoint", checkpoint}};
    }
    return {{"seed", m_modelFlags.seed()}};
}

std::string ModelSource::summary() const {
    if (m_saved) {
        return "checkpoint " + m_saved->file.string() + " (" + m_saved->format +
               (m_saved->step >= 0 ? ", step " + std::to_string(m_saved->step) : std::string()) +
               ")";
    }
    return "init " + toString(m_config.init.scheme) + ", seed " +
           std::to_string(m_modelFlags.seed());
}

}  // namespace nope::cli
